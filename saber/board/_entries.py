"""The board's entries: what each ENTRY of ``saber board`` is, read into one agent's scores.

An ENTRY is a run directory of ``saber eval`` (or a folder holding several: one entry per
agent, its runs together), a score table (CSV) whose citation is in ``<name>.board.json``
beside it, the name of a shipped reference (``saber report --list-references``), or the
name of a trained agent saber ships (``ppo-pong``: its shipped evaluation). Each becomes
one :class:`Entry` per agent, keyed by the SHA-256 of its content: a run given twice, or
copied, counts once (:func:`saber.rundir.reading.run_key`, the rule of ``saber report``).

Nothing here raises for bad input: an entry that cannot be read is an entry with the
status ``failed`` and the reason, one line.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
import re
import shlex
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from saber.agents.pretrained import PRETRAINED, agent_provenance
from saber.board._cache import Cache, digest
from saber.board._parallel import run_all
from saber.errors import SaberError
from saber.rundir.reading import parse_run_file, read_run_json, run_key
from saber.rundir.records import EPISODES_FILE, RUN_FILE
from saber.rundir.runfile import RunFile
from saber.scoring import ScoreTable, list_references, reference_table
from saber.scoring.csvscores import read_score_csv
from saber.scoring.references import PAPER_TRAINING_FRAMES
from saber.scoring.scorefile import read_scores
from saber.scoring.scoretable import EpisodeScore, merge_tables

VERIFIED = "verified"
FAILED = "failed"
NOT_SABER = "not SABER"
PUBLISHED = "published, not verifiable"
# Statuses in the order the board lists them; the ranking takes the first and the last.
STATUSES = (VERIFIED, PUBLISHED, NOT_SABER, FAILED)
RANKED = (VERIFIED, PUBLISHED)

METADATA_FILE = "board.json"  # in a run directory; a CSV's is <name>.board.json beside it
METADATA_KEYS = ("name", "citation", "training_frames", "date")
RANDOM_PROVENANCE = "saber_random_provenance.json"  # saber-random's, in saber/data


@dataclass
class Entry:
    """One agent on the board.

    Attributes:
        given: the ENTRY as given (a path, or a shipped name).
        kind: ``"run"``, ``"score table"``, ``"reference"`` or ``"shipped agent"``.
        label: the agent's name as the board shows it.
        key: SHA-256 of the entry's content (files' bytes, never names or dates): its
            identity and the key of everything the cache keeps for it.
        table: its scores (one agent, named ``label``); None when they cannot be read.
        status: one of :data:`STATUSES`, decided at build time.
        reason: why that status, one line.
        citation: where a published table comes from.
        date: when it was evaluated or published (ISO date, or a year).
        training_frames: emulator frames of training (None: not said).
        settings: the env settings it was evaluated with (run.json's).
        versions: package versions it was evaluated with, and the platform.
        facts: other provenance, label -> text (run id, sessions, sources).
        command: the command that reproduces its evaluation.
        run_dirs: its run directories (a run entry).
        deviations: its settings that are not SABER's, for people.
        verification: what verifying its replays found (:mod:`saber.board._status`).
        same_as: other ENTRYs that held the same content, counted once as this one.
        run_ids: the ``run_id`` of each of its runs (a run entry).
        recorded_from: the runs its scores were recorded from, as its provenance says
            (shipped scores of saber's own evaluations): ``run_id`` -> the run's name in
            its scores (``seed1``); given with those runs, it counts once, as them.
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
    settings: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    facts: dict[str, str] = field(default_factory=dict)
    command: str | None = None
    run_dirs: list[Path] = field(default_factory=list)
    deviations: list[str] = field(default_factory=list)
    verification: dict[str, Any] | None = None
    same_as: list[str] = field(default_factory=list)
    run_ids: list[str] = field(default_factory=list)
    recorded_from: dict[str, str] = field(default_factory=dict)
    id: str = ""

    @property
    def ranked(self) -> bool:
        """Whether the ranking may show it (verified or published, with scores)."""
        return self.status in RANKED and self.table is not None


def _sha256(*chunks: bytes) -> str:
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(hashlib.sha256(chunk).digest())  # one digest a chunk: no ambiguity
    return digest.hexdigest()


def _one_line(error: BaseException | str) -> str:
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


def _command_line(command: list[str]) -> str | None:
    """A recorded command line as one shell line, ``saber`` for the console script's path."""
    if not command:
        return None
    first = Path(str(command[0])).name
    words = ["saber" if first == "saber" else str(command[0]), *map(str, command[1:])]
    return shlex.join(words)


def _eval_command(run: RunFile, directory: Path) -> str:
    """The ``saber eval`` that plays the run's episodes again from its ``run.json`` (the
    recorded command may be a script's, for a run made with ``saber.evaluate``)."""
    words = ["saber", "eval", "--agent", run.agent, "--games", ",".join(run.games)]
    words += ["--episodes", str(run.episodes), "--seed", str(run.base_seed)]
    if run.run is not None:
        words += ["--run", run.run]
    return shlex.join([*words, "--out", str(directory)])


def _date(text: Any) -> str | None:
    found = re.match(r"\d{4}(-\d{2}-\d{2})?", str(text or ""))
    return found.group(0) if found else None


def _metadata(path: Path) -> tuple[dict[str, Any], str | None]:
    """An entry's ``board.json`` (its keys of :data:`METADATA_KEYS`), or why it is unusable."""
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, None
    except (OSError, ValueError) as error:
        return {}, f"{path}: not readable JSON ({_one_line(error)})"
    if not isinstance(found, dict):
        return {}, f"{path}: not a JSON object"
    frames = found.get("training_frames")
    if frames is not None and (not isinstance(frames, int) or isinstance(frames, bool)):
        return {}, f"{path}: training_frames must be an integer (emulator frames)"
    return {k: found[k] for k in METADATA_KEYS if found.get(k) is not None}, None


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
        self._unread: list[Entry] = []  # run entries whose scores finish() reads
        self._seen: dict[str, tuple[str, Entry | None]] = {}  # identity -> (first given, entry)
        self._versions: dict[str, str] = {}  # run key -> the run directory read first
        self._contents: dict[Path, bytes] = {}  # run directory -> run_content()

    def _first(self, identity: str, given: str, what: str) -> bool:
        """True the first time ``identity`` is met; later, a note and False."""
        if identity not in self._seen:
            return True
        first, entry = self._seen[identity]
        self.notes.append(f"{given}: {what} as {first}: counted once")
        if entry is not None:
            entry.same_as.append(given)
        return False

    def read(self, given: str) -> None:
        """Read one ENTRY (never raises for bad input: see the module docstring)."""
        try:
            self._read(given)
        except Exception as error:  # an entry's failure is its status, never a crash
            self.entries.append(
                Entry(given, "unknown", given, key=_sha256(given.encode()), reason=_one_line(error))
            )

    def _read(self, given: str) -> None:
        path = Path(given)
        if path.is_dir():
            self._read_runs(given, path)
        elif path.is_file():
            if path.suffix.lower() == ".csv":
                self._read_csv(given, path)
            else:
                self._fail(given, "not a run directory, nor a score table (.csv)")
        elif given.strip().lower().partition("@")[0] in {r.name for r in list_references()}:
            self._read_reference(given, given.strip().lower())  # dopamine@50M: a checkpoint
        elif given in PRETRAINED:
            self._read_shipped_agent(given)
        else:
            self._fail(
                given,
                "no such file or directory, nor a shipped reference (saber report "
                "--list-references) or shipped agent (saber list)",
            )

    def _fail(self, given: str, reason: str, kind: str = "unknown") -> None:
        self.entries.append(Entry(given, kind, given, key=_sha256(given.encode()), reason=reason))

    # Run directories ---------------------------------------------------------------------

    def _read_runs(self, given: str, folder: Path) -> None:
        if (folder / RUN_FILE).is_file() or (folder / EPISODES_FILE).is_file():
            runs = [folder]
        else:
            runs = sorted(p.parent for p in folder.rglob(RUN_FILE) if p.parent != folder)
            if not runs:
                self._fail(given, f"holds no run directory (no {RUN_FILE} in it or below)", "run")
                return
        by_agent: dict[str, list[Path]] = {}
        alone: dict[Path, tuple[str, str]] = {}  # a copy that differs -> (agent, run read first)
        identities: dict[Path, str] = {}
        for run in runs:
            shown = given if run == folder else str(run)
            try:
                on_disk: dict[str, Any] | None = read_run_json(run)
            except FileNotFoundError:
                on_disk = None
            except SaberError as error:  # a damaged run.json: an entry of its own, failed
                self._fail(shown, _one_line(error), "run")
                continue
            key = run_key(on_disk, run / EPISODES_FILE)
            # A copy counts once only when its files are the same: one whose records were
            # changed keeps the run_id of the run it was copied from, and is checked on its
            # own, whichever of the two is given first (count_copies_once keeps one that
            # verifies).
            self._contents[run] = run_content(run)  # its replays read once a build
            identity = f"{key} {self._contents[run].decode()}"
            if not self._first(identity, shown, "the same run"):
                continue
            self._seen[identity] = (shown, None)
            identities[run] = identity
            agent = str((on_disk or {}).get("agent") or "agent")
            if key in self._versions:
                self.notes.append(
                    f"{shown}: the same run ({_run_words(key)}) as {self._versions[key]}, "
                    "but its files differ: each is checked on its own"
                )
                alone[run] = (agent, self._versions[key])
                continue
            self._versions[key] = shown
            by_agent.setdefault(agent, []).append(run)
        groups = [*by_agent.items(), *((agent, [run]) for run, (agent, _) in alone.items())]
        for agent, dirs in groups:
            entry = self._run_entry(given, agent, dirs)
            if dirs[0] in alone:
                entry.facts["The same run as"] = f"{alone[dirs[0]][1]} (its files differ)"
            for run in dirs:
                self._seen[identities[run]] = (self._seen[identities[run]][0], entry)
            self.entries.append(entry)

    def _run_entry(self, given: str, agent: str, dirs: list[Path]) -> Entry:
        meta, meta_problem = _metadata(dirs[0] / METADATA_FILE)
        label = str(meta.get("name") or agent)
        entry = Entry(given, "run", label, run_dirs=dirs)
        entry.key = _sha256(*(self._contents[run] for run in dirs))
        runs = []
        for run in dirs:
            try:
                runs.append(parse_run_file(read_run_json(run), run / RUN_FILE))
            except FileNotFoundError:
                entry.reason = f"{run}: no {RUN_FILE}, so the run's settings and seeds are unknown"
                return entry
            except SaberError as error:
                entry.reason = _one_line(error)
                return entry
        first = runs[0]
        entry.run_ids = [run.run_id for run in runs if run.run_id]
        entry.settings = dict(first.settings)
        entry.versions = {**first.versions, "platform": first.platform}
        entry.command = _eval_command(first, dirs[0])
        recorded = _command_line(first.command)
        entry.date = _date(min(run.started for run in runs))
        entry.citation = meta.get("citation")
        entry.training_frames = meta.get("training_frames", _shipped_frames(agent))
        entry.facts = {
            "Runs": ", ".join(str(run) for run in dirs),
            "Run ids": ", ".join(str(run.run_id) for run in runs),
            "Sessions": ", ".join(str(len(run.sessions)) for run in runs),
            "Base seed": ", ".join(str(run.base_seed) for run in runs),
            "Recorded command": recorded or "(none)",
        }
        entry.deviations = sorted(
            {
                f"{name} {deviation[1]!r} (SABER: {deviation[0]!r})"
                if isinstance(deviation, list | tuple) and len(deviation) == 2
                else f"{name} {deviation!r}"
                for run in runs
                for name, deviation in run.deviations.items()
            }
        )
        if meta_problem:
            entry.reason = meta_problem
            return entry
        self._unread.append(entry)  # its scores: read by finish(), every run at once
        return entry

    def finish(self, workers: int | None = None) -> None:
        """Read the scores of every run entry (:func:`saber.scoring.read_scores`), in
        ``workers`` processes (None: one per core; 0: this one).

        Reading checks every line of every run (a second a run of 57 games x 100 episodes),
        so what it found is kept in the cache under the runs' content, where the next build
        finds it; messages name the directories as given this time."""
        pending, keys = [], {}
        for entry in self._unread:
            keys[entry.key] = digest("table", entry.key)  # saber's reading may change
            found = None if self.cache is None else self.cache.get("table", keys[entry.key])
            try:
                if found is not None:
                    self._take(entry, _table_from(found, [str(run) for run in entry.run_dirs]))
                    continue
            except (KeyError, TypeError, ValueError):
                pass  # another layout: read again
            pending.append(entry)
        results = run_all(_scores_of_runs, [(entry.run_dirs,) for entry in pending], workers)
        for entry, table in zip(pending, results, strict=True):
            if isinstance(table, BaseException):
                entry.reason = _one_line(table)
                continue
            if self.cache is not None:
                names = [str(run) for run in entry.run_dirs]
                self.cache.put("table", keys[entry.key], _table_document(table, names))
            self._take(entry, table)
        self._unread = []
        self._count_recorded_once()

    def _count_recorded_once(self) -> None:
        """Shipped scores recorded from runs that are on the board too (``saber-ppo``
        beside ``baselines/evals``) are those runs given twice: counted once, as the runs,
        which the board can verify. Runs of several entries (``ppo-breakout``,
        ``ppo-qbert``: one agent a game) become one entry named as the shipped scores
        (``saber-ppo``), ranked like for like as the shipped scores were."""
        runs: dict[str, Entry] = {}  # run_id -> the entry read first (copies come after)
        for entry in self.entries:
            for run_id in entry.run_ids:
                runs.setdefault(run_id, entry)
        replaced: dict[int, Entry | None] = {}  # id(entry) -> the entry in its place
        for entry in self.entries:
            if not entry.recorded_from or not set(entry.recorded_from) <= set(runs):
                continue
            same = list({id(runs[i]): runs[i] for i in entry.recorded_from}.values())
            merged = _merged(entry, same) if len(same) > 1 else None
            replaced[id(entry)] = None
            if merged is not None:
                replaced.update({id(run): None for run in same} | {id(same[0]): merged})
            for run in same if merged is None else [merged]:
                run.same_as.append(entry.given)
            shown = ", ".join(", ".join(map(str, run.run_dirs)) for run in same)
            self.notes.append(
                f"{entry.given} ({entry.label}): scores recorded from the runs {shown}: "
                + (
                    "counted once, as those runs"
                    if merged is None
                    else f"one entry of those runs, {merged.label}, checked by replay"
                )
            )
        self.entries = [
            replaced.get(id(entry), entry)
            for entry in self.entries
            if replaced.get(id(entry), entry) is not None
        ]

    @staticmethod
    def _take(entry: Entry, table: ScoreTable) -> None:
        entry.table = renamed(table, entry.label)

    # Score tables, references, shipped agents --------------------------------------------

    def _read_csv(self, given: str, path: Path) -> None:
        data = path.read_bytes()
        meta_path = path.with_name(f"{path.stem}.{METADATA_FILE}")
        meta, meta_problem = _metadata(meta_path)
        key = _sha256(data, json.dumps(meta, sort_keys=True).encode())
        if not self._first(f"csv:{_sha256(data)}", given, "the same score table"):
            return
        try:
            table = read_score_csv(path)
        except SaberError as error:
            self._fail(given, _one_line(error), "score table")
            return
        agents = table.agents()
        first: Entry | None = None
        for agent in agents:
            label = agent if len(agents) > 1 or not meta.get("name") else str(meta["name"])
            entry = Entry(given, "score table", label, key=_sha256(key.encode(), agent.encode()))
            only = dataclasses.replace(
                table, records=[r for r in table.records if r.agent == agent]
            )
            entry.table = renamed(only, label)
            entry.citation = meta.get("citation")
            entry.training_frames = meta.get("training_frames")
            entry.date = _date(meta.get("date"))
            entry.facts = {"Score table": str(path)}
            if meta_problem:
                entry.reason = meta_problem
            elif not entry.citation:
                entry.reason = (
                    f"a score table without a citation: write {meta_path} with "
                    '{"citation": "who published these scores, where"}'
                )
            else:
                entry.status = PUBLISHED
                entry.reason = "a published score table: no replay to play again"
            self.entries.append(entry)
            first = first or entry
        self._seen[f"csv:{_sha256(data)}"] = (given, first)

    def _read_reference(self, given: str, name: str) -> None:
        if not self._first(f"reference:{name}", given, "the same reference"):
            return
        info = next(r for r in list_references() if r.name == name.partition("@")[0])
        table = reference_table(name)  # a checkpoint it has not: its message, the entry's
        first: Entry | None = None
        for agent in table.agents():
            only = dataclasses.replace(
                table, records=[r for r in table.records if r.agent == agent]
            )
            key = _sha256(b"reference", agent.encode(), repr(only.records).encode())
            # One agent's scores in two references (dopamine and dopamine:dqn): once.
            if not self._first(f"reference-agent:{key}", given, f"the same scores of {agent}"):
                continue
            entry = Entry(given, "reference", agent, key=key)
            self._seen[f"reference-agent:{key}"] = (given, entry)
            entry.table = renamed(only, agent)
            entry.citation = info.citation
            entry.facts = {
                "Reference": f"{name}: {info.description}",
                "Data": f"saber/data/{info.file}",
            }
            entry.training_frames, entry.date, entry.command = _reference_details(name, agent)
            entry.recorded_from = _recorded_from(info.file)
            if info.deviations:
                entry.status = NOT_SABER
                entry.deviations = [info.deviations.removeprefix("not SABER: ")]
                entry.reason = f"not evaluated under SABER: {entry.deviations[0]}"
            else:
                entry.status = PUBLISHED
                entry.reason = (
                    "a shipped reference (published per-game means)"
                    if info.mean_only
                    else "a shipped reference: per-episode scores, their replays not shipped"
                )
            self.entries.append(entry)
            first = first or entry
        self._seen[f"reference:{name}"] = (given, first)

    def _read_shipped_agent(self, name: str) -> None:
        if not self._first(f"agent:{name}", name, "the same shipped agent"):
            return
        record = agent_provenance(name)
        evaluation = record.get("evaluation", {})
        folder = PRETRAINED[name].path.parent
        episodes = folder / str(evaluation.get("episodes_file", ""))
        entry = Entry(name, "shipped agent", name)
        entry.key = _sha256(b"agent", name.encode(), episodes.read_bytes())
        run = evaluation.get("run", {})
        table = read_score_csv(episodes)
        entry.table = renamed(table, name)
        entry.settings = dict(run.get("settings", {}))
        entry.versions = {
            k: str(run[k]) for k in ("saber", "ale_py", "gymnasium", "numpy", "python") if k in run
        } | {"platform": str(run.get("platform", ""))}
        entry.command = evaluation.get("command")
        seed = f"seed{PRETRAINED[name].training_seed}"
        entry.recorded_from = {run["run_id"]: seed} if run.get("run_id") else {}
        entry.date = _date(run.get("started"))
        entry.training_frames = _shipped_frames(name)
        entry.citation = (
            f"saber/agents/data/{PRETRAINED[name].provenance_file}: {record.get('description', '')}"
        )
        entry.facts = {
            "Policy file": f"saber/agents/data/{PRETRAINED[name].policy_file} (SHA-256 {record.get('sha256')})",
            "Episodes": f"saber/agents/data/{episodes.name}",
            "Trained by": str(record.get("training", {}).get("script", "")),
        }
        entry.status = PUBLISHED
        entry.reason = (
            "shipped per-episode scores of its evaluation, without the replays: run its "
            "command and give the board that directory to verify it"
        )
        self.entries.append(entry)
        self._seen[f"agent:{name}"] = (name, entry)


def _merged(shipped: Entry, entries: list[Entry]) -> Entry | None:
    """One run entry of ``entries`` (their runs together), named as ``shipped``, the
    shipped scores recorded from them (by its ENTRY name, ``saber-ppo``: its agent's,
    ``ppo@saber``, marks a shipped reference in a report's figures), each run named as
    there (``seed1``: a run of the table is one training seed over every game); None when
    their scores cannot be one table (two runs of one seed on one game)."""
    dirs = [run for entry in entries for run in entry.run_dirs]
    merged = dataclasses.replace(
        entries[0],
        given=", ".join(dict.fromkeys(entry.given for entry in entries)),
        label=shipped.given,  # saber-ppo: a name with '@' is a reference's to saber report
        key=_sha256(*(entry.key.encode() for entry in entries)),
        table=None,
        citation=shipped.citation,
        date=min((e.date for e in entries if e.date), default=None),
        training_frames=max((e.training_frames or 0 for e in entries), default=0) or None,
        command="\n".join(e.command for e in entries if e.command) or None,
        run_dirs=dirs,
        deviations=sorted({d for entry in entries for d in entry.deviations}),
        same_as=[given for entry in entries for given in entry.same_as],
        run_ids=[run_id for entry in entries for run_id in entry.run_ids],
        recorded_from={},
    )
    merged.facts = {
        **entries[0].facts,
        **{
            name: ", ".join(entry.facts.get(name, "") for entry in entries)
            for name in ("Runs", "Run ids", "Sessions", "Base seed")
        },
        "Recorded command": "; ".join(e.facts.get("Recorded command", "") for e in entries),
    }
    unread = next((entry for entry in entries if entry.table is None), None)
    if unread is not None:  # a run that cannot be read: the entry fails with its reason
        merged.reason = unread.reason
        return merged
    tables = []
    for entry in entries:
        assert entry.table is not None
        names = {}
        for run, run_id in zip(entry.run_dirs, entry.run_ids, strict=False):
            found = read_run_json(run)
            names[str(found.get("run") or run.resolve().name)] = shipped.recorded_from.get(run_id)
        records = [
            dataclasses.replace(r, run=names.get(r.run) or r.run) for r in entry.table.records
        ]
        tables.append(dataclasses.replace(entry.table, records=records, game_sets={}))
    try:
        merged.table = renamed(merge_tables(tables), merged.label)
    except SaberError:
        return None
    return merged


def _table_document(table: ScoreTable, names: list[str]) -> dict[str, Any]:
    """A run table as a JSON document (its rows as lists: a tenth of the bytes of objects);
    ``names``, the directories it was read from, stand as NUL, their number, NUL in its
    text (a character no path or message holds)."""

    def text(value: str) -> str:
        for number, name in sorted(enumerate(names), key=lambda item: -len(item[1])):
            value = value.replace(name, f"\x00{number}\x00")  # the longest first: a/b2 before a/b
        return value

    return {
        "rows": [
            [r.agent, r.game, r.time_limit, r.score, r.infinite, r.episode, text(r.where), r.run]
            for r in table.records
        ],
        "sources": [text(source) for source in table.sources],
        "warnings": [text(warning) for warning in table.warnings],
        "saber_compliant": table.saber_compliant,
    }


def _table_from(document: dict[str, Any], names: list[str]) -> ScoreTable:
    """The table of :func:`_table_document`, its text naming the directories ``names``."""

    def text(value: str) -> str:
        for number, name in enumerate(names):
            value = value.replace(f"\x00{number}\x00", name)
        return value

    return ScoreTable(
        records=[
            EpisodeScore(
                agent, game, limit, float(score), bool(infinite), episode, text(where), run
            )
            for agent, game, limit, score, infinite, episode, where, run in document["rows"]
        ],
        sources=[text(source) for source in document["sources"]],
        saber_compliant=bool(document["saber_compliant"]),
        warnings=[text(warning) for warning in document["warnings"]],
    )


def run_content(run: Path) -> bytes:
    """What identifies a run directory's content: ``run.json``, ``episodes.jsonl`` and every
    replay they name, hashed (the names of the files and their dates do not count)."""
    parts = []
    for name in (RUN_FILE, EPISODES_FILE):
        try:
            parts.append((run / name).read_bytes())
        except OSError:
            parts.append(b"")
    replays = sorted(set(re.findall(rb'"replay": "([^"]+)"', parts[1])))
    for relative in replays:
        try:
            parts.append((run / relative.decode("utf-8", "replace")).read_bytes())
        except (OSError, ValueError):
            parts.append(b"missing")
    return _sha256(*parts).encode()


def _run_words(key: str) -> str:
    """A run key (:func:`saber.rundir.reading.run_key`) for people: ``run_id 1a2b...``."""
    kind, _, value = key.partition(":")
    return f"run_id {value}" if kind == "run_id" else "the same start and first record"


def _recorded_from(file: str) -> dict[str, str]:
    """The runs a shipped reference's scores were recorded from (``run_id`` -> the run's
    name in the reference's table, ``seed<training seed>``): when every agent of its table
    (``saber/data/<file>``) is a shipped agent whose provenance names this file as its
    evaluation's episodes and that evaluation's ``run_id``; else none (published scores)."""
    if not file.endswith(".csv"):
        return {}
    text = resources.files("saber.data").joinpath(file).read_text(encoding="utf-8")
    agents = {row.get("agent", "") for row in csv.DictReader(text.splitlines())}
    found = {}
    for agent in sorted(agents):
        if agent not in PRETRAINED:
            return {}
        evaluation = agent_provenance(agent).get("evaluation", {})
        run_id = evaluation.get("run", {}).get("run_id")
        if not run_id or Path(str(evaluation.get("episodes_file", ""))).name != file:
            return {}
        found[str(run_id)] = f"seed{PRETRAINED[agent].training_seed}"
    return found


def _shipped_frames(agent: str) -> int | None:
    """Training frames of a shipped trained agent (its provenance), else None."""
    if agent not in PRETRAINED:
        return None
    frames = agent_provenance(agent).get("training", {}).get("frames")
    return int(frames) if isinstance(frames, int) else None


def _reference_details(name: str, agent: str) -> tuple[int | None, str | None, str | None]:
    """Training frames, date and reproducing command of a shipped reference's agent."""
    if name == "saber-paper":
        return PAPER_TRAINING_FRAMES, "2019", None
    if name == "saber-random":
        found = json.loads(
            resources.files("saber.data").joinpath(RANDOM_PROVENANCE).read_text(encoding="utf-8")
        )
        command = (
            f"saber eval --agent random --games all --episodes {found.get('episodes', 100)} "
            f"--seed {found.get('base_seed', 0)}"
        )
        return 0, _date(found.get("started")), command
    found = re.search(r"@dopamine-(\d+)M", agent)
    return (int(found.group(1)) * 1_000_000 if found else None), None, None


def _scores_of_runs(dirs: list[Path]) -> ScoreTable:
    """The scores of runs (one job of :meth:`Reader.finish`, in a worker process).

    Raises:
        SaberError: damaged runs, runs that do not belong together (the readers' message).
    """
    return read_scores(*dirs)
