"""Recorded episodes, played again: verification (``saber verify``), films (``saber
replay --video``) and datasets, on the one re-simulation of :mod:`saber.replay.simulate`.

The replay format itself (one writer, one reader) is :mod:`saber.protocol.replay`; the
harness records a replay of every episode it plays (:mod:`saber.harness.replays`).
"""

from __future__ import annotations

from saber.replay.dataset import RecordedEpisode, recorded_episode, recorded_episodes
from saber.replay.export import export_minari
from saber.replay.simulate import Resimulation
from saber.replay.verify import VerifyResult, verify_run, verify_training_log

__all__ = [
    "RecordedEpisode",
    "Resimulation",
    "VerifyResult",
    "export_minari",
    "recorded_episode",
    "recorded_episodes",
    "verify_run",
    "verify_training_log",
]
