"""The board's entries: one typed, immutable :class:`Entry` per agent on the board, the
statuses an entry can have, and what identifies a run directory's content.

An entry is read (:mod:`saber.board.reading`, :mod:`saber.board.published`), then judged
(:mod:`saber.board.status`, :mod:`saber.board.copies`); each step makes new entries
(:meth:`Entry.with_status`, :func:`dataclasses.replace`), none changes one in place.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from saber.errors import RunDirectoryError, shown
from saber.rundir.contained import read_contained
from saber.rundir.records import EPISODES_FILE, RUN_FILE
from saber.scoring import ScoreTable

VERIFIED = "verified"
PUBLISHED = "published, not verifiable"
NOT_SABER = "not SABER"
INCOMPLETE = "incomplete"
UNVERIFIED = "not verified within the budget"
CONFLICT = "in conflict"
FAILED = "failed"
# Statuses in the order the board lists them.
STATUSES = (VERIFIED, PUBLISHED, NOT_SABER, INCOMPLETE, UNVERIFIED, CONFLICT, FAILED)
# The reason of a shipped agent trained outside SABER (saber.agents.pretrained's provenance),
# before its deviations: its play may be SABER's, the result is not.
TRAINED_OUTSIDE = "evaluated under SABER, trained outside it (its shipped provenance): "
RANKED = (VERIFIED, PUBLISHED)
PASSING = (VERIFIED, PUBLISHED, NOT_SABER)  # saber board exits 0 when every entry has one

METADATA_FILE = "board.json"  # in a run directory; a CSV's is <name>.board.json beside it
METADATA_KEYS = ("name", "citation", "training_frames", "date")
METADATA_BYTES = 64_000  # a board.json is a few lines: more is refused
TABLE_BYTES = 64_000_000  # a score table: 57 games x 100 episodes x 3 limits is 2 MB
RECORDS_BYTES = (
    256_000_000  # run.json and episodes.jsonl, hashed for the run's identity (57 x 100: 3 MB)
)
REPLAY_BYTES = 64_000_000  # a replay hashed for the run's identity (verify bounds them too)
_REPLAY = re.compile(rb'"replay": *"((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True)
class Entry:
    """One agent on the board.

    Attributes:
        given: the ENTRY as given (a path, or a shipped name).
        kind: ``"run"``, ``"score table"``, ``"reference"``, ``"shipped agent"`` or
            ``"unknown"`` (a path that names nothing).
        label: the agent's name as the board shows it (a run's: its replays').
        key: SHA-256 of the entry's content (files' bytes, never names or dates): its
            identity and the key of everything the cache keeps for it.
        table: its scores (one agent, named ``label``); None when they cannot be read.
        status: one of :data:`STATUSES`; reason: why, one line.
        citation: where a published table comes from (a claim: shown, never checked).
        date: when it was evaluated or published (ISO date, or a year).
        training_frames: emulator frames of training it declares (None: not said).
        settings: the env settings its run.json states; versions: package versions.
        facts: other provenance, label -> text.
        command: the command that reproduces its evaluation.
        run_dirs: its run directories (a run entry); content: each one's identity
            (:func:`run_content`), by directory.
        deviations: its settings that are not SABER's, for people (a run's: its replays').
        verification: what verifying its replays found (:mod:`saber.board.status`).
        same_as: other ENTRYs that held the same content, counted once as this one.
        run_ids: the ``run_id`` of each of its runs (a run entry).
        recorded_from: the runs its scores were recorded from, as its provenance says:
            ``run_id`` -> the run's name in its scores (``seed1``).
        claimed_name: a run's name in its ``board.json``, when it is not its replays'.
        short: episodes per game when fewer than the protocol's 100 (shown, and said so
            wherever it is ranked).
        id: its page's name on the site.
    """

    given: str
    kind: str
    label: str
    key: str = ""
    table: ScoreTable | None = None
    status: str = FAILED
    reason: str = ""
    citation: str | None = None
    date: str | None = None
    training_frames: int | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    versions: Mapping[str, str] = field(default_factory=dict)
    facts: Mapping[str, str] = field(default_factory=dict)
    command: str | None = None
    run_dirs: tuple[Path, ...] = ()
    content: Mapping[Path, str] = field(default_factory=dict, repr=False)
    deviations: tuple[str, ...] = ()
    verification: Mapping[str, Any] | None = None
    same_as: tuple[str, ...] = ()
    run_ids: tuple[str, ...] = ()
    recorded_from: Mapping[str, str] = field(default_factory=dict)
    claimed_name: str | None = None
    short: int | None = None
    id: str = ""

    @property
    def ranked(self) -> bool:
        """Whether the ranking may show it (verified or published, with scores)."""
        return self.status in RANKED and self.table is not None

    def with_status(self, status: str, reason: str, **changes: Any) -> Entry:
        """This entry with another status and reason (and other fields changed)."""
        return dataclasses.replace(self, status=status, reason=reason, **changes)

    def also_given(self, given: str) -> Entry:
        """This entry, another ENTRY that held it named (counted once)."""
        return dataclasses.replace(self, same_as=(*self.same_as, given))

    def line(self) -> str:
        """``verified: random (runs/a): ...``: one console line, whatever its text holds."""
        return f"{self.status}: {shown(self.label)} ({shown(self.given)}): {shown(self.reason)}"


def failed(given: str, reason: str, kind: str = "unknown") -> Entry:
    """An entry that cannot be read: its status failed, with the reason."""
    return Entry(given, kind, given, key=sha256(given.encode()), reason=one_line(reason))


def sha256(*chunks: bytes) -> str:
    """SHA-256 (hex) of ``chunks``, one digest a chunk: no two lists of chunks collide."""
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(hashlib.sha256(chunk).digest())
    return digest.hexdigest()


def one_line(error: BaseException | str) -> str:
    """An error's text as one line."""
    text = str(error).strip() or type(error).__name__
    return " ".join(text.split())


