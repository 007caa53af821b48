"""A run directory as an offline dataset: re-simulated episodes and Minari datasets (the commands over them: tests/cli/test_replay.py, test_export.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from saber.envs import SaberVectorEnv
from saber.errors import SaberError
from saber.replay import export_minari, recorded_episodes
from tests.harness.helpers import short_settings


def test_a_recorded_episode_is_what_the_agent_saw_did_and_got(recorded_run: Path) -> None:
    episodes = list(recorded_episodes(recorded_run))
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


def test_a_run_exports_to_minari(
    recorded_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    minari = pytest.importorskip("minari")  # in the test extra: installed wherever tests run
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    (identifier,) = export_minari(recorded_run)
    assert identifier == "saber/breakout/seed_0-v0"  # Minari ids: letters, digits, _ and .
    dataset = minari.load_dataset(identifier)
    records = [
        json.loads(line) for line in (recorded_run / "episodes.jsonl").read_text().splitlines()
    ]
    by_seed = {r["seed"]: r for r in records}
    assert dataset.total_episodes == 2
    assert dataset.total_steps == sum(r["steps"] for r in records)
    seen = {int(r.record["seed"]): r for r in recorded_episodes(recorded_run)}
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
        export_minari(recorded_run)


def episode_seed(dataset, index: int) -> int:  # type: ignore[no-untyped-def]
    """The seed Minari stored for an episode (its metadata)."""
    metadata = dataset.storage.get_episode_metadata([index])
    return int(next(iter(metadata))["seed"])
