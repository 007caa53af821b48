"""How a ``saber`` command fails: one line on stderr, an exit status, no traceback.

The CLI's one home for errors turned into messages, refused overwrites (``--force``),
whole-or-absent writes, renamed flags and the words of a stop by Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import click

from saber.errors import (
    ExitCode,
    OutputExistsError,
    SaberError,
    StoreWriteError,
    os_error_exit_code,
    os_error_message,
)

F = TypeVar("F", bound=Callable[..., Any])


# The key of ``click.Context.meta`` under which the ``saber`` group keeps the command line
# as given (``["saber", "eval", ...]``): what a stopped command says to run again.
COMMAND_LINE = "saber.command_line"


def stop_said(stop: KeyboardInterrupt) -> tuple[str, ExitCode]:
    """What a command says when ``stop`` ends it (``Interrupted``, or ``Terminated
    (SIGTERM)`` for :class:`saber.stop_signals.Terminated`), and its exit status."""
    from saber.stop_signals import Terminated

    if isinstance(stop, Terminated):
        return "Terminated (SIGTERM)", ExitCode.TERMINATED
    return "Interrupted", ExitCode.INTERRUPTED


class Refused(click.ClickException):
    """One line on stderr (``Error: ...``) and an exit status of :class:`ExitCode`."""

    def __init__(self, message: str, exit_code: int = ExitCode.BAD_INPUT) -> None:
        super().__init__(message)
        self.exit_code = int(exit_code)


def saber_errors_as_messages(command: F) -> F:
    """Errors as one line on stderr, without a traceback: a :class:`SaberError` says its
    message and exits with its class's ``exit_code`` (bad input, or a run stopped
    unfinished); any other ``OSError`` names its path and what to do
    (:func:`saber.errors.os_error_message`) and exits with
    :func:`saber.errors.os_error_exit_code`'s status: ``UNFINISHED`` for an error only a
    write meets (a full or read-only disk), ``BAD_INPUT`` for the rest (a missing file)."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except SaberError as error:
            raise Refused(str(error), error.exit_code) from error
        except OSError as error:
            raise Refused(os_error_message(error), os_error_exit_code(error)) from error

    return wrapper  # type: ignore[return-value]


@contextlib.contextmanager
def writing_results(place: Path | None = None) -> Iterator[None]:
    """Around the writing of a command's results: an ``OSError`` there (a full disk, a
    read-only or unwritable place, an ``--out`` that cannot be created) is results that
    could not be written, :class:`~saber.errors.StoreWriteError` (``ExitCode.UNFINISHED``),
    in every command alike (docs/exit-codes.md). ``place``: the path the message names
    when the error names none."""
    try:
        yield
    except SaberError:
        raise
    except OSError as error:
        if error.filename is None and error.filename2 is None and place is not None:
            error = OSError(error.errno, error.strerror, str(place))
        raise StoreWriteError(os_error_message(error)) from error


class CommandLineError(click.ClickException):
    """A command line that cannot be used (options that do not go together, a value out
    of bounds): one line, without click's usage text, and ``ExitCode.USAGE``, the status
    of click's own usage errors."""

    exit_code = ExitCode.USAGE


class RenamedOptionError(CommandLineError):
    """A flag that a command no longer takes under this name: one line that names the new
    one, and ``ExitCode.USAGE``."""


def refuse_overwrite(paths: Iterable[Path | None], force: bool) -> None:
    """Refuse, before any work, to replace an existing file the user did not ask to replace.

    Raises:
        OutputExistsError: one of ``paths`` exists and ``force`` is False.
    """
    if force:
        return
    for path in paths:
        if path is not None and Path(path).exists():
            raise OutputExistsError(
                f"{path} exists already; pass --force to replace it, or choose another name"
            )


def write_whole(path: Path, text: str) -> Path:
    """Write a file whole or not at all (a full disk leaves no half file); a missing
    parent directory is created. An OSError is a StoreWriteError (:func:`writing_results`)."""
    from saber.rundir.durable import write_atomically

    with writing_results():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, text)
    return path
