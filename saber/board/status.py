"""Each run entry's status, decided at build time from what its replays prove
(:func:`saber.replay.verify.verify_run`, on every replay or a sample drawn from a seed
drawn at build time); docs/board.md, "What is proven and what is claimed"."""

from __future__ import annotations

import hashlib
import json
import secrets
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from saber.agents.pretrained import training_deviations
from saber.board.cache import Cache, digest
from saber.board.entries import (
    FAILED,
    INCOMPLETE,
    NOT_SABER,
    TRAINED_OUTSIDE,
    UNVERIFIED,
    VERIFIED,
    Entry,
)
from saber.board.parallel import run_all
from saber.errors import SaberError, counted, shown
from saber.protocol.settings import EVALUATION_EPISODES

SHOWN_PROBLEMS = 20  # failure lines kept per run; past that, counted
# Agent steps of play a run may cost a build (saber board --budget): about an hour of one
# core at the emulator's pace; past it, an entry is "not verified within the budget".
DEFAULT_BUDGET = 20_000_000
SEED_BITS = 63  # the sample's seed, drawn at build time: no submitter can know it before


def build_seed() -> int:
    """A seed for the build's sample that no one can compute in advance (``secrets``)."""
    return secrets.randbits(SEED_BITS)


def verify_document(
    run: Any,
    sample: int | None,
    seed: int,
    budget: int | None,
    workers: int | None,
    progress: bool | None = False,
) -> dict[str, Any]:
    """What :func:`verify_run` finds in one run directory, as a JSON document (a worker
    process sends it back; the cache keeps it); ``progress``: its bar on stderr (None:
    when stderr is a terminal)."""
    from saber.replay.verify import CHECKED_FIELDS, verify_run

    try:
        result = verify_run(
            run, sample=sample, seed=seed, workers=workers, budget=budget, progress=progress
        )
    except SaberError as error:
        return {"error": shown(" ".join(str(error).split())), "seed": seed}
    problems = result.lines()
    whole = result.wholeness
    intended = result.finished if sample is None else min(sample, result.finished)
    fields = ("game", "episode", "seed", *CHECKED_FIELDS)
    records = sorted(
        json.dumps([check.claimed.get(name) for name in fields], default=str)
        for check in result.episodes
        if not check.failures
    )
    return {
        "error": None,
        "ok": result.ok,
        "whole": whole.whole,
        "played": sum(check.played for check in result.episodes),
        "drawn": len(result.checks),
        "intended": intended,
        "finished": result.finished,
        "requested": whole.requested,
        "episodes_per_game": whole.episodes,
        "missing": len(whole.missing),
        "problems": problems[:SHOWN_PROBLEMS],
        "problem_count": len(problems),
        "deviations": {name: list(pair) for name, pair in result.deviations.items()},
        "agent": result.agent,
        "notes": list(result.versions),
        "seed": seed,
        "steps_played": result.steps_played,
        "steps_total": result.steps_total,
        "summary": result.summary(),
        # What the run's records are, statically checked: two copies of one run whose
        # records say different things are told apart by it (saber.board._copies).
        "fingerprint": hashlib.sha256("\n".join(records).encode()).hexdigest(),
    }


def verify_key(content: str, sample: int | None, budget: int | None) -> str:
    """The cache key of a run's verification: its content (:func:`run_content`), the
    sample's size, the budget and the versions here."""
    from saber.replay.verify import versions_here

    return digest("verify/2", content, sample, budget, versions_here())  # /2: its document


def decide(
    entries: list[Entry],
    cache: Cache,
    draw: tuple[int | None, int, int | None],
    workers: int | None,
) -> tuple[list[Entry], int]:
    """Decide the status of each run entry (the others were decided on reading).

    Args:
        entries: the board's entries.
        cache: where verifications are kept.
        draw: ``sample`` (replays played per run, None: every one), ``seed`` (the draw's)
            and ``budget`` (agent steps of play per run, None: no limit).
        workers: verification worker processes (None: one per core).

    Returns:
        The entries, each run entry with its status, reason and verification; and the
        number of runs verified now (not found in the cache).
    """
    sample, _, budget = draw
    runs = [entry for entry in entries if entry.kind == "run" and entry.table is not None]
    keys = {
        run: verify_key(entry.content[run], sample, budget)
        for entry in runs
        for run in entry.run_dirs
    }
    found = {run: cache.get("verify", key) for run, key in keys.items()}
    pending = [run for run, value in found.items() if value is None]
    for run, value in zip(pending, _verify_all(pending, draw, workers), strict=True):
        found[run] = value
        if not str(value.get("error") or "").startswith("not verified:"):  # a worker's death
            cache.put("verify", keys[run], value)
    decided = {id(entry): judged(entry, [found[run] for run in entry.run_dirs], draw)
               for entry in runs}  # fmt: skip
    return [decided.get(id(entry), entry) for entry in entries], len(pending)


