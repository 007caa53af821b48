"""SABER environments: ``gymnasium.make("SABER/Pong")`` and ``gymnasium.make_vec(...)``."""

from __future__ import annotations

from saber.envs.core import SaberAtariEnv
from saber.envs.factory import make_env, saber_settings
from saber.envs.multigame import SaberMultiGameVectorEnv
from saber.envs.vector import SaberVectorEnv
from saber.envs.wrappers import (
    RAW_REWARD,
    ClipRewardKeepRaw,
    FrameLimit,
    HideLives,
    NoRewardTimeout,
    RolloverCorrection,
    SaberEpisodeStatistics,
)
from saber.registration import env_id, register_saber_envs

__all__ = [
    "RAW_REWARD",
    "ClipRewardKeepRaw",
    "FrameLimit",
    "HideLives",
    "NoRewardTimeout",
    "RolloverCorrection",
    "SaberAtariEnv",
    "SaberEpisodeStatistics",
    "SaberMultiGameVectorEnv",
    "SaberVectorEnv",
    "env_id",
    "make_env",
    "saber_settings",
]


register_saber_envs()
