"""Env factories the check tests probe (also ``module:factory`` targets for the CLI)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

import saber


def saber_env(game: str = "pong") -> gym.Env:
    return saber.make_env(game)


def gymnasium_preprocessing() -> gym.Env:
    """Gymnasium's AtariPreprocessing with a life-loss end and up to 30 no-op starts."""
    base = gym.make("ALE/Breakout-v5", frameskip=1)
    return gym.wrappers.AtariPreprocessing(base, terminal_on_life_loss=True, noop_max=30)


def saber_with_time_limit() -> gym.Env:
    """A user's 27,000-step limit (30 minutes) above SABER/Pong."""
    return gym.wrappers.TimeLimit(gym.make("SABER/Pong"), max_episode_steps=27_000)


def saber_with_clipping() -> gym.Env:
    """A user's reward clipper above SABER/Pong."""
    return gym.wrappers.ClipReward(gym.make("SABER/Pong"), -1.0, 1.0)


def sync_vector_saber() -> gym.vector.VectorEnv:
    return gym.vector.SyncVectorEnv([lambda: gym.make("SABER/Pong")] * 2)


def sb3_atari_wrapper() -> gym.Env:
    from stable_baselines3.common.atari_wrappers import AtariWrapper

    return AtariWrapper(gym.make("BreakoutNoFrameskip-v4"))


def saber_with_fixed_cap() -> gym.Env:
    """SABER/Pong without its stuck timeout, capped at 4,500 steps (18,000 frames) instead:
    a fixed episode cap, not a timeout without reward."""
    return gym.wrappers.TimeLimit(
        gym.make("SABER/Pong", max_frames_without_reward=None), max_episode_steps=4_500
    )


class TimeoutUntilFirstReward(gym.Wrapper):
    """Truncates after 4,500 steps without reward, but only while the episode has had no
    reward yet: a stuck timeout that stops working at the first reward."""

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self.steps, self.rewarded = 0, False
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.steps += 1
        self.rewarded |= reward != 0
        return (
            obs,
            reward,
            terminated,
            truncated or (not self.rewarded and self.steps >= 4_500),
            info,
        )


def saber_timeout_until_first_reward() -> gym.Env:
    return TimeoutUntilFirstReward(gym.make("SABER/Pong", max_frames_without_reward=None))


def saber_with_normalizer() -> gym.Env:
    """Gymnasium's reward normalizer above SABER/Pong."""
    return gym.wrappers.NormalizeReward(gym.make("SABER/Pong"))


def saber_clipped_by_option() -> gym.Env:
    """SABER/Pong with its own reward clipping (the agent sees [-1, 1])."""
    return gym.make("SABER/Pong", clip_rewards=True)


class MinimalActions(gym.ActionWrapper):
    """Pong's 6 minimal actions (NOOP, FIRE, RIGHT, LEFT, RIGHTFIRE, LEFTFIRE) over 18."""

    ACTIONS = (0, 1, 3, 4, 11, 12)

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.action_space = gym.spaces.Discrete(len(self.ACTIONS))

    def action(self, action: Any) -> int:
        return self.ACTIONS[int(action)]


def saber_with_six_actions() -> gym.Env:
    return MinimalActions(gym.make("SABER/Pong"))


def saber_without_sticky_actions() -> gym.Env:
    return gym.make("SABER/Pong", repeat_action_probability=0.0)


def saber_without_timeout() -> gym.Env:
    return gym.make("SABER/Pong", max_frames_without_reward=None)


def sb3_atari_wrapper_over_v5() -> gym.Env:
    """SB3's AtariWrapper over ALE/Pong-v5, as a user writes it: v5's frame skip of 4
    under the wrapper's own 4 (16 frames a step), v5's sticky actions kept."""
    from stable_baselines3.common.atari_wrappers import AtariWrapper

    return AtariWrapper(gym.make("ALE/Pong-v5"))
