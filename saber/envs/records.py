"""The time limits SABER reports and the record of one finished episode.

One registry, :data:`TIME_LIMITS`, names every time limit at which a score is reported
(protocol section 4): the older 5- and 30-minute limits, read as checkpoints of one
episode, and SABER's own end (the 100-hour cap with the 5-minute stuck timeout). The
env, the harness, the score files, the report tables and the plots all read it, so a
new column (say one hour) is one more line in :data:`TIME_LIMITS`:

    TimeLimit("1h", 216_000, "1 hour", "score_1h"),

Readers look the registry up when they run (``records.TIME_LIMITS``, :func:`time_limit`,
:func:`checkpoint_limits`), never copy it at import.

:class:`EpisodeRecord` is the one definition of an episode's result: the env puts its
:meth:`~EpisodeRecord.to_dict` in ``info["saber"]`` and the harness writes it to
``episodes.jsonl`` (the keys of both are those of saber 0.1, so old files stay readable).

>>> [limit.name for limit in TIME_LIMITS]
['5min', '30min', 'saber']
>>> time_limit("30 minutes").frames, time_limit("unlimited").record_field
(108000, 'score')
"""

from __future__ import annotations

import enum
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "TIME_LIMITS",
    "EpisodeEnd",
    "EpisodeRecord",
    "TimeLimit",
    "checkpoint_frames",
    "checkpoint_limits",
    "time_limit",
]

_FRAMES_PER_MINUTE = 3_600  # 60 frames per second


@dataclass(frozen=True)
class TimeLimit:
    """A time limit at which scores are reported.

    Attributes:
        name: short name in score files and report file names (``"5min"``).
        frames: emulator frames (60 per second) at which the score is read, or ``None``
            for SABER's own end of the episode (cap and stuck timeout).
        title: name in tables and figures (``"5 minutes"``).
        record_field: key of this score in an episode record (``"score_5min"``).
        aliases: more spellings :func:`time_limit` accepts (beyond the name, title, record
            field and, for frame limits, ``"<minutes>m"``/``"<hours>h"`` forms).
    """

    name: str
    frames: int | None
    title: str
    record_field: str
    aliases: tuple[str, ...] = ()

    def spellings(self) -> set[str]:
        """Every normalized spelling of this limit (see :func:`time_limit`)."""
        words = {self.name, self.title, self.record_field, *self.aliases}
        if self.frames is not None and self.frames % _FRAMES_PER_MINUTE == 0:
            minutes = self.frames // _FRAMES_PER_MINUTE
            words |= {f"{minutes}{unit}" for unit in ("m", "min", "mins", "minute", "minutes")}
            if minutes % 60 == 0:
                hours = minutes // 60
                words |= {f"{hours}{unit}" for unit in ("h", "hr", "hour", "hours")}
        return {_normalize(word) for word in words}


# The registry. Order is report order: checkpoints by frames, then SABER's own end.
TIME_LIMITS: tuple[TimeLimit, ...] = (
    TimeLimit("5min", 18_000, "5 minutes", "score_5min"),
    TimeLimit("30min", 108_000, "30 minutes", "score_30min"),
    TimeLimit("saber", None, "SABER (unlimited)", "score", aliases=("unlimited", "100h")),
)


def _normalize(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def time_limit(name: str) -> TimeLimit:
    """The registered time limit of any spelling (``"5min"``, ``"5m"``, ``"unlimited"``).

    Raises:
        ValueError: no time limit is spelled so; the message lists the known names.

    >>> time_limit("5m").name
    '5min'
    """
    key = _normalize(str(name))
    for limit in TIME_LIMITS:
        if key in limit.spellings():
            return limit
    raise ValueError(
        f"unknown time limit {name!r}; expected one of {', '.join(t.name for t in TIME_LIMITS)}"
    )


def checkpoint_limits() -> tuple[TimeLimit, ...]:
    """The time limits read as checkpoints of an episode (those with a frame count).

    >>> [(limit.name, limit.frames) for limit in checkpoint_limits()]
    [('5min', 18000), ('30min', 108000)]
    """
    return tuple(limit for limit in TIME_LIMITS if limit.frames is not None)


def checkpoint_frames(frames: Mapping[str, int] | None = None) -> dict[str, int]:
    """The checkpoints at which an env records scores: ``{name: emulator frame}``.

    ``None`` gives the registry's (:func:`checkpoint_limits`); a mapping is checked and
    copied (names are strings, frames positive integers). A name of the registry keeps its
    record field (``"5min"`` -> ``score_5min``); any other is written ``score_<name>``.

    >>> checkpoint_frames()
    {'5min': 18000, '30min': 108000}
    >>> checkpoint_frames({"1h": 216_000})
    {'1h': 216000}

    Raises:
        ValueError: a name that is not a string or a frame that is not a positive integer.
    """
    if frames is None:
        return {limit.name: int(limit.frames) for limit in checkpoint_limits()}  # type: ignore[arg-type]
    checked: dict[str, int] = {}
    for name, frame in dict(frames).items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"Expect checkpoint names to be strings, actually: {name!r}")
        if isinstance(frame, bool) or not isinstance(frame, numbers.Integral) or frame <= 0:
            raise ValueError(
                f"Expect the checkpoint {name!r} to be a positive number of emulator frames "
                f"(60 per second), actually: {frame!r}"
            )
        checked[name] = int(frame)
    return checked


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

    def score_at(self, limit: str | TimeLimit) -> float:
        """The score at a time limit (a name in any spelling, or a :class:`TimeLimit`)."""
        limit = limit if isinstance(limit, TimeLimit) else time_limit(limit)
        return self.score if limit.frames is None else self.checkpoints[limit.name]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: ``score``, the record field of each checkpoint (``score_<name>``
        for names outside the registry), ``frames``, ``steps``, ``end``, ``rollovers``,
        ``infinite``, ``seconds`` (in that order)."""
        record: dict[str, Any] = {}
        for limit in TIME_LIMITS:
            if limit.frames is None:
                record[limit.record_field] = float(self.score)
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
        """The record of a dict written by :meth:`to_dict` (or by saber 0.1: ``t`` for
        ``seconds``). Checkpoints missing from the dict are NaN. Extra keys are ignored."""
        seconds = record.get("seconds", record.get("t", 0.0))
        (saber,) = (limit for limit in TIME_LIMITS if limit.frames is None)
        return cls(
            score=float(record[saber.record_field]),
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
