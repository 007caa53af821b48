"""Env factories the check tests probe (also ``module:factory`` targets for the CLI)."""

from __future__ import annotations

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
