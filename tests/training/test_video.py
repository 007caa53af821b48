"""Episode videos on real ROMs: ``saber eval --video``, saber's recorders, Gymnasium's RecordVideo.

Videos are decoded back with ffmpeg (imageio-ffmpeg) and their frames counted against the
episode records: every emulator frame for the harness, one frame per agent step (plus the
first screen) for the Python recorders.
"""

from __future__ import annotations

import json
import sys
import tracemalloc
from pathlib import Path

import gymnasium as gym
import imageio_ffmpeg
import numpy as np
import pytest
from click.testing import CliRunner

import saber
from saber.cli import main
from saber.errors import ExitCode, SaberError
from saber.harness import Inline
from saber.protocol.replay import ReplayHeader, encode_replay
from saber.protocol.settings import SaberSettings
from saber.training.video import (
    EpisodeFilm,
    VectorVideoRecorder,
    VideoRecorder,
    VideoRequest,
    replay_to_video,
    video_entries,
)
from saber.training.video_writer import VideoWriter, require_video_extra
from tests.harness.helpers import read_records, short_env, strip_timing

GAMES = "breakout,freeway"  # a game over and (random Freeway) a stuck timeout


def decode(path: Path) -> np.ndarray:
    """Every frame of a video, ``uint8`` (n, H, W, 3)."""
    frames = imageio_ffmpeg.read_frames(str(path))
    meta = next(frames)
    width, height = meta["size"]
    return np.stack([np.frombuffer(f, np.uint8).reshape(height, width, 3) for f in frames])


def count_frames(path: Path) -> int:
    """The number of frames of a video, decoded one at a time (long videos too)."""
    frames = imageio_ffmpeg.read_frames(str(path))
    next(frames)  # the metadata
    return sum(1 for _ in frames)


