"""Moved to :mod:`saber.registration` (which imports Gymnasium only when it registers);
importable here for code written against saber 0.2."""

from __future__ import annotations

from saber.registration import env_id, register_saber_envs

__all__ = ["env_id", "register_saber_envs"]
