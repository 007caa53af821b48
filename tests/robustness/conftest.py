"""Valid files made once per session by real runs, for the fuzz tests to damage."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from saber.training import TrainingRecorder
from tests.harness.helpers import evaluate_short, short_settings
from tests.robustness.valid_files import small_policy_layers


@pytest.fixture(scope="session")
def policy_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small valid conv-actor policy file (random weights)."""
    from saber.agents.convnet import write_policy_file

    path = tmp_path_factory.mktemp("fuzz") / "policy.npz"
    return write_policy_file(path, small_policy_layers(seed=0), {"made_by": "tests.robustness"})


@pytest.fixture(scope="session")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run directory of 2 random Breakout episodes with replays (a 400-frame stuck
    timeout keeps them short: about a second in all)."""
    directory = tmp_path_factory.mktemp("fuzz") / "run"
    evaluate_short(directory, 2)
    return directory


@pytest.fixture(scope="session")
def real_training_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A training log of 3 random Breakout episodes (TrainingRecorder)."""
    log = tmp_path_factory.mktemp("fuzz") / "training.jsonl"
    env = TrainingRecorder(gym.make("SABER/Breakout", **short_settings()), log)
    rng = np.random.default_rng(0)
    env.reset(seed=1)
    ended = 0
    while ended < 3:
        *_, terminated, truncated, _ = env.step(int(rng.integers(18)))
        if terminated or truncated:
            ended += 1
            env.reset()
    env.close()
    return log
