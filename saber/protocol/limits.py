"""The time limits at which SABER reports scores: one registry, :data:`TIME_LIMITS`, read
when used (never copied at import), so a new limit is one more line (docs/environments.md).

>>> [limit.name for limit in TIME_LIMITS]
['5min', '30min', 'saber']
>>> time_limit("30 minutes").frames, time_limit("unlimited").record_field
(108000, 'score')
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass

_FRAMES_PER_MINUTE = 3_600  # 60 frames per second


@dataclass(frozen=True)
class ScoreTimeLimit:
    """A time limit at which scores are reported: a column of the score tables, a key of
    the episode record, not a wrapper (Gymnasium's ``TimeLimit`` truncates an episode;
    saber's truncating wrapper is :class:`saber.envs.FrameLimit`).

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


#: The registry of time limits. Order is report order: checkpoints by frames, then SABER's
#: own end.
TIME_LIMITS: tuple[ScoreTimeLimit, ...] = (
    ScoreTimeLimit("5min", 18_000, "5 minutes", "score_5min"),
    ScoreTimeLimit("30min", 108_000, "30 minutes", "score_30min"),
    ScoreTimeLimit("saber", None, "SABER (unlimited)", "score", aliases=("unlimited", "100h")),
)


def _normalize(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def time_limit(name: str) -> ScoreTimeLimit:
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


def time_limit_names() -> tuple[str, ...]:
    """The names of the registered time limits, in report order.

    >>> time_limit_names()
    ('5min', '30min', 'saber')
    """
    return tuple(limit.name for limit in TIME_LIMITS)


def saber_limit() -> ScoreTimeLimit:
    """SABER's own end of the episode: the registered limit without a frame count.

    >>> saber_limit().record_field
    'score'
    """
    (limit,) = (limit for limit in TIME_LIMITS if limit.frames is None)
    return limit


def checkpoint_limits() -> tuple[ScoreTimeLimit, ...]:
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
