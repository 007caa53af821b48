"""``saber repair RUN``: make a damaged run directory whole again, keeping every intact episode.

Under the directory's lock it keeps each intact record (one past what a checkpoint still
attests only if ``prove``, playing its replay, shows it), sets the damaged originals aside
and writes whole files, so a crash at any point leaves a directory that ``saber repair``
finishes. docs/harness.md ("Damaged run directories") gives the steps.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from saber.errors import RunDirectoryError, StoreWriteError
from saber.rundir.damage import Examination, check_run_directory, examine
from saber.rundir.durable import lock_directory, write_atomically, write_run_file
from saber.rundir.reading import check_episodes_log, checkpoint_of, parse_run_file
from saber.rundir.records import (
    EPISODES_FILE,
    REPORT_FILES,
    RUN_FILE,
    FailureSummary,
    is_failure,
    is_torn,
    now,
)
from saber.rundir.runfile import RunFile, Session
from saber.version import __version__

#: Why a record is not shown to be what was written, or None when it is:
#: ``prove(directory, record, run)`` (``run``: ``run.json``'s object). ``saber repair``
#: gives one that plays the record's replay (:func:`saber.replay.verify.why_unproven`).
Prove = Callable[[Path, dict[str, Any], Mapping[str, Any]], "str | None"]


@dataclass
class RepairResult:
    """What :func:`repair_run` did.

    Attributes:
        directory: the run directory.
        dropped: each kind of damage for people (:meth:`Examination.clauses`), by kind.
        finished: finished episodes kept (distinct ``(game, episode)``).
        other: other records kept (failed attempts, records of crashes).
        set_aside: the damaged originals, as they now are named.
        missing: episodes the run asks for that are not finished now, or None (no
            ``run.json``).
        reports_removed: the run's reports it removed (they described dropped records).
        temporary_removed: temporary files of writes cut short that it removed.
        proven: records past what ``run.json`` attests that ``prove`` showed, kept.
    """

    directory: Path
    dropped: dict[str, str] = field(default_factory=dict)
    finished: int = 0
    other: int = 0
    set_aside: list[Path] = field(default_factory=list)
    missing: int | None = None
    reports_removed: list[Path] = field(default_factory=list)
    temporary_removed: list[Path] = field(default_factory=list)
    proven: int = 0

    def lines(self) -> list[str]:
        """For people: one line per kind of damage, then what is kept and what to do."""
        cleaned = (
            [
                f"removed {len(self.temporary_removed)} temporary file(s) of a write cut "
                f"short: {', '.join(path.name for path in self.temporary_removed)}"
            ]
            if self.temporary_removed
            else []
        )
        if not self.dropped:
            return [*cleaned, f"{self.directory}: nothing to repair; its files are whole"]
        lines = cleaned + [
            f"found {clause}: the records in those bytes are lost"
            if kind == "cut"
            else f"rebuilt {clause}"
            if kind == "run_json"
            else f"dropped {clause}"
            for kind, clause in self.dropped.items()
        ]
        if self.proven:
            lines.append(
                f"kept {self.proven} record(s) past what run.json attests: their replays "
                "reproduce them"
            )
        lines.append(
            f"kept {self.finished} finished episode(s) and {self.other} other record(s) "
            f"(failed attempts, records of crashes) in {self.directory / EPISODES_FILE}"
        )
        lines += [f"the damaged original is kept as {path}" for path in self.set_aside]
        if self.reports_removed:
            names = " and ".join(path.name for path in self.reports_removed)
            remake = " ".join(
                shlex.quote(str(part))
                for part in ("saber", "report", self.directory, "--json",
                             self.directory / REPORT_FILES[0], "--markdown",
                             self.directory / REPORT_FILES[1])
            )  # fmt: skip
            lines.append(
                f"removed {names}: made from the records before the repair, they described "
                f"episodes it dropped; {remake} makes them again"
            )
        if self.missing:
            lines.append(
                f"{self.missing} episode(s) the run asks for are not finished: run its saber "
                "eval command again to play them"
            )
        return lines


def salvage_json_object(text: str) -> dict[str, Any] | None:
    """The JSON object of the longest whole part of a cut JSON object, or None.

    Every point where a value ends (before a ``,`` or after a closing bracket, outside
    strings) is a candidate: the text up to it, closed by the brackets still open, from
    the last candidate back.

    >>> salvage_json_object('{"a": 1, "b": [1, 2], "c": {"d": "x, y')
    {'a': 1, 'b': [1, 2], 'c': {}}
    """
    candidates: list[tuple[int, str]] = []
    closers: list[str] = []
    in_string = escaped = False
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            closers.append("}" if char == "{" else "]")
            if char == "{":  # an object cut before its first key closes empty
                candidates.append((index + 1, "".join(reversed(closers))))
        elif char in "}]":
            if closers:
                closers.pop()
            candidates.append((index + 1, "".join(reversed(closers))))
        elif char == ",":
            candidates.append((index, "".join(reversed(closers))))
    for end, closing in reversed(candidates):
        try:
            found = json.loads(text[:end] + closing)
        except (ValueError, RecursionError):
            continue
        if isinstance(found, dict):
            return found
    return None


# run.json writes these first (RunFile.to_dict), seed_scheme last: a rebuilt object that
# has them all has the run's settings whole (a value cut short closes, so a cut inside the
# settings would keep half of them, and a resume would refuse the run as another).
_WHOLE_RUN_KEYS = frozenset(
    ("format", "settings", "agent", "games", "episodes", "base_seed", "seed_scheme")
)


def _read_run(run_path: Path) -> tuple[dict[str, Any] | None, bytes | None]:
    """``run.json``'s object (rebuilt if damaged; None: there is none) and, when it was
    damaged, its original bytes."""
    try:
        data = run_path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as error:
        raise RunDirectoryError(f"Cannot read {run_path}: {error.strerror or error}") from None
    try:
        run = json.loads(data.decode("utf-8"))
    # not JSON, or not UTF-8 (UnicodeDecodeError is a ValueError), or nested thousands deep
    except (ValueError, RecursionError):
        salvaged = salvage_json_object(data.decode("utf-8", errors="replace"))
        if salvaged is None or not salvaged.keys() >= _WHOLE_RUN_KEYS:
            raise RunDirectoryError(
                f"{run_path} is damaged before the run's settings end, so the run cannot be "
                "rebuilt; restore run.json from a backup, or evaluate again in another "
                "directory."
            ) from None
        # A session cut short lost its checkpoint (episodes_log, which saber writes in
        # every session): what is left of it is dropped, and the repair's own session
        # records the checkpoint of the episodes it keeps.
        sessions = salvaged.get("sessions")
        if isinstance(sessions, list):
            salvaged["sessions"] = [
                session
                for session in sessions
                if isinstance(session, dict) and isinstance(session.get("episodes_log"), dict)
            ]
        return salvaged, data
    return run, None


def _stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def _set_aside(path: Path, data: bytes, stamp: str) -> Path:
    """Write ``data`` (the damaged original of ``path``) beside it, whole, under a new name."""
    aside = path.with_name(f"{path.name}.damaged-{stamp}")
    number = 1
    while aside.exists():  # two repairs within a second keep both originals
        number += 1
        aside = path.with_name(f"{path.name}.damaged-{stamp}-{number}")
    try:
        write_atomically(aside, data)
    except OSError as error:
        raise StoreWriteError(f"Cannot write {aside}: {error.strerror or error}") from error
    return aside


def _remove_temporary_files(directory: Path) -> list[Path]:
    """Remove what writes cut short left (``<name>.tmp`` of the run's files and of their
    damaged originals); the caller holds the directory's lock."""
    names = [f"{name}.tmp" for name in (RUN_FILE, EPISODES_FILE, *REPORT_FILES)]
    found = [directory / name for name in names if (directory / name).is_file()]
    for name in (RUN_FILE, EPISODES_FILE):
        found += sorted(directory.glob(f"{glob.escape(name)}.damaged-*.tmp"))
    removed = []
    for path in found:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed.append(path)
    return removed


