"""Today's trajectories, kept: the env reproduces episodes recorded with saber 0.1's code.

``data/golden_trajectories.json`` was written by ``play`` below run against saber 0.1
(commit fae9b86, before the record moved to ``info["saber"]`` and the rules kernel): the
sha256 of every observation, each reward, each end and each episode record (without the
wall-clock time). The shipped random-agent data was produced by that code, so any change
of a trajectory for the same seeds and actions is a bug.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import saber  # noqa: F401

GOLDEN = json.loads((Path(__file__).parent / "data" / "golden_trajectories.json").read_text())
CASES = [
    ("Breakout", 0, {"max_frames_without_reward": 400}),  # stuck timeouts
    ("Pong", 1, {"max_episode_frames": 2_000}),  # frame caps
    ("Skiing", 2, {"max_frames_without_reward": 600, "clip_rewards": True}),  # 3 legal actions
    ("SpaceInvaders", 3, {"max_episode_frames": 3_000}),  # game overs
]
SKIP = {"t", "seconds", "r", "l"}  # wall-clock time; Gymnasium's r / l of saber 0.1


def play(game: str, seed: int, kw: dict[str, Any], episodes: int = 2, steps: int = 900) -> dict:
    env = gym.make(f"SABER/{game}", **kw)
    rng = np.random.default_rng(seed)
    digest = hashlib.sha256()
    obs, _ = env.reset(seed=seed)
    digest.update(obs.tobytes())
    out: dict[str, Any] = {"rewards": [], "ends": [], "records": []}
    done = 0
    for _ in range(steps * episodes):
        obs, reward, terminated, truncated, info = env.step(int(rng.integers(0, 18)))
        digest.update(obs.tobytes())
        out["rewards"].append(float(reward))
        if terminated or truncated:
            record = info.get("saber", info.get("episode"))
            out["ends"].append([len(out["rewards"]), bool(terminated), bool(truncated)])
            out["records"].append({k: v for k, v in record.items() if k not in SKIP})
            done += 1
            if done == episodes:
                break
            obs, _ = env.reset()
            digest.update(obs.tobytes())
    out["obs_sha256"] = digest.hexdigest()
    env.close()
    return out


@pytest.mark.parametrize(("game", "seed", "kw"), CASES, ids=[case[0] for case in CASES])
def test_trajectories_are_those_of_saber_0_1(game: str, seed: int, kw: dict[str, Any]) -> None:
    assert play(game, seed, kw) == GOLDEN[f"{game}-{seed}"]
