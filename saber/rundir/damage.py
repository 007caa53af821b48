"""Damage to a run directory: what is wrong with its files, and the one advice about it.

Resume, ``saber report`` and ``saber verify`` give the same advice for the same damage
(:func:`check_run_directory`), and ``saber repair`` acts on the same reading
(:func:`examine`). docs/harness.md ("Damaged run directories") lists the kinds
(:data:`DAMAGE_KINDS`) and how damage is told from another run's ``run.json``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from saber.errors import RunDamageError
from saber.rundir.reading import EpisodeLines, check_episodes_log, read_episodes_bytes
from saber.rundir.records import EPISODES_FILE, is_torn, repair_advice
from saber.rundir.runfile import RunRequest
from saber.rundir.torn import complete_torn_line

# Each kind, as counted for people: "{count} {label}".
DAMAGE_KINDS: dict[str, str] = {
    "cut": "byte(s) of what run.json attests missing (a cut)",
    "torn": "last line cut short",
    "nul": "line(s) holding NUL bytes",
    "not_json": "line(s) that are not a JSON record",
    "unattested": "record(s) written after the run's last session ended, which run.json "
    "does not count",
}


@dataclass
class Examination:
    """What :func:`examine` found in ``episodes.jsonl``.

    Attributes:
        path: the file.
        size: its size in bytes.
        attested: the bytes ``run.json``'s last checkpoint attests, or None (no checkpoint).
        lines: ``(line number, raw bytes, kind)`` of every line in file order; ``kind`` is
            a key of :data:`DAMAGE_KINDS`, or None for a line to keep (a record, a completed
            torn record, a blank line).
        records: line number -> JSON object of each line to keep.
        details: the first reason of each line kind (``not UTF-8 text ...``).
        cut: bytes of what ``run.json`` attests that are missing (0 if none).
        crash_torn: the line number of a last line cut short by a crash of a session that
            never ended (resuming completes it; ``saber repair`` drops it), or None.
        foreign: the attested bytes differ and nothing shows damage: a ``run.json`` of
            another run, or an ``episodes.jsonl`` rewritten (not repairable).
    """

    path: Path
    size: int = 0
    attested: int | None = None
    lines: list[tuple[int, bytes, str | None]] = field(default_factory=list)
    records: dict[int, dict[str, Any]] = field(default_factory=dict)
    details: dict[str, str] = field(default_factory=dict)
    cut: int = 0
    crash_torn: int | None = None
    foreign: bool = False

    def damage(self, crash_torn: bool = False) -> dict[str, list[int]]:
        """Line numbers of each kind of damage found (``cut``: no line numbers); with
        ``crash_torn``, a last line cut short by a crash too (``saber repair`` drops it)."""
        found: dict[str, list[int]] = {"cut": []} if self.cut else {}
        for number, _, kind in self.lines:
            if kind is not None and (crash_torn or number != self.crash_torn):
                found.setdefault(kind, []).append(number)
        return found

    def clauses(self, crash_torn: bool = False) -> dict[str, str]:
        """Each kind of damage for people: ``{"nul": "2 line(s) holding NUL bytes (lines
        5, 6)"}`` (``crash_torn``: as in :meth:`damage`)."""
        clauses = {}
        for kind, numbers in self.damage(crash_torn).items():
            count = self.cut if kind == "cut" else len(numbers)
            where = (
                f"episodes.jsonl holds {self.size} bytes, run.json attests {self.attested}"
                if kind == "cut"
                else f"line{'s' if len(numbers) > 1 else ''} "
                + ", ".join(map(str, numbers[:5]))
                + (f" and {len(numbers) - 5} more" if len(numbers) > 5 else "")
            )
            detail = f": {self.details[kind]}" if kind in self.details else ""
            clauses[kind] = f"{count} {DAMAGE_KINDS[kind]} ({where}{detail})"
        return clauses

    def describe(self) -> str:
        """The damage for people, one clause per kind: ``1 last line cut short (line 4);
        2 line(s) holding NUL bytes (lines 5, 6)``; empty when there is none."""
        return "; ".join(self.clauses().values())

    def episode_lines(self) -> EpisodeLines:
        """The records of this pass over the file, as :func:`~saber.rundir.reading.
        read_episode_lines` reads them from a file without damage: every record to keep,
        and the text of a last line without its line end. (A record written after the
        run ended is damage, and not among them.)"""
        found = EpisodeLines(sorted(self.records.items()), count=len(self.lines), path=self.path)
        if self.lines and not self.lines[-1][1].endswith(b"\n"):
            # Cut short by a crash: possibly inside a character, so decoded leniently.
            found.unterminated = self.lines[-1][1].decode("utf-8", errors="replace")
        return found


def _checkpoint(run: Mapping[str, Any] | None) -> tuple[dict[str, Any] | None, bool]:
    """The last session checkpoint of ``run.json`` (or None), and whether the last session
    ended."""
    sessions = run.get("sessions") if run is not None else None
    sessions = [s for s in sessions if isinstance(s, dict)] if isinstance(sessions, list) else []
    checkpoints = [s["episodes_log"] for s in sessions if isinstance(s.get("episodes_log"), dict)]
    # Every session saber writes has a checkpoint (read_run_json refuses one without);
    # the last one's attests the end once that session ended.
    ended = bool(sessions) and sessions[-1].get("ended") is not None
    return (checkpoints[-1] if checkpoints else None), ended


def _object(text: str) -> dict[str, Any] | None:
    """The JSON object of a text, or None."""
    try:
        found = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested thousands deep
        return None
    return found if isinstance(found, dict) else None