def _remove_reports(directory: Path) -> list[Path]:
    """Remove the run's reports (they describe the records before the repair)."""
    removed = []
    for name in REPORT_FILES:
        path = directory / name
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as error:
            raise StoreWriteError(
                f"Cannot remove {path}, which describes the records before the repair: "
                f"{error.strerror or error}; the records are intact: run saber repair again"
            ) from error
        removed.append(path)
    return removed


def _checkpoints(run: Mapping[str, Any]) -> list[tuple[int, str]]:
    """``(bytes, sha256)`` of every session's checkpoint of ``episodes.jsonl``."""
    sessions = run.get("sessions")
    found = []
    for session in sessions if isinstance(sessions, list) else []:
        log = session.get("episodes_log") if isinstance(session, dict) else None
        size = log.get("bytes") if isinstance(log, dict) else None
        if isinstance(size, int) and not isinstance(size, bool) and size >= 0:
            found.append((size, str(log.get("sha256"))))  # type: ignore[union-attr]
    return found


def unproven_lines(found: Examination, run: Mapping[str, Any] | None) -> list[int]:
    """Line numbers of the records to keep that no checkpoint of ``run.json`` attests,
    when its last checkpoint is broken (a cut, or an edit): those ending past the longest
    prefix of the file that a checkpoint still proves. Empty when the last checkpoint
    holds (records after it are the damage check's to judge)."""
    checkpoints = [] if run is None else _checkpoints(run)
    if not checkpoints or found.attested is None:
        return []
    data = b"".join(raw for _, raw, _ in found.lines)

    def holds(size: int, digest: str) -> bool:
        return size <= len(data) and hashlib.sha256(data[:size]).hexdigest() == digest

    if holds(*checkpoints[-1]):
        return []
    proven = max((size for size, digest in checkpoints if holds(size, digest)), default=0)
    unproven, offset = [], 0
    for number, raw, kind in found.lines:
        offset += len(raw)
        if kind is None and number in found.records and offset > proven:
            unproven.append(number)
    return unproven


