"""A run directory as an offline dataset: re-simulated episodes, films after the fact, Minari."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import imageio_ffmpeg
import numpy as np
import pytest
from click.testing import CliRunner
from gymnasium.vector import AutoresetMode

from saber.cli import main
from saber.envs import SaberVectorEnv
from saber.errors import SaberError
from saber.harness import Inline, evaluate
from saber.replay import export_minari, recorded_episode, recorded_episodes
from tests.harness.helpers import short_env, short_settings


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Random play of 2 Breakout episodes (a 400-frame stuck timeout), replays recorded."""
    out = tmp_path_factory.mktemp("dataset") / "run"
    evaluate("random", "breakout", 2, out=out, backend=Inline(), env_options=short_env(), progress=False, run="seed-0")  # fmt: skip
    return out


def test_a_recorded_episode_is_what_the_agent_saw_did_and_got(run: Path) -> None:
    episodes = list(recorded_episodes(run))
    assert [(e.game, e.episode) for e in episodes] == [("breakout", 0), ("breakout", 1)]
    for episode in episodes:
        record = episode.record
        steps = list(episode)
        assert (
            len(steps) == record["steps"]
            and bytes(s.action for s in steps) == episode.replay.actions
        )
        assert sum(step.reward for step in steps) == record["score"]
        assert steps[-1].info["saber"]["frames"] == record["frames"]
        assert (steps[-1].terminated, steps[-1].truncated) == (
            record["end"] == "game_over",
            record["end"] != "game_over",
        )
        assert not any(s.terminated or s.truncated for s in steps[:-1])
        # The observations are the harness's: its vector env, reset with the episode's
        # seed and stepped with the same actions, shows the same frames.
        vector = SaberVectorEnv("breakout", 1, autoreset_mode=AutoresetMode.DISABLED,
                                **short_settings())  # fmt: skip
        observation, _ = vector.reset(seed=np.array([record["seed"]]))
        for step in steps:
            np.testing.assert_array_equal(observation[0], step.observation)
            observation, *_ = vector.step(np.array([step.action]))
            np.testing.assert_array_equal(observation[0], step.next_observation)
        vector.close()


def test_saber_replay_films_a_recorded_episode_after_the_fact(run: Path, tmp_path: Path) -> None:
    record = recorded_episode(run, "Breakout", 1).record
    video = tmp_path / "episode-1.mp4"
    result = CliRunner().invoke(
        main, ["replay", str(run), "--game", "breakout", "--episode", "1", "--video", str(video)]
    )
    assert result.exit_code == 0, result.output
    assert f"breakout episode 1: seed {record['seed']}, {record['steps']} steps" in result.output
    frames = imageio_ffmpeg.read_frames(str(video))
    assert next(frames)["size"] == (160, 210)
    assert sum(1 for _ in frames) == record["frames"]  # every emulator frame
    missing = CliRunner().invoke(main, ["replay", str(run), "--game", "breakout", "--episode", "7"])
    assert (
        missing.exit_code == 1
        and "no finished episode 7 of breakout (finished: 0-1)" in missing.output
    )
    with pytest.raises(SaberError, match="no finished episode 7"):
        recorded_episode(run, "breakout", 7)


def test_a_run_exports_to_minari(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    minari = pytest.importorskip("minari")  # in the test extra: installed wherever tests run
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    (identifier,) = export_minari(run)
    assert identifier == "saber/breakout/seed_0-v0"  # Minari ids: letters, digits, _ and .
    dataset = minari.load_dataset(identifier)
    records = [json.loads(line) for line in (run / "episodes.jsonl").read_text().splitlines()]
    by_seed = {r["seed"]: r for r in records}
    assert dataset.total_episodes == 2
    assert dataset.total_steps == sum(r["steps"] for r in records)
    seen = {int(r.record["seed"]): r for r in recorded_episodes(run)}
    for episode in dataset.iterate_episodes():
        record = by_seed[episode_seed(dataset, episode.id)]
        assert episode.observations.shape == (record["steps"] + 1, 4, 84, 84)
        steps = list(seen[record["seed"]])  # stored losslessly: the frames the agent saw
        expected = np.stack([steps[0].observation] + [s.next_observation for s in steps])
        np.testing.assert_array_equal(episode.observations, expected)
        assert float(episode.rewards.sum()) == record["score"]
        assert bool(episode.truncations[-1]) == (record["end"] != "game_over")
    env = dataset.recover_environment()
    assert env.spec.id == "SABER/Breakout" and env.spec.kwargs["max_frames_without_reward"] == 400
    env.close()
    with pytest.raises(SaberError, match="exists already"):
        export_minari(run)


def episode_seed(dataset, index: int) -> int:  # type: ignore[no-untyped-def]
    """The seed Minari stored for an episode (its metadata)."""
    metadata = dataset.storage.get_episode_metadata([index])
    return int(next(iter(metadata))["seed"])


def test_saber_export_writes_minari_datasets_and_names_bad_input_in_one_line(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    minari = pytest.importorskip("minari")
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))

    def export(*args: str) -> tuple[int, str]:
        result = CliRunner().invoke(main, ["export", *args])
        assert result.exception is None or isinstance(result.exception, SystemExit), result.output
        return result.exit_code, result.output

    code, output = export(str(run), "--games", "Breakout", "--author", "me")
    assert (code, output) == (
        0,
        "wrote Minari dataset saber/breakout/seed_0-v0: "
        "minari.load_dataset('saber/breakout/seed_0-v0')\n",
    )
    dataset = minari.load_dataset("saber/breakout/seed_0-v0")
    assert dataset.total_episodes == 2 and "me" in str(dataset.storage.metadata["author"])
    damaged = Path(shutil.copytree(run, tmp_path / "damaged"))
    replay = damaged / "replays" / "breakout" / "episode-1.saber-replay"
    replay.write_bytes(replay.read_bytes()[:-1])
    (tmp_path / "empty").mkdir()
    for args, message in [
        ([str(run)], "A Minari dataset 'saber/breakout/seed_0-v0' exists already"),
        ([str(run), "--dataset-id", "bad id!"], "Malformed dataset id 'bad id!'"),
        ([str(run), "--games", "pong"], "the run did not play pong (its games: breakout)"),
        ([str(tmp_path / "empty")], "no run.json, so this is not a run directory"),
        (
            [str(damaged), "--dataset-id", "saber/damaged-v0"],
            "episode-1.saber-replay is not the replay",
        ),
    ]:
        code, output = export(*args)
        assert code == 1 and message in output, output
        assert len(output.strip().splitlines()) == 1, output
    # A failed export leaves no dataset (whole or absent), nor a malformed id's folder.
    assert list(minari.list_local_datasets()) == ["saber/breakout/seed_0-v0"]
