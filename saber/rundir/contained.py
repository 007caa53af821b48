"""Reading a file that a record names (an episode's replay): only a regular file inside
the run directory, and only up to a size.

A record's path is whoever submitted the run's: :func:`read_contained` refuses one that
leaves the directory or is no regular file (a link, a FIFO), in one short reason.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path, PurePosixPath

from saber.errors import RunDirectoryError, shown

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def contained_path(
    directory: str | Path, relative: object, *, real_root: str | None = None
) -> Path:
    """The real path of ``relative`` (a path a record names) inside ``directory``.

    ``real_root``: ``os.path.realpath(directory)``, when the caller reads many of its
    files (it is then resolved once, not once a file).

    Raises:
        RunDirectoryError: its reason for people (``an absolute path``, ``outside the run
            directory (..)``, ``a symbolic link out of the run directory, to /dev/zero``,
            ``embedded null byte``), without the path itself.
    """
    if not isinstance(relative, str) or not relative:
        raise RunDirectoryError(f"not a path ({relative!r})")
    if "\x00" in relative:
        raise RunDirectoryError("embedded null byte")
    pure = PurePosixPath(relative)
    if pure.is_absolute():
        raise RunDirectoryError(
            "an absolute path; a record names its file inside the run directory"
        )
    if ".." in pure.parts:
        raise RunDirectoryError("outside the run directory (..)")
    root = real_root if real_root is not None else os.path.realpath(directory)
    joined = os.path.join(root, *pure.parts)
    if not _has_link(root, pure.parts):  # nothing to resolve: the joined path is real
        return Path(joined)
    real = os.path.realpath(joined)
    if os.path.commonpath([root, real]) != root:
        raise RunDirectoryError(f"a symbolic link out of the run directory, to {shown(real)}")
    return Path(real)


def _has_link(root: str, parts: tuple[str, ...]) -> bool:
    """Whether a component of ``root/parts`` below ``root`` is a symbolic link (or cannot
    be looked at: the caller then resolves the whole path, as for a link)."""
    path = root
    for part in parts:
        path = os.path.join(path, part)
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                return True
        except OSError:
            return True
    return False


def read_regular(path: str | Path, limit: int) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes (a
    symbolic link to one is read). Opening never blocks: a FIFO is refused, not waited on.

    Raises:
        FileNotFoundError: there is no such file.
        RunDirectoryError: why not, for people (``a FIFO, not a regular file``, ``12,345
            bytes, more than ...``, the system's reason), without the path itself.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as error:
        raise RunDirectoryError(getattr(error, "strerror", None) or str(error)) from None
    return _read_fd(fd, limit)


def _read_fd(fd: int, limit: int) -> bytes:
    """The bytes of the open file ``fd`` (closed here): a regular file of at most
    ``limit`` bytes."""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a file")
            raise RunDirectoryError(f"{kind}, not a regular file")
        if info.st_size > limit:
            raise RunDirectoryError(
                f"{info.st_size:,} bytes, more than such a file can take ({limit:,})"
            )
        chunks, left = [], limit + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
    except OSError as error:
        raise RunDirectoryError(error.strerror or str(error)) from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise RunDirectoryError(f"more than {limit:,} bytes, more than such a file can take")
    return data


def read_contained(
    directory: str | Path, relative: object, limit: int, *, real_root: str | None = None
) -> bytes:
    """The bytes of ``relative`` (a path a record names) in ``directory``: a regular file
    inside it (:func:`contained_path`) of at most ``limit`` bytes. Opening never blocks (a
    FIFO swapped in is refused, not waited on) nor follows a link swapped in meanwhile.

    Raises:
        RunDirectoryError: why not, for people (``missing``, ``a FIFO, not a regular
            file``, ``12,345 bytes, more than ...``), without the path itself.
    """
    path = contained_path(directory, relative, real_root=real_root)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise RunDirectoryError("missing") from None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise RunDirectoryError("a symbolic link (changed while read)") from None
        raise RunDirectoryError(error.strerror or str(error)) from None
    return _read_fd(fd, limit)
