"""Why examples/pqn_jax.py unrolls its gradient steps on CPU: one PQN update, both ways.

XLA's CPU backend runs the gradients of convolutions many times slower inside a while
loop (``jax.lax.scan``) than unrolled. The example therefore, on CPU, traces the epochs
and minibatches as a Python loop and compiles one update per call (``--unroll yes``);
on GPUs it keeps the scans (``--unroll no``: ``--chunk-updates`` updates in one call).
This script compiles the example's update both ways on saber.jax and times them in
interleaved rounds (the machine's speed drifts; adjacent rounds pair up), printing the
median per-round ratio with its range, and the frames per second of the compiled loop
(env steps, acting and learning). Run::

    python benchmarks/pqn_cpu_loops.py                     # Pong, 8 envs, 5 rounds
    python benchmarks/pqn_cpu_loops.py --num-envs 32 --rounds 3

It writes ``benchmarks/results/pqn-cpu.json`` (``pqn-gpu.json`` on a GPU) for
docs/measurements/jax.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import jax
from _results import Measurement, add_options

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "pqn_jax.py"


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pqn_jax", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["pqn_jax"] = module
    spec.loader.exec_module(module)
    return module


def compiled_update(pqn: ModuleType, argv: list[str], unroll: str) -> tuple[Any, Any]:
    """The example's compiled call for one update, and a runner to feed it (compiled)."""
    args = pqn.parse_args([*argv, "--unroll", unroll, "--chunk-updates", "1"])
    env = pqn.make(args.game, num_envs=args.num_envs, clip_rewards=True)
    chunk, optimizer, _ = pqn.make_chunk(env, args, total_updates=100)
    runner = pqn.start(env, optimizer, args.seed)
    runner, episodes = chunk(runner)  # compile
    jax.block_until_ready(episodes)
    return chunk, runner


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="Pong")
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--num-steps", type=int, default=32)
    parser.add_argument("--minibatches", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    add_options(parser, "pqn-<platform>")
    options = parser.parse_args()
    platform = jax.devices()[0].platform
    measurement = Measurement(
        options,
        page="jax",
        order=20,
        title=f"The PQN update on a {platform.upper()}: unrolled against lax.scan",
        benchmark=__file__,
        name=f"pqn-{platform}",
    )
    argv = [
        *("--game", options.game, "--num-envs", str(options.num_envs)),
        *("--num-steps", str(options.num_steps), "--minibatches", str(options.minibatches)),
        *("--epochs", str(options.epochs)),
    ]
    pqn = load_example()
    contenders = {way: compiled_update(pqn, argv, way) for way in ("yes", "no")}
    seconds: dict[str, list[float]] = {way: [] for way in contenders}
    for _ in range(options.rounds):
        for way, (chunk, runner) in contenders.items():
            start = time.perf_counter()
            runner, episodes = chunk(runner)
            jax.block_until_ready(episodes)
            seconds[way].append(time.perf_counter() - start)
            contenders[way] = (chunk, runner)
    ratios = [no / yes for yes, no in zip(seconds["yes"], seconds["no"], strict=True)]
    frames = 4 * options.num_envs * options.num_steps  # per update (SABER: 4 frames a step)
    measurement.text(
        f"{jax.devices()[0]}, jax {jax.__version__}; one update of examples/pqn_jax.py "
        f"({options.num_envs} envs x {options.num_steps} steps, {options.epochs} epochs x "
        f"{options.minibatches} minibatches) compiled both ways, {options.rounds} interleaved "
        "rounds:"
    )
    rows = []
    for way, label in (("yes", "unrolled (--unroll yes)"), ("no", "lax.scan (--unroll no)")):
        median = statistics.median(seconds[way])
        rows.append([label, f"{median:.2f}", f"{frames / median:,.0f}"])
    measurement.table(["update", "median s", "frames/s"], rows)
    measurement.text(
        f"scan / unrolled time: median {statistics.median(ratios):.1f}x "
        f"(rounds {min(ratios):.1f}x to {max(ratios):.1f}x)."
    )
    measurement.write()


if __name__ == "__main__":
    main()
