"""The training-time protocol: the mean score of :data:`WINDOW` (100) training episodes at
:data:`TRAINING_CHECKPOINTS` (10M, 50M, 100M, 200M frames), read by the recorders and the
log readers.

>>> checkpoint_label(TRAINING_CHECKPOINTS[0]), parse_frames("1.5e6")
('10M', 1500000)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal, DecimalException
from typing import Any

from saber.errors import SaberError

TRAINING_CHECKPOINTS = (10_000_000, 50_000_000, 100_000_000, 200_000_000)  # frames
WINDOW = 100  # consecutive training episodes averaged at each checkpoint
# The most frames a checkpoint may name: the logs' frame counts are int64 (numpy).
MAX_FRAMES = 2**63 - 1


def checkpoint_label(frames: int) -> str:
    """``10_000_000`` -> ``"10M"``, ``500_000`` -> ``"500k"`` (the inverse of :func:`parse_frames`)."""
    for suffix, unit in (("B", 1_000_000_000), ("M", 1_000_000), ("k", 1_000)):
        if frames >= unit and frames % unit == 0:
            return f"{frames // unit}{suffix}"
    return str(frames)


_SUFFIXES = {"k": 1_000, "m": 1_000_000, "b": 1_000_000_000, "g": 1_000_000_000}


def parse_frames(text: str) -> int:
    """``"10M"`` -> 10,000,000; also ``"500k"``, ``"1.5e6"``, ``"200000000"``, ``"1_000"``.

    Raises:
        SaberError: not a non-negative number of frames.
    """
    match = re.fullmatch(r"\s*([0-9_.eE+]+)\s*([kKmMbBgG]?)\s*", text)
    try:
        if match is None:
            raise ValueError
        # Decimal, not float: "9007199254740993" is that many frames, not the float nearest.
        number = Decimal(match.group(1).replace("_", ""))
        value = number * _SUFFIXES.get(match.group(2).lower(), 1)
    except (ValueError, DecimalException):
        raise SaberError(
            f"Expect a number of frames like 10M, 500k, 1.5e6 or 200000000, actually: {text!r}"
        ) from None
    if value < 0 or value > MAX_FRAMES or value != value.to_integral_value():
        raise SaberError(
            f"Expect a whole, non-negative number of frames up to 2**63 - 1, actually: {text!r}"
        )
    return int(value)


def is_training_line(record: Mapping[str, Any]) -> bool:
    """Whether a JSON line is a training recorder's: it has ``episode_frames`` (the
    episode's own frames) beside ``frames`` (cumulative training frames), and no ``agent``.

    >>> is_training_line({"game": "pong", "frames": 52736, "score": -21.0, "episode_frames": 3296})
    True
    """
    return "episode_frames" in record and "agent" not in record


def is_evaluation_line(record: Mapping[str, Any]) -> bool:
    """Whether a JSON line is an evaluation's (``saber eval``'s ``episodes.jsonl``): it names
    its ``agent``, and its ``frames`` are the episode's own, not cumulative training frames
    (it has no ``episode_frames``).

    >>> is_evaluation_line({"game": "pong", "episode": 0, "agent": "random", "frames": 3296})
    True
    """
    return "agent" in record and "episode_frames" not in record
