"""SABER environments: ``gymnasium.make("SABER/Pong")`` and ``gymnasium.make_vec(...)``."""

from __future__ import annotations

from typing import Any

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
from saber.errors import warn_deprecated
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


def _make_vec_env(game: str, num_envs: int, **kwargs: object) -> SaberVectorEnv:
    """``num_envs`` SABER envs of ``game`` as one :class:`SaberVectorEnv` (saber 0.4's
    ``make_vec_env``, deprecated: ``gymnasium.make_vec`` is the one spelling)."""
    return SaberVectorEnv(game, num_envs, **kwargs)  # type: ignore[arg-type]


def __getattr__(name: str) -> Any:
    if name == "make_vec_env":
        warn_deprecated("saber.envs.make_vec_env", 'gymnasium.make_vec("SABER/<Game>", num_envs)')
        return _make_vec_env
    raise AttributeError(f"module 'saber.envs' has no attribute {name!r}")


register_saber_envs()
