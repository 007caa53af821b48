"""Reading ENTRYs (run directories, score tables, shipped references and agents) into the
board's entries, one per agent, keyed by the SHA-256 of its content. Nothing here raises
for bad input: an entry that cannot be read is ``failed``, with the reason in one line."""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path
from typing import Any

from saber.board import copies, published, tables
from saber.board.cache import Cache
from saber.board.entries import (
    METADATA_FILE,
    Entry,
    date_of,
    failed,
    metadata,
    one_line,
    run_content,
    sha256,
)
from saber.errors import SaberError, shown
from saber.rundir.reading import parse_run_file, read_run_json, run_key
from saber.rundir.records import EPISODES_FILE, RUN_FILE
from saber.rundir.runfile import RunFile


class Reader:
    """Reads ENTRYs into entries, counting each run, table and reference once.

    Args:
        cache: where the scores read from runs are kept (None: nowhere).

    Attributes:
        entries: every entry read, in the order given.
        notes: one line for each ENTRY that held what another already gave.
    """

    def __init__(self, cache: Cache | None = None) -> None:
        self.cache = cache
        self.entries: list[Entry] = []
        self.notes: list[str] = []
        self._unread: list[int] = []  # run entries (their index) whose scores finish() reads
        self._seen: dict[str, tuple[str, int | None]] = {}  # identity -> (first given, entry)
        self._versions: dict[str, str] = {}  # run key -> the run directory read first

    def first(self, identity: str, given: str, what: str) -> bool:
        """True the first time ``identity`` is met; later, a note, and False."""
        if identity not in self._seen:
            return True
        first, index = self._seen[identity]
        self.notes.append(f"{shown(given)}: {what} as {shown(first)}: counted once")
        if index is not None:
            self.entries[index] = self.entries[index].also_given(given)
        return False

    def add(self, entry: Entry, identity: str | None = None, given: str | None = None) -> int:
        """Add ``entry``; ``identity`` (met first in ``given``) names it from now on."""
        self.entries.append(entry)
        if identity is not None:
            self._seen[identity] = (given or entry.given, len(self.entries) - 1)
        return len(self.entries) - 1

    def seen(self, identity: str, given: str, index: int | None = None) -> None:
        """Mark ``identity`` met in ``given``: the entry ``index`` holds it (None: none yet)."""
        self._seen[identity] = (given, index)

    def read(self, given: str) -> None:
        """Read one ENTRY (never raises for bad input: see the module docstring)."""
        try:
            self._read(given)
        except Exception as error:  # an entry's failure is its status, never a crash
            self.add(failed(given, one_line(error)))

    def _read(self, given: str) -> None:
        path = Path(given)
        if path.is_symlink() and path.suffix.lower() == ".csv":
            self.add(failed(given, "a symbolic link: give the score table itself", "score table"))
        elif path.is_dir():
            self._read_runs(given, path)
        elif path.is_file():
            if path.suffix.lower() == ".csv":
                published.read_csv(self, given, path)
            else:
                self.add(failed(given, "not a run directory, nor a score table (.csv)"))
        elif not published.read_shipped(self, given):
            self.add(
                failed(
                    given,
                    "no such file or directory, nor a shipped reference (saber report "
                    "--list-references) or shipped agent (saber list)",
                )
            )

    def _read_runs(self, given: str, folder: Path) -> None:
        if (folder / RUN_FILE).is_file() or (folder / EPISODES_FILE).is_file():
            runs = [folder]
        else:
            runs = sorted(p.parent for p in folder.rglob(RUN_FILE) if p.parent != folder)
            if not runs:
                self.add(
                    failed(given, f"holds no run directory (no {RUN_FILE} in it or below)", "run")
                )
                return
        by_agent: dict[str, list[tuple[Path, str, str]]] = {}
        alone: list[tuple[str, Path, str, str, str]] = []  # a copy whose files differ
        for run in runs:
            shown_as = given if run == folder else str(run)
            try:
                on_disk: dict[str, Any] | None = read_run_json(run)
            except FileNotFoundError:
                on_disk = None
            except SaberError as error:  # a damaged run.json: an entry of its own, failed
                self.add(failed(shown_as, one_line(error), "run"))
                continue
            key = run_key(on_disk, run / EPISODES_FILE)
            content = run_content(run).decode()  # its replays read once a build
            identity = f"{key} {content}"
            if not self.first(identity, shown_as, "the same run"):
                continue
            self.seen(identity, shown_as)
            agent = str((on_disk or {}).get("agent") or "agent")
            if key in self._versions:  # a copy of one run whose files differ: settled later
                self.notes.append(
                    f"{shown(shown_as)}: the same run ({_run_words(key)}) as "
                    f"{shown(self._versions[key])}, but its files differ: neither is ranked "
                    "unless their replays prove the same records"
                )
                alone.append((agent, run, identity, content, self._versions[key]))
                continue
            self._versions[key] = shown_as
            by_agent.setdefault(agent, []).append((run, identity, content))
        groups = [(agent, dirs, None) for agent, dirs in by_agent.items()]
        groups += [(agent, [(run, identity, content)], first)
                   for agent, run, identity, content, first in alone]  # fmt: skip
        for agent, dirs, copy_of in groups:
            entry = self._run_entry(given, agent, {run: content for run, _, content in dirs})
            if copy_of is not None:
                entry = dataclasses.replace(
                    entry, facts={**entry.facts, "The same run as": f"{copy_of} (its files differ)"}
                )
            index = self.add(entry)
            for _, identity, _ in dirs:
                self.seen(identity, self._seen[identity][0], index)
            if entry.reason == "":
                self._unread.append(index)

    def _run_entry(self, given: str, agent: str, content: dict[Path, str]) -> Entry:
        dirs = tuple(content)
        meta, meta_problem = metadata(dirs[0] / METADATA_FILE)
        entry = Entry(given, "run", agent, run_dirs=dirs, content=content,
                      key=sha256(*(c.encode() for c in content.values())))  # fmt: skip
        runs = []
        for run in dirs:
            try:
                runs.append(parse_run_file(read_run_json(run), run / RUN_FILE))
            except FileNotFoundError:
                return dataclasses.replace(
                    entry,
                    reason=f"{shown(run)}: no {RUN_FILE}, so the run's settings and "
                    "seeds are unknown",
                )
            except SaberError as error:
                return dataclasses.replace(entry, reason=one_line(error))
        first = runs[0]
        name = meta.get("name")
        return dataclasses.replace(
            entry,
            reason=meta_problem or "",
            run_ids=tuple(run.run_id or "" for run in runs),  # one a run, in order
            settings=dict(first.settings),
            versions={**first.versions, "platform": first.platform},
            command=_eval_command(first, dirs[0]),
            date=date_of(min(run.started for run in runs)),
            citation=meta.get("citation"),
            training_frames=meta.get("training_frames", published.shipped_frames(agent)),
            claimed_name=str(name) if name is not None and str(name) != agent else None,
            facts={
                "Runs": ", ".join(str(run) for run in dirs),
                "Run ids": ", ".join(str(run.run_id) for run in runs),
                "Sessions": ", ".join(str(len(run.sessions)) for run in runs),
                "Base seed": ", ".join(str(run.base_seed) for run in runs),
                "Recorded command": _command_line(first.command) or "(none)",
                **({"Name its board.json gives": str(name)} if name is not None else {}),
            },
        )

    def finish(self, workers: int | None = None) -> None:
        """Read the scores of every run entry (:func:`saber.scoring.read_scores`), in
        ``workers`` processes (None: one per core; 0: this one), or from the cache; then
        count shipped scores recorded from runs on the board once, as those runs."""
        read = tables.read_run_tables(
            [self.entries[index] for index in self._unread], self.cache, workers
        )
        for index, entry in zip(self._unread, read, strict=True):
            self.entries[index] = entry
        self._unread = []
        self.entries, notes = copies.count_recorded_once(self.entries)
        self.notes += notes


def _command_line(command: list[str]) -> str | None:
    """A recorded command line as one shell line, ``saber`` for the console script's path."""
    if not command:
        return None
    first = Path(str(command[0])).name
    words = ["saber" if first == "saber" else str(command[0]), *map(str, command[1:])]
    return shlex.join(words)


def _eval_command(run: RunFile, directory: Path) -> str:
    """The ``saber eval`` that plays the run's episodes again from its ``run.json``."""
    words = ["saber", "eval", "--agent", run.agent, "--games", ",".join(run.games)]
    words += ["--episodes", str(run.episodes), "--seed", str(run.base_seed)]
    if run.run is not None:
        words += ["--run", run.run]
    return shlex.join([*words, "--out", str(directory)])


def _run_words(key: str) -> str:
    """A run key (:func:`saber.rundir.reading.run_key`) for people: ``run_id 1a2b...``."""
    kind, _, value = key.partition(":")
    return f"run_id {shown(value)}" if kind == "run_id" else "the same start and first record"
