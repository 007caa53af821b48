"""This checkout's vector env and ``saber eval`` against another saber version's, side by
side in one run.

Each round runs both versions, each in a fresh process, their order alternating from
round to round, so that both see the same machine; the figure is the ratio of each
round's two speeds:

* ``--settings``: ``gymnasium.make_vec("SABER/<Game>", n)`` stepped with the same random
  actions (env-steps per second of the step loop);
* ``--evals``: a whole ``saber eval`` command (imports, start-up and its quick probe, the
  workers, the policy, the store and the report; episodes from the same seeds in both
  versions), timed from the outside: its frames per second of wall time.

The other version is a checkout of its own, for example the last release's::

    git worktree add ../saber-0.4 <the 0.4 commit>
    python benchmarks/versions_side_by_side.py --other ../saber-0.4

Its saber is imported from ``--other`` (``PYTHONPATH``), with this environment's ale-py,
numpy and Gymnasium, so the run compares saber's own code and nothing else.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

from _results import Measurement, add_options

ROOT = Path(__file__).resolve().parents[1]
T = TypeVar("T")
# Env-steps per second of the vector env's step loop, after 200 warm-up steps.
LOOP = """
import sys, time
import gymnasium, numpy as np, saber
game, num_envs, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
envs = gymnasium.make_vec(f"SABER/{game}", num_envs)
envs.reset(seed=0)
actions = np.random.default_rng(0).integers(0, 18, size=(steps + 200, num_envs))
for row in actions[:200]:
    envs.step(row)
start = time.perf_counter()
for row in actions[200:]:
    envs.step(row)
print(saber.__version__, num_envs * steps / (time.perf_counter() - start))
"""


def speed(tree: Path, game: str, num_envs: int, steps: int) -> tuple[str, float]:
    """(saber's version, env-steps per second) of one round in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-c", LOOP, game, str(num_envs), str(steps)],
        env={**os.environ, "PYTHONPATH": str(tree)},
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    version, rate = done.stdout.split()[-2:]
    return version, float(rate)


def eval_speed(
    tree: Path, agent: str, game: str, episodes: int, workers: int
) -> tuple[str, float, float]:
    """(saber's version, frames per second of wall time, wall seconds) of one whole
    ``saber eval`` command of ``tree``'s saber, in a fresh process."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "run"
        command = [sys.executable, "-m", "saber.cli", "eval", "--agent", agent, "--games",
                   game, "--episodes", str(episodes), "--workers", str(workers), "--seed",
                   "0", "--out", str(out), "--no-progress"]  # fmt: skip
        start = time.perf_counter()
        subprocess.run(command, env={**os.environ, "PYTHONPATH": str(tree)}, cwd=tree,
                       capture_output=True, check=True)  # fmt: skip
        wall = time.perf_counter() - start
        run = json.loads((out / "run.json").read_text())
        with open(out / "episodes.jsonl", encoding="utf-8") as lines:
            frames = sum(json.loads(line)["frames"] for line in lines if line.strip())
    return run["saber"], frames / wall, wall


def interleaved(
    rounds: int, trees: dict[str, Path], measure: Callable[[Path], T]
) -> dict[str, list[T]]:
    """Each side's results of ``rounds`` rounds of ``measure(its tree)``, both sides in
    every round, their order alternating, so that both see the same machine."""
    results: dict[str, list[T]] = {"this": [], "other": []}
    for round_ in range(rounds):
        for side in ("this", "other") if round_ % 2 == 0 else ("other", "this"):
            results[side].append(measure(trees[side]))
    return results


def ratio_row(setting: str, versions: dict[str, str], rates: dict[str, list[float]],
              unit: str = "") -> list[str]:  # fmt: skip
    """One table row: each version's median speed and this one's over the other's."""
    ratios = [a / b for a, b in zip(rates["this"], rates["other"], strict=True)]
    return [
        setting,
        f"{versions['other']}: {statistics.median(rates['other']):,.0f}{unit}",
        f"{versions['this']}: {statistics.median(rates['this']):,.0f}{unit}",
        f"{statistics.median(ratios):.2f}x [{min(ratios):.2f}-{max(ratios):.2f}]",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--other", type=Path, required=True, help="the other version's checkout")
    parser.add_argument("--settings", default="Pong:8:1500,Breakout:32:400",
                        help="game:num_envs:steps of each setting, comma-separated")  # fmt: skip
    parser.add_argument("--evals", default="ppo-pong:pong:4:2,noop:pong:1:1",
                        help="agent:game:episodes:workers of each saber eval, comma-separated "
                             "('' for none)")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=6)
    add_options(parser, "versions-side-by-side")
    args = parser.parse_args()
    measurement = Measurement(
        args,
        page="envs",
        order=5,
        title="saber against its previous version, side by side",
        benchmark=__file__,
    )
    trees = {"this": ROOT, "other": args.other.resolve()}
    rows = []
    for setting in filter(None, args.settings.split(",")):
        game, num_envs, steps = setting.split(":")
        runs = interleaved(
            args.rounds,
            trees,
            partial(speed, game=game, num_envs=int(num_envs), steps=int(steps)),
        )
        versions = {side: results[-1][0] for side, results in runs.items()}
        rates = {side: [rate for _, rate in results] for side, results in runs.items()}
        rows.append(ratio_row(f"vector {game} x{num_envs}", versions, rates))
        print(" | ".join(rows[-1]), flush=True)
    if rows:
        measurement.text(
            f"{args.rounds} rounds, each version in a fresh process per round, their order "
            "alternating; env-steps per second (median of the rounds) and this version's "
            "speed over the other's, median [min-max] of the rounds."
        )
        measurement.table(["setting", "other version", "this version", "this / other"], rows)
    rows = []
    for setting in filter(None, args.evals.split(",")):
        agent, game, episodes, workers = setting.split(":")
        evals = interleaved(
            args.rounds,
            trees,
            partial(eval_speed, agent=agent, game=game, episodes=int(episodes),
                    workers=int(workers)),
        )  # fmt: skip
        versions = {side: results[-1][0] for side, results in evals.items()}
        rates = {side: [rate for _, rate, _ in results] for side, results in evals.items()}
        walls = {side: [wall for _, _, wall in results] for side, results in evals.items()}
        label = (
            f"`saber eval --agent {agent} --games {game} --episodes {episodes} --workers {workers}`"
        )
        wall = (
            f"{statistics.median(walls['other']):.1f} s / {statistics.median(walls['this']):.1f} s"
        )
        rows.append([*ratio_row(label, versions, rates, " frames/s"), wall])
        print(" | ".join(rows[-1]), flush=True)
    if rows:
        measurement.text(
            f"Whole `saber eval` commands, {args.rounds} rounds, each version in a fresh "
            "process per round, their order alternating: frames per second of wall time "
            "(imports, start-up and the quick probe, workers, policy, store and report "
            "included; median of the rounds), this version's over the other's (median "
            "[min-max]), and the median wall time of a command (other / this)."
        )
        measurement.table(
            ["command", "other version", "this version", "this / other", "wall time"], rows
        )
    measurement.write()


if __name__ == "__main__":
    main()
