"""Harness throughput: overhead against a bare loop, and 1 vs 2 worker processes.

In one run, with interleaved repeats (so machine noise hits every variant alike):

* ``bare``: a hand-written loop over a ``SaberVectorEnv`` of ``envs`` sub-envs (autoreset
  disabled, one seeded reset per episode, idle rows kept stepping), with the same
  random policy, playing the same episodes as the harness;
* ``harness, in process``: ``saber.harness.evaluate(..., backend=Inline())`` on the same
  episodes (one work unit): the harness's own cost (policy checks, records, fsync);
* ``harness, 1 worker``: the same in one worker process (adds process start-up);
* ``1 worker`` vs ``2 workers``: twice the episodes (two units), one or two processes;
  the single worker both as ``evaluate`` runs it (its vector env uses one emulation thread
  per core) and with one emulation thread (one core: the fair base of a 2-process ratio).

Frames per second are emulator frames of finished episodes per wall-clock second. Each
variant also reports the CPU seconds it used (this process plus its reaped workers):
unlike wall time, CPU time hardly changes with what else runs on the machine, so it
shows whether 2 workers do more work than 1, or only wait. The load average before and
after is printed (not recorded: say what else ran with ``--note``): on a shared machine, W
workers among L other busy processes on C cores get at most ``W * min(1, C / (L + W))``
cores.

``--resets`` measures the seeded reset instead (CPU time per reset of one sub-env, with
a reload of the ROM as per-episode seeds need, against a reset that continues the
emulator's random stream, and ale-py's own ``loadROM`` / ``reset_game``).

    python benchmarks/harness_overhead.py [--game pong] [--envs 8] [--repeats 3] [--scaling-only]
    python benchmarks/harness_overhead.py --resets [--game pong]

It writes ``benchmarks/results/harness-overhead.json`` (``--resets``:
``harness-resets.json``) for docs/measurements/eval.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import tempfile
import time

import numpy as np
from _results import Measurement, add_options
from gymnasium.vector import AutoresetMode

from saber.envs import SaberVectorEnv
from saber.harness import Inline, Processes, RandomPolicy, evaluate
from saber.harness.runner import episode_info
from saber.protocol.seeds import episode_seed


def bare_loop(game: str, episodes: int, envs: int) -> int:
    """Play ``episodes`` with their harness seeds on one vector env; return their frames."""
    seeds = [episode_seed(0, game, index) for index in range(episodes)]
    env = SaberVectorEnv(game, envs, autoreset_mode=AutoresetMode.DISABLED)
    policy = RandomPolicy()
    observations, _ = env.reset(seed=np.array(seeds[:envs]))
    policy.start_episodes(np.arange(envs), np.array(seeds[:envs]))
    next_episode, active, frames = envs, [True] * envs, 0
    while any(active):
        observations, _, _, _, info = env.step(policy(observations))
        ended, stats = episode_info(info)
        if ended is None:
            continue
        for row in np.flatnonzero(ended).tolist():
            mask = np.zeros(envs, dtype=bool)
            mask[row] = True
            if active[row]:
                frames += int(stats["frames"][row])
            if next_episode < episodes:
                seed = seeds[next_episode]
                observations, _ = env.reset(seed=np.array([seed]), options={"reset_mask": mask})
                policy.start_episodes(np.array([row]), np.array([seed]))
                next_episode += 1
            else:
                active[row] = False
                observations, _ = env.reset(options={"reset_mask": mask})
    env.close()
    return frames


def harness(game: str, episodes: int, envs: int, workers: int, threads: int | None = None) -> int:
    with tempfile.TemporaryDirectory() as out:
        result = evaluate(
            "random",
            game,
            episodes,
            out=out,
            backend=(
                Inline(envs, threads) if workers == 0 else Processes(workers, False, envs, threads)
            ),
            progress=False,
        )
    return sum(record["frames"] for record in result.records)


def cpu_seconds() -> tuple[float, float]:
    """(this process, its reaped children): user + system CPU seconds so far."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def reset_costs(game: str, measurement: Measurement, count: int = 20) -> None:
    """CPU seconds per reset of one sub-env: seeded (reload) vs continuing; ale-py's own."""
    import ale_py

    from saber.envs.emulator import new_ale, rom_path

    env = SaberVectorEnv(game, 1, num_threads=1, autoreset_mode=AutoresetMode.DISABLED)
    env.reset(seed=0)
    mask = {"reset_mask": np.ones(1, dtype=bool)}
    rows = []

    def timed(name: str, action) -> None:
        start = time.process_time()
        for i in range(count):
            action(i)
        rows.append((name, (time.process_time() - start) / count))

    timed("SaberVectorEnv seeded reset (reload)", lambda i: env.reset(seed=1000 + i, options=mask))
    env.step(np.zeros(1, dtype=np.int64))
    timed(
        "SaberVectorEnv step (4 emulator frames)",
        lambda i: env.step(np.zeros(1, dtype=np.int64)),
    )
    env.close()
    ale = new_ale(0.25)
    rom = rom_path(game)
    ale.loadROM(rom)

    def load(i: int) -> None:
        ale.setInt("random_seed", 1000 + i)
        ale.loadROM(rom)

    timed("ale-py setInt(random_seed) + loadROM", load)
    timed("ale-py reset_game", lambda i: ale.reset_game())
    state = ale.cloneState(include_rng=True)
    timed("ale-py restoreState (with RNG)", lambda i: ale.restoreState(state))
    measurement.text(f"{game}: CPU time per call (mean of {count}), ale-py {ale_py.__version__}:")
    measurement.table(
        ["call", "CPU ms"], [[name, f"{seconds * 1000:.2f}"] for name, seconds in rows]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="pong")
    parser.add_argument("--envs", type=int, default=8, help="sub-envs per vector env")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scaling-only", action="store_true", help="only the 1 vs 2 workers rows")
    parser.add_argument("--resets", action="store_true", help="measure the seeded reset instead")
    add_options(parser, "harness-overhead")
    args = parser.parse_args()
    if args.resets:
        measurement = Measurement(
            args,
            page="eval",
            order=12,
            title="What a seeded reset costs",
            benchmark=__file__,
            name="harness-resets",
        )
        reset_costs(args.game, measurement)
        measurement.write()
        return
    measurement = Measurement(
        args,
        page="eval",
        order=11,
        title="The harness against a bare loop, and 1 against 2 workers",
        benchmark=__file__,
    )
    two = 2 * args.envs
    variants = {
        "bare loop": lambda: bare_loop(args.game, args.envs, args.envs),
        "harness, in process": lambda: harness(args.game, args.envs, args.envs, 0),
        "harness, 1 worker": lambda: harness(args.game, args.envs, args.envs, 1),
        "2 units, 1 worker": lambda: harness(args.game, two, args.envs, 1),
        "2 units, 1 worker, 1 thread": lambda: harness(args.game, two, args.envs, 1, threads=1),
        "2 units, 2 workers": lambda: harness(args.game, two, args.envs, 2),
    }
    if args.scaling_only:
        variants = {name: run for name, run in variants.items() if name.startswith("2 units")}
    rates: dict[str, list[float]] = {name: [] for name in variants}
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    parent_cpu: dict[str, list[float]] = {name: [] for name in variants}
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)
    for repeat in range(args.repeats):
        for name, run in variants.items():
            (own, children), start = cpu_seconds(), time.perf_counter()
            frames = run()
            elapsed = time.perf_counter() - start
            own_after, children_after = cpu_seconds()
            rates[name].append(frames / elapsed)
            # CPU microseconds per emulator frame: the work, whatever the machine's load.
            cpu[name].append(1e6 * (own_after - own + children_after - children) / frames)
            parent_cpu[name].append(1e6 * (own_after - own) / frames)
            print(
                f"repeat {repeat + 1}: {name:<28} {rates[name][-1]:>9,.0f} frames/s "
                f"{cpu[name][-1]:6.1f} CPU us/frame (parent {parent_cpu[name][-1]:.1f}) "
                f"load {os.getloadavg()[0]:.2f}",
                flush=True,
            )
    median = {name: statistics.median(values) for name, values in rates.items()}
    print(f"\nload average after: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    table = []

    def row(name: str, ratio: str) -> None:
        cpu_median = statistics.median(cpu[name])
        parent = statistics.median(parent_cpu[name])
        table.append([name, f"{median[name]:,.0f}", ratio, f"{cpu_median:.1f}", f"{parent:.1f}"])

    if "bare loop" in median:
        bare = median["bare loop"]
        for name in ("bare loop", "harness, in process", "harness, 1 worker"):
            row(name, f"{median[name] / bare:.3f} x bare")
    one = median["2 units, 1 worker, 1 thread"]
    for name in ("2 units, 1 worker, 1 thread", "2 units, 1 worker", "2 units, 2 workers"):
        row(name, f"{median[name] / one:.3f} x 1 worker, 1 thread")
    measurement.text(f"{args.game}, {args.envs} envs per worker, median of {args.repeats} repeats:")
    measurement.table(
        ["variant", "frames/s", "ratio", "CPU us/frame", "parent CPU us/frame"], table
    )
    measurement.write()


if __name__ == "__main__":
    main()
