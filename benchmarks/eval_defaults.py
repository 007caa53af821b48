"""Which ``--workers`` and ``--envs-per-worker`` ``saber eval`` should default to.

For each policy, ``saber eval --agent SPEC --games GAME --episodes N`` with each
``--workers W --envs-per-worker E`` in the sweep, in interleaved rounds (the order
rotates from round to round), whole processes timed: frames per second of the finished
episodes over the process's wall time, and its CPU seconds. The defaults are chosen
from real policies (the trained ``ppo-pong`` in numpy, and a NatureCNN in PyTorch written
without any thread setting), not only from the random agent, whose actions cost nothing.

    python benchmarks/eval_defaults.py [--policies torch,ppo-pong] [--game freeway]
        [--episodes 32] [--rounds 2] [--configs 2x4,2x8,2x16,1x8]

A configuration ending in ``p`` (``16x8p``) runs with ``--policy-process``: one copy of
the policy acts for every worker on batches of W x E (the layout for a policy on a GPU:
``--policies torch-cuda`` on a machine with one).

Freeway's episodes all last 8,192 frames, whatever the policy: the configurations play
exactly the same frames, with no luck in which episodes run long.

It writes ``benchmarks/results/eval-defaults.json`` for docs/measurements/eval.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path

from _results import Measurement, add_options
from eval_least_work import HERE, SPECS, eval_command, timed


def run(spec: str, game: str, episodes: int, config: tuple[int, int, bool], out: Path) -> tuple:
    workers, envs, policy_process = config
    options = ["--workers", str(workers), "--envs-per-worker", str(envs)]
    if policy_process:
        options.append("--policy-process")
    command = eval_command(spec, game, episodes, out, *options)
    wall, cpu, _ = timed([command], dict(os.environ))
    with (out / "episodes.jsonl").open(encoding="utf-8") as lines:
        frames = sum(json.loads(line).get("frames", 0) for line in lines)
    return wall, cpu, frames


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--policies", default="torch,ppo-pong", help="random, torch, ppo-pong or agent specs"
    )
    parser.add_argument("--game", default="freeway")
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--configs", default="2x4,2x8,2x16,1x8", help="WORKERSxENVS[p],... (p: --policy-process)"
    )
    add_options(parser, "eval-defaults")
    args = parser.parse_args()
    measurement = Measurement(
        args,
        page="eval",
        order=30,
        title="`--workers` and `--envs-per-worker`",
        benchmark=__file__,
    )
    configs = [
        (int(workers), int(envs.removesuffix("p")), envs.endswith("p"))
        for workers, envs in (item.split("x") for item in args.configs.split(","))
    ]
    cases = [(policy, config) for policy in args.policies.split(",") for config in configs]
    results: dict[tuple, list[tuple]] = {}
    print(f"cwd {HERE}; load average before: {os.getloadavg()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            shift = round_ % len(cases)
            for index, (policy, config) in enumerate(cases[shift:] + cases[:shift]):
                out = Path(tmp) / f"{round_}-{index}"
                spec = SPECS.get(policy, policy)  # or an agent spec of yours
                measured = run(spec, args.game, args.episodes, config, out)
                results.setdefault((policy, config), []).append(measured)
                wall, cpu, frames = measured
                workers, envs, policy_process = config
                print(
                    f"round {round_ + 1} {policy:8} --workers {workers} --envs-per-worker "
                    f"{envs:<3}{' --policy-process' if policy_process else ''} "
                    f"{frames:>9,} frames {wall:6.1f} s {cpu:6.1f} s CPU "
                    f"{frames / wall:8,.0f} frames/s",
                    flush=True,
                )
    print(f"load average after: {os.getloadavg()}\n")
    measurement.text(f"{args.game}, {args.episodes} episodes, {args.rounds} rounds, medians:")
    table = []
    for (policy, (workers, envs, policy_process)), runs in results.items():
        rate = statistics.median(f / w for w, _, f in runs)
        cpu = statistics.median(c for _, c, _ in runs)
        shared = "yes" if policy_process else "no"
        table.append([policy, workers, envs, shared, f"{rate:,.0f}", f"{cpu:.1f}"])
    measurement.table(
        ["policy", "--workers", "--envs-per-worker", "--policy-process", "frames/s", "CPU s"],
        table,
        align=["left", "right", "right", "left", "right", "right"],
    )
    measurement.write()


if __name__ == "__main__":
    main()
