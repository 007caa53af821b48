"""Where a finished ``saber eval`` run's CPU went: useful steps against idle rows and workers.

Reads a run directory (``episodes.jsonl``, read only) and replays the harness's schedule
from the recorded episode lengths, exactly as ``saber.harness.runner.run_episodes`` and
``plan_units`` run it:

* inside a work unit, a vector env of ``--envs`` rows takes the unit's episodes in order;
  a row whose episode ends takes the next one, and once the unit's queue is empty its
  row keeps stepping (idle) until the unit's last episode ends. ``idle rows`` is that
  share of the stepped rows: emulation that finishes no episode;
* units go to ``--workers`` workers in order, each to the first worker free; ``idle
  workers`` is the share of worker time spent waiting for the last unit of the run.
  A unit's duration is its steps times the game's measured seconds per step (from the
  records' ``seconds``, which include the run's own load).

Run on the full random-agent run: ``python benchmarks/unit_tail.py runs/random-saber``.
"""

from __future__ import annotations

import argparse
import heapq
import json
import statistics
from collections import defaultdict
from pathlib import Path

from saber.harness.work import plan_units


def finished_records(run: Path) -> list[dict]:
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


def unit_steps(lengths: list[int], rows: int) -> int:
    """Steps a vector env of ``rows`` rows runs to finish episodes of ``lengths`` steps, in order."""
    free_at = [0] * min(rows, len(lengths))  # when each row is free (a heap)
    heapq.heapify(free_at)
    for length in lengths:
        heapq.heappush(free_at, heapq.heappop(free_at) + length)
    return max(free_at)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--envs", type=int, default=8, help="sub-envs per worker's vector env")
    args = parser.parse_args()

    records = finished_records(args.run)
    by_game: dict[str, list[dict]] = defaultdict(list)
    for record in records:
        by_game[record["game"]].append(record)
    pending = {game: [(int(r["episode"]), 0) for r in rs] for game, rs in by_game.items()}
    units = plan_units(pending, args.workers, args.envs)
    steps = {(r["game"], int(r["episode"])): int(r["steps"]) for r in records}
    seconds_per_step = {
        game: sum(float(r["seconds"]) for r in rs) / sum(int(r["steps"]) for r in rs)
        for game, rs in by_game.items()
    }

    useful = stepped = 0.0  # row-seconds
    durations = []
    worst = []
    for unit in units:
        lengths = [steps[(unit.game, episode)] for episode, _ in unit.episodes]
        rows = min(args.envs, len(lengths))
        span = unit_steps(lengths, rows)
        cost = seconds_per_step[unit.game]
        useful += sum(lengths) * cost
        stepped += rows * span * cost
        durations.append(span * cost)
        worst.append((1 - sum(lengths) / (rows * span), unit.game, span, max(lengths)))

    workers = [0.0] * args.workers
    for duration in durations:  # each unit to the first worker free
        workers[workers.index(min(workers))] += duration
    makespan = max(workers)

    print(
        f"{len(records)} episodes in {len(units)} units, {args.envs} rows, {args.workers} workers"
    )
    print(f"idle rows: {1 - useful / stepped:.1%} of the stepped row-time")
    print(f"idle workers: {1 - sum(workers) / (args.workers * makespan):.1%} of worker time")
    print("units with the most idle rows (share, game, unit steps, longest episode):")
    for share, game, span, longest in sorted(worst, reverse=True)[:8]:
        print(f"  {share:6.1%}  {game:<18} {span:>8,}  {longest:>8,}")
    mean_steps = statistics.fmean(int(r["steps"]) for r in records)
    print(f"mean episode: {mean_steps:,.0f} steps")


if __name__ == "__main__":
    main()
