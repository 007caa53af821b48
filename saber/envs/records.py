"""Moved to the ground layer: :mod:`saber.protocol.limits` (the time-limit registry) and
:mod:`saber.protocol.episode` (the episode record). Importable here for code written
against saber 0.2 (no warning: an internal path).

``TIME_LIMITS`` is read from the registry on each access, never copied.
"""

from __future__ import annotations

from typing import Any

from saber.protocol import limits
from saber.protocol.episode import EpisodeEnd, EpisodeRecord
from saber.protocol.limits import (
    TimeLimit,
    checkpoint_frames,
    checkpoint_limits,
    time_limit,
)

__all__ = [
    "EpisodeEnd",
    "EpisodeRecord",
    "TimeLimit",
    "checkpoint_frames",
    "checkpoint_limits",
    "time_limit",
]


def __getattr__(name: str) -> Any:
    if name == "TIME_LIMITS":  # the registry itself, so a registered limit shows here too
        return limits.TIME_LIMITS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
