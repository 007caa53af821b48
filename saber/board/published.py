"""Entries that carry no replay: score tables (CSV) with their citation, the references
saber ships (``saber report --list-references``) and its trained agents' shipped scores
(``saber list``); and those shipped scores counted once when the runs they were recorded
from are on the board too.

A published entry is a claim: its citation, its date and its training frames are shown as
given, never checked, and it is labelled "published, not verifiable".
"""

from __future__ import annotations

import csv
import dataclasses
import json
import re
from importlib import resources
from pathlib import Path
from typing import Protocol

from saber.agents.pretrained import PRETRAINED, agent_provenance, training_deviations
from saber.board.entries import (
    METADATA_FILE,
    NOT_SABER,
    PUBLISHED,
    TABLE_BYTES,
    TRAINED_OUTSIDE,
    Entry,
    date_of,
    failed,
    metadata,
    one_line,
    read_regular,
    renamed,
    sha256,
)
from saber.errors import SaberError, shown
from saber.scoring import list_references, reference_table
from saber.scoring.csvscores import read_score_csv
from saber.scoring.references import PAPER_TRAINING_FRAMES


class Reader(Protocol):
    """What reads ENTRYs into entries (:class:`saber.board.reading.Reader`), as seen here."""

    def first(self, identity: str, given: str, what: str) -> bool: ...

    def add(self, entry: Entry, identity: str | None = None, given: str | None = None) -> int: ...

    def seen(self, identity: str, given: str, index: int | None = None) -> None: ...


RANDOM_PROVENANCE = "saber_random_provenance.json"  # saber-random's, in saber/data


def read_csv(reader: Reader, given: str, path: Path) -> None:
    """A score table (one entry per agent), published when its citation is given."""
    try:
        data = read_regular(path, TABLE_BYTES)
    except SaberError as error:
        reader.add(failed(given, one_line(error), "score table"))
        return
    meta_path = path.with_name(f"{path.stem}.{METADATA_FILE}")
    meta, problem = metadata(meta_path)
    key = sha256(data, json.dumps(meta, sort_keys=True).encode())
    identity = f"csv:{sha256(data)}"
    if not reader.first(identity, given, "the same score table"):
        return
    try:
        table = read_score_csv(path)
    except SaberError as error:
        reader.add(failed(given, one_line(error), "score table"))
        return
    agents = table.agents()
    reader.seen(identity, given)
    for number, agent in enumerate(agents):
        label = agent if len(agents) > 1 or not meta.get("name") else str(meta["name"])
        only = dataclasses.replace(table, records=[r for r in table.records if r.agent == agent])
        if problem is None and not meta.get("citation"):
            problem = (
                f"a score table without a citation: write {shown(meta_path)} with "
                '{"citation": "who published these scores, where"}'
            )
        entry = Entry(
            given, "score table", label, key=sha256(key.encode(), agent.encode()),
            table=renamed(only, label), citation=meta.get("citation"),
            training_frames=meta.get("training_frames"), date=date_of(meta.get("date")),
            facts={"Score table": str(path)},
            status=PUBLISHED if problem is None else "failed",
            reason=problem or "a published score table: no replay to play again",
        )  # fmt: skip
        reader.add(entry, identity if number == 0 else None, given)


def read_shipped(reader: Reader, given: str) -> bool:
    """A shipped reference or agent named ``given``; False when it names neither."""
    name = given.strip().lower()
    if name.partition("@")[0] in {r.name for r in list_references()}:
        _read_reference(reader, given, name)  # dopamine@50M: a checkpoint
        return True
    if given in PRETRAINED:
        _read_agent(reader, given)
        return True
    return False


