"""Recorded episodes, played again: verification (``saber verify``), films (``saber
replay --video``) and datasets, on the one re-simulation of :mod:`saber.replay.simulate`.
The format is :mod:`saber.protocol.replay`; docs/verify.md describes all three.
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
