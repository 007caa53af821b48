"""Exceptions raised by saber, its exit codes, and the words of its messages: a value shown
on one line (:func:`shown`), a count that agrees with its noun (:func:`counted`: ``1
episode``, ``2 episodes``), a word after its article (:func:`with_article`: ``an int``).
Standard library only, so every module can import them."""

from __future__ import annotations

import enum
import os
from typing import ClassVar


class ExitCode(enum.IntEnum):
    """The exit status of every ``saber`` command: one meaning per code (docs/exit-codes.md).

    ``FAILED`` is 1 as in ``diff`` and ``grep`` (the command ran and its answer is no) and
    ``USAGE`` 2 as click's own usage errors are; 130 and 143 are the shell's 128 + signal.
    A :class:`SaberError` ends a command with its class's :attr:`SaberError.exit_code`.
    """

    OK = 0  # the command did what it was asked, and its verdict (if any) passes
    FAILED = 1  # a verdict that fails: a rule fails, a replay mismatches, an episode failed
    USAGE = 2  # a command line that cannot be used: an unknown flag, flags that conflict
    BAD_INPUT = 3  # what the command line names is refused: a module, a file, a directory
    UNFINISHED = 4  # no verdict reached: rules unknown or not probed, a run stopped early
    INTERRUPTED = 130  # Ctrl-C (SIGINT)
    TERMINATED = 143  # SIGTERM


def shown(value: object) -> str:
    """A value from a file (a path, a version) as an error message shows it: as it is, or
    quoted like a Python string when it holds a line break or another control character,
    so the message stays one line.

    >>> shown("runs/a"), shown("runs/a\\nb")
    ('runs/a', "'runs/a\\\\nb'")
    """
    text = str(value)
    return text if text.isprintable() else repr(text)


# Words that start with a vowel letter but a consonant sound ("a uniform", "a one-off").
_CONSONANT_SOUNDS = ("uni", "use", "usu", "uti", "eu", "one", "once")
# Words that start with a consonant letter but a vowel sound, as Python types are read
# aloud ("an ndarray", "an hour").
_VOWEL_SOUNDS = ("nd", "hour", "honest", "honour")


def _plural(noun: str) -> str:
    """The plural of an English ``noun`` (its last word): ``entry`` -> ``entries``,
    ``worker process`` -> ``worker processes``, ``episode`` -> ``episodes``."""
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        return noun[:-1] + "ies"
    return noun + "s"


def counted(count: int, noun: str, plural_form: str | None = None) -> str:
    """``count`` and ``noun`` in agreement: ``counted(1, "episode")`` is ``1 episode``,
    ``counted(3, "entry")`` is ``3 entries``; ``plural_form`` for an irregular noun."""
    return f"{count} {noun if count == 1 else plural_form or _plural(noun)}"


def with_article(word: str) -> str:
    """``word`` after ``a`` or ``an``, by how it is read: ``an int``, ``a float``,
    ``an ndarray``, ``a NoneType``."""
    lower = word.lower()
    vowel = lower[:1] in ("a", "e", "i", "o", "u")
    if lower.startswith(_CONSONANT_SOUNDS):
        vowel = False
    elif lower.startswith(_VOWEL_SOUNDS):
        vowel = True
    return f"{'an' if vowel else 'a'} {word}"


class SaberError(Exception):
    """Base class of every error saber raises on purpose.

    A ``saber`` command that ends with one says its message in one line and exits with
    :attr:`exit_code`: refused input, unless the class says the run stopped unfinished.
    """

    exit_code: ClassVar[ExitCode] = ExitCode.BAD_INPUT


class UnknownGameError(SaberError, KeyError):
    """A game name that matches no known game.

    It is also a ``KeyError``, so code that looks games up in a mapping keeps working.
    """

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class ScoreFileError(SaberError, ValueError):
    """A score table that cannot be read: missing columns, bad numbers, unknown games."""


class ReportDocumentError(SaberError, ValueError):
    """A JSON document that is not a SABER report of this schema (``Report.from_dict``)."""


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


# What to do about an OSError, by errno: the end of every "cannot write" line.
_REMEDIES = {
    "EROFS": "choose a writable place",
    "EACCES": "choose a place you may write, or change its permissions",
    "EPERM": "choose a place you may write, or change its permissions (or attributes: lsattr)",
    "ENOSPC": "free some space and run the same command again",
    "EDQUOT": "free some space and run the same command again",
    "EFBIG": "choose a file system that holds larger files",
    "ENOTDIR": "a part of the path is a file: choose another path",
    "EISDIR": "give a file name",
    "EEXIST": "a file is where a directory should be: choose another path",
    "ENOENT": "check the path",
    "ENAMETOOLONG": "choose a shorter path",
}
_WRITING = ("EROFS", "ENOSPC", "EDQUOT", "EFBIG")  # errors only a write meets


def os_error_remedy(error: OSError) -> str:
    """What went wrong and what to do, for an ``OSError``: the system's words, then
    advice by errno (``"No space left on device; free some space and run the same
    command again"``)."""
    import errno

    link = _dangling_link(error.filename) if error.errno in (errno.EEXIST, errno.ENOENT) else None
    if link is not None:  # the system's "File exists" would point at the wrong cause
        return (
            f"{shown(link)} is a symbolic link to {shown(os.readlink(link))}, which does not "
            "exist; create that, remove the link, or choose another path"
        )
    said = error.strerror or str(error) or type(error).__name__
    remedy = _REMEDIES.get(errno.errorcode.get(error.errno or 0, ""))
    return f"{said}; {remedy}" if remedy else said