def _read_reference(reader: Reader, given: str, name: str) -> None:
    if not reader.first(f"reference:{name}", given, "the same reference"):
        return
    info = next(r for r in list_references() if r.name == name.partition("@")[0])
    table = reference_table(name)  # a checkpoint it has not: its message, the entry's
    reader.seen(f"reference:{name}", given)
    frames, date, command = _reference_details(name)
    first: int | None = None
    for agent in table.agents():
        only = dataclasses.replace(table, records=[r for r in table.records if r.agent == agent])
        key = sha256(b"reference", agent.encode(), repr(only.records).encode())
        # One agent's scores in two references (dopamine and dopamine:dqn): once.
        if not reader.first(f"reference-agent:{key}", given, f"the same scores of {agent}"):
            continue
        if info.deviations:
            deviation = info.deviations.removeprefix("not SABER: ")
            status, reason, deviations = (
                NOT_SABER,
                f"not evaluated under SABER: {deviation}",
                (deviation,),
            )
        else:
            status, deviations = PUBLISHED, ()
            reason = ("a shipped reference (published per-game means)" if info.mean_only
                      else "a shipped reference: per-episode scores, their replays not shipped")  # fmt: skip
        found = re.search(r"@dopamine-(\d+)M", agent)
        entry = Entry(
            given, "reference", agent, key=key, table=renamed(only, agent),
            citation=info.citation, status=status, reason=reason, deviations=deviations,
            facts={"Reference": f"{name}: {info.description}", "Data": f"saber/data/{info.file}"},
            training_frames=int(found.group(1)) * 1_000_000 if found else frames,
            date=date, command=command, recorded_from=_recorded_from(info.file),
        )  # fmt: skip
        index = reader.add(entry, f"reference-agent:{key}", given)
        if first is None:
            first = index
            reader.seen(f"reference:{name}", given, index)


def _read_agent(reader: Reader, name: str) -> None:
    if not reader.first(f"agent:{name}", name, "the same shipped agent"):
        return
    record = agent_provenance(name)
    evaluation = record.get("evaluation", {})
    info = PRETRAINED[name]
    episodes = info.path.parent / str(evaluation.get("episodes_file", ""))
    run = evaluation.get("run", {})
    trained = training_deviations(name)
    if trained:
        status, reason = NOT_SABER, TRAINED_OUTSIDE + "; ".join(trained)
    else:
        status = PUBLISHED
        reason = (
            "shipped per-episode scores of its evaluation, without the replays: run its "
            "command and give the board that directory to verify it"
        )
    entry = Entry(
        name, "shipped agent", name, key=sha256(b"agent", name.encode(), episodes.read_bytes()),
        table=renamed(read_score_csv(episodes), name), settings=dict(run.get("settings", {})),
        versions={k: str(run[k]) for k in ("saber", "ale_py", "gymnasium", "numpy", "python")
                  if k in run} | {"platform": str(run.get("platform", ""))},
        command=evaluation.get("command"),
        recorded_from={run["run_id"]: f"seed{info.training_seed}"} if run.get("run_id") else {},
        date=date_of(run.get("started")), training_frames=shipped_frames(name),
        citation=f"saber/agents/data/{info.provenance_file}: {record.get('description', '')}",
        facts={
            "Policy file": f"saber/agents/data/{info.policy_file} (SHA-256 {record.get('sha256')})",
            "Episodes": f"saber/agents/data/{episodes.name}",
            "Trained by": str(record.get("training", {}).get("script", "")),
        },
        status=status, reason=reason, deviations=trained,
    )  # fmt: skip
    reader.add(entry, f"agent:{name}", name)


def _recorded_from(file: str) -> dict[str, str]:
    """The runs a shipped reference's scores were recorded from (``run_id`` -> the run's
    name in the reference's table, ``seed<training seed>``): when every agent of its table
    is a shipped agent whose provenance names this file and that evaluation's ``run_id``."""
    if not file.endswith(".csv"):
        return {}
    text = resources.files("saber.data").joinpath(file).read_text(encoding="utf-8")
    found = {}
    for agent in sorted({row.get("agent", "") for row in csv.DictReader(text.splitlines())}):
        if agent not in PRETRAINED:
            return {}
        evaluation = agent_provenance(agent).get("evaluation", {})
        run_id = evaluation.get("run", {}).get("run_id")
        if not run_id or Path(str(evaluation.get("episodes_file", ""))).name != file:
            return {}
        found[str(run_id)] = f"seed{PRETRAINED[agent].training_seed}"
    return found


def shipped_frames(agent: str) -> int | None:
    """Training frames of a shipped trained agent (its provenance), else None."""
    if agent not in PRETRAINED:
        return None
    frames = agent_provenance(agent).get("training", {}).get("frames")
    return int(frames) if isinstance(frames, int) else None


def _reference_details(name: str) -> tuple[int | None, str | None, str | None]:
    """Training frames, date and reproducing command of a shipped reference."""
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
        return 0, date_of(found.get("started")), command
    return None, None, None