def _prove(
    directory: Path, found: Examination, run: Mapping[str, Any] | None, prove: Prove | None
) -> tuple[str | None, int]:
    """Drop from ``found`` the records past what ``run.json`` attests that ``prove`` does
    not show (all of them without ``prove``): the clause for people (None: none
    dropped), and how many it kept."""
    unproven = unproven_lines(found, run)
    if not unproven or run is None:
        return None, 0
    reasons = {}
    for number in unproven:
        why = (
            "no replay was played to prove it"
            if prove is None
            else prove(directory, found.records[number], run)
        )
        if why is not None:
            reasons[number] = why
    for number in reasons:
        del found.records[number]
    found.lines = [(n, raw, "unproven" if n in reasons else kind) for n, raw, kind in found.lines]
    if not reasons:
        return None, len(unproven)
    first = min(reasons)
    numbers = ", ".join(map(str, sorted(reasons)[:5])) + (" and more" if len(reasons) > 5 else "")
    return (
        f"{len(reasons)} record(s) past what run.json attests (a cut or an edit broke its "
        f"checkpoint) that their replays do not reproduce (line{'s' if len(reasons) > 1 else ''} "
        f"{numbers}; line {first}: {reasons[first]})"
    ), len(unproven) - len(reasons)


def _kept(found: Examination) -> bytes:
    """The lines of intact records, each with its line end."""
    return b"".join(
        raw if raw.endswith(b"\n") else raw + b"\n"
        for number, raw, kind in found.lines
        if kind is None and number in found.records
    )


def _finished(records: list[dict[str, Any]]) -> set[tuple[str, Any]]:
    """``(game, episode)`` of the finished episodes among ``records`` (a record without
    them, which readers name, finishes none)."""
    return {
        (str(r["game"]), r["episode"])
        for r in records
        if not is_failure(r) and not is_torn(r) and "game" in r and "episode" in r
    }


