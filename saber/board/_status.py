"""Each entry's status, decided at build time: a run is verified by playing its replays
again (:func:`saber.replay.verify.verify_run`, what ``saber verify`` runs), every one or a
seeded sample; a run whose settings deviate is "not SABER"; a published table is
"published, not verifiable" (read so by :mod:`saber.board._entries`).

A verification is kept in the cache under the run's content (its files' bytes), the
sample asked for, and the versions of saber and ale-py here (a replay is checked on this
emulator): a second build verifies only the runs it has not seen.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from saber.board._cache import Cache, digest
from saber.board._entries import FAILED, NOT_SABER, VERIFIED, Entry, run_content
from saber.board._parallel import run_all
from saber.errors import SaberError

SHOWN_PROBLEMS = 20  # mismatch lines kept per run; past that, counted


def _verify_one(run: Any, sample: int | None, seed: int, workers: int | None) -> dict[str, Any]:
    """What :func:`verify_run` finds in one run directory, as a JSON document."""
    from saber.replay.verify import verify_run

    try:
        result = verify_run(run, sample=sample, seed=seed, workers=workers)
    except SaberError as error:
        return {
            "ok": False,
            "checked": 0,
            "finished": 0,
            "problems": [" ".join(str(error).split())],
        }
    problems = result.lines()
    return {
        "ok": result.ok,
        "checked": len(result.checks),
        "finished": result.finished,
        "problems": problems[:SHOWN_PROBLEMS],
        "problem_count": len(problems),
        "summary": result.summary(),
        "notes": result.versions,
    }


def decide(
    entries: list[Entry], cache: Cache, sample: int | None, seed: int, workers: int | None
) -> int:
    """Decide the status of each run entry (the others were decided on reading).

    Args:
        entries: the board's entries; their ``status``, ``reason`` and ``verification``
            are set.
        cache: where verifications are kept.
        sample: replays to verify per run, drawn with ``seed``; None: every one.
        seed: the seed of the sample.
        workers: verification worker processes (None: one per core).

    Returns:
        The number of runs verified now (not found in the cache).
    """
    from saber.replay.verify import versions_here

    here = versions_here()
    deciding = []
    for entry in entries:
        if entry.kind != "run" or entry.table is None:
            continue
        if entry.deviations or not entry.table.saber_compliant:
            entry.status = NOT_SABER
            entry.reason = "settings that are not SABER's: " + (
                "; ".join(entry.deviations) or "run.json says non_saber"
            )
            continue
        deciding.append(entry)
    keys = {
        run: digest("verify", run_content(run).decode(), sample, seed, here)
        for entry in deciding
        for run in entry.run_dirs
    }
    found = {run: cache.get("verify", key) for run, key in keys.items()}
    pending = [run for run, value in found.items() if value is None]
    for run, value in zip(pending, _verify_all(pending, sample, seed, workers), strict=True):
        found[run] = value
        cache.put("verify", keys[run], value)
    for entry in deciding:
        runs = [{"directory": str(run), **found[run]} for run in entry.run_dirs]
        checked = sum(run["checked"] for run in runs)
        finished = sum(run["finished"] for run in runs)
        entry.verification = {
            "runs": runs,
            "checked": checked,
            "finished": finished,
            "sample": sample,
            "seed": seed,
            "check_rest": [f"saber verify {shlex.quote(run['directory'])}" for run in runs],
        }
        bad = [run for run in runs if not run["ok"]]
        if bad:
            first = bad[0]
            problem = first["problems"][0] if first["problems"] else first.get("summary", "")
            more = sum(run.get("problem_count", len(run["problems"])) for run in bad) - 1
            entry.status = FAILED
            entry.reason = f"{first['directory']}: {problem}" + (
                f" (and {more} more problem(s))" if more > 0 else ""
            )
            continue
        entry.status = VERIFIED
        of = (
            f"a seeded sample of {checked} of {finished}"
            if checked < finished
            else f"all {checked}"
        )
        entry.reason = f"{of} replays reproduce their records"
    return len(pending)


def _verify_all(
    runs: list[Path], sample: int | None, seed: int, workers: int | None
) -> list[dict[str, Any]]:
    """Verify ``runs``: one run with ``workers`` processes of its own, or many runs side by
    side, one per worker process (each starts its emulator once, where a pool per run
    would start it again for every run)."""
    if len(runs) <= 1:
        return [_verify_one(run, sample, seed, workers) for run in runs]
    found = run_all(_verify_one, [(run, sample, seed, 0) for run in runs], workers)
    return [
        value
        if isinstance(value, dict)
        else {"ok": False, "checked": 0, "finished": 0, "problems": [f"not verified: {value}"]}
        for value in found
    ]


def count_copies_once(entries: list[Entry]) -> tuple[list[Entry], list[str]]:
    """Copies of one run whose files differ (read as entries of their own by
    :class:`saber.board._entries.Reader`), once verified: of those that verify, one is the
    run, whichever was given first. Copies that failed stay on the board, failed, with
    their reason (a record changed in a copy is never hidden as a copy).

    The one kept: an entry of several runs (a folder's agent, read first), else the one
    with the most finished episodes (a copy taken before the run went on has fewer), else
    the first given.

    Returns:
        The entries without the other verified copies, and one line for each left out.
    """
    by_run: dict[str, list[Entry]] = {}
    for entry in entries:
        if entry.status == VERIFIED:
            for run_id in dict.fromkeys(entry.run_ids):
                by_run.setdefault(run_id, []).append(entry)
    dropped: dict[int, str] = {}
    for copies in by_run.values():
        copies = [entry for entry in copies if id(entry) not in dropped]
        if len(copies) < 2:
            continue
        finished = [(entry.verification or {}).get("finished", 0) for entry in copies]
        order = sorted(
            range(len(copies)),
            key=lambda i: (len(copies[i].run_dirs) == 1, -finished[i], i),
        )
        kept = copies[order[0]]
        for i in order[1:]:
            dropped[id(copies[i])] = (
                f"{copies[i].given}: a copy of the same run as {kept.given} "
                f"({finished[i]} finished episodes, {finished[order[0]]} there): counted once"
            )
            kept.same_as.append(copies[i].given)
    return [entry for entry in entries if id(entry) not in dropped], list(dropped.values())
