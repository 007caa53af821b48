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


class OutputExistsError(SaberError, FileExistsError):
    """A command would overwrite a file it did not make; ``--force`` allows it."""


# What to do about an OSError, by errno: the second half of every "cannot write" line.
_REMEDIES = {
    "EROFS": "the file system is read-only: choose a writable place",
    "EACCES": "permission denied: choose a place you may write, or change its permissions",
    "EPERM": "not permitted: choose a place you may write, or change its permissions",
    "ENOSPC": "the disk is full: free some space and run the same command again",
    "EDQUOT": "the disk quota is used up: free some space and run the same command again",
    "EFBIG": "the file is too large for this file system: choose another place",
    "ENOTDIR": "a part of the path is a file, not a directory: choose another path",
    "EISDIR": "it is a directory, where a file is expected: give a file name",
    "EEXIST": "it exists and is not a directory: choose another path",
    "ENOENT": "no such file or directory: check the path",
    "ENAMETOOLONG": "the name is too long: choose a shorter path",
}


def os_error_remedy(error: OSError) -> str:
    """What went wrong and what to do, in words, for an ``OSError`` (by its errno):
    ``"the disk is full: free some space and run the same command again"``."""
    import errno

    name = errno.errorcode.get(error.errno or 0, "")
    return _REMEDIES.get(name, (error.strerror or str(error) or type(error).__name__).lower())


def os_error_message(error: OSError) -> str:
    """One line for an ``OSError``: the path it concerns and what to do.

    >>> os_error_message(OSError(28, "No space left on device", "runs/a/report.json"))
    'Cannot write runs/a/report.json: the disk is full: free some space and run the same command again'
    """
    import errno

    path = error.filename if error.filename is not None else error.filename2
    where = f" {path}" if path is not None else ""
    if error.errno is None:  # an OSError raised with a message only
        return f"Cannot write{where}: {error}"
    writing = errno.errorcode.get(error.errno, "") in ("EROFS", "ENOSPC", "EDQUOT", "EFBIG")
    return f"Cannot {'write' if writing else 'use'}{where}: {os_error_remedy(error)}"
