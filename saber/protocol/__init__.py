"""The SABER rules and the formats they define: the ground layer every other layer reads.

It imports no gymnasium, ale-py or cv2, and nothing of saber but :mod:`saber.errors` and
:mod:`saber.version`; docs/architecture.md lists its modules.

>>> from saber.protocol import SaberSettings, time_limit
>>> SaberSettings().is_compliant, time_limit("5m").frames
(True, 18000)
"""

from __future__ import annotations

from saber.protocol.episode import EpisodeEnd, EpisodeRecord
from saber.protocol.limits import TIME_LIMITS, ScoreTimeLimit, checkpoint_frames, time_limit
from saber.protocol.replay import Replay, ReplayHeader, read_replay
from saber.protocol.seeds import episode_seed
from saber.protocol.settings import FRAMES_PER_SECOND, NUM_ACTIONS, SABER_CAP_FRAMES, SaberSettings

__all__ = [
    "FRAMES_PER_SECOND",
    "NUM_ACTIONS",
    "SABER_CAP_FRAMES",
    "TIME_LIMITS",
    "EpisodeEnd",
    "EpisodeRecord",
    "Replay",
    "ReplayHeader",
    "SaberSettings",
    "ScoreTimeLimit",
    "checkpoint_frames",
    "episode_seed",
    "read_replay",
    "time_limit",
]
