"""The record of one finished episode: the one definition of an episode's result.

The env puts :meth:`EpisodeRecord.to_dict` in ``info["saber"]`` and the harness writes it
to ``episodes.jsonl``.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from saber.protocol.limits import ScoreTimeLimit, checkpoint_limits, saber_limit, time_limit


class EpisodeEnd(str, enum.Enum):
    """How an episode ended (the ``end`` of an :class:`EpisodeRecord`); equal to its string.

    A ``str`` mixin rather than ``enum.StrEnum``, which needs Python 3.11; ``str()`` and
    formatting give the value, as StrEnum's do.

    >>> str(EpisodeEnd.GAME_OVER), f"{EpisodeEnd.TIME_CAP}", EpisodeEnd.GAME_OVER == "game_over"
    ('game_over', 'time_cap', True)
    """

    __str__ = str.__str__
    __format__ = str.__format__

    GAME_OVER = "game_over"
    STUCK_TIMEOUT = "stuck_timeout"  # 5 minutes without a non-zero reward
    TIME_CAP = "time_cap"  # the frame cap (100 hours of play)
    TRUNCATED = "truncated"  # by a wrapper outside the SABER rules (not a SABER ending)


@dataclass(frozen=True)
class EpisodeRecord:
    """The SABER result of one finished episode.

    Attributes:
        score: sum of the raw rewards, rollovers corrected (points), at SABER's own end.
        checkpoints: ``{time limit name: score}`` for each of :func:`checkpoint_limits`:
            the score at that frame (equal to ``score`` if the episode ended before),
            which for a policy that does not see the clock is the score of an episode
            capped there.
        frames: emulator frames played.
        steps: agent steps played.
        end: how the episode ended.
        rollovers: score-counter rollovers seen (count).
        infinite: reached the 100-hour cap while still scoring (SABER's infinite gameplay).
        seconds: wall-clock duration of the episode.

    >>> record = EpisodeRecord(3.0, {"5min": 1.0, "30min": 3.0}, 20_000, 5_000, "game_over")
    >>> record.to_dict()["score_5min"], record.score_at("saber")
    (1.0, 3.0)
    >>> EpisodeRecord.from_dict(record.to_dict()) == record
    True
    """

    score: float
    checkpoints: Mapping[str, float]
    frames: int
    steps: int
    end: EpisodeEnd | str
    rollovers: int = 0
    infinite: bool = False
    seconds: float = 0.0

    def score_at(self, limit: str | ScoreTimeLimit) -> float:
        """The score at a time limit (a name in any spelling, or a :class:`ScoreTimeLimit`)."""
        limit = limit if isinstance(limit, ScoreTimeLimit) else time_limit(limit)
        return self.score if limit.frames is None else self.checkpoints[limit.name]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: ``score``, the record field of each checkpoint (``score_<name>``
        for names outside the registry), ``frames``, ``steps``, ``end``, ``rollovers``,
        ``infinite``, ``seconds`` (in that order)."""
        record: dict[str, Any] = {}
        record[saber_limit().record_field] = float(self.score)
        fields = {limit.name: limit.record_field for limit in checkpoint_limits()}
        for name, value in self.checkpoints.items():
            record[fields.get(name, f"score_{name}")] = float(value)
        record.update(
            frames=int(self.frames),
            steps=int(self.steps),
            end=str(self.end),
            rollovers=int(self.rollovers),
            infinite=bool(self.infinite),
            seconds=round(float(self.seconds), 6),
        )
        return record

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> EpisodeRecord:
        """The record of a dict written by :meth:`to_dict`. Checkpoints missing from the
        dict are NaN. Extra keys are ignored."""
        seconds = record.get("seconds", 0.0)
        return cls(
            score=float(record[saber_limit().record_field]),
            checkpoints={
                limit.name: float(record.get(limit.record_field, math.nan))
                for limit in checkpoint_limits()
            },
            frames=int(record["frames"]),
            steps=int(record["steps"]),
            end=EpisodeEnd(record["end"]) if record["end"] in _END_VALUES else record["end"],
            rollovers=int(record.get("rollovers", 0)),
            infinite=bool(record.get("infinite", False)),
            seconds=float(seconds),
        )


_END_VALUES = frozenset(end.value for end in EpisodeEnd)
