"""Drop-in: CleanRL's Atari ``make_env`` on a SABER env, as CleanRL writes it.

CleanRL's ``dqn_atari.py`` / ``ppo_atari.py`` (Gymnasium 1.x versions) build each env as
below; SABER already does the Atari preprocessing, so the Atari wrappers (NoopReset,
MaxAndSkip, EpisodicLife, FireReset, ClipReward, Resize, GrayScale, FrameStack) are
stripped, and ``RecordEpisodeStatistics`` stays first, as CleanRL writes it. Its logging
(``info["episode"]["r"][info["_episode"]]``) then reads the raw SABER score.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

import saber  # noqa: F401


def make_env(env_id: str, seed: int, idx: int, capture_video: bool, run_name: str):
    def thunk():
        if capture_video and idx == 0:
            env = gym.make(env_id, render_mode="rgb_array")
            env = gym.wrappers.RecordVideo(env, f"videos/{run_name}")
        else:
            env = gym.make(env_id, max_frames_without_reward=400)  # short episodes (not SABER)
        env = gym.wrappers.RecordEpisodeStatistics(env)
        env.action_space.seed(seed)
        return env

    return thunk


def test_cleanrl_make_env_logs_saber_scores() -> None:
    envs = gym.vector.SyncVectorEnv(
        [make_env("SABER/Breakout", 1 + i, i, False, "saber") for i in range(2)]
    )
    obs, _ = envs.reset(seed=1)
    assert obs.shape == (2, 4, 84, 84)
    rng = np.random.default_rng(0)
    returns = []
    for _ in range(400):
        obs, _, _, _, infos = envs.step(rng.integers(0, 18, 2))
        if "episode" in infos:  # CleanRL's logging
            done = infos["_episode"]
            np.testing.assert_array_equal(done, infos["_saber"])
            np.testing.assert_array_equal(
                infos["episode"]["r"][done], infos["saber"]["score"][done]
            )
            np.testing.assert_array_equal(
                infos["episode"]["l"][done], infos["saber"]["steps"][done]
            )
            returns += infos["episode"]["r"][done].tolist()
    envs.close()
    assert len(returns) >= 2