def renamed(table: ScoreTable, agent: str) -> ScoreTable:
    """``table`` with every record's agent named ``agent`` (one entry, one agent; a
    reference's agent stays marked as the reference it comes from)."""
    records = table.records
    if any(r.agent != agent for r in records):
        records = [dataclasses.replace(r, agent=agent) for r in records]
    reference = next(iter(table.references.values()), None)
    return dataclasses.replace(
        table,
        records=records,
        mean_only={agent} if table.mean_only else set(),
        references={} if reference is None else {agent: reference},
        game_sets={},
    )


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of ``path``, a regular file (a symbolic link, a FIFO or a device is
    refused: a file an entry names is data, read in bounded time) of at most ``limit``.

    Raises:
        FileNotFoundError: there is no such file.
        RunDirectoryError: why it is refused, for people.
    """
    mode = os.lstat(path).st_mode
    if stat.S_ISLNK(mode):
        raise RunDirectoryError(f"{shown(path)}: a symbolic link; give the file itself")
    return read_contained(path.parent, path.name, limit)


def date_of(text: Any) -> str | None:
    """The ISO date (or year) a text starts with, or None."""
    found = re.match(r"\d{4}(-\d{2}-\d{2})?", str(text or ""))
    return found.group(0) if found else None


def metadata(path: Path) -> tuple[dict[str, Any], str | None]:
    """An entry's ``board.json`` (its keys of :data:`METADATA_KEYS`), or why it is unusable."""
    try:
        found = json.loads(read_regular(path, METADATA_BYTES).decode("utf-8"))
    except FileNotFoundError:
        return {}, None
    except RunDirectoryError as error:
        reason = str(error) if str(error).startswith(shown(path)) else f"{shown(path)}: {error}"
        return {}, reason
    except (OSError, ValueError, RecursionError) as error:  # Recursion: nested thousands deep
        return {}, f"{shown(path)}: not readable JSON ({one_line(error)})"
    if not isinstance(found, dict):
        return {}, f"{shown(path)}: not a JSON object"
    frames = found.get("training_frames")
    if frames is not None and (not isinstance(frames, int) or isinstance(frames, bool)):
        return {}, f"{shown(path)}: training_frames must be an integer (emulator frames)"
    return {k: found[k] for k in METADATA_KEYS if found.get(k) is not None}, None


def run_content(run: Path) -> bytes:
    """What identifies a run directory's content: ``run.json``, ``episodes.jsonl`` and every
    replay they name, hashed (the names of the files and their dates do not count). A
    replay is read only as ``saber verify`` reads it: a regular file inside the run
    directory, bounded in size; any other stands as the reason it is refused."""
    parts = []
    for name in (RUN_FILE, EPISODES_FILE):
        try:
            parts.append(read_regular(run / name, RECORDS_BYTES))
        except (OSError, RunDirectoryError) as error:
            parts.append(f"unreadable: {type(error).__name__}".encode())
    replays = set()
    for found in _REPLAY.findall(parts[1]):  # a regular expression: ten times json's pace
        try:
            replays.add(json.loads(b'"' + found + b'"'))
        except ValueError:
            continue
    root = os.path.realpath(run)
    for relative in sorted(replays):
        try:
            parts.append(read_contained(run, relative, REPLAY_BYTES, real_root=root))
        except (OSError, RunDirectoryError) as error:
            parts.append(f"refused: {error}".encode())
    return sha256(*parts).encode()
