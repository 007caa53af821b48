"""A run directory: append-only episode records, the run's provenance, and resume.

Layout of ``DIR``:

* ``episodes.jsonl``: one JSON object per finished episode, appended, flushed and
  fsynced as the episode finishes (a crash loses no finished episode);
* ``run.json``: provenance, rewritten atomically (package versions, settings, agent,
  games, episodes, base seed, and one entry per session with its command line);
* ``.lock``: held while a run writes, so two runs cannot interleave in one directory.

Resume: opening a directory that holds a run keeps its finished episodes; a failed
episode (an ``error`` record) and a half-written last line (a crash in the middle of a
write) are dropped, so those episodes run again. Opening is refused, with every
difference named, when what defines the results differs (:data:`IDENTITY_KEYS`). The
games and the number of episodes may change: a resume with more episodes or more games
runs only the missing ones; records already on disk are kept even when fewer are asked.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import sys
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from saber.errors import SaberError

__all__ = [
    "EPISODES_FILE",
    "IDENTITY_KEYS",
    "RUN_FILE",
    "ResultsStore",
    "RunMismatchError",
    "StoreWriteError",
    "provenance",
]

EPISODES_FILE = "episodes.jsonl"
RUN_FILE = "run.json"
_LOCK_FILE = ".lock"
# What makes two runs' episodes the same experiment. ale-py is the emulator: its version
# can change scores. Workers, envs per worker and backend cannot, so they may change.
IDENTITY_KEYS = ("settings", "agent", "base_seed", "seed_scheme", "ale_py")


class RunMismatchError(SaberError):
    """The run directory holds a run made with different settings."""


class StoreWriteError(SaberError, OSError):
    """Results could not be written (disk full, permissions); what is on disk is intact."""


def _versions() -> dict[str, str]:
    import ale_py
    import gymnasium
    import numpy

    import saber

    return {
        "saber": saber.__version__,
        "ale_py": ale_py.__version__,
        "gymnasium": gymnasium.__version__,
        "numpy": numpy.__version__,
        "python": platform.python_version(),
    }


def provenance(
    *,
    settings: dict[str, Any],
    deviations: dict[str, Any],
    agent: str,
    games: Iterable[str],
    episodes: int,
    base_seed: int,
    seed_scheme: str,
    command: list[str] | None = None,
) -> dict[str, Any]:
    """The ``run.json`` content of a new run (see the module docstring)."""
    versions = _versions()
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    command = list(sys.argv if command is None else command)
    return {
        "format": "saber-run/1",
        **versions,
        "platform": platform.platform(),
        "settings": settings,
        "non_saber": bool(deviations),
        "deviations": deviations,
        "agent": agent,
        "games": list(games),
        "episodes": episodes,
        "base_seed": base_seed,
        "seed_scheme": seed_scheme,
        "command": command,
        "started": started,
        "sessions": [{"command": command, "started": started, **versions}],
    }


def _differences(on_disk: dict[str, Any], wanted: dict[str, Any]) -> list[str]:
    differences = []
    for key in IDENTITY_KEYS:
        old, new = on_disk.get(key), wanted.get(key)
        if isinstance(old, dict) and isinstance(new, dict):
            differences += [
                f"{key}.{name}: {old.get(name)!r} in the directory, {new.get(name)!r} now"
                for name in sorted(old.keys() | new.keys())
                if old.get(name) != new.get(name)
            ]
        elif old != new:
            differences.append(f"{key}: {old!r} in the directory, {new!r} now")
    return differences


def _write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(path.name + ".tmp")
    with temporary.open("w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def _acquire_lock(directory: Path) -> Any:
    """An exclusive advisory lock on the directory, or a clear error if another run holds it."""
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks; one run per directory is on you
        return None
    handle = (directory / _LOCK_FILE).open("a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise SaberError(
            f"{directory} is used by another saber run right now; wait for it to "
            "end or use another directory."
        ) from None
    return handle


class ResultsStore:
    """The records of one run directory; use :meth:`open`, then :meth:`write`, :meth:`close`.

    Attributes:
        directory: the run directory.
        run: the ``run.json`` content.
        finished: records on disk, by ``(game, episode)`` (failed episodes excluded).
    """

    def __init__(
        self,
        directory: Path,
        run: dict[str, Any],
        finished: dict[tuple[str, int], dict[str, Any]],
        lock: Any,
    ) -> None:
        self.directory = directory
        self.run = run
        self.finished = finished
        self.written = 0  # records written by this session
        self._lock = lock
        self._fd: int | None = os.open(
            directory / EPISODES_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644
        )

    @classmethod
    def open(cls, directory: str | Path, run: dict[str, Any]) -> ResultsStore:
        """Create a run directory or resume the run it holds.

        Args:
            directory: created if missing.
            run: :func:`provenance` of this session.

        Raises:
            RunMismatchError: the directory holds a run with different :data:`IDENTITY_KEYS`.
            SaberError: the directory has results but no ``run.json``, or a corrupt line.
            StoreWriteError: the directory cannot be written.
        """
        directory = Path(directory)
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StoreWriteError(
                f"Cannot create the run directory {directory}: {error}"
            ) from error
        lock = _acquire_lock(directory)
        try:
            run, finished = cls._resume(directory, run)
            return cls(directory, run, finished, lock)
        except BaseException:
            if lock is not None:
                lock.close()
            raise

    @classmethod
    def _resume(
        cls, directory: Path, run: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[tuple[str, int], dict[str, Any]]]:
        run_file, episodes_file = directory / RUN_FILE, directory / EPISODES_FILE
        finished: dict[tuple[str, int], dict[str, Any]] = {}
        if run_file.is_file():
            on_disk = json.loads(run_file.read_text(encoding="utf-8"))
            differences = _differences(on_disk, run)
            if differences:
                raise RunMismatchError(
                    f"{directory} holds a run made with different settings; refusing to mix "
                    "them. Differences:\n  " + "\n  ".join(differences) + "\nUse another "
                    "directory, or the settings of that run to resume it."
                )
            finished = cls._read_finished(episodes_file)
            run = cls._merged(on_disk, run)
        elif episodes_file.exists():
            raise SaberError(
                f"{episodes_file} exists but {run_file} does not: not a saber run directory "
                "(or its provenance was deleted); use another directory."
            )
        try:
            _write_atomically(run_file, json.dumps(run, indent=2) + "\n")
        except OSError as error:
            raise StoreWriteError(f"Cannot write {run_file}: {error}") from error
        return run, finished

    @staticmethod
    def _merged(on_disk: dict[str, Any], session: dict[str, Any]) -> dict[str, Any]:
        merged = dict(on_disk)
        merged["games"] = list(dict.fromkeys([*on_disk.get("games", []), *session["games"]]))
        merged["episodes"] = max(int(on_disk.get("episodes", 0)), session["episodes"])
        merged["sessions"] = [*on_disk.get("sessions", []), *session["sessions"]]
        return merged

    @staticmethod
    def _read_finished(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
        """Finished records; rewrites the file without failed ones or a half-written tail."""
        if not path.exists():
            return {}
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        finished: dict[tuple[str, int], dict[str, Any]] = {}
        dropped = 0
        for number, line in enumerate(lines, start=1):
            try:
                record = json.loads(line)
                key = (record["game"], int(record["episode"]))
            except (ValueError, KeyError, TypeError):
                if number == len(lines) and not line.endswith("\n"):
                    dropped += 1  # a crash in the middle of the last write
                    continue
                raise SaberError(
                    f"{path}:{number}: not an episode record; the file was changed by hand "
                    "or damaged. Fix or remove that line to resume."
                ) from None
            if "error" in record or key in finished:
                dropped += 1
                continue
            finished[key] = record
        if dropped:
            _write_atomically(
                path, "".join(json.dumps(record) + "\n" for record in finished.values())
            )
        return finished

    def write(self, record: dict[str, Any]) -> None:
        """Append one record and make it durable (flush + fsync) before returning.

        Raises:
            StoreWriteError: the write failed (disk full...). The partial line is removed,
                so every record on disk stays whole; the message says how many there are.
        """
        if self._fd is None:
            raise SaberError("The results store is closed")
        data = (json.dumps(record, allow_nan=False) + "\n").encode("utf-8")
        size = os.fstat(self._fd).st_size
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view) :]
            os.fsync(self._fd)
        except OSError as error:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, size)
            raise StoreWriteError(
                f"Cannot write to {self.directory / EPISODES_FILE}: {error.strerror or error}. "
                f"{len(self.finished)} finished episodes are safely on disk; free some space "
                "and run the same command again to resume."
            ) from error
        if "error" not in record:
            self.finished[(record["game"], int(record["episode"]))] = record
        self.written += 1

    def close(self) -> None:
        """Release the file and the lock (the run can then be resumed)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def __enter__(self) -> ResultsStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
