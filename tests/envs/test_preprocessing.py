"""Protocol section 3 on real frames: max of the last two frames, grayscale, bilinear 84x84, 4-stack."""

from __future__ import annotations

import cv2
import gymnasium as gym
import numpy as np
from ale_py import Action

from saber.envs.emulator import SeedStream
from saber.envs.preprocessing import SaberPreprocessing
from tests.envs.test_rules import random_actions, reference_emulator


def test_observation_is_the_bilinear_resized_max_of_the_last_two_grayscale_frames() -> None:
    env = gym.make("SABER/SpaceInvaders")  # sprites flicker between frames: max-pooling matters
    obs, _ = env.reset(seed=5)
    reference = reference_emulator("space_invaders", SeedStream(5).next_ale_seed(), 0.25)
    history = [np.zeros((84, 84), np.uint8)] * 3 + [
        cv2.resize(reference.getScreenGrayscale(), (84, 84), interpolation=cv2.INTER_LINEAR)
    ]
    np.testing.assert_array_equal(obs, np.stack(history))
    pooling_mattered = False
    for action in random_actions(200):
        obs, _, terminated, _, _ = env.step(action)
        frames = []
        for _ in range(4):
            reference.act(Action(action))
            frames.append(reference.getScreenGrayscale())
        pooled = np.maximum(frames[-2], frames[-1])
        pooling_mattered |= not np.array_equal(pooled, frames[-1])
        history = [*history[1:], cv2.resize(pooled, (84, 84), interpolation=cv2.INTER_LINEAR)]
        np.testing.assert_array_equal(obs, np.stack(history))
        assert not np.array_equal(
            obs[-1], cv2.resize(pooled, (84, 84), interpolation=cv2.INTER_AREA)
        ), "bilinear, not ale-py's INTER_AREA"
        if terminated:
            break
    assert pooling_mattered


def test_grayscale_is_the_luminance_of_the_rgb_screen() -> None:
    env = gym.make("SABER/Pong")
    env.reset(seed=0)
    ale = env.unwrapped.ale
    rgb = ale.getScreenRGB().astype(float)
    luminance = 0.2989 * rgb[..., 0] + 0.5870 * rgb[..., 1] + 0.1140 * rgb[..., 2]
    assert np.abs(ale.getScreenGrayscale().astype(float) - luminance).max() <= 1.0


def test_observations_are_copies_not_views_of_the_stack() -> None:
    env = gym.make("SABER/Pong")
    first, _ = env.reset(seed=0)
    kept = first.copy()
    env.step(0)
    np.testing.assert_array_equal(first, kept)


def test_the_preprocessing_wrapper_applies_to_a_plain_ale_py_env() -> None:
    import ale_py

    gym.register_envs(ale_py)
    env = SaberPreprocessing(
        gym.make("ALE/Pong-v5", frameskip=1, full_action_space=True, max_num_frames_per_episode=0)
    )
    obs, info = env.reset(seed=0)
    assert obs.shape == (4, 84, 84) and info == {"episode_frame_number": 0}
    obs, _, _, _, info = env.step(17)
    assert info["episode_frame_number"] == 4
    assert env.action_space.n == 18


def test_the_preprocessing_wrapper_refuses_a_frame_skipping_env() -> None:
    import ale_py
    import pytest

    gym.register_envs(ale_py)
    with pytest.raises(ValueError, match="Expect the AtariEnv to have `frameskip=1`"):
        SaberPreprocessing(gym.make("ALE/Pong-v5", max_num_frames_per_episode=0))


def test_the_preprocessing_wrapper_refuses_ale_pys_own_frame_cap() -> None:
    """ale-py's cap (108,000 frames in v5) ends the game: SABER would call it a game over."""
    import ale_py
    import pytest

    gym.register_envs(ale_py)
    with pytest.raises(ValueError, match="max_num_frames_per_episode=0"):
        SaberPreprocessing(gym.make("ALE/Pong-v5", frameskip=1))