def _summary(records: list[dict[str, Any]], run: RunFile) -> tuple[dict[str, Any], int]:
    """The run's ``summary`` (as ``saber eval`` writes it) and the episodes it asks for
    that are not finished."""
    finished = _finished(records)
    failures = FailureSummary.of(records, finished)
    summary = {
        "finished": len(finished),
        "failed": len(failures.lost),
        "failed_attempts": failures.attempts,
        "recovered": len(failures.recovered),
        "failure_reasons": failures.reasons,
    }
    games = set(run.games)  # counted, not listed: a run.json may ask for billions
    done = sum(
        1
        for game, episode in finished
        if game in games and isinstance(episode, int) and 0 <= episode < run.episodes
    )
    return summary, max(len(games) * max(run.episodes, 0) - done, 0)


def repair_run(
    directory: str | Path, command: list[str] | None = None, prove: Prove | None = None
) -> RepairResult:
    """Repair a damaged run directory (docs/harness.md, "Damaged run directories").

    Args:
        directory: the run directory.
        command: the command line, for ``run.json``'s session.
        prove: why a record past what ``run.json`` attests is not shown to be what was
            written (:data:`Prove`); None: no such record is kept.

    Raises:
        RunDirectoryError: no run directory, a ``run.json`` of another run (not damage),
            or one damaged before the run's settings end.
        StoreWriteError: a file could not be written (the originals are intact).
        SaberError: another run uses the directory right now.
    """
    directory = Path(directory)
    if not (directory / EPISODES_FILE).is_file() and not (directory / RUN_FILE).is_file():
        raise RunDirectoryError(
            f"{directory}: no episodes.jsonl nor run.json, not a run directory of saber eval"
        )
    lock = lock_directory(directory)
    try:
        return _repair(directory, command, prove)
    finally:
        if lock is not None:
            lock.close()


def _repair(directory: Path, command: list[str] | None, prove: Prove | None) -> RepairResult:
    run_path, episodes_path = directory / RUN_FILE, directory / EPISODES_FILE
    temporary = _remove_temporary_files(directory)
    run, damaged_run = _read_run(run_path)
    run_file = None if run is None else parse_run_file(run, run_path)
    found = examine(directory, run)
    if found.foreign and run is not None:
        check_episodes_log(run, episodes_path)  # another run's run.json: not repairable
    result = RepairResult(
        directory, dropped=found.clauses(crash_torn=True), temporary_removed=temporary
    )
    if damaged_run is not None:
        result.dropped = {
            "run_json": f"{run_path} from its whole part (it was cut short or damaged)",
            **result.dropped,
        }
    unproven, result.proven = _prove(directory, found, run, prove)
    if unproven is not None:
        result.dropped["unproven"] = unproven
    if not result.dropped:
        if run is not None:
            check_run_directory(directory, run)  # a damaged checkpoint: its own message
        return result
    stamp = _stamp()
    kept = _kept(found)
    records = [found.records[number] for number in sorted(found.records)]
    result.finished = len(_finished(records))
    result.other = sum(is_failure(r) for r in records)
    rewrite = bool(found.damage(crash_torn=True))
    original = b"".join(raw for _, raw, _ in found.lines)  # the bytes examined
    if rewrite:
        result.set_aside.append(_set_aside(episodes_path, original, stamp))
    if damaged_run is not None:
        result.set_aside.append(_set_aside(run_path, damaged_run, stamp))
    if rewrite:
        result.reports_removed = _remove_reports(directory)
    # run.json before episodes.jsonl: a crash between the two leaves the damaged file
    # under a checkpoint it breaks, which every command then calls damage again.
    if run_file is not None:
        summary, result.missing = _summary(records, run_file)
        started = now()
        run_file.sessions.append(
            Session(
                command=list(command or ["saber", "repair", str(directory)]),
                started=started,
                versions={"saber": __version__},
                ended=started,
                status="repaired",
                counts={"episodes_finished": 0, "attempts_failed": 0},
                summary=summary,
                episodes_log=checkpoint_of(kept if rewrite else original),
                extra={
                    "repair": {
                        "dropped": list(result.dropped.values()),
                        "set_aside": [path.name for path in result.set_aside],
                    }
                },
            )
        )
        write_run_file(directory, run_file)
    if rewrite:
        try:
            write_atomically(episodes_path, kept)
        except OSError as error:
            raise StoreWriteError(
                f"Cannot write {episodes_path}: {error.strerror or error}; the original is "
                "intact: run saber repair again"
            ) from error
    return result
