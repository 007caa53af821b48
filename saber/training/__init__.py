"""Tools for training loops: episode recorders and live metrics, videos, the SB3 callback,
RL Zoo's hyperparameters (docs/rl-libraries.md, docs/harness.md "Training-time scores").
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from saber.reports.training_log import CheckpointScore, format_training_scores, training_scores
    from saber.training.episode_log import TrainingLog
    from saber.training.recorders import TrainingRecorder, VectorTrainingRecorder
    from saber.training.video import VectorVideoRecorder, VideoRecorder

# Imported when first used (PEP 562): the harness's worker processes import
# saber.training.video for the films, and must not pay for the reports (SciPy: about
# 0.7 s of CPU per worker).
_READERS = "saber.reports.training_log"
_RECORDERS, _VIDEO = "saber.training.recorders", "saber.training.video"
_LOG = "saber.training.episode_log"
_HOME_OF = {
    "CheckpointScore": _READERS,
    "format_training_scores": _READERS,
    "training_scores": _READERS,
    "TrainingLog": _LOG,
    "TrainingRecorder": _RECORDERS,
    "VectorTrainingRecorder": _RECORDERS,
    "VectorVideoRecorder": _VIDEO,
    "VideoRecorder": _VIDEO,
}

__all__ = [
    "CheckpointScore",
    "TrainingLog",
    "TrainingRecorder",
    "VectorTrainingRecorder",
    "VectorVideoRecorder",
    "VideoRecorder",
    "format_training_scores",
    "training_scores",
]


def __getattr__(name: str) -> Any:
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'saber.training' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next lookup is a plain one
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