def _verify_all(
    runs: list[Path], draw: tuple[int | None, int, int | None], workers: int | None
) -> list[dict[str, Any]]:
    """Verify ``runs``: one run with ``workers`` processes of its own, or many runs side by
    side, one per worker process (each starts its emulator once)."""
    sample, seed, budget = draw
    if len(runs) <= 1:
        return [verify_document(run, sample, seed, budget, workers, None) for run in runs]
    found = run_all(verify_document, [(run, sample, seed, budget, 0) for run in runs], workers)
    return [
        value if isinstance(value, dict) else {"error": f"not verified: {value}", "seed": seed}
        for value in found
    ]


def judged(entry: Entry, found: list[Mapping[str, Any]], draw: tuple[Any, ...]) -> Entry:
    """``entry`` with the status its runs' verifications give it (see the module)."""
    sample, seed, budget = draw
    ids = [*entry.run_ids, *[""] * len(entry.run_dirs)][: len(entry.run_dirs)]
    runs = [{"directory": str(run), "run_id": run_id, **doc}
            for run, run_id, doc in zip(entry.run_dirs, ids, found, strict=True)]  # fmt: skip
    verification = {
        "runs": runs,
        "played": sum(doc.get("played", 0) for doc in runs),
        "finished": sum(doc.get("finished", 0) for doc in runs),
        "sample": sample,
        "seed": seed,
        "budget": budget,
        "repeat": [
            _verify_command(doc["directory"], sample, doc.get("seed", seed)) for doc in runs
        ],
        "check_all": [_verify_command(doc["directory"], None, None) for doc in runs],
    }
    status, reason = _verdict(runs, verification)
    # A shipped agent trained outside SABER: its replays may be SABER's, its result is not.
    trained = training_deviations(entry.label)
    if trained and status in (VERIFIED, INCOMPLETE, UNVERIFIED):
        status, reason = NOT_SABER, f"{TRAINED_OUTSIDE}{'; '.join(trained)}; its replays: {reason}"
    short = min((doc.get("episodes_per_game") or 0 for doc in runs), default=0)
    return entry.with_status(
        status,
        reason,
        verification=verification,
        deviations=(*_deviations(runs), *trained),
        short=short if 0 < short < EVALUATION_EPISODES else None,
    )


def _verdict(runs: list[dict[str, Any]], verification: dict[str, Any]) -> tuple[str, str]:
    """The status and its reason, one line, from each run's verification document."""
    for doc in runs:
        if doc.get("error") is not None:
            return FAILED, f"{shown(doc['directory'])}: {doc['error']}"
    bad = [doc for doc in runs if not doc["ok"]]
    if bad:
        first = bad[0]
        problem = first["problems"][0] if first["problems"] else first["summary"]
        more = sum(doc["problem_count"] for doc in bad) - 1
        return FAILED, f"{shown(first['directory'])}: {problem}" + (
            f" (and {more} more problem(s))" if more > 0 else ""
        )
    deviations = _deviations(runs)
    if deviations:
        return NOT_SABER, "its replays were played with settings that are not SABER's: " + (
            "; ".join(deviations)
        )
    cut = [doc for doc in runs if doc["drawn"] < doc["intended"]]
    if cut:
        return UNVERIFIED, (
            f"not verified within the budget ({verification['budget']:,} agent steps of play "
            f"a run; {sum(d['steps_total'] for d in cut):,} to play): "
            + "; ".join(verification["check_all"][runs.index(doc)] for doc in cut)
            + " finishes the job"
        )
    missing = [doc for doc in runs if not doc["whole"]]
    if missing:
        count = sum(doc["missing"] for doc in missing)
        requested = sum(doc["requested"] or 0 for doc in missing)
        return INCOMPLETE, (
            f"not whole: {count} of the {counted(requested, 'episode')} its request defines have no "
            "finished record (a run is ranked only when every episode is there)"
            if requested
            else "not whole: its run.json defines no request to hold its records to"
        )
    played, finished = verification["played"], verification["finished"]
    of = f"a sample of {played} of {finished}" if played < finished else f"all {played}"
    return VERIFIED, (
        f"{of} replays played again reproduce their records; every replay's file, hash and "
        "header checked"
    )


def _deviations(runs: list[dict[str, Any]]) -> list[str]:
    """The settings the replays were played with that are not SABER's, for people."""
    return sorted(
        {
            f"{shown(name)} {pair[1]!r} (SABER: {pair[0]!r})"
            for doc in runs
            for name, pair in (doc.get("deviations") or {}).items()
        }
    )


def _verify_command(directory: str, sample: int | None, seed: int | None) -> str:
    """The ``saber verify`` that repeats a check (``sample``, ``seed``) or checks all."""
    words = ["saber", "verify", directory]
    if sample is not None:
        words += ["--sample", str(sample), "--sample-seed", str(seed)]
    return shlex.join(words)
