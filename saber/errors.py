"""Exceptions raised by saber (standard library only, so every module can import them)."""

from __future__ import annotations


def shown(value: object) -> str:
    """A value from a file (a path, a version) as an error message shows it: as it is, or
    quoted like a Python string when it holds a line break or another control character,
    so the message stays one line.

    >>> shown("runs/a"), shown("runs/a\\nb")
    ('runs/a', "'runs/a\\\\nb'")
    """
    text = str(value)
    return text if text.isprintable() else repr(text)


class SaberError(Exception):
    """Base class of every error saber raises on purpose."""


class UnknownGameError(SaberError, KeyError):
    """A game name that matches no known game.

    It is also a ``KeyError``, so code that looks games up in a mapping keeps working.
    """

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class ScoreFileError(SaberError, ValueError):
    """A score table that cannot be read: missing columns, bad numbers, unknown games."""


class ProtocolError(SaberError, ValueError):
    """Settings that are invalid, or that break the SABER protocol where it is required."""


class UnknownSettingError(ProtocolError, TypeError):
    """A keyword that is not a SABER setting.

    Also a ``TypeError`` saying "unexpected keyword argument", as Python says of any
    unknown keyword: libraries that try a keyword and retry without it on that error
    (TorchRL's ``GymEnv`` passes ``frameskip``) then work with ``SABER/<Game>`` ids.
    """
