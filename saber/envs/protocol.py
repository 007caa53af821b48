"""Moved to the ground layer, :mod:`saber.protocol.settings`; importable here for code
written against saber 0.2 (no warning: an internal path).

``CHECKPOINT_FRAMES`` is :func:`saber.protocol.checkpoint_frames` read on each access
(it was a copy of the registry taken at import).
"""

from __future__ import annotations

from typing import Any

from saber.envs.rules import correct_rollover
from saber.protocol.limits import checkpoint_frames
from saber.protocol.settings import (
    FRAMES_PER_SECOND,
    NUM_ACTIONS,
    ROLLOVER_MODES,
    SABER_CAP_FRAMES,
    RolloverMode,
    SaberSettings,
)

__all__ = [
    "FRAMES_PER_SECOND",
    "NUM_ACTIONS",
    "ROLLOVER_MODES",
    "SABER_CAP_FRAMES",
    "RolloverMode",
    "SaberSettings",
    "correct_rollover",
]


def __getattr__(name: str) -> Any:
    if name == "CHECKPOINT_FRAMES":
        return checkpoint_frames()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
