"""Protocol section 3 on real frames: max of the last two frames, grayscale, bilinear 84x84, 4-stack."""

from __future__ import annotations

import cv2
import gymnasium as gym
import numpy as np
import pytest
from ale_py import Action

from saber.envs import (
    FrameLimit,
    NoRewardTimeout,
    RolloverCorrection,
    SaberAtariEnv,
    SaberEpisodeStatistics,
    saber_settings,
)
from saber.envs.emulator import SeedStream
from saber.protocol.settings import SaberSettings
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


def test_the_core_is_a_real_env_and_the_unwrapped_env_of_the_stack() -> None:
    env = gym.make("SABER/Pong")
    core = env.unwrapped
    assert type(core) is SaberAtariEnv and core.rom_id == "pong"
    assert saber_settings(env) is core.saber_settings
    obs, info = core.reset(seed=0)
    assert obs.shape == (4, 84, 84) and info == {"episode_frame_number": 0}
    _, reward, terminated, truncated, info = core.step(17)
    assert info == {"episode_frame_number": 4}
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert core.action_space.n == 18
    meanings = core.get_action_meanings()
    assert (
        len(meanings) == 18 and meanings[:2] == ["NOOP", "FIRE"] and meanings[-1] == "DOWNLEFTFIRE"
    )


def test_every_wrapper_of_the_stack_calls_the_env_it_wraps() -> None:
    """The rules sit on a real env: a user wrapper put directly above the core is honoured
    (here Gymnasium's TransformReward doubles every reward, and SABER's record sums the
    doubled rewards), which the old preprocessing wrapper, driving ale-py's env through
    private attributes, silently skipped."""
    doubled = SaberEpisodeStatistics(
        gym.wrappers.TransformReward(SaberAtariEnv("breakout"), lambda reward: 2 * reward)
    )
    plain = SaberEpisodeStatistics(SaberAtariEnv("breakout"))
    totals = []
    for env in (doubled, plain):
        env.reset(seed=3)
        total = 0.0
        for action in random_actions(2_000):
            _, reward, terminated, truncated, info = env.step(action)
            total += reward
            if terminated or truncated:
                break
        assert terminated and info["saber"]["score"] == total
        totals.append(total)
    assert totals[1] > 0 and totals[0] == 2 * totals[1]


def test_the_stack_built_by_hand_on_the_core_is_gym_make() -> None:
    """docs/environments.md's hand-built stack plays exactly the episodes of gym.make."""
    env = SaberAtariEnv("breakout")
    env = SaberEpisodeStatistics(FrameLimit(NoRewardTimeout(RolloverCorrection(env))))
    made = gym.make("SABER/Breakout")
    for stack in (env, made):
        stack.reset(seed=4)
    for action in random_actions(1_500):
        mine, theirs = env.step(action), made.step(action)
        np.testing.assert_array_equal(mine[0], theirs[0])
        assert mine[1:4] == theirs[1:4]
        if mine[2] or mine[3]:
            assert mine[4]["saber"].keys() == theirs[4]["saber"].keys()
            break
    assert mine[2], "the episode should end within 1,500 random steps"


def test_the_core_renders_the_colour_screen_at_one_frame_per_step() -> None:
    env = gym.make("SABER/Pong", render_mode="rgb_array")
    env.reset(seed=0)
    env.step(0)
    frame = env.render()
    assert frame.shape == (210, 160, 3) and frame.dtype == np.uint8
    np.testing.assert_array_equal(frame, env.unwrapped.ale.getScreenRGB())
    assert env.metadata["render_fps"] == 15  # 60 frames per second / 4 frames per step
    with pytest.raises(ValueError, match="render_mode"):
        SaberAtariEnv("pong", render_mode="rgb")


def test_the_core_uses_the_settings_it_is_given() -> None:
    core = SaberAtariEnv("pong", SaberSettings(frame_skip=2, screen_size=42, stack_size=2))
    obs, _ = core.reset(seed=0)
    assert obs.shape == (2, 42, 42)
    assert core.step(0)[4]["episode_frame_number"] == 2
    assert core.ale.getFloat("repeat_action_probability") == 0.25
