"""Counting each run once: copies of one run, one play under two names, and shipped scores
recorded from runs on the board, settled by what the replays prove, never by the order
the ENTRYs were given in (docs/board.md, "What the board checks")."""

from __future__ import annotations

from collections import defaultdict

from saber.board.entries import CONFLICT, FAILED, Entry
from saber.board.tables import merged
from saber.errors import shown


def _runs(entry: Entry) -> list[tuple[str, str]]:
    """``(run_id, fingerprint)`` of each of the entry's verified-or-not runs."""
    docs = (entry.verification or {}).get("runs", [])
    return [(str(d.get("run_id") or ""), str(d.get("fingerprint") or "")) for d in docs]


def settle(entries: list[Entry]) -> tuple[list[Entry], list[str]]:
    """The entries with copies settled (see the module docstring), and a note for each
    copy counted once or put in conflict."""
    judged = [i for i, e in enumerate(entries) if e.kind == "run" and e.verification is not None
              and e.status != FAILED]  # fmt: skip
    by_run: dict[str, list[int]] = defaultdict(list)
    by_play: dict[str, set[str]] = defaultdict(set)  # fingerprint -> run_ids
    plays: dict[str, list[int]] = defaultdict(list)
    for i in judged:
        for run_id, fingerprint in _runs(entries[i]):
            if run_id:
                by_run[run_id].append(i)
            if fingerprint and run_id:
                by_play[fingerprint].add(run_id)
                plays[fingerprint].append(i)
    found: list[Entry | None] = list(entries)
    notes: list[str] = []
    for run_id, copies in by_run.items():
        copies = list(dict.fromkeys(copies))
        if len(copies) < 2:
            continue
        prints = {dict(_runs(entries[i])).get(run_id) for i in copies}
        if len(prints) == 1:
            kept = min(copies, key=lambda i: (-len(entries[i].run_dirs), entries[i].key))
            for i in copies:
                if i != kept and found[i] is not None:
                    notes.append(
                        f"{shown(entries[i].given)}: a copy of the same run as "
                        f"{shown(entries[kept].given)} (run_id {shown(run_id)}): its replays' "
                        "records are the same: counted once"
                    )
                    found[i] = None
                    found[kept] = found[kept].also_given(entries[i].given)  # type: ignore[union-attr]
            continue
        _conflict(
            found, entries, copies, f"copies of the run {shown(run_id)} whose records differ", notes
        )
    for fingerprint, run_ids in by_play.items():
        if len(run_ids) > 1:
            _conflict(found, entries, list(dict.fromkeys(plays[fingerprint])),
                      "the same play (every episode's seed, score, frames and steps) under "
                      "another run", notes)  # fmt: skip
    return [entry for entry in found if entry is not None], notes


def _conflict(
    found: list[Entry | None], entries: list[Entry], copies: list[int], what: str, notes: list[str]
) -> None:
    """Put each of ``copies`` in conflict with the others, naming them."""
    given = [entries[i].given for i in copies]
    for i in copies:
        if found[i] is None:
            continue
        others = ", ".join(shown(g) for g in given if g != entries[i].given)
        found[i] = found[i].with_status(  # type: ignore[union-attr]
            CONFLICT,
            f"{what}: {others}; none is ranked until the conflict is settled (keep one)",
        )
    notes.append(f"{what}: {', '.join(shown(g) for g in given)}: none ranked until settled")


def count_recorded_once(entries: list[Entry]) -> tuple[list[Entry], list[str]]:
    """Shipped scores recorded from runs that are on the board too (``saber-ppo`` beside
    ``baselines/evals``) are those runs given twice: counted once, as the runs, which the
    board can verify. Runs of several entries (one agent a game) become one entry named as
    the shipped scores (``saber-ppo``). Returns the entries and a note for each."""
    runs: dict[str, int] = {}  # run_id -> the entry read first (copies come after)
    for index, entry in enumerate(entries):
        for run_id in filter(None, entry.run_ids):
            runs.setdefault(run_id, index)
    found: list[Entry | None] = list(entries)
    notes = []
    for index, entry in enumerate(entries):
        if not entry.recorded_from or not set(entry.recorded_from) <= set(runs):
            continue
        same = list(dict.fromkeys(runs[i] for i in entry.recorded_from))
        one = merged(entry, [entries[i] for i in same]) if len(same) > 1 else None
        found[index] = None
        if one is not None:
            found[same[0]] = one.also_given(entry.given)
            for i in same[1:]:
                found[i] = None
        else:
            for i in same:
                if found[i] is not None:
                    found[i] = found[i].also_given(entry.given)  # type: ignore[union-attr]
        shown_runs = ", ".join(", ".join(map(str, entries[i].run_dirs)) for i in same)
        notes.append(
            f"{shown(entry.given)} ({shown(entry.label)}): scores recorded from the runs "
            f"{shown(shown_runs)}: "
            + (
                "counted once, as those runs"
                if one is None
                else f"one entry of those runs, {one.label}, checked by replay"
            )
        )
    return [entry for entry in found if entry is not None], notes
