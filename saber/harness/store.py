"""A run directory: append-only episode records, the run's provenance, and resume.

Layout of ``DIR``:

* ``episodes.jsonl``: one JSON object per line, appended, flushed and fsynced as it is
  written, and never rewritten: a record per finished episode, and an ``error`` record
  per episode attempt that failed (with ``attempt``, ``kind`` and the reason), so the
  failure history survives a successful retry and any number of resumes;
* ``run.json``: provenance, rewritten atomically (package versions, settings, agent,
  games, episodes, base seed, the run name if any, and one entry per session with its
  command line and, once it ends, its summary);
* ``.lock``: held while a run writes, so two runs cannot interleave in one directory.

Resume reads ``episodes.jsonl`` and derives its state (:class:`EpisodeLog`): an episode
is finished once it has a record without ``error``; an episode whose records are all
errors runs again. Opening is refused, with every difference named, when what defines
the results differs (:data:`IDENTITY_KEYS`). The games and the number of episodes may
change: a resume with more episodes or more games runs only the missing ones.

Damage: a last line cut short by a crash or a power loss is completed, by appending
only, into a whole record ``{..., "error": ..., "torn": true}`` (that episode runs
again), so every line stays one JSON object and new records follow on lines of their
own. A damaged ``run.json``, a line damaged elsewhere, or a directory written by another
format version is a one-line error naming the file; nothing is changed then.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from saber.errors import SaberError

__all__ = [
    "EPISODES_FILE",
    "IDENTITY_KEYS",
    "RUN_FILE",
    "RUN_FORMAT",
    "EpisodeLog",
    "ResultsStore",
    "RunMismatchError",
    "StoreWriteError",
    "complete_torn_line",
    "failure_reasons",
    "provenance",
    "read_episode_log",
]

EPISODES_FILE = "episodes.jsonl"
RUN_FILE = "run.json"
RUN_FORMAT = "saber-run/1"  # additions (run names, failure records) keep version 1 readable
_LOCK_FILE = ".lock"
# What makes two runs' episodes the same experiment. ale-py is the emulator: its version
# can change scores. Workers, envs per worker and backend cannot, so they may change.
# ``run`` is the run name (``--run``): absent for unnamed runs, as before names existed.
IDENTITY_KEYS = ("settings", "agent", "base_seed", "seed_scheme", "ale_py", "run")
TORN_ERROR = (
    "incomplete record: the process stopped in the middle of writing it (a crash or a "
    "power loss); the episode runs again"
)


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
    run: str | None = None,
) -> dict[str, Any]:
    """The ``run.json`` content of a new run (see the module docstring).

    ``run``: the run name (``saber eval --run``), written only when given.
    """
    versions = _versions()
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    command = list(sys.argv if command is None else command)
    return {
        "format": RUN_FORMAT,
        **versions,
        "platform": platform.platform(),
        "settings": settings,
        "non_saber": bool(deviations),
        "deviations": deviations,
        "agent": agent,
        **({} if run is None else {"run": run}),
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


# Endings that finish a token cut short (a string, an escape, a number, a literal), then
# endings that close the object with the torn marker. Each candidate is checked by parsing.
_TOKEN_ENDINGS = ("", '"', '\\"', '0"', '00"', '000"', '0000"', "0", "e", "ue", "rue",
                  "se", "lse", "alse", "l", "ll", "ull")  # fmt: skip
_TORN_FIELDS = f'"error": {json.dumps(TORN_ERROR)}, "torn": true}}'
_CLOSINGS = (f", {_TORN_FIELDS}", f": null, {_TORN_FIELDS}", f"null, {_TORN_FIELDS}", _TORN_FIELDS)


def complete_torn_line(fragment: str) -> str:
    """What to append to a record's line cut short so that it becomes one whole JSON object.

    Records are flat objects (strings, numbers, booleans, null), as the harness writes them.

    The object keeps the fields the fragment holds and gains ``"error"`` (why) and
    ``"torn": true``; a fragment that is already a whole object only needs its newline.
    Appending (never truncating) keeps ``episodes.jsonl`` append-only.

    Example:
        >>> fragment = '{"game": "pong", "episode": 3, "sc'
        >>> record = json.loads(fragment + complete_torn_line(fragment))
        >>> record["game"], record["episode"], record["torn"]
        ('pong', 3, True)

    Raises:
        ValueError: the fragment is not the start of a JSON object (zeros, garbage).
    """
    with contextlib.suppress(ValueError):
        if isinstance(json.loads(fragment), dict):
            return "\n"
    if fragment.lstrip().startswith("{"):
        for ending in _TOKEN_ENDINGS:
            for closing in _CLOSINGS:
                try:
                    record = json.loads(fragment + ending + closing)
                except ValueError:
                    continue
                if isinstance(record, dict) and record.get("torn") is True:
                    return ending + closing + "\n"
    raise ValueError(f"not the start of a JSON object: {fragment[:40]!r}")


@dataclass
class EpisodeLog:
    """The state of a run, derived from ``episodes.jsonl`` (never rewritten).

    Attributes:
        finished: the first record without ``error`` of each ``(game, episode)``.
        failures: every ``error`` record, in file order (a failed attempt each, retried
            or not, including records completed after a torn write).
        lines: lines read.
    """

    finished: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    failures: list[dict[str, Any]] = field(default_factory=list)
    lines: int = 0

    def add(self, record: dict[str, Any]) -> None:
        """Take one more record into the state (as :meth:`ResultsStore.write` appends it)."""
        self.lines += 1
        if "error" in record:  # a torn line completed before its game was written has none
            self.failures.append(record)
            return
        key = (record["game"], int(record["episode"]))
        self.finished.setdefault(key, record)  # a duplicate (resent by Dask) changes nothing

    def unresolved(self) -> dict[tuple[str, int], dict[str, Any]]:
        """The last ``error`` record of each episode that has not finished: these ended as
        failures (a resume runs them again)."""
        failed: dict[tuple[str, int], dict[str, Any]] = {}
        for record in self.failures:
            if "game" in record and "episode" in record:
                key = (record["game"], int(record["episode"]))
                if key not in self.finished:
                    failed[key] = record  # the last one wins
        return failed


def failure_reasons(records: Iterable[dict[str, Any]]) -> dict[str, int]:
    """How often each ``error`` occurs in ``records``, most frequent first."""
    return dict(Counter(record["error"] for record in records if "error" in record).most_common())


def read_episode_log(path: Path) -> tuple[EpisodeLog, str | None]:
    """Read ``episodes.jsonl``: the state, and the text of a last line cut short (or None).

    Raises:
        SaberError: a line other than the last that is not a record, naming file and line.
    """
    log = EpisodeLog()
    if not path.exists():
        return log, None
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        raise SaberError(f"Cannot read {path}: {error.strerror or error}") from error
    lines = text.splitlines(keepends=True)
    for number, line in enumerate(lines, start=1):
        if number == len(lines) and not line.endswith("\n"):
            return log, line  # a crash in the middle of the last write
        try:
            record = json.loads(line)
            if record.get("torn") is not True:  # a completed torn line may lack both
                str(record["game"]), int(record["episode"])
        except (ValueError, KeyError, TypeError, AttributeError):
            raise SaberError(
                f"{path}:{number}: not an episode record; the file was changed by hand or "
                "damaged. Fix or remove that line to resume."
            ) from None
        log.add(record)
    return log, None


def _read_run_file(run_file: Path) -> dict[str, Any]:
    """``run.json`` of an existing run, checked, or a one-line error saying what is wrong."""
    try:
        on_disk = json.loads(run_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise SaberError(f"Cannot read {run_file}: {error}") from None
    except json.JSONDecodeError as error:
        raise SaberError(
            f"{run_file} is damaged (not valid JSON: {error.msg}, line {error.lineno}); the "
            f"episodes in {run_file.with_name(EPISODES_FILE)} are intact. Restore run.json "
            "from a backup to resume, or use another directory."
        ) from None
    if not isinstance(on_disk, dict) or "format" not in on_disk:
        raise SaberError(
            f"{run_file} is not the provenance of a saber run (no 'format' key); use "
            "another directory."
        )
    if on_disk["format"] != RUN_FORMAT:
        import saber

        raise SaberError(
            f"{run_file} was written by another version of saber (format "
            f"{on_disk['format']!r}, saber {on_disk.get('saber', '?')}); saber "
            f"{saber.__version__} reads {RUN_FORMAT!r}. Resume it with that version, or "
            "use another directory."
        )
    return on_disk


class ResultsStore:
    """The records of one run directory; use :meth:`open`, then :meth:`write`, :meth:`close`.

    Attributes:
        directory: the run directory.
        run: the ``run.json`` content.
        log: the state read from ``episodes.jsonl`` and kept up to date by :meth:`write`.
        finished: ``log.finished``: records of finished episodes by ``(game, episode)``.
        recovered: a torn last line was completed when the directory was opened.
    """

    def __init__(
        self, directory: Path, run: dict[str, Any], log: EpisodeLog, lock: Any, recovered: bool
    ) -> None:
        self.directory = directory
        self.run = run
        self.log = log
        self.finished = log.finished
        self.recovered = recovered
        self.written = 0  # records written by this session
        self.new_finished = 0  # episodes finished by this session
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
            SaberError: the directory has results but no ``run.json``, a damaged
                ``run.json`` or line, or a format of another saber version.
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
            run, log, recovered = cls._resume(directory, run)
            return cls(directory, run, log, lock, recovered)
        except BaseException:
            if lock is not None:
                lock.close()
            raise

    @classmethod
    def _resume(
        cls, directory: Path, run: dict[str, Any]
    ) -> tuple[dict[str, Any], EpisodeLog, bool]:
        run_file, episodes_file = directory / RUN_FILE, directory / EPISODES_FILE
        log, torn, recovered = EpisodeLog(), None, False
        if run_file.is_file():
            on_disk = _read_run_file(run_file)
            differences = _differences(on_disk, run)
            if differences:
                raise RunMismatchError(
                    f"{directory} holds a run made with different settings; refusing to mix "
                    "them. Differences:\n  " + "\n  ".join(differences) + "\nUse another "
                    "directory, or the settings of that run to resume it."
                )
            log, torn = read_episode_log(episodes_file)
            run = cls._merged(on_disk, run)
        elif episodes_file.exists() and episodes_file.stat().st_size:
            raise SaberError(
                f"{episodes_file} exists but {run_file} does not: not a saber run directory "
                "(or its provenance was deleted); use another directory."
            )
        if torn is not None:
            cls._complete(episodes_file, log, torn)
            recovered = True
        try:
            _write_atomically(run_file, json.dumps(run, indent=2) + "\n")
        except OSError as error:
            raise StoreWriteError(f"Cannot write {run_file}: {error}") from error
        return run, log, recovered

    @staticmethod
    def _complete(path: Path, log: EpisodeLog, fragment: str) -> None:
        """Append what makes a torn last line one whole record (append-only recovery)."""
        line = log.lines + 1
        try:
            ending = complete_torn_line(fragment)
        except ValueError:
            raise SaberError(
                f"{path}:{line}: the last line is damaged beyond an interrupted write "
                f"({fragment[:40]!r}...). Move that line out of the file to resume."
            ) from None
        try:
            with path.open("a", encoding="utf-8") as handle:
                handle.write(ending)
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as error:
            raise StoreWriteError(f"Cannot write {path}: {error.strerror or error}") from error
        log.add(json.loads(fragment + ending))

    @staticmethod
    def _merged(on_disk: dict[str, Any], session: dict[str, Any]) -> dict[str, Any]:
        merged = dict(on_disk)
        merged["games"] = list(dict.fromkeys([*on_disk.get("games", []), *session["games"]]))
        merged["episodes"] = max(int(on_disk.get("episodes", 0)), session["episodes"])
        merged["sessions"] = [*on_disk.get("sessions", []), *session["sessions"]]
        return merged

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
                os.ftruncate(self._fd, size)  # only this session's own partial line
            raise StoreWriteError(
                f"Cannot write to {self.directory / EPISODES_FILE}: {error.strerror or error}. "
                f"{len(self.finished)} finished episodes are safely on disk; free some space "
                "and run the same command again to resume."
            ) from error
        self.log.add(record)
        self.written += 1
        self.new_finished += "error" not in record

    def end_session(self, summary: dict[str, Any]) -> None:
        """Record this session's end and ``summary`` in ``run.json`` (best effort: the
        episodes are already safe, a failure here only loses the summary)."""
        session = self.run["sessions"][-1]
        session["ended"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
        session["summary"] = summary
        with contextlib.suppress(OSError):
            _write_atomically(self.directory / RUN_FILE, json.dumps(self.run, indent=2) + "\n")

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
