"""Writing files of record durably: whole or absent (write aside, fsync, rename), lines
appended whole and fsynced, and the lock that keeps one writer per run directory.

Every byte goes through :func:`_write_all`, so that a test can fill the disk at any write.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from saber.errors import SaberError, StoreWriteError, os_error_message
from saber.rundir.records import EPISODES_FILE, LOCK_FILE, RUN_FILE
from saber.rundir.runfile import RunFile
from saber.rundir.torn import complete_torn_line


def _write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd``: the one place where this module writes file
    contents (``episodes.jsonl``, ``run.json``, replays, reports), so that a test can make
    the disk fill up at any write of a run."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write_atomically(path: str | Path, data: str | bytes) -> None:
    """Replace a file's content at once (write a temporary file, fsync, rename): a crash or
    a full disk leaves the old content or the new, never half of one (the temporary file
    of a failed write is removed).

    Args:
        path: the file.
        data: its content; text is written as UTF-8.

    Raises:
        OSError: the file could not be written; its ``filename`` is ``path`` (not the
            temporary file), so a message names the file the user asked for.
    """
    content = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    with writing_atomically(path) as temporary:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            _write_all(fd, content)
        finally:
            os.close(fd)


@contextlib.contextmanager
def writing_atomically(path: str | Path) -> Iterator[Path]:
    """The one way saber writes a file of record: yields a temporary path beside ``path``
    for the caller (or a library: matplotlib, ffmpeg) to write; when the block ends
    without an error, the temporary file is fsynced and renamed to ``path`` (and the
    directory fsynced), else removed. So ``path`` holds its old content or the whole new
    one, never part of one: a full disk, a crash or a failed encoder leaves nothing new
    under the final name.

    The temporary file is ``<name>.tmp``: a writer that infers the format from the file
    name must be told the format.

    Raises:
        OSError: the file could not be written, with ``filename`` set to ``path``.
    """
    path = Path(path)
    temporary = path.with_name(path.name + ".tmp")
    try:
        yield temporary
        fd = os.open(temporary, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
        _fsync_directory(path.parent)
    except BaseException as error:
        with contextlib.suppress(OSError):
            temporary.unlink()
        unnamed = isinstance(error, OSError) and error.filename in (None, str(temporary), temporary)
        if unnamed and error.errno is not None and not isinstance(error, SaberError):
            raise OSError(error.errno, error.strerror, str(path)) from error
        raise


def append_whole(fd: int, data: bytes, path: str | Path) -> None:
    """Append ``data`` to the file open as ``fd`` (``O_APPEND``) whole or not at all: a
    write that fails part-way (a full disk) is cut off again, so a log of lines never
    ends in half of one. For a file with one writer (a training log): the cut would
    also take another writer's line written meanwhile.

    Raises:
        OSError: the write failed; ``filename`` is ``path``.
    """
    size = os.fstat(fd).st_size
    try:
        _write_all(fd, data)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, size)
        raise OSError(error.errno, error.strerror, str(path)) from error


def _fsync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable (where directories can be opened: POSIX)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return  # Windows: a directory cannot be opened; its renames are durable enough
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def write_run_file(directory: str | Path, run: RunFile) -> None:
    """Write ``run.json`` atomically.

    Raises:
        StoreWriteError: it could not be written.
    """
    path = Path(directory) / RUN_FILE
    try:
        write_atomically(path, json.dumps(run.to_dict(), indent=2) + "\n")
    except OSError as error:
        raise StoreWriteError(os_error_message(error)) from error  # names path, says what to do


def lock_directory(directory: str | Path) -> Any:
    """An exclusive advisory lock on the directory (close the returned handle to release
    it), or None where there are no advisory locks (Windows: one run per directory is on you).

    Raises:
        SaberError: another run holds it.
    """
    try:
        import fcntl
    except ImportError:
        return None
    directory = Path(directory)
    handle = (directory / LOCK_FILE).open("a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise SaberError(
            f"{directory} is used by another saber run right now; wait for it to "
            "end or use another directory."
        ) from None
    return handle


class EpisodeAppender:
    """Appends lines to a directory's ``episodes.jsonl``, each durable before it returns."""

    def __init__(self, directory: str | Path) -> None:
        self.path = Path(directory) / EPISODES_FILE
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def append(self, line: Mapping[str, Any], on_disk: str = "") -> None:
        """Append one JSON object as a line, flushed and fsynced.

        Args:
            line: the object (``EpisodeLine.to_dict()``, ``FailedAttempt.to_dict()``).
            on_disk: what is safely on disk, said in the error message.

        Raises:
            StoreWriteError: the write failed (disk full...). The partial line is removed,
                so every line on disk stays whole.
        """
        if self._fd is None:
            raise SaberError(f"{self.path} is closed")
        data = (json.dumps(dict(line), allow_nan=False) + "\n").encode("utf-8")
        size = os.fstat(self._fd).st_size
        try:
            _write_all(self._fd, data)
            os.fsync(self._fd)
        except OSError as error:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, size)  # only this writer's own partial line
            raise StoreWriteError(
                f"Cannot write to {self.path}: {error.strerror or error}. {on_disk}Free some "
                "space and run the same command again to resume."
            ) from error

    def size(self) -> int:
        """The file's size now, in bytes."""
        if self._fd is None:
            raise SaberError(f"{self.path} is closed")
        return os.fstat(self._fd).st_size

    def complete_torn(self, fragment: str) -> dict[str, Any]:
        """Append what makes a torn last line (``fragment``) one whole object; return it.

        Raises:
            ValueError: the fragment is not the start of a JSON object.
            StoreWriteError: the file could not be written.
        """
        ending = complete_torn_line(fragment)
        if self._fd is None:
            raise SaberError(f"{self.path} is closed")
        try:
            _write_all(self._fd, ending.encode("utf-8"))
            os.fsync(self._fd)
        except OSError as error:
            raise StoreWriteError(f"Cannot write {self.path}: {error.strerror or error}") from error
        return dict(json.loads(fragment + ending))

    def close(self) -> None:
        """Close the file."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def write_replay(directory: str | Path, relative: str, data: bytes) -> None:
    """Write a replay file into a run directory, whole or not at all (before the record
    that names it is appended, so a record never names a replay that is not there).

    Raises:
        OSError: it could not be written (the disk is full...).
    """
    path = Path(directory) / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, data)
