"""A run's store: the state of a run directory, resume, and the session in ``run.json``.

The files are :mod:`saber.rundir`'s; this module derives a run's state from them and
decides what a new session may do. docs/harness.md ("Resume after an interruption",
"Damaged run directories") gives the rules.
"""

from __future__ import annotations

import contextlib
import platform
import sys
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from saber.errors import (
    RunDamageError,
    RunMismatchError,
    SaberError,
    StoreWriteError,
    counted,
    os_error_remedy,
)
from saber.rundir.damage import read_checked
from saber.rundir.durable import EpisodeAppender, lock_directory, write_replay, write_run_file
from saber.rundir.reading import (
    EpisodeLines,
    checkpoint_of,
    counts_of,
    episodes_log_checkpoint,
    read_episode_lines,
    read_episodes_bytes,
    read_run_file,
)
from saber.rundir.records import (
    EPISODES_FILE,
    LOCK_FILE,
    RUN_FILE,
    EpisodeLine,
    FailedAttempt,
    FailureSummary,
    SessionStatus,
    episode_key,
    is_failure,
    is_torn,
    now,
    repair_advice,
)
from saber.rundir.runfile import RunFile, Session
from saber.version import __version__, installed_version


def _versions() -> dict[str, str]:
    return {
        "saber": __version__,
        "ale_py": installed_version("ale_py", "ale-py"),
        "gymnasium": installed_version("gymnasium"),
        "numpy": installed_version("numpy"),
        "python": platform.python_version(),
    }


def new_run(
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
) -> RunFile:
    """The ``run.json`` of a new run (docs/harness.md, "Output files").

    ``run``: the run name (``saber eval --run``), written only when given. A new
    ``run_id`` is drawn: the run keeps it (a resume keeps the directory's), and so does
    any copy of the directory, so that reports count a run and its copies once.
    """
    command = list(sys.argv if command is None else command)
    first = Session(command=command, started=now(), versions=_versions())
    # What defines the results, as given; then what this session adds about where it ran.
    defined = {"settings": settings, "deviations": deviations, "agent": agent, "run": run}
    seeds = {"base_seed": base_seed, "seed_scheme": seed_scheme}
    return RunFile(
        **defined,
        **seeds,
        games=list(games),
        episodes=episodes,
        command=command,
        started=first.started,
        versions=first.versions,
        platform=platform.platform(),
        run_id=uuid.uuid4().hex,
        sessions=[first],
    )


def run_provenance(**fields: Any) -> dict[str, Any]:
    """:func:`new_run`'s ``run.json`` as the JSON object it writes."""
    return new_run(**fields).to_dict()


@dataclass
class EpisodeLog:
    """The state of a run, derived from ``episodes.jsonl`` (never rewritten).

    Attributes:
        finished: the first record without ``error`` of each ``(game, episode)``.
        failures: every ``error`` record, in file order (a failed attempt each, retried
            or not).
        torn: records cut short by a crash and completed on resume (no episode's).
        foreign: finished records that are not the run's (:meth:`RunFile.foreign`: another
            agent, a wrong seed): reports leave them out, so their episodes run again.
        lines: lines read.
        run: the run whose records these are (None: every record counts).
    """

    finished: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    failures: list[dict[str, Any]] = field(default_factory=list)
    torn: list[dict[str, Any]] = field(default_factory=list)
    foreign: list[dict[str, Any]] = field(default_factory=list)
    lines: int = 0
    run: RunFile | None = None

    def add(self, record: dict[str, Any]) -> None:
        """Take one more record into the state (as :meth:`ResultsStore.write` appends it)."""
        self.lines += 1
        if is_torn(record):  # its fields may be cut (episode 12 read as 1): trust none
            self.torn.append(record)
            return
        if is_failure(record):
            self.failures.append(record)
            return
        if self.run is not None and self.run.foreign(record):
            self.foreign.append(record)
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
    """How often each ``error`` occurs in ``records``, most frequent first (ties: by text,
    so the order never depends on the order of the lines)."""
    return FailureSummary.of(records, finished=()).reasons


def read_episode_log(
    path: Path, run: RunFile | None = None, found: EpisodeLines | None = None
) -> tuple[EpisodeLog, str | None]:
    """Read ``episodes.jsonl``: the state, and the text of a last line cut short (or None).

    ``run``: the run of the directory; its foreign records (:attr:`EpisodeLog.foreign`)
    finish no episode. ``found``: the file's lines, already read (by the damage check).

    Raises:
        SaberError: a line other than the last that is not a record, naming file and line.
    """
    found = read_episode_lines(path) if found is None else found
    log = EpisodeLog(run=run)
    # A last record without its line end is completed on open (begin), and taken in then.
    for line in found.records(whole=True):
        if line.kind != "torn":  # a completed torn line may lack both
            # A game name and an integer episode >= 0, or the line is damage: "episode": 1.5
            # would count as episode 1 finished, and a list as a game cannot be looked up.
            episode_key(line.record, line.where)
        log.add(line.record)
    log.lines = found.count - (found.unterminated is not None)
    return log, found.unterminated


