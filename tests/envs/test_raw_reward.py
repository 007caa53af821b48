"""Under ``clip_rewards=True`` every SABER env gives each step's raw reward in
``info["raw_reward"]``: a logging wrapper above the clipping can sum SABER's score.

Space Invaders pays 5 to 30 points an alien, so clipped and raw rewards differ. The raw
rewards come from a second env without clipping, same seed and actions.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

import saber  # noqa: F401  (registers SABER/*)
from saber.envs import RAW_REWARD

CAP = {"max_episode_frames": 3_000}  # non-SABER: a short episode, ended by the cap


def test_single_env_gives_the_raw_reward_beside_the_clipped_one() -> None:
    clipped = gym.make("SABER/SpaceInvaders", clip_rewards=True, **CAP)
    raw = gym.make("SABER/SpaceInvaders", **CAP)
    clipped.reset(seed=3)
    raw.reset(seed=3)
    raw_sum = clipped_sum = 0.0
    for action in np.random.default_rng(0).integers(0, 18, 10_000):
        _, reward, terminated, truncated, info = clipped.step(int(action))
        _, raw_reward, *_, raw_info = raw.step(int(action))
        assert RAW_REWARD not in raw_info  # without clipping the reward is the raw one
        assert info[RAW_REWARD] == raw_reward and reward == np.clip(raw_reward, -1, 1)
        raw_sum, clipped_sum = raw_sum + info[RAW_REWARD], clipped_sum + float(reward)
        if terminated or truncated:
            break
    assert raw_sum == info["saber"]["score"] == raw_info["saber"]["score"]
    assert raw_sum > clipped_sum > 0


def test_vector_env_gives_every_rows_raw_rewards_as_one_array() -> None:
    clipped = gym.make_vec("SABER/SpaceInvaders", num_envs=2, clip_rewards=True, **CAP)
    raw = gym.make_vec("SABER/SpaceInvaders", num_envs=2, **CAP)
    clipped.reset(seed=5)
    raw.reset(seed=5)
    raw_sums, clipped_sums = np.zeros(2), np.zeros(2)
    scores = np.full(2, np.nan)  # each row's first episode's recorded score
    for actions in np.random.default_rng(1).integers(0, 18, (10_000, 2)):
        _, rewards, terminated, truncated, info = clipped.step(actions)
        _, raw_rewards, *_, raw_info = raw.step(actions)
        assert RAW_REWARD not in raw_info
        assert info[RAW_REWARD].dtype == np.float64 and info[RAW_REWARD].shape == (2,)
        np.testing.assert_array_equal(info[RAW_REWARD], raw_rewards)
        np.testing.assert_array_equal(rewards, np.clip(raw_rewards, -1, 1))
        playing = np.isnan(scores)
        raw_sums += np.where(playing, info[RAW_REWARD], 0)
        clipped_sums += np.where(playing, rewards, 0)
        ended = playing & (terminated | truncated)
        if ended.any():
            scores[ended] = info["saber"]["score"][ended]
        if not np.isnan(scores).any():
            break
    np.testing.assert_array_equal(raw_sums, scores)
    assert (raw_sums > clipped_sums).all() and (clipped_sums > 0).all()
