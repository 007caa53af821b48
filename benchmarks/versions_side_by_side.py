"""This checkout's vector env against another saber version's, side by side in one run.

Each round steps ``gymnasium.make_vec("SABER/<Game>", n)`` with the same random actions
in a fresh process per version, the versions' order alternating from round to round, so
that both see the same machine; the figure is the ratio of each round's two speeds. The
other version is a checkout of its own, for example the last release's::

    git worktree add ../saber-0.4 <the 0.4 commit>
    python benchmarks/versions_side_by_side.py --other ../saber-0.4

Its saber is imported from ``--other`` (``PYTHONPATH``), with this environment's ale-py,
numpy and Gymnasium, so the run compares saber's own code and nothing else.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

from _results import Measurement, add_options

ROOT = Path(__file__).resolve().parents[1]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--other", type=Path, required=True, help="the other version's checkout")
    parser.add_argument("--settings", default="Pong:8:1500,Breakout:32:400",
                        help="game:num_envs:steps of each setting, comma-separated")  # fmt: skip
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
    for setting in args.settings.split(","):
        game, num_envs, steps = setting.split(":")
        rates: dict[str, list[float]] = {"this": [], "other": []}
        versions: dict[str, str] = {}
        for round_ in range(args.rounds):
            for side in ("this", "other") if round_ % 2 == 0 else ("other", "this"):
                versions[side], rate = speed(trees[side], game, int(num_envs), int(steps))
                rates[side].append(rate)
        ratios = [a / b for a, b in zip(rates["this"], rates["other"], strict=True)]
        rows.append(
            [
                f"vector {game} x{num_envs}",
                f"{versions['other']}: {statistics.median(rates['other']):,.0f}",
                f"{versions['this']}: {statistics.median(rates['this']):,.0f}",
                f"{statistics.median(ratios):.2f}x [{min(ratios):.2f}-{max(ratios):.2f}]",
            ]
        )
        print(" | ".join(rows[-1]), flush=True)
    measurement.text(
        f"{args.rounds} rounds, each version in a fresh process per round, their order "
        "alternating; env-steps per second (median of the rounds) and this version's speed "
        "over the other's, median [min-max] of the rounds."
    )
    measurement.table(["setting", "other version", "this version", "this / other"], rows)
    measurement.write()


if __name__ == "__main__":
    main()
