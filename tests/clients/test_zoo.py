"""RL Zoo on SABER with ``--conf-file saber.training.zoo``: real, very short zoo runs.

Each run is RL Zoo's own command line (``python -m rl_zoo3.train``) on Space Invaders
(5 to 30 points an alien: raw scores and clipped sums differ), episodes capped at 400
frames (non-SABER, short) so that some end. Asserted: the CNN policy, the zoo's Atari
env count, and that the episode rewards the zoo's ``Monitor`` logged (its CSV files, what
``ep_rew_mean`` averages) are SABER's raw scores, row by row those of saber's own training
log (``SaberMetricsCallback``'s, given a path with ``--hyperparams``).

The command is the one docs/rl-libraries.md documents (its diff's new side). Marked
``zoo`` (needs ``pip install ".[test,zoo]"``: rl_zoo3 and sb3-contrib; CI's zoo stage) and
``slow`` (a minute of CPU each: the zoo's imports, then training): ``python -m pytest -m
zoo tests/clients/test_zoo.py``.
"""

from __future__ import annotations

import csv
import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.clients.helpers import documented_change

pytestmark = [pytest.mark.zoo, pytest.mark.slow, pytest.mark.usefixtures("zoo_installed")]

GAME = "SABER/SpaceInvaders"
DQN_OVERRIDES = ["buffer_size:1000", "learning_starts:100", "exploration_final_eps:1.0"]
# The documented command (docs/rl-libraries.md), on Space Invaders, for each algorithm.
DOCUMENTED = shlex.split(
    documented_change("-python -m rl_zoo3.train --algo ppo --env PongNoFrameskip-v4")
)


def zoo(module: str, *args: str, cwd: Path) -> str:
    """Run ``python -m rl_zoo3.<module>`` as a user does; its stdout (fails with its output)."""
    command = [sys.executable, "-m", f"rl_zoo3.{module}", *args, "--device", "cpu"]
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def monitor_rewards(run: Path, row: int) -> list[float]:
    lines = (run / f"{row}.monitor.csv").read_text().splitlines()[1:]  # a JSON header first
    return [float(episode["r"]) for episode in csv.DictReader(lines)]


@pytest.mark.parametrize(
    ("algo", "n_envs", "steps", "overrides"),
    [
        ("ppo", 8, 256, []),  # one rollout: 8 envs x 128 steps
        ("a2c", 16, 1_600, []),  # 100 steps per env
        # A small replay buffer (the zoo's QR-DQN keeps 1M observations: 56 GB), and random
        # actions throughout (8 episodes: an untrained greedy QR-DQN scored 0 in all 4).
        ("dqn", 1, 800, DQN_OVERRIDES),
        ("qrdqn", 1, 800, DQN_OVERRIDES),
    ],
)
def test_zoo_trains_a_cnn_on_raw_scores(
    tmp_path: Path, algo: str, n_envs: int, steps: int, overrides: list[str]
) -> None:
    from sb3_contrib import QRDQN
    from stable_baselines3 import A2C, DQN, PPO
    from stable_baselines3.common.torch_layers import NatureCNN

    log = tmp_path / "training.jsonl"
    callback = f"callback:[{{'saber.training.sb3.SaberMetricsCallback': {{'log_path': '{log}'}}}}]"
    assert DOCUMENTED[:3] == ["python", "-m", "rl_zoo3.train"]
    documented = " ".join(DOCUMENTED[3:]).replace("--algo ppo", f"--algo {algo}")
    stdout = zoo(
        "train",
        *documented.replace("SABER/Pong", GAME).split(),
        *("-n", str(steps), "--seed", "0", "--eval-freq", "-1", "-f", "logs", "--env-kwargs"),
        "max_episode_frames:400",
        *("--hyperparams", callback, *overrides),
        cwd=tmp_path,
    )
    assert f"Using {n_envs} environments" in stdout
    assert "frame_stack" not in stdout and "AtariWrapper" not in stdout
    run = tmp_path / "logs" / algo / "SABER-SpaceInvaders_1"
    model = {"ppo": PPO, "a2c": A2C, "dqn": DQN, "qrdqn": QRDQN}[algo].load(
        run / "SABER-SpaceInvaders.zip", device="cpu"
    )
    assert any(isinstance(module, NatureCNN) for module in model.policy.modules())
    assert model.n_envs == n_envs and model.observation_space.shape == (4, 84, 84)

    records = [json.loads(line) for line in log.read_text().splitlines()]
    for row in range(n_envs):
        saber_scores = [r["score"] for r in records if r["env"] == row]
        assert monitor_rewards(run, row) == saber_scores, row
    assert max(r["score"] for r in records) > 1  # raw: a clipped step gives at most 1

    if algo == "ppo":  # enjoy plays it as the zoo plays Atari: Monitor's score printed
        played = zoo(
            "enjoy",
            *("--algo", algo, "--env", GAME, "--gym-packages", "saber", "-f", "logs"),
            *("-n", "120", "--no-render"),
            *("--env-kwargs", "max_episode_frames:400"),
            cwd=tmp_path,
        )
        assert "Atari Episode Score:" in played