class ResultsStore:
    """The records of one run directory; use :meth:`open`, then :meth:`write`, :meth:`close`.

    Attributes:
        directory: the run directory.
        run_file: the ``run.json`` content (:class:`~saber.rundir.runfile.RunFile`).
        log: the state read from ``episodes.jsonl`` and kept up to date by :meth:`write`.
        finished: ``log.finished``: records of finished episodes by ``(game, episode)``.
        recovered: what opening the directory repaired, for people (a torn last line
            completed, or a last record's missing newline added), or None.
    """

    def __init__(
        self, directory: Path, run: RunFile, log: EpisodeLog, lock: Any, recovered: str | None
    ) -> None:
        self.directory = directory
        self.run_file = run
        self.log = log
        self.finished = log.finished
        self.recovered = recovered
        self.new_finished = 0  # episodes finished by this session
        self._session_start = 0  # bytes episodes.jsonl held when this session began
        self._lock = lock
        self._appender: EpisodeAppender | None = None  # begin() opens it
        self._torn: str | None = None  # a last line cut short, completed by begin()
        self._created = False  # read() created the directory: close() removes it if unused

    @property
    def run(self) -> dict[str, Any]:
        """The ``run.json`` content as its JSON object."""
        return self.run_file.to_dict()

    @classmethod
    def open(cls, directory: str | Path, run: dict[str, Any] | RunFile) -> ResultsStore:
        """Create a run directory or resume the run it holds: :meth:`read`, then
        :meth:`begin`.

        Args:
            directory: created if missing.
            run: :func:`run_provenance` of this session.

        Raises:
            RunMismatchError: the directory holds a run with different :data:`IDENTITY_KEYS`,
                or more than this session asks for (``RunFile.uncovered``).
            SaberError: the directory has results but no ``run.json``, a damaged
                ``run.json`` or line, or a format of another saber version.
            StoreWriteError: the directory cannot be written.
        """
        store = cls.read(directory, run)
        try:
            store.begin()
        except BaseException:
            store.close()
            raise
        return store

    @classmethod
    def read(cls, directory: str | Path, run: dict[str, Any] | RunFile) -> ResultsStore:
        """Lock the directory (created if missing) and read the run it holds, writing
        nothing else: every check of :meth:`open`, before anything is started
        (``evaluate`` starts its workers after this). :meth:`begin` then starts the
        session; :meth:`close` gives the directory up without one.

        Raises:
            As :meth:`open`.
        """
        directory = Path(directory)
        session = run if isinstance(run, RunFile) else RunFile.from_dict(run)
        created = not directory.exists()
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StoreWriteError(
                f"Cannot create the run directory {directory}: {os_error_remedy(error)}"
            ) from error
        lock = lock_directory(directory)
        try:
            merged, log, torn = cls._resume(directory, session)
            store = cls(directory, merged, log, lock, recovered=None)
        except BaseException:
            if lock is not None:
                lock.close()
            raise
        store._torn = torn
        store._created = created
        return store

    def begin(self) -> None:
        """Start this session (once, after :meth:`read`): complete a torn last line
        (appending only) and record the session in ``run.json``.

        Raises:
            SaberError: the last line is damaged beyond an interrupted write.
            StoreWriteError: the directory cannot be written.
        """
        self._appender = EpisodeAppender(self.directory)
        if self._torn is not None:
            self._complete(self._torn)
            self._torn = None
        checkpoint = episodes_log_checkpoint(self.directory / EPISODES_FILE)
        self.run_file.sessions[-1].episodes_log = checkpoint
        self._session_start = checkpoint["bytes"]
        write_run_file(self.directory, self.run_file)

    @classmethod
    def _resume(cls, directory: Path, session: RunFile) -> tuple[RunFile, EpisodeLog, str | None]:
        run_file, episodes_file = directory / RUN_FILE, directory / EPISODES_FILE
        if not run_file.is_file():
            if episodes_file.exists() and episodes_file.stat().st_size:
                raise SaberError(
                    f"{episodes_file} exists but {run_file} does not: not a saber run "
                    "directory (or its provenance was deleted); use another directory."
                )
            return session, EpisodeLog(), None
        on_disk = read_run_file(run_file)
        found = read_checked(directory, on_disk.to_dict())  # one pass: damage, then records
        differences = on_disk.differences(session)
        uncovered = None if differences else on_disk.uncovered(session)
        if uncovered:
            raise RunMismatchError(f"{directory}: {uncovered}.")
        if differences:
            raise RunMismatchError(
                f"{directory} holds a run made with different settings; refusing to mix "
                "them. Differences:\n  " + "\n  ".join(differences) + "\nUse another "
                "directory, or the settings of that run to resume it."
            )
        log, torn = read_episode_log(episodes_file, on_disk, found)
        return on_disk.resumed_by(session), log, torn

    def _complete(self, fragment: str) -> None:
        """Append what makes a torn last line one whole record (append-only recovery)."""
        assert self._appender is not None
        try:
            record = self._appender.complete_torn(fragment)
        except ValueError:  # check_run_directory names such a line first; kept as a guard
            raise RunDamageError(
                repair_advice(
                    self.directory,
                    f"{self._appender.path}:{self.log.lines + 1}: the last line is damaged "
                    f"beyond an interrupted write ({fragment[:40]!r}...)",
                )
            ) from None
        self.log.add(record)
        where = f"{self._appender.path}:{self.log.lines}"
        if is_torn(record):
            self.recovered = (
                f"recovered {where}: the last record had been cut short by a crash; it was "
                "completed as a torn record, which counts as no episode's (an episode it was "
                "recording is not finished, so it runs again)"
            )
        else:
            self.recovered = (
                f"recovered {where}: the last record was whole but had lost its line end, "
                "which was added; it counts as it is"
            )

    def write(self, line: EpisodeLine | FailedAttempt | Mapping[str, Any]) -> None:
        """Append one line (a finished episode's, a failed attempt's, or a record as read)
        and make it durable (flush + fsync) before returning.

        Raises:
            StoreWriteError: the write failed (disk full...). The partial line is removed,
                so every record on disk stays whole; the message says how many there are.
        """
        if self._appender is None:
            raise SaberError("The results store is closed")
        appender = self._appender
        record = dict(line) if isinstance(line, Mapping) else line.to_dict()
        before = appender.size()
        try:
            appender.append(record, on_disk=f"{self.safely_on_disk()}; ")
        finally:
            # A Ctrl-C or SIGTERM can land just after the record reached the disk; what is
            # known in memory (the summary of an interrupted session) still follows the file.
            if appender.size() > before:
                self.log.add(record)
                self.new_finished += not is_failure(record)

    def safely_on_disk(self) -> str:
        """``12 finished episodes are safely on disk``, for a message about a write."""
        count = len(self.finished)
        verb = "is" if count == 1 else "are"
        return f"{counted(count, 'finished episode')} {verb} safely on disk"

    def write_replay(self, relative: str, data: bytes) -> None:
        """Write an episode's replay file (whole or not at all), before its record.

        Raises:
            StoreWriteError: it could not be written (disk full...); nothing is lost.
        """
        try:
            write_replay(self.directory, relative, data)
        except OSError as error:
            raise StoreWriteError(
                f"Cannot write {self.directory / relative}: {error.strerror or error}. "
                f"{self.safely_on_disk()}; free some space and run the same command again "
                "to resume."
            ) from error

    def end_session(
        self,
        summary: dict[str, Any],
        status: SessionStatus = "finished",
        extra: dict[str, Any] | None = None,
    ) -> str | None:
        """Record this session's end in ``run.json``: when, how (``finished``,
        ``interrupted``, ``failed``), its counts and the run's ``summary``; ``extra``
        sets top-level keys (the video lists; None removes a key). Best effort: the episodes are already
        safe, a failure here only loses the summary.

        Returns:
            None, or why ``run.json`` could not be written (for people).
        """
        session = self.run_file.sessions[-1]
        session.ended = now()
        session.status = status
        session.summary = summary
        for key, value in (extra or {}).items():
            if value is None:
                self.run_file.extra.pop(key, None)
            else:
                self.run_file.extra[key] = value
        try:
            data = read_episodes_bytes(self.directory / EPISODES_FILE)
            session.counts = counts_of(data[self._session_start :])
            session.episodes_log = checkpoint_of(data)
            write_run_file(self.directory, self.run_file)
        except (StoreWriteError, SaberError) as error:
            return f"{error}; the episodes are safe, only this session's summary is lost"
        return None

    def close(self) -> None:
        """Release the file and the lock (the run can then be resumed). A directory that
        :meth:`read` created and no session began in (a run refused by the quick probe,
        say) is removed again: nothing is left behind."""
        if self._appender is not None:
            self._appender.close()
            self._appender = None
        elif self._created and self._lock is not None:
            with contextlib.suppress(OSError):  # still locked: no other run is in it
                (self.directory / LOCK_FILE).unlink()
                self.directory.rmdir()
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def __enter__(self) -> ResultsStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
