"""Where a finished ``saber eval`` run's CPU went: useful steps against idle rows and workers.

Reads a run directory (``episodes.jsonl``, read only) and replays the harness's schedule
from the recorded episode lengths, as ``plan_units``, ``LocalExecutor`` and
``saber.harness.runner.run_episodes`` run it (an event simulation in seconds):

* a worker free takes the next unit and builds a vector env of ``min(--envs, the unit's
  episodes)`` rows for its game; a row whose episode ends takes the next one;
* once a worker's episodes have all started, a row that frees up takes the next unit
  waiting if it is of the same game (it joins the vector env, as the runner's ``more``
  does); otherwise the row steps idle until the env's last episode ends, and the worker
  then takes the next unit (a new env). ``idle rows`` is that share of the stepped
  row-time: emulation that finishes no episode;
* ``idle workers`` is the share of worker time spent with nothing left to take while
  another worker still plays (the run's tail).

A step costs the game's measured seconds per step (from the records' ``seconds``, which
include the run's own load).

Run on a finished run: ``python benchmarks/unit_tail.py runs/random-saber``; on the shipped
random-agent episodes (no seconds recorded: every step costs the same):
``python benchmarks/unit_tail.py saber/data/saber_random_episodes.csv``. It writes
``benchmarks/results/unit-tail.json`` for docs/measurements/eval.md.
"""

from __future__ import annotations

import argparse
import csv
import heapq
import json
import statistics
from collections import defaultdict, deque
from pathlib import Path

from _results import Measurement, add_options

from saber.harness.work import plan_units


def finished_records(run: Path) -> list[dict]:
    """The finished episodes of a run directory, or of a CSV of episodes (``game,
    episode, steps[, seconds]``, such as saber/data/saber_random_episodes.csv)."""
    if run.suffix == ".csv":
        with run.open(encoding="utf-8", newline="") as rows:
            return sorted(csv.DictReader(rows), key=lambda r: (r["game"], int(r["episode"])))
    records: dict[tuple[str, int], dict] = {}
    with (run / "episodes.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if "error" not in record:
                records[(record["game"], int(record["episode"]))] = record
    return sorted(records.values(), key=lambda r: (r["game"], int(r["episode"])))


class _Worker:
    """One worker's vector env in the simulation."""

    def __init__(self) -> None:
        self.game: str | None = None
        self.queue: deque[int] = deque()  # episode lengths (steps) not yet started
        self.busy_rows = 0
        self.rows = 0
        self.started_at = 0.0
        self.busy_until = 0.0  # when its last episode ends


def simulate(
    units: list, steps: dict[tuple[str, int], int], cost: dict[str, float], envs: int, workers: int
) -> tuple[float, float, float, float, dict[str, float]]:
    """Useful row-seconds, stepped row-seconds, summed worker busy seconds, the makespan
    (seconds) and each game's stepped row-seconds, of the harness's schedule."""
    pending = deque(units)
    pool = [_Worker() for _ in range(workers)]
    events: list[tuple[float, int]] = []  # (time a row frees up, worker)
    useful = stepped = busy = makespan = 0.0
    stepped_by_game: dict[str, float] = defaultdict(float)

    def start_env(index: int, now: float) -> None:
        nonlocal stepped, busy
        worker = pool[index]
        if not pending:
            return
        unit = pending.popleft()
        worker.game = unit.game
        worker.queue = deque(steps[(unit.game, episode)] for episode, _ in unit.episodes)
        worker.rows = min(envs, len(worker.queue))
        worker.started_at = now
        worker.busy_rows = 0
        for _ in range(worker.rows):
            start_episode(index, now)

    def start_episode(index: int, now: float) -> None:
        nonlocal useful
        worker = pool[index]
        length = worker.queue.popleft()
        useful += length * cost[worker.game]
        worker.busy_rows += 1
        heapq.heappush(events, (now + length * cost[worker.game], index))

    for index in range(workers):
        start_env(index, 0.0)
    while events:
        now, index = heapq.heappop(events)
        worker = pool[index]
        worker.busy_rows -= 1
        if not worker.queue and pending and pending[0].game == worker.game:
            unit = pending.popleft()  # joins this vector env
            worker.queue.extend(steps[(unit.game, episode)] for episode, _ in unit.episodes)
        if worker.queue:
            start_episode(index, now)
        elif worker.busy_rows == 0:  # the env's last episode ended: a new env, or done
            span = now - worker.started_at
            stepped += worker.rows * span
            stepped_by_game[worker.game] += worker.rows * span
            busy += span
            makespan = max(makespan, now)
            start_env(index, now)
    return useful, stepped, busy, makespan, stepped_by_game


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--envs", type=int, default=8, help="sub-envs per worker's vector env")
    add_options(parser, "unit-tail")
    args = parser.parse_args()
    measurement = Measurement(
        args,
        page="eval",
        order=13,
        title="Idle rows and idle workers: the schedule's tail",
        benchmark=__file__,
    )

    records = finished_records(args.run)
    by_game: dict[str, list[dict]] = defaultdict(list)
    for record in records:
        by_game[record["game"]].append(record)
    pending = {game: [(int(r["episode"]), 0) for r in rs] for game, rs in by_game.items()}
    units = plan_units(pending, args.workers, args.envs)
    steps = {(r["game"], int(r["episode"])): int(r["steps"]) for r in records}
    # Seconds per step of each game; without recorded seconds, one unit per step.
    cost = {
        game: sum(float(r.get("seconds") or 0) for r in rs) / sum(int(r["steps"]) for r in rs)
        or 1.0
        for game, rs in by_game.items()
    }
    useful, stepped, busy, makespan, by_game_stepped = simulate(
        units, steps, cost, args.envs, args.workers
    )
    useful_by_game = {
        game: sum(int(r["steps"]) for r in rs) * cost[game] for game, rs in by_game.items()
    }
    shares = sorted(
        ((1 - useful_by_game[g] / by_game_stepped[g], g) for g in by_game_stepped), reverse=True
    )
    mean_steps = statistics.fmean(int(r["steps"]) for r in records)
    measurement.text(
        f"The schedule of `{args.run.name}` replayed: {len(records)} episodes (mean "
        f"{mean_steps:,.0f} steps) in {len(units)} units, {args.envs} rows, "
        f"{args.workers} workers:"
    )
    measurement.table(
        ["share", "of"],
        [
            [f"{1 - useful / stepped:.1%}", "the stepped row-time: idle rows"],
            [f"{1 - busy / (args.workers * makespan):.1%}", "worker time: idle workers"],
        ],
        align=["right", "left"],
    )
    measurement.text("The games with the most idle rows (share of their stepped row-time):")
    measurement.table(["game", "idle rows"], [[game, f"{share:.1%}"] for share, game in shares[:8]])
    measurement.write()


if __name__ == "__main__":
    main()
