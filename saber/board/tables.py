"""The scores of the board's run entries: read from their runs (in worker processes) or
from the cache, and the runs of several entries read as one table (``saber-ppo``).

Reading checks every line of every run (a second a run of 57 games x 100 episodes), so
what it found is kept in the cache under the runs' content; messages name the
directories as given this time.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from saber.board.cache import Cache, digest
from saber.board.entries import Entry, one_line, renamed, sha256
from saber.board.parallel import run_all
from saber.errors import SaberError
from saber.rundir.reading import read_run_json
from saber.scoring import ScoreTable
from saber.scoring.scorefile import read_scores
from saber.scoring.scoretable import EpisodeScore, merge_tables


def read_run_tables(entries: list[Entry], cache: Cache | None, workers: int | None) -> list[Entry]:
    """``entries`` (run entries) with their scores, or with the reason they cannot be read."""
    found: dict[int, Entry] = {}
    pending = []
    for index, entry in enumerate(entries):
        kept = None if cache is None else cache.get("table", digest("table", entry.key))
        try:
            if kept is not None:
                table = table_from(kept, [str(run) for run in entry.run_dirs])
                found[index] = dataclasses.replace(entry, table=renamed(table, entry.label))
                continue
        except (KeyError, TypeError, ValueError):
            pass  # another layout: read again
        pending.append(index)
    results = run_all(read_scores, [tuple(entries[i].run_dirs) for i in pending], workers)
    for index, table in zip(pending, results, strict=True):
        entry = entries[index]
        if isinstance(table, BaseException):
            found[index] = dataclasses.replace(entry, reason=one_line(table))
            continue
        if cache is not None:
            names = [str(run) for run in entry.run_dirs]
            cache.put("table", digest("table", entry.key), table_document(table, names))
        found[index] = dataclasses.replace(entry, table=renamed(table, entry.label))
    return [found[index] for index in range(len(entries))]


def table_document(table: ScoreTable, names: list[str]) -> dict[str, Any]:
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


def table_from(document: dict[str, Any], names: list[str]) -> ScoreTable:
    """The table of :func:`table_document`, its text naming the directories ``names``."""

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


def merged(shipped: Entry, entries: list[Entry]) -> Entry | None:
    """One run entry of ``entries`` (their runs together), named as ``shipped``, the
    shipped scores recorded from them (by its ENTRY name, ``saber-ppo``), each run named as
    there (``seed1``); None when their scores cannot be one table."""
    first = entries[0]
    entry = dataclasses.replace(
        first,
        given=", ".join(dict.fromkeys(entry.given for entry in entries)),
        label=shipped.given,  # saber-ppo: a name with '@' is a reference's to saber report
        key=sha256(*(entry.key.encode() for entry in entries)),
        table=None,
        citation=shipped.citation,
        date=min((e.date for e in entries if e.date), default=None),
        training_frames=max((e.training_frames or 0 for e in entries), default=0) or None,
        command="\n".join(e.command for e in entries if e.command) or None,
        run_dirs=tuple(run for entry in entries for run in entry.run_dirs),
        content={run: c for entry in entries for run, c in entry.content.items()},
        same_as=tuple(given for entry in entries for given in entry.same_as),
        run_ids=tuple(run_id for entry in entries for run_id in entry.run_ids),
        recorded_from={},
        facts={
            **first.facts,
            **{
                name: ", ".join(entry.facts.get(name, "") for entry in entries)
                for name in ("Runs", "Run ids", "Sessions", "Base seed")
            },
            "Recorded command": "; ".join(e.facts.get("Recorded command", "") for e in entries),
        },
    )
    unread = next((e for e in entries if e.table is None), None)
    if unread is not None:  # a run that cannot be read: the entry fails with its reason
        return dataclasses.replace(entry, reason=unread.reason)
    found = []
    for one in entries:
        assert one.table is not None
        names = {
            str(
                read_run_json(run).get("run") or Path(run).resolve().name
            ): shipped.recorded_from.get(run_id)
            for run, run_id in zip(one.run_dirs, one.run_ids, strict=False)
        }
        records = [dataclasses.replace(r, run=names.get(r.run) or r.run) for r in one.table.records]
        found.append(dataclasses.replace(one.table, records=records, game_sets={}))
    try:
        return dataclasses.replace(entry, table=renamed(merge_tables(found), entry.label))
    except SaberError:
        return None
