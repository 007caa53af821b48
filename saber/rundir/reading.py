"""Reading a run directory: the lines of ``episodes.jsonl``, ``run.json``, and the checks
that they are whole and belong together.

Every reader takes its records from :class:`EpisodeLines` (:func:`read_episode_lines`, or
the damage check's one pass, which reads the same lines).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from saber.errors import RunDamageError, RunDirectoryError, shown
from saber.rundir.contained import read_regular
from saber.rundir.records import (
    EPISODES_FILE,
    RUN_FILE,
    RUN_FORMAT,
    episode_key,
    is_failure,
    is_torn,
    repair_advice,
)
from saber.rundir.runfile import RunFile
from saber.version import __version__

# The most bytes each file is read to (a FIFO or a device is never read): far above what
# any run writes (a full evaluation's episodes.jsonl takes a few MB).
MAX_EPISODES_BYTES = 1 << 30
MAX_RUN_JSON_BYTES = 1 << 28


class LineRecord(NamedTuple):
    """One whole record of ``episodes.jsonl`` and what it is.

    Attributes:
        number: its line number (from 1).
        record: its JSON object.
        kind: ``"torn"`` (cut short by a crash and completed on resume: no episode's
            record, :func:`~saber.rundir.records.is_torn`), ``"failed"`` (a failed
            attempt, :func:`~saber.rundir.records.is_failure`) or ``"finished"``.
        where: ``file:line``, for messages.
    """

    number: int
    record: dict[str, Any]
    kind: str
    where: str


@dataclass
class EpisodeLines:
    """What one reading of an ``episodes.jsonl`` found: :func:`read_episode_lines`, or the
    damage check's pass over the file
    (:meth:`saber.rundir.damage.Examination.episode_lines`).

    Attributes:
        lines: ``(line number, object)`` of every whole line, in file order (blank lines
            skipped); a last line without its newline counts if it is a whole object.
        unterminated: the text of a last line without a newline, or None: a line cut short
            by a crash (not an object: readers of results leave it out) or one written by
            hand. The store completes it on resume, by appending only.
        count: lines in the file (blank ones included).
        path: the file, named in ``where`` (``file:line``).
    """

    lines: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    unterminated: str | None = None
    count: int = 0
    path: Path = Path(EPISODES_FILE)

    @property
    def cut_short(self) -> bool:
        """The last line lacks its line end and is no whole object: a run writing it right
        now, or one that crashed (a resume completes it as a torn record)."""
        return self.unterminated is not None and (not self.lines or self.lines[-1][0] != self.count)

    def records(self, whole: bool = False) -> Iterator[LineRecord]:
        """Every whole record in file order, with its kind (:class:`LineRecord`).

        Args:
            whole: leave out a last record that lacks its line end (the store completes
                it on resume, then takes it in).
        """
        lines = self.lines
        if whole and self.unterminated is not None and lines and lines[-1][0] == self.count:
            lines = lines[:-1]
        for number, record in lines:
            kind = "torn" if is_torn(record) else "failed" if is_failure(record) else "finished"
            yield LineRecord(number, record, kind, f"{self.path}:{number}")

    def finished(self) -> dict[tuple[str, int], dict[str, Any]]:
        """The first finished record of each ``(game, episode)``, in file order: torn
        records, failed attempts and records without a game are no episode's.

        Raises:
            RunDirectoryError: a finished record whose episode is not an integer >= 0 or
                whose game is not a name (:func:`~saber.rundir.records.episode_key`).
        """
        finished: dict[tuple[str, int], dict[str, Any]] = {}
        for line in self.records():
            if line.kind == "finished" and "game" in line.record:
                finished.setdefault(episode_key(line.record, line.where), line.record)
        return finished


def read_episode_lines(path: str | Path) -> EpisodeLines:
    """Read an ``episodes.jsonl``: its whole lines as JSON objects, and a torn last line.

    A missing file reads as empty. Lines are UTF-8 (the harness writes ASCII); a line cut
    short inside a character is a torn line like any other.

    Raises:
        RunDirectoryError: a whole line that is not a JSON object or not UTF-8 text
            (naming file and line), or a file that cannot be read.
    """
    path = Path(path)
    found = EpisodeLines(path=path)
    if not path.exists():
        return found
    data = read_episodes_bytes(path)
    lines = data.splitlines(keepends=True)
    found.count = len(lines)
    for number, raw in enumerate(lines, start=1):
        if number == len(lines) and not raw.endswith(b"\n"):
            # Cut short by a crash: possibly inside a character, so decode leniently.
            found.unterminated = line = raw.decode("utf-8", errors="replace")
            with contextlib.suppress(ValueError, RecursionError):
                record = json.loads(line)
                if isinstance(record, dict):
                    found.lines.append((number, record))
            break
        if not raw.strip():
            continue
        found.lines.append((number, _parse_line(path, number, raw)))
    return found


def _parse_line(path: Path, number: int, raw: bytes) -> dict[str, Any]:
    """One whole line of ``episodes.jsonl`` as its JSON object.

    A torn line completed on resume may hold half a character (the cut fell inside it):
    it is read with that character replaced, since nothing of a torn line is trusted.
    """
    where = f"{path}:{number}"
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.decode("utf-8", errors="replace")
        with contextlib.suppress(ValueError, RecursionError):
            record = json.loads(line)
            if isinstance(record, dict) and is_torn(record):
                return record
        raise RunDirectoryError(
            f"{where}: not UTF-8 text (byte 0x{raw[error.start]:02x} at column "
            f"{error.start + 1}); the file was changed by hand or damaged. Fix or remove "
            "that line."
        ) from None
    try:
        record = json.loads(line)
    except (ValueError, RecursionError) as error:  # RecursionError: nested thousands deep
        raise RunDirectoryError(
            f"{where}: not an episode record (not a JSON object: {error}); the file was "
            "changed by hand or damaged. Fix or remove that line."
        ) from None
    if not isinstance(record, dict):
        raise RunDirectoryError(
            f"{where}: not an episode record (not a JSON object); the file was changed by "
            "hand or damaged. Fix or remove that line."
        )
    return record


def episodes_log_checkpoint(path: str | Path) -> dict[str, Any]:
    """``{"bytes": N, "sha256": hex}`` of a whole ``episodes.jsonl`` as it is now (an
    absent file: 0 bytes), for :attr:`Session.episodes_log`."""
    return checkpoint_of(read_episodes_bytes(path))


def read_episodes_bytes(path: str | Path) -> bytes:
    """The bytes of an ``episodes.jsonl`` (an absent file: none).

    Raises:
        RunDirectoryError: it exists but cannot be read.
    """
    try:
        return read_regular(path, MAX_EPISODES_BYTES)
    except FileNotFoundError:
        return b""
    except RunDirectoryError as why:
        raise RunDirectoryError(f"Cannot read {shown(path)}: {why}") from None


def checkpoint_of(data: bytes) -> dict[str, Any]:
    """``{"bytes": N, "sha256": hex}`` of an ``episodes.jsonl``'s bytes."""
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def counts_of(appended: bytes) -> dict[str, int]:
    """A session's :attr:`Session.counts` from the bytes it appended to ``episodes.jsonl``.

    Counted from the file, not from counters kept beside the writes: a Ctrl-C or SIGTERM
    lands between two Python statements, so it can stop a session after a record is on
    disk and before a counter saw it. A last line without its line end (a write cut
    short) is not counted: the next session completes it as a torn record.
    """
    finished = failed = 0
    for raw in appended.split(b"\n")[:-1]:
        try:
            line = json.loads(raw)
        except (ValueError, RecursionError):
            continue  # not this session's to judge; check_episodes_log and resume report it
        if not isinstance(line, dict) or is_torn(line):
            continue
        if is_failure(line):
            failed += 1
        else:
            finished += 1
    return {"episodes_finished": finished, "attempts_failed": failed}


