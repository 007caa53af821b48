"""SABER environments: ``gymnasium.make("SABER/Pong")`` and ``gymnasium.make_vec(...)``."""

from __future__ import annotations

from saber.envs.core import SaberAtariEnv
from saber.envs.factory import make_env, resolve_rom_id, saber_settings, supported_rom_ids
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
from saber.protocol import (
    FRAMES_PER_SECOND,
    NUM_ACTIONS,
    EpisodeEnd,
    EpisodeRecord,
    SaberSettings,
    TimeLimit,
    checkpoint_frames,
    checkpoint_limits,
    time_limit,
)
from saber.registration import register_saber_envs

__all__ = [
    "FRAMES_PER_SECOND",
    "NUM_ACTIONS",
    "RAW_REWARD",
    "ClipRewardKeepRaw",
    "EpisodeEnd",
    "EpisodeRecord",
    "FrameLimit",
    "HideLives",
    "NoRewardTimeout",
    "RolloverCorrection",
    "SaberAtariEnv",
    "SaberEpisodeStatistics",
    "SaberMultiGameVectorEnv",
    "SaberSettings",
    "SaberVectorEnv",
    "TimeLimit",
    "checkpoint_frames",
    "checkpoint_limits",
    "make_env",
    "make_vec_env",
    "register_saber_envs",
    "resolve_rom_id",
    "saber_settings",
    "supported_rom_ids",
    "time_limit",
]


def make_vec_env(game: str, num_envs: int, **kwargs: object) -> SaberVectorEnv:
    """``num_envs`` SABER envs of ``game`` as one :class:`SaberVectorEnv` (see its arguments)."""
    return SaberVectorEnv(game, num_envs, **kwargs)  # type: ignore[arg-type]


register_saber_envs()
