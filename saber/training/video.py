"""Episode videos: the emulator's colour frames, streamed to MP4 (extra ``video``).

``saber eval --video K`` (from replays), :class:`VideoRecorder` (a single env) and
:class:`VectorVideoRecorder` (a sub-env of a vector env), all through one writer;
docs/rl-libraries.md ("Watching the agent: videos").
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from saber.envs import saber_settings
from saber.errors import SaberError
from saber.protocol.replay import Replay, ReplayHeader, decode_replay, encode_replay
from saber.protocol.settings import FRAMES_PER_SECOND, SaberSettings
from saber.rundir.durable import write_atomically
from saber.training.video_writer import VideoWriter, require_video_extra

VIDEOS_DIR = "videos"  # inside a run directory


def video_path(directory: str | Path, game: str, episode: int) -> Path:
    """``<run directory>/videos/<game>/episode-<n>.mp4``."""
    return Path(directory) / VIDEOS_DIR / game / f"episode-{episode}.mp4"


def replay_to_video(
    game: str,
    seed: int,
    actions: Iterable[int],
    record: dict[str, Any],
    path: str | Path,
    settings: SaberSettings | None = None,
) -> Path:
    """Replay an episode from its seed and actions, writing every emulator frame in colour.

    :func:`film_replay` of the replay these make (the actions after the record's
    ``steps`` are left out), its heartbeats ignored.

    Args:
        game: ale id.
        seed: the episode's seed (as given to a seeded reset).
        actions: the episode's actions, one per agent step (at least ``record["steps"]``).
        record: the episode's record, which the replay must reproduce.
        path: the ``.mp4`` file.
        settings: the run's settings (frame skip, sticky actions, rollovers).

    Raises:
        SaberError: the replay did not reproduce the record (then no file is kept).
    """
    kept = bytes(list(actions)[: int(record["steps"])])
    header = ReplayHeader(
        game, int(record.get("episode", 0)), seed, str(record.get("agent", "")), None,
        (settings or SaberSettings()).as_dict(), "", {}, len(kept),
    )  # fmt: skip
    for _ in film_replay(Replay(header, kept), path, record):
        pass
    return Path(path)


HEARTBEAT_FRAMES = 1_800  # 30 s of play: about a second of replay and encoding


def film_replay(
    replay: Replay, path: str | Path, record: dict[str, Any] | None = None
) -> Iterator[int]:
    """Film a recorded episode: every emulator frame in colour (160 x 210, 60 fps), by
    re-simulating it (:class:`saber.replay.Resimulation`); yields the frames written so
    far every ``HEARTBEAT_FRAMES`` frames.

    Filming a long episode takes long (a 100-hour one: hours); the heartbeats let a
    caller show it is alive (the harness's unit deadline stops a silent worker).

    Args:
        replay: the episode's replay.
        path: the ``.mp4`` file; it holds the episode's ``frames`` frames.
        record: the episode's record: the replay must reproduce its score, time-limit
            scores, frames, steps and end, or no file is kept. None: not checked.

    Raises:
        SaberError: the replay did not reproduce the record.
    """
    from saber.replay import Resimulation

    screen: np.ndarray | None = None
    with VideoWriter(path) as writer:

        def film(ale: Any) -> None:
            nonlocal screen
            if screen is None:
                height, width = ale.getScreenDims()
                screen = np.empty((height, width, 3), dtype=np.uint8)
            ale.getScreenRGB(screen)
            writer.write(screen)

        simulation = Resimulation(replay, on_frame=film)
        beat = HEARTBEAT_FRAMES
        for _ in simulation:
            if writer.frames >= beat:
                yield writer.frames
                beat += HEARTBEAT_FRAMES
        if record is not None:
            _check_against(replay, simulation, record)


def _check_against(replay: Replay, simulation: Any, record: dict[str, Any]) -> None:
    """Raise unless the re-simulation reproduced ``record`` (the fields it has)."""
    from saber.replay.verify import CHECKED_FIELDS

    header = replay.header
    what = f"The replay of {header.game} episode {record.get('episode')} (seed {header.seed})"
    if simulation.record is None:
        raise SaberError(
            f"{what} had not ended when its {len(replay.actions)} actions ran out, but the "
            "record says it ended; no video written. saber verify tells more."
        )
    replayed = simulation.record
    wrong = [
        name for name in CHECKED_FIELDS if name in record and record[name] != replayed.get(name)
    ]
    if wrong:
        differences = ", ".join(
            f"{name} {replayed.get(name)!r}, not the record's {record[name]!r}" for name in wrong
        )
        raise SaberError(
            f"{what} does not reproduce its record ({differences}); no video written. "
            "saber verify tells more."
        )


@dataclass(frozen=True)
class VideoRequest:
    """What a worker films: the first ``episodes`` of every game, into ``directory``."""

    directory: str
    episodes: int


class EpisodeFilm:
    """Films the episodes of one work unit that are to be filmed, from their replays.

    The harness records every episode's actions (:mod:`saber.harness.replays`); when an
    episode to film ends, :meth:`filming` re-simulates its replay on a colour emulator.
    The run's env, seeds and policy calls are untouched.
    """

    def __init__(self, request: VideoRequest, game: str) -> None:
        self.request = request
        self.game = game

    def filming(self, record: dict[str, Any], replay: bytes) -> Generator[int, None, Path | None]:
        """Film the episode of ``record`` if it is one to film, yielding a heartbeat
        (frames filmed) every ``HEARTBEAT_FRAMES``; returns the video, or None.

        A video that cannot be made (the replay disagrees with the record, ffmpeg or the
        disk fails) never fails the evaluation: the reason goes to a warning and to
        ``episode-<n>.error.txt`` beside where the video would be, which ``run.json``
        lists under ``video_errors``; the record is already stored, the unit goes on.
        """
        episode = int(record["episode"])
        if episode >= self.request.episodes:
            return None
        path = video_path(self.request.directory, self.game, episode)
        note = _error_note(path)
        try:
            yield from film_replay(decode_replay(replay), path, record)
        except Exception as error:
            message = f"{type(error).__name__}: {error}"
            warnings.warn(f"No video of {path}: {message}", RuntimeWarning, stacklevel=2)
            _keep_note(path, message)  # the disk may be what failed: best effort
            return None
        note.unlink(missing_ok=True)  # filmed now: an earlier session's failure is gone
        return path


def film_missing(
    directory: str | Path, episodes: Iterable[tuple[str, int]], video: int
) -> list[Path]:
    """Film again, from their replays, the videos of finished episodes that an earlier
    session of the run could not make (``saber eval --video`` on resume): those episodes
    are not played again, so without this their videos would stay missing for good.

    Args:
        directory: the run directory.
        episodes: (game, episode) of finished episodes to film if their video is missing.
        video: the first ``video`` episodes of every game are to be filmed.

    Returns:
        The videos made. One that fails again keeps its note (``video_errors``), as
        :meth:`EpisodeFilm.filming` does; an episode recorded without a replay gets one.
    """
    from saber.replay import recorded_episode

    request = VideoRequest(str(directory), video)
    made = []
    for game, episode in sorted(episodes):
        if episode >= video or video_path(directory, game, episode).exists():
            continue
        try:
            recorded = recorded_episode(directory, game, episode)
        except SaberError as error:  # no replay kept (replays=False): cannot film it later
            _keep_note(video_path(directory, game, episode), f"{type(error).__name__}: {error}")
            continue
        replay = encode_replay(recorded.replay.header, recorded.replay.actions)
        with warnings.catch_warnings():  # a failure is in its note, which the caller reports
            warnings.simplefilter("ignore", RuntimeWarning)
            for _ in EpisodeFilm(request, game).filming(recorded.record, replay):
                pass
        made += [video_path(directory, game, episode)]
    return [path for path in made if path.exists()]


def _keep_note(video: Path, message: str) -> None:
    """Write why ``video`` could not be made beside it (best effort: the disk may be full)."""
    note = _error_note(video)
    with contextlib.suppress(OSError):
        note.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(note, message + "\n")


def _error_note(video: Path) -> Path:
    """``episode-<n>.error.txt``: why ``episode-<n>.mp4`` could not be made."""
    return video.with_name(video.stem + ".error.txt")


def list_videos(directory: str | Path) -> list[str]:
    """The videos of a run directory, as paths relative to it, sorted by game and episode."""
    root = Path(directory)
    found = [p for p in (root / VIDEOS_DIR).glob("*/episode-*.mp4") if ".partial" not in p.name]
    found.sort(key=lambda p: (p.parent.name, int(p.stem.split("-")[-1])))
    return [p.relative_to(root).as_posix() for p in found]


def list_video_errors(directory: str | Path) -> list[dict[str, str]]:
    """The videos of a run directory that could not be made: ``{"video", "error"}`` each."""
    root = Path(directory)
    notes = list((root / VIDEOS_DIR).glob("*/episode-*.error.txt"))
    notes.sort(key=lambda p: (p.parent.name, int(p.name.split(".")[0].split("-")[-1])))
    return [
        {
            "video": p.with_name(p.name.replace(".error.txt", ".mp4")).relative_to(root).as_posix(),
            "error": p.read_text(encoding="utf-8").strip(),
        }
        for p in notes
    ]


def video_entries(directory: str | Path) -> dict[str, Any]:
    """The ``run.json`` keys of a run directory's videos: ``videos`` (every video), and
    ``video_errors`` (the videos that could not be made, with why; None when there are
    none, which removes the key). The store writes them (its one writer of ``run.json``)."""
    return {
        "videos": list_videos(directory),
        "video_errors": list_video_errors(directory) or None,
    }


class VideoRecorder(gym.Wrapper):
    """Record episodes of a single env made with ``render_mode="rgb_array"``, streamed to MP4.

    One frame per agent step: the first screen after ``reset``, then ``env.render()``
    after every step, as Gymnasium's ``RecordVideo`` does, but written as it comes (no
    episode held in memory). Files: ``<folder>/<name_prefix>-episode-<n>.mp4``.

    Args:
        env: an env with ``render_mode="rgb_array"``.
        folder: where to write the videos.
        episodes: record the first ``episodes`` episodes (0-based numbering of resets).
        name_prefix: file name prefix.
        fps: playback rate (default: the env's ``render_fps``, else 60 / frame skip).
    """

    def __init__(
        self,
        env: gym.Env,
        folder: str | Path,
        episodes: int = 1,
        name_prefix: str = "saber",
        fps: float | None = None,
    ) -> None:
        super().__init__(env)
        if env.render_mode != "rgb_array":
            raise ValueError(
                f"Expect an env made with render_mode='rgb_array', actually: {env.render_mode!r}"
            )
        require_video_extra()
        self.folder = Path(folder)
        self.episodes = episodes
        self.name_prefix = name_prefix
        self.fps = fps or _step_fps(env)
        self.episode_id = -1
        self.paths: list[Path] = []
        self._writer: VideoWriter | None = None

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._finish()
        obs, info = self.env.reset(**kwargs)
        self.episode_id += 1
        if self.episode_id < self.episodes:
            path = self.folder / f"{self.name_prefix}-episode-{self.episode_id}.mp4"
            self._writer = VideoWriter(path, fps=self.fps)
            self._writer.write(self.env.render())
        return obs, info

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if self._writer is not None:
            self._writer.write(self.env.render())
            if terminated or truncated:
                self._finish()
        return obs, reward, terminated, truncated, info

    def _finish(self) -> None:
        if self._writer is not None:
            path = self._writer.close()
            self._writer = None
            if path is not None:
                self.paths.append(path)

    def close(self) -> None:
        self._finish()
        super().close()


def _step_fps(env: gym.Env) -> float:
    try:
        return FRAMES_PER_SECOND / saber_settings(env).frame_skip
    except TypeError:
        return float(env.metadata.get("render_fps") or 30)


class VectorVideoRecorder(gym.vector.VectorWrapper):
    """Record episodes of one sub-env of a SABER vector env (``gymnasium.make_vec``).

    ``SaberVectorEnv`` emulates in ale-py's threaded engine, which has grayscale screens
    only. This wrapper replays sub-env ``row`` on a single SABER env with
    ``render_mode="rgb_array"``, seeded and stepped as that sub-env is (the two envs
    play the same episodes, by design and by test), and records it with
    :class:`VideoRecorder`: one frame per agent step. It costs one more emulator.

    Args:
        env: a ``SaberVectorEnv`` (NEXT_STEP or DISABLED autoreset).
        folder: where to write the videos.
        episodes: record the first ``episodes`` episodes of the sub-env.
        row: the sub-env to record.
        name_prefix: file name prefix.
    """

    def __init__(
        self,
        env: gym.vector.VectorEnv,
        folder: str | Path,
        episodes: int = 1,
        row: int = 0,
        name_prefix: str = "saber",
    ) -> None:
        super().__init__(env)
        unwrapped = env.unwrapped
        game = getattr(unwrapped, "rom_id", None)
        if game is None:
            raise TypeError(
                f"Expect a SaberVectorEnv (gymnasium.make_vec('SABER/<Game>', n)), actually: "
                f"{type(unwrapped).__name__}; for Gymnasium's Sync/AsyncVectorEnv use "
                "gymnasium.wrappers.vector.RecordVideo"
            )
        if not 0 <= row < env.num_envs:
            raise ValueError(f"Expect `row` in [0, {env.num_envs}), actually: {row}")
        from saber.envs.factory import make_env

        settings = saber_settings(env)
        overrides = {name: value for name, (_, value) in settings.deviations().items()}
        shadow = make_env(game, render_mode="rgb_array", **overrides)
        self.recorder = VideoRecorder(shadow, folder, episodes, f"{name_prefix}-env-{row}")
        self.row = row
        self._ended = True  # no episode running in the shadow yet

    @property
    def paths(self) -> list[Path]:
        """The videos written so far."""
        return self.recorder.paths

    def reset(
        self, *, seed: Any = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        mask = (options or {}).get("reset_mask")
        if mask is None or bool(np.asarray(mask)[self.row]):
            self._reset_shadow(_row_seed(seed, self.row, mask))
        return obs, info

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        autoreset = self.env.unwrapped.autoreset_mode == gym.vector.AutoresetMode.NEXT_STEP
        if self._ended and autoreset:
            self._reset_shadow(None)  # the vector env reset this row, without a seed
        else:
            _, _, done, cut, mirror = self.recorder.step(int(np.asarray(actions)[self.row]))
            self._ended = bool(done or cut)
            frame = int(np.asarray(info["episode_frame_number"])[self.row])
            if (mirror["episode_frame_number"], self._ended) != (
                frame,
                bool(terminated[self.row] or truncated[self.row]),
            ):
                raise RuntimeError(
                    f"The recording of sub-env {self.row} no longer follows it (frame "
                    f"{mirror['episode_frame_number']} vs {frame}): was the vector env reset "
                    "or stepped around this wrapper?"
                )
        return obs, rewards, terminated, truncated, info

    def _reset_shadow(self, seed: int | None) -> None:
        self.recorder.reset(seed=seed)
        self._ended = False

    def close(self, **kwargs: Any) -> None:
        self.recorder.close()
        super().close(**kwargs)


def _row_seed(seed: Any, row: int, mask: Any) -> int | None:
    """The seed the vector env gives sub-env ``row``: seeds go to the reset rows in order."""
    if seed is None:
        return None
    index = row if mask is None else int(np.count_nonzero(np.asarray(mask)[:row]))
    if isinstance(seed, (int, np.integer)):
        return int(seed) + index
    return int(np.asarray(seed)[index])