def check_episodes_log(run: Mapping[str, Any], path: str | Path) -> None:
    """Check that ``run.json`` (its JSON object ``run``) belongs to this ``episodes.jsonl``.

    The newest session that recorded a checkpoint (:attr:`Session.episodes_log`) says how
    many bytes the file held then and their SHA-256; the file only grows, so its first
    bytes must still hash to that. Every session saber writes has one
    (:func:`read_run_json` refuses a saber ``run.json`` with a session without it); a
    ``run.json`` written by hand, without sessions, is not checked.

    Raises:
        RunDirectoryError: the checkpoint does not match (a ``run.json`` copied from
            another run, or an ``episodes.jsonl`` rewritten or replaced).
    """
    sessions = run.get("sessions")
    checkpoints = [
        session["episodes_log"]
        for session in (sessions if isinstance(sessions, list) else [])
        if isinstance(session, dict) and isinstance(session.get("episodes_log"), dict)
    ]
    if not checkpoints:
        return
    expected = checkpoints[-1]
    path = Path(path)
    size, digest = expected.get("bytes"), expected.get("sha256")
    if (
        isinstance(size, bool)
        or not isinstance(size, int)
        or size < 0
        or not isinstance(digest, str)
    ):
        raise RunDirectoryError(
            f"{path.with_name(RUN_FILE)}: a session's episodes_log is damaged; restore "
            "run.json from a backup, or use another directory."
        ) from None
    # Never more than the file holds (read(2**40) would allocate a TB first), nor a FIFO.
    prefix = read_episodes_bytes(path)[:size]
    if len(prefix) < size or hashlib.sha256(prefix).hexdigest() != digest:
        found = "differ" if len(prefix) == size else f"are only {len(prefix)} bytes"
        raise RunDirectoryError(
            f"{path.with_name(RUN_FILE)} does not belong to {path}: it was written when that "
            f"file began with {size} bytes of SHA-256 {digest[:12]}..., and this file's first "
            f"bytes {found}. A run.json copied from another run, or an episodes.jsonl "
            "rewritten or replaced: put the directory's own files back, or use another "
            "directory."
        )


