"""Exceptions raised by saber (standard library only, so every module can import them)."""

from __future__ import annotations


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


class EnvPoolError(SaberError, ValueError):
    """A call of :mod:`saber.envpool` that cannot be served: an unknown ``env_type``, ``gym``
    missing, a ``batch_size`` that does not divide ``num_envs``, env ids out of order."""