def os_error_exit_code(error: OSError) -> ExitCode:
    """The exit status of a command that an ``OSError`` ended: ``UNFINISHED`` for an error
    only a write meets (no space, a read-only file system: results that could not be
    written, the same command goes on once mended), else ``BAD_INPUT`` (a path refused).

    >>> os_error_exit_code(OSError(28, "No space left on device")).name
    'UNFINISHED'
    """
    import errno

    writing = errno.errorcode.get(error.errno or 0, "") in _WRITING
    return ExitCode.UNFINISHED if writing else ExitCode.BAD_INPUT


def os_error_message(error: OSError) -> str:
    """One line for an ``OSError``: the path it concerns, what went wrong, what to do.

    >>> os_error_message(OSError(28, "No space left on device", "runs/a/report.json"))
    'Cannot write runs/a/report.json: No space left on device; free some space and run the same command again'
    """
    import errno

    path = error.filename if error.filename is not None else error.filename2
    where = f" {shown(path)}" if path is not None else ""  # one line, whatever the path holds
    if error.errno is None:  # an OSError raised with a message only
        return f"Cannot write{where}: {error}"
    writing = errno.errorcode.get(error.errno, "") in _WRITING
    return f"Cannot {'write' if writing else 'use'}{where}: {os_error_remedy(error)}"


def _dangling_link(path: object) -> str | None:
    """``path`` or the first of its parents that is a symbolic link to nothing, or None."""
    if path is None:
        return None
    current = os.fspath(path) if isinstance(path, (str, bytes, os.PathLike)) else None
    if not isinstance(current, str):
        return None
    while current:
        try:
            if os.path.islink(current) and not os.path.exists(current):
                return current
        except (OSError, ValueError):  # a NUL in the path, say
            return None
        parent = os.path.dirname(current.rstrip(os.sep))
        if parent == current or not parent:
            return None
        current = parent
    return None


class EnvPoolError(SaberError, ValueError):
    """A call of :mod:`saber.envpool` that cannot be served: an unknown ``env_type``, ``gym``
    missing, a ``batch_size`` that does not divide ``num_envs``, env ids out of order."""


class PolicyFileError(SaberError, ValueError):
    """A policy file that is missing, corrupt, foreign or inconsistent."""


class PolicyError(SaberError, ValueError):
    """An agent spec that cannot be loaded, or a policy that broke the policy protocol."""


class PolicyOutputError(PolicyError):
    """A policy broke the policy protocol during a run (an action out of range, a wrong
    shape): the run stopped, its episodes and the failed attempts recorded, and the same
    command resumes once the policy is mended."""

    exit_code = ExitCode.UNFINISHED


class PolicyCallError(SaberError):
    """The policy raised where it runs, in another process (``--policy-process``); the
    message is that error as :func:`describe_error` wrote it there. An episode failure, as
    the same error raised in the worker would be."""


class RepeatedFailureError(SaberError):
    """The same failure ended several work units in a row: the run was stopped."""

    exit_code = ExitCode.UNFINISHED  # stopped before its end; the same command resumes


class BackendError(SaberError):
    """A backend that cannot start: Dask missing, a scheduler that cannot be reached."""

    exit_code = ExitCode.UNFINISHED  # the run is whole on disk; once mended it resumes


class ReplayError(SaberError):
    """A replay file that cannot be read: not a replay, cut short, changed, or of another
    format version. The message names the file and what is wrong."""


class UnknownReferenceError(ScoreFileError):
    """A reference name that is not shipped."""


class PlotsUnavailableError(SaberError, ImportError):
    """matplotlib is not installed."""


class TrainingLogError(SaberError, ValueError):
    """A file that is not a training log, or a training log that cannot be read: one line
    naming the file (and line), what it is, and which command reads it."""


class RunDirectoryError(ScoreFileError):
    """A run directory whose files cannot be read: a damaged line or ``run.json``, or a
    format of another saber version. A :class:`~saber.errors.ScoreFileError` too, since
    reports read run directories as score files."""


class RunDamageError(RunDirectoryError):
    """A run directory whose files are damaged (a cut, a torn line, NUL bytes, a line that
    is not JSON, records no session wrote, a ``run.json`` cut short): the message is
    :func:`repair_advice`, the same from every command that reads the directory."""


class StoreWriteError(SaberError, OSError):
    """Results could not be written (disk full, permissions); what is on disk is intact."""

    exit_code = ExitCode.UNFINISHED  # stopped before its end; the same command resumes


class RunMismatchError(SaberError):
    """The run directory holds a run made with different settings."""


class VideoWriteError(SaberError, OSError):
    """ffmpeg could not make a video (a full disk, a read-only place, a failed encoder);
    nothing is left under the video's name."""

    exit_code = ExitCode.UNFINISHED  # results not written, as StoreWriteError's


class ProbeError(RuntimeError):
    """A probe could not set up its measurement; its rules are reported unknown."""