def run_key(run: Mapping[str, Any] | None, episodes_path: str | Path) -> str:
    """What identifies a run in any copy of its directory: ``run_id:<id>`` from
    ``run.json``; for a ``run.json`` written by hand (no ``run_id``: saber's always has
    one, :func:`read_run_json`), or an
    ``episodes.jsonl`` without ``run.json``, ``content:<SHA-256>`` of what every copy of
    the run keeps: the keys of ``run.json`` that no resume changes (``started``, agent,
    run name, seeds, settings, the first command) and the first line of
    ``episodes.jsonl`` (append-only, so a copy taken at any time has it; a record holds
    its own wall time, ``seconds``, so two runs' first lines differ). Without a
    ``started`` (a ``run.json`` written by hand, or none), the whole ``episodes.jsonl``
    instead of its first line: only identical copies are then one run.

    Args:
        run: the ``run.json`` object, or None without one.
        episodes_path: the run's ``episodes.jsonl``.
    """
    run = run or {}
    if isinstance(run.get("run_id"), str) and run["run_id"]:
        return f"run_id:{run['run_id']}"
    stable = ("started", "agent", "run", "base_seed", "seed_scheme", "settings", "command")
    digest = hashlib.sha256(
        json.dumps({key: run.get(key) for key in stable}, sort_keys=True, default=repr).encode()
    )
    try:
        data = read_episodes_bytes(episodes_path)
    except RunDirectoryError:
        data = b""  # not a regular file: the readers say so
    digest.update(data[: data.find(b"\n") + 1 or len(data)] if run.get("started") else data)
    return f"content:{digest.hexdigest()}"


def read_run_json(path: str | Path) -> dict[str, Any]:
    """The JSON object of ``run.json`` (a directory or the file itself) as it is, unchecked
    beyond being JSON and not a saber ``run.json`` older than 0.4 (:func:`_refuse_before_0_4`):
    for readers that take what they find (a report reads a hand-made
    ``{"non_saber": true}`` too). :func:`read_run_file` checks it.

    Raises:
        FileNotFoundError: there is no such file.
        RunDirectoryError: it cannot be read, is not valid JSON, or was written by saber
            0.3 or older.
    """
    path = Path(path)
    run_file = path / RUN_FILE if path.is_dir() else path
    try:
        run = json.loads(read_regular(run_file, MAX_RUN_JSON_BYTES).decode("utf-8"))
    except FileNotFoundError:
        raise
    except UnicodeDecodeError as error:
        why = f"not UTF-8 text: byte 0x{error.object[error.start]:02x} at offset {error.start}"
        raise _run_json_damage(run_file, why) from None
    except RunDirectoryError as why:
        raise RunDirectoryError(f"Cannot read {shown(run_file)}: {why}") from None
    except (ValueError, RecursionError) as error:
        # JSONDecodeError; ValueError: an integer of over 4300 digits; RecursionError: arrays
        # or objects nested thousands deep.
        why = (
            f"not valid JSON: {error.msg}, line {error.lineno}"
            if isinstance(error, json.JSONDecodeError)
            else f"not valid JSON: {type(error).__name__}: {error}"
        )
        raise _run_json_damage(run_file, why) from None
    _refuse_before_0_4(run, run_file)
    return run  # type: ignore[no-any-return]


