"""Tools for training loops: episode recorders and live metrics, videos, the SB3 callback.

These are what a user puts in their own training code (the evaluation engine is
:mod:`saber.harness`):

* :mod:`saber.training.recorders`: :class:`TrainingRecorder` and
  :class:`VectorTrainingRecorder` log every training episode with the cumulative training
  frames, and give SABER's training-time metrics (:class:`TrainingMetrics`); with
  ``replays=True`` they keep every episode's replay (:mod:`saber.training.replays`), so
  that ``saber verify LOG`` checks them;
* :mod:`saber.training.video`: :class:`VideoRecorder` and :class:`VectorVideoRecorder`
  (extra ``video``), and the films of ``saber eval --video``;
* :mod:`saber.training.sb3`: Stable-Baselines3 (extra ``sb3``; imported from its module,
  not here): :func:`~saber.training.sb3.make_vec_env` (raw scores in SB3's logs under
  ``clip_rewards``), the ``VecEnv`` adapter :class:`~saber.training.sb3.SaberVecEnv`,
  :class:`~saber.training.sb3.SaberMetricsCallback`;
* :mod:`saber.training.zoo`: RL Zoo's Atari hyperparameters for SABER
  (``--conf-file saber.training.zoo``; extra ``zoo``).

The training log's readers (:func:`training_scores`) live in :mod:`saber.reports`, and are
re-exported here. Before saber 0.3 these lived in ``saber.harness.training``,
``saber.harness.video`` and ``saber.harness.sb3`` (removed in saber 0.4).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from saber.protocol.training import TRAINING_CHECKPOINTS, WINDOW, parse_frames
    from saber.reports.training_log import CheckpointScore, format_training_scores, training_scores
    from saber.training.recorders import (
        FrameCounter,
        TrainingLog,
        TrainingMetrics,
        TrainingRecorder,
        VectorTrainingRecorder,
        saber_game,
        saber_record,
    )
    from saber.training.video import VectorVideoRecorder, VideoRecorder, VideoWriter

# Imported when first used (PEP 562): the harness's worker processes import
# saber.training.video for the films, and must not pay for the reports (SciPy: about
# 0.7 s of CPU per worker).
_PROTOCOL, _READERS = "saber.protocol.training", "saber.reports.training_log"
_RECORDERS, _VIDEO = "saber.training.recorders", "saber.training.video"
_HOME_OF = {
    "TRAINING_CHECKPOINTS": _PROTOCOL,
    "WINDOW": _PROTOCOL,
    "parse_frames": _PROTOCOL,
    "CheckpointScore": _READERS,
    "format_training_scores": _READERS,
    "training_scores": _READERS,
    "FrameCounter": _RECORDERS,
    "TrainingLog": _RECORDERS,
    "TrainingMetrics": _RECORDERS,
    "TrainingRecorder": _RECORDERS,
    "VectorTrainingRecorder": _RECORDERS,
    "saber_game": _RECORDERS,
    "saber_record": _RECORDERS,
    "VectorVideoRecorder": _VIDEO,
    "VideoRecorder": _VIDEO,
    "VideoWriter": _VIDEO,
}

__all__ = [
    "TRAINING_CHECKPOINTS",
    "WINDOW",
    "CheckpointScore",
    "FrameCounter",
    "TrainingLog",
    "TrainingMetrics",
    "TrainingRecorder",
    "VectorTrainingRecorder",
    "VectorVideoRecorder",
    "VideoRecorder",
    "VideoWriter",
    "format_training_scores",
    "parse_frames",
    "saber_game",
    "saber_record",
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