def fps(path: Path) -> float:
    return float(next(imageio_ffmpeg.read_frames(str(path)))["fps"])


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The same evaluation without videos (Python, in this process) and with two per game
    (the CLI, filmed in two worker processes, as by default)."""
    plain, filmed = tmp_path_factory.mktemp("plain"), tmp_path_factory.mktemp("filmed")
    saber.evaluate(
        "random",
        GAMES,
        3,
        out=plain,
        backend=Inline(envs_per_worker=2),
        env_options=short_env(),
        progress=False,
    )
    args = ["eval", "--agent", "random", "--games", GAMES, "--episodes", "3", "--out", str(filmed)]
    args += ["--workers", "2", "--envs-per-worker", "2", "--allow-non-saber", "--no-report"]
    args += ["--env-option", "max_frames_without_reward=400", "--video", "2"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return plain, filmed


def test_video_changes_nothing_that_is_played(runs: tuple[Path, Path]) -> None:
    plain, filmed = runs
    records = read_records(filmed)
    assert len(records) == 6
    assert strip_timing(records) == strip_timing(read_records(plain))
    assert {r["end"] for r in records} == {"game_over", "stuck_timeout"}


def test_videos_are_listed_in_run_json(runs: tuple[Path, Path]) -> None:
    _, filmed = runs
    run = json.loads((filmed / "run.json").read_text())
    assert run["videos"] == [
        f"videos/{game}/episode-{n}.mp4" for game in ("breakout", "freeway") for n in (0, 1)
    ]
    assert not list(filmed.rglob("*.partial.mp4"))
    assert "videos" not in json.loads((runs[0] / "run.json").read_text())


def test_a_video_holds_every_frame_of_its_episode_in_colour(runs: tuple[Path, Path]) -> None:
    _, filmed = runs
    for record in read_records(filmed):
        path = filmed / "videos" / record["game"] / f"episode-{record['episode']}.mp4"
        if record["episode"] >= 2:
            assert not path.exists()
            continue
        frames = decode(path)
        # One video frame per emulator frame, at the ALE's full resolution, real time.
        assert frames.shape == (record["frames"], 210, 160, 3)
        assert fps(path) == 60
        # Colour: Breakout's bricks and Freeway's cars are red, orange, yellow, green...
        middle = frames[len(frames) // 2].astype(int)
        assert (np.ptp(middle, axis=-1) > 60).sum() > 100


def test_the_replay_refuses_actions_that_do_not_reproduce_the_record(tmp_path: Path) -> None:
    record = {"episode": 0, "steps": 50, "frames": 200, "score": 7.0}  # not what noop scores
    with pytest.raises(SaberError, match=r"had not ended when its 50 actions ran out"):
        replay_to_video("breakout", 1, [0] * 50, record, tmp_path / "x.mp4")
    short = SaberSettings(max_frames_without_reward=200)  # 50 noop steps: a stuck timeout
    with pytest.raises(SaberError, match=r"score 0.0, not the record's 7.0"):
        replay_to_video("breakout", 1, [0] * 50, record, tmp_path / "x.mp4", short)
    assert not list(tmp_path.iterdir())  # neither the video nor a partial file is left


def test_the_replay_streams_a_long_episode_in_bounded_memory(tmp_path: Path) -> None:
    # A whole game of random Pong (SABER settings): 3,610 frames of 160 x 210 x 3 bytes,
    # 364 MB of pixels through the writer.
    env = gym.make("SABER/Pong")
    env.reset(seed=11)
    actions = np.random.default_rng(0).integers(0, 18, 2_000).tolist()
    for action in actions:
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    env.close()
    record = info["saber"]
    assert (record["end"], record["frames"]) == ("game_over", 3_610)
    tracemalloc.start()
    try:
        path = replay_to_video("pong", 11, actions, record, tmp_path / "pong.mp4")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Streamed: a frame or two in memory at a time (100 KB each), never the episode.
    assert peak < 5_000_000
    assert count_frames(path) == 3_610


def noop(observations: np.ndarray) -> np.ndarray:
    return np.zeros(len(observations), dtype=np.int64)


def noop_replay(game: str, steps: int, seed: int = 5, **settings: object) -> bytes:
    """The replay of episode 0 of ``game``: ``steps`` noop actions from ``seed``."""
    header = ReplayHeader(
        game,
        0,
        seed,
        "noop",
        None,
        SaberSettings(**settings).as_dict(),
        "",
        {},
        steps,  # type: ignore[arg-type]
    )
    return encode_replay(header, bytes(steps))


def test_filming_a_long_episode_sends_heartbeats(tmp_path: Path) -> None:
    # Freeway ends on its clock, 2 min 16 s: 8,192 frames, whatever the actions.
    record = {"episode": 0, "steps": 2_048, "frames": 8_192, "score": 0.0}
    film = EpisodeFilm(VideoRequest(str(tmp_path), 1), "freeway")
    heartbeats = list(film.filming(record, noop_replay("freeway", 2_048)))
    # One per 30 s of play (1,800 frames), for the harness's unit deadline.
    assert heartbeats == [1_800, 3_600, 5_400, 7_200]
    assert count_frames(tmp_path / "videos" / "freeway" / "episode-0.mp4") == 8_192


def test_a_filming_worker_keeps_its_unit_alive(tmp_path: Path) -> None:
    """While it films, a work unit sends a heartbeat (0 frames played) every 30 s of
    filmed play, after the episode's record: the unit deadline (--unit-timeout, any
    message resets it) then never stops a worker that is busy filming a long episode."""
    from saber.harness.runner import execute_unit
    from saber.harness.work import EpisodeDone, FramesPlayed, Job, WorkUnit

    job = Job("noop", "noop", video=VideoRequest(str(tmp_path), 1), envs_per_worker=1)
    events = list(execute_unit(WorkUnit(0, "freeway", ((0, 5),)), job, num_threads=1))
    (done,) = (i for i, event in enumerate(events) if isinstance(event, EpisodeDone))
    frames = events[done].record.record.frames
    after = [event.frames for event in events[done + 1 :] if isinstance(event, FramesPlayed)]
    assert frames == 8_192  # Freeway ends on its clock, whatever the actions
    assert after.count(0) == frames // 1_800
    assert count_frames(tmp_path / "videos" / "freeway" / "episode-0.mp4") == frames


def test_a_video_that_cannot_be_made_fails_no_episode(tmp_path: Path) -> None:
    """A replay that does not match its record warns and leaves a note (listed in run.json
    by the store: ``video_entries``), instead of raising into the work unit; filming it
    right later clears the note."""

    def film_noop(record: dict) -> Path | None:
        film = EpisodeFilm(VideoRequest(str(tmp_path), 1), "breakout")
        # 100 noop steps (400 frames) end at a 400-frame stuck timeout.
        replay = noop_replay("breakout", record["steps"], max_frames_without_reward=400)
        steps = film.filming(record, replay)
        while True:
            try:
                next(steps)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]

    wrong = {"episode": 0, "steps": 100, "frames": 400, "score": 7.0}  # noop scores 0
    with pytest.warns(RuntimeWarning, match=r"No video of .*episode-0.mp4: SaberError: The "):
        assert film_noop(wrong) is None
    entries = video_entries(tmp_path)
    assert entries["videos"] == []
    [error] = entries["video_errors"]
    assert error["video"] == "videos/breakout/episode-0.mp4"
    assert "does not reproduce its record (score 0.0, not the record's 7.0)" in error["error"]
    assert sorted(p.name for p in (tmp_path / "videos" / "breakout").iterdir()) == [
        "episode-0.error.txt"
    ]
    # Breakout without FIRE scores nothing: 100 noop steps are 400 frames, score 0.
    right = {**wrong, "score": 0.0}
    assert film_noop(right) == tmp_path / "videos" / "breakout" / "episode-0.mp4"
    assert video_entries(tmp_path) == {
        "videos": ["videos/breakout/episode-0.mp4"],
        "video_errors": None,  # None: the store removes the key
    }
    assert count_frames(tmp_path / "videos" / "breakout" / "episode-0.mp4") == 400


def test_a_missing_extra_names_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)  # import raises ImportError
    message = (
        'Recording videos needs the "video" extra (imageio-ffmpeg): pip install '
        '"saber-ale[video]" or, from a checkout, pip install ".[video]"'
    )
    with pytest.raises(SaberError) as error:
        require_video_extra()
    assert str(error.value) == message
    result = CliRunner().invoke(
        main,
        ["eval", "--agent", "random", "--games", "pong", "--out", str(tmp_path), "--video", "1"],
    )
    assert result.exit_code == ExitCode.BAD_INPUT and message in result.output
    assert not (tmp_path / "episodes.jsonl").exists()  # refused before anything ran


def test_writer_rejects_a_frame_of_another_size(tmp_path: Path) -> None:
    with VideoWriter(tmp_path / "a.mp4") as writer:
        writer.write(np.zeros((210, 160, 3), np.uint8))
        with pytest.raises(ValueError, match=r"Expect frames of \(160, 210\)"):
            writer.write(np.zeros((84, 84, 3), np.uint8))
    assert decode(tmp_path / "a.mp4").shape == (1, 210, 160, 3)


def play(env: gym.Env, seed: int, steps: int) -> int:
    """Random actions until the episode ends or ``steps``; returns the steps played."""
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for step in range(1, steps + 1):
        _, _, terminated, truncated, _ = env.step(int(rng.integers(18)))
        if terminated or truncated:
            return step
    return steps


def test_saber_recorder_streams_one_frame_per_step(tmp_path: Path) -> None:
    env = VideoRecorder(gym.make("SABER/Breakout", render_mode="rgb_array"), tmp_path, 1)
    steps = play(env, seed=3, steps=100)
    play(env, seed=4, steps=10)  # the second episode is not recorded
    env.close()
    assert env.paths == [tmp_path / "saber-episode-0.mp4"]
    assert decode(env.paths[0]).shape == (steps + 1, 210, 160, 3)  # + the first screen
    assert fps(env.paths[0]) == 15  # 60 frames/s, 4 frames per step


def test_saber_recorder_needs_rgb_array() -> None:
    with pytest.raises(ValueError, match="render_mode='rgb_array', actually: None"):
        VideoRecorder(gym.make("SABER/Breakout"), "unused")


def test_gymnasium_record_video_on_the_single_env(tmp_path: Path) -> None:
    pytest.importorskip("moviepy", reason="Gymnasium's RecordVideo writes with moviepy")
    env = gym.make("SABER/Breakout", render_mode="rgb_array")
    env = gym.wrappers.RecordVideo(env, str(tmp_path / "v"), episode_trigger=lambda n: n == 0)
    steps = play(env, seed=3, steps=60)
    env.close()
    [path] = (tmp_path / "v").glob("*.mp4")
    assert decode(path).shape == (steps + 1, 210, 160, 3)


def test_gymnasium_record_video_on_make_vec_sync(tmp_path: Path) -> None:
    # Gymnasium's vector recorder needs sub-envs that render: vectorization_mode="sync".
    pytest.importorskip("moviepy", reason="Gymnasium's RecordVideo writes with moviepy")
    envs = gym.make_vec(
        "SABER/Breakout", num_envs=2, vectorization_mode="sync", render_mode="rgb_array"
    )
    envs = gym.wrappers.vector.RecordVideo(
        envs, str(tmp_path / "v"), episode_trigger=lambda n: n == 0
    )
    envs.reset(seed=3)
    for _ in range(40):
        envs.step(np.zeros(2, dtype=np.int64))
    envs.close()
    [path] = (tmp_path / "v").glob("*.mp4")
    frames = decode(path)
    # Both sub-envs side by side, one frame per step (first screen included).
    assert frames.shape[0] == 41 and frames.shape[2] == 2 * 160


def test_saber_vector_env_does_not_render_so_saber_records_it(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not render"):
        gym.make_vec("SABER/Breakout", num_envs=2, render_mode="rgb_array")
    envs = gym.make_vec("SABER/Breakout", num_envs=2, max_frames_without_reward=400)
    envs = VectorVideoRecorder(envs, tmp_path, episodes=2, row=1)
    envs.reset(seed=5)
    rng = np.random.default_rng(0)
    lengths: list[int] = []
    while len(lengths) < 2:
        _, _, _, _, info = envs.step(rng.integers(0, 18, 2))
        key = "saber" if "saber" in info else "episode"  # the record's key, old and new
        if f"_{key}" in info and info[f"_{key}"][1]:
            lengths.append(int(info[key]["steps"][1]))
    envs.step(rng.integers(0, 18, 2))  # the autoreset step starts episode 3: not recorded
    envs.close()
    assert envs.paths == [tmp_path / f"saber-env-1-episode-{n}.mp4" for n in (0, 1)]
    for path, steps in zip(envs.paths, lengths, strict=True):
        assert decode(path).shape == (steps + 1, 210, 160, 3)