def _refuse_before_0_4(run: Any, run_file: str | Path) -> None:
    """Refuse a ``run.json`` that saber wrote (its ``format`` is saber's) without what
    every saber since 0.4.0 writes: a ``run_id``, and a checkpoint (``episodes_log``) in
    each session. saber 0.3 and older (never published) wrote such files; saber 0.4
    reads them.

    Raises:
        RunDirectoryError: one line naming the file, what it lacks, and what to do.
    """
    if not isinstance(run, dict) or run.get("format") != RUN_FORMAT:
        return  # not saber's (the typed read refuses it), or written by hand
    sessions = run.get("sessions")
    lacks = [] if isinstance(run.get("run_id"), str) and run["run_id"] else ["no run_id"]
    if isinstance(sessions, list) and any(
        isinstance(session, dict) and not isinstance(session.get("episodes_log"), dict)
        for session in sessions
    ):
        lacks.append("a session without its episodes_log")
    if lacks:
        raise RunDirectoryError(
            f"{run_file} has {' and '.join(lacks)}: written by saber 0.3 or older "
            f"(never published), or changed by hand; saber {__version__} reads run "
            "directories of saber 0.4.0 and later. saber 0.4 reads this one (saber report, "
            "saber verify); or play the run again into another directory."
        )


def _run_json_damage(run_file: Path, why: str) -> RunDamageError:
    """The error of a ``run.json`` that is not valid JSON or not text (``why``)."""
    episodes = run_file.with_name(EPISODES_FILE)
    # Only a file that exists can be said to be intact: a folder may hold run.json alone.
    kept = (
        f"the episodes in {episodes} are intact" if episodes.exists() else f"{episodes} is absent"
    )
    return RunDamageError(repair_advice(run_file.parent, f"{run_file} is damaged ({why}); {kept}"))


def read_run_file(path: str | Path) -> RunFile:
    """Read and check ``run.json`` (a directory or the file itself).

    Raises:
        RunDirectoryError: the file cannot be read, is damaged, is not the provenance of
            a saber run, or was written by another format version; the message says what
            to do. ``FileNotFoundError`` if there is no such file.
    """
    path = Path(path)
    run_file = path / RUN_FILE if path.is_dir() else path
    return parse_run_file(read_run_json(run_file), run_file)


def parse_run_file(on_disk: Any, run_file: str | Path) -> RunFile:
    """Check the JSON object of ``run.json`` (``run_file``, named in errors) and type it.

    Raises:
        RunDirectoryError: as :func:`read_run_file`.
    """
    if not isinstance(on_disk, dict) or "format" not in on_disk:
        raise RunDirectoryError(
            f"{run_file} is not the provenance of a saber run (no 'format' key); use "
            "another directory."
        )
    if on_disk["format"] != RUN_FORMAT:
        raise RunDirectoryError(
            f"{run_file} was written by another version of saber (format "
            f"{on_disk['format']!r}, saber {shown(on_disk.get('saber', '?'))}); saber "
            f"{__version__} reads {RUN_FORMAT!r}. Resume it with that version, or "
            "use another directory."
        )
    _refuse_before_0_4(on_disk, run_file)
    try:
        return RunFile.from_dict(on_disk)
    # AttributeError: a session that is not an object; ArithmeticError: "episodes": Infinity.
    except (KeyError, TypeError, ValueError, AttributeError, ArithmeticError) as error:
        raise RunDirectoryError(
            f"{run_file}: not the provenance of a saber run ({type(error).__name__}: "
            f"{error}); use another directory."
        ) from None
