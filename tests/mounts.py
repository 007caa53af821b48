"""Real file-system failures for tests: a full disk, a read-only directory (tmpfs mounts).

Tests run as root, who writes through permission bits: a read-only or full place has to
be a real mount. Mounting needs root (or CAP_SYS_ADMIN); where it is not permitted the
test is skipped with the reason, except under CI (``CI=true``, which .ci/run and the
GitHub workflow set), where a skip would hide that the test never ran: there it fails.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


def _cannot(reason: str) -> None:
    """Skip (a developer's machine) or fail (CI) a test that needs a mount."""
    if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
        pytest.fail(f"CI: {reason}; the writer tests need root to mount a tmpfs", pytrace=False)
    pytest.skip(reason)


def _mount(where: Path, options: str) -> None:
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        _cannot(f"cannot mount a tmpfs ({done.stderr.strip() or done.returncode})")


def fill(directory: Path) -> None:
    """Fill the file system of ``directory`` to the last byte (a file ``filler``)."""
    fd = os.open(directory / "filler", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        for size in (65536, 4096, 512, 1):  # big blocks, then the last partial page
            with contextlib.suppress(OSError):
                while os.write(fd, b"\0" * size):
                    pass
        with pytest.raises(OSError) as error:
            os.write(fd, b"\0")
        assert error.value.errno == errno.ENOSPC
    finally:
        os.close(fd)


class Mounts:
    """Tiny tmpfs mounts under a test's directory, unmounted at the end of the test."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.mounted: list[Path] = []

    def full(self, name: str = "full", size: str = "256k") -> Path:
        """A directory on a file system with no byte left (writing there raises ENOSPC).
        Call :meth:`room` first to put files there, then :func:`fill`."""
        where = self.room(name, size)
        fill(where)
        return where

    def room(self, name: str = "disk", size: str = "256k") -> Path:
        """A directory on a tmpfs of ``size`` (fill it with :func:`fill` when ready)."""
        where = self.root / name
        _mount(where, f"size={size}")
        self.mounted.append(where)
        return where

    def read_only(self, name: str = "read-only") -> Path:
        """An empty directory on a read-only file system (writing there raises EROFS)."""
        where = self.root / name
        _mount(where, "ro,size=64k")
        self.mounted.append(where)
        return where

    def make_read_only(self, where: Path) -> None:
        """Remount a directory of :meth:`room` read-only, keeping its files."""
        subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)

    def unmount_all(self) -> None:
        for where in reversed(self.mounted):
            subprocess.run(["umount", "-l", str(where)], check=False, capture_output=True)


@pytest.fixture
def mounts(tmp_path: Path) -> Iterator[Mounts]:
    """:class:`Mounts` under ``tmp_path``: full disks and read-only directories."""
    mounted = Mounts(tmp_path / "mounts")
    try:
        yield mounted
    finally:
        mounted.unmount_all()