def _classify(raw: bytes, last: bool) -> tuple[str | None, str, dict[str, Any] | None]:
    """The kind of one line (None: a record to keep), why, and its object."""
    if b"\x00" in raw:
        return "nul", "", None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        # A cut inside a character: a torn last line, or one completed as a torn record.
        text = raw.decode("utf-8", errors="replace")
        completed = _object(text)
        if not (last and not raw.endswith(b"\n")) and not (completed and is_torn(completed)):
            byte = raw[error.start]
            why = f"not UTF-8 text, byte 0x{byte:02x} at column {error.start + 1}"
            return "not_json", why, None
    if not text.strip():
        return None, "", None
    try:
        record = json.loads(text)
    except (ValueError, RecursionError) as error:  # RecursionError: nested thousands deep
        if last and not raw.endswith(b"\n"):
            try:
                complete_torn_line(text)
            except ValueError:
                return "not_json", "not the start of a JSON object", None
            return "torn", "", None
        return "not_json", f"not JSON: {error}", None
    if not isinstance(record, dict):
        return "not_json", "not a JSON object", None
    # A JSON object with missing or bad keys is no damage of the file but a bad record,
    # which each reader names precisely ("record without a game").
    return None, "", record


def _counted(record: Mapping[str, Any], request: RunRequest) -> bool:
    """Whether ``run.json``'s counts would count a record: one the run asked for, neither
    torn nor outside the request (a record outside it is left out by every reader, and
    named: it contradicts no count)."""
    return not is_torn(record) and _asked_for(record, request)


def _asked_for(record: Mapping[str, Any], request: RunRequest) -> bool:
    """Whether a record is one the run asked for (its game, episode, agent and seed:
    :class:`~saber.rundir.runfile.RunRequest`, the rule the reports leave records out by)."""
    if is_torn(record):
        return True  # its fields cannot be trusted either way
    return request.outside(record, str(record.get("game"))) is None


def examine(
    directory: str | Path, run: Mapping[str, Any] | None, episodes_file: str | Path | None = None
) -> Examination:
    """Read ``episodes.jsonl`` of ``directory`` line by line against ``run.json``'s object
    ``run`` (None: there is none) and find its damage (docs/harness.md).

    Raises:
        RunDirectoryError: the file cannot be read.
    """
    path = Path(directory) / EPISODES_FILE if episodes_file is None else Path(episodes_file)
    data = read_episodes_bytes(path)
    found = Examination(path=path, size=len(data))
    checkpoint, ended = _checkpoint(run)
    request = None if run is None else RunRequest.of(run)
    attested_intact = True
    if checkpoint is not None:
        try:
            attested, digest = checkpoint["bytes"], str(checkpoint["sha256"])
            if isinstance(attested, bool) or not isinstance(attested, int) or attested < 0:
                raise ValueError(attested)  # 1e309, 1.5, "12": no size of a file
            found.attested = attested
        except (KeyError, TypeError, ValueError):
            found.attested = None  # check_episodes_log names it
        else:
            attested_intact = hashlib.sha256(data[: found.attested]).hexdigest() == digest
            attested_intact &= len(data) >= found.attested
    lines = data.splitlines(keepends=True)
    start = 0
    for number, raw in enumerate(lines, start=1):
        last = number == len(lines)
        kind, why, record = _classify(raw, last)
        after_attested = found.attested is not None and attested_intact and start >= found.attested
        if kind is None and record is not None:
            if after_attested and ended and request is not None and _counted(record, request):
                kind = "unattested"
            else:
                found.records[number] = record
        elif kind == "torn" and (found.attested is None or (after_attested and not ended)):
            found.crash_torn = number  # a crash while a session wrote it: resume completes it
        if kind is not None and why:
            found.details.setdefault(kind, why)
        found.lines.append((number, raw, kind))
        start += len(raw)
    if found.attested is not None and not attested_intact:
        asked = request is None or all(_asked_for(r, request) for r in found.records.values())
        damaged = any(kind is not None for _, _, kind in found.lines)
        found.cut = max(found.attested - len(data), 0)
        found.foreign = not (data and asked and (damaged or found.cut))
    return found


def check_run_directory(
    directory: str | Path, run: Mapping[str, Any] | None, episodes_file: str | Path | None = None
) -> Examination:
    """Check a run directory's ``episodes.jsonl`` against ``run.json`` (its object ``run``,
    None: there is none) before reading its records: ``saber eval``, ``saber report`` and
    ``saber verify`` call it, so that they give the same advice for the same damage.
    ``episodes_file``: the records, when not ``directory/episodes.jsonl`` (a report of a
    ``.jsonl`` file of another name).

    Returns:
        The examination (no damage; perhaps a last line cut short by a crash, which a
        resume completes).

    Raises:
        RunDamageError: damage (:func:`repair_advice`: run ``saber repair``).
        RunDirectoryError: ``run.json`` does not belong to ``episodes.jsonl`` (another run's,
            or a file rewritten): :func:`~saber.rundir.reading.check_episodes_log`.
    """
    found = examine(directory, run, episodes_file)
    if found.foreign and run is not None:
        check_episodes_log(run, found.path)
    damage = found.describe()
    if damage:
        raise RunDamageError(repair_advice(directory, f"{found.path} is damaged: {damage}"))
    if run is not None:
        check_episodes_log(run, found.path)  # a damaged checkpoint in run.json
    return found


def read_checked(
    directory: str | Path, run: Mapping[str, Any] | None, episodes_file: str | Path | None = None
) -> EpisodeLines:
    """Check a run directory (:func:`check_run_directory`) and read its records, in one
    pass over ``episodes.jsonl``: what ``saber eval`` (resume), ``saber report`` and
    ``saber verify`` read.

    Raises:
        RunDamageError, RunDirectoryError: as :func:`check_run_directory`.
    """
    return check_run_directory(directory, run, episodes_file).episode_lines()
