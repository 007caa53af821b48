"""What recording every episode's replay costs: evaluation throughput with and without
replays, side by side, and the bytes a replay takes per 1,000 agent steps.

In one run, the same episodes are evaluated with ``replays=False`` and with
``replays=True``: by default in this process (``backend=Inline()``, one vector env of
``--episodes`` rows: the runner, the recorder, the records and the replay files, each
written and fsynced, all on the one path that is timed, the worst case); with
``--workers N``, as ``saber eval`` runs by default, in N worker processes
(``Processes``), where the main process writes the files while the workers play on.
The rounds are interleaved and alternate their order (ABBA: without, with, with, without,
...), so machine noise and any drift hit both variants alike. Each round gives the two
variants' emulator frames per wall-clock second and per CPU second of this process (the
emulation threads included); the cost of recording is the median over rounds of each
round's ratio (``1 - with / without``), beside the ratio of the medians. The goal:
recording costs at most 3% of evaluation throughput. Run it alone on the machine (the
project's CPU lock): a ratio of two timings taken under other load is noise.

Sizes, from the replay files of the recorded variant's last round: bytes per 1,000 agent
steps, whole files (header and checksum included) and the compressed actions alone, beside
what information theory allows: the entropy floor of uniformly random actions over 18
(log2(18) bits per step: 521 bytes per 1,000 steps), and the policy's own empirical action
entropy (order 0: the entropy of its action frequencies; order 1: of an action given the
one before, which a compressor that sees context can approach). A policy that repeats
itself compresses below the uniform floor.

    python benchmarks/replay_overhead.py [--agent random] [--game pong] [--episodes 8] [--rounds 7]
    python benchmarks/replay_overhead.py --agent ppo-pong --game pong --episodes 4 --rounds 4
    python benchmarks/replay_overhead.py --sizes RUN     # the sizes of a run saber eval made

It writes ``benchmarks/results/replay-overhead.json`` (``--sizes``: ``replay-sizes.json``)
for docs/measurements/eval.md.
"""

from __future__ import annotations

import argparse
import bz2
import math
import os
import resource
import shutil
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

from _results import Measurement, add_options

from saber.harness import Inline, Processes, Recording, evaluate
from saber.protocol.replay import read_replay

FLOOR_BITS = math.log2(18)  # uniform over the 18 actions


def _cpu() -> float:
    """CPU seconds of this process and of its reaped children (the workers)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def run(
    agent: str, game: str, episodes: int, replays: bool, workers: int = 0
) -> tuple[int, float, float, Path]:
    """Evaluate once; returns (frames, wall seconds, CPU seconds, directory)."""
    directory = Path(tempfile.mkdtemp(prefix="saber-replay-bench-"))
    rows = episodes if workers == 0 else max(1, episodes // workers)
    backend = Inline(rows) if workers == 0 else Processes(workers, envs_per_worker=rows)
    started, cpu = time.perf_counter(), _cpu()
    result = evaluate(agent, game, episodes, out=directory, backend=backend,
                      recording=Recording(replays=replays), progress=False)  # fmt: skip
    return result.frames, time.perf_counter() - started, _cpu() - cpu, directory


def entropy(counts: Counter) -> float:
    """Shannon entropy in bits of a frequency table."""
    total = sum(counts.values())
    return -sum(n / total * math.log2(n / total) for n in counts.values() if n)


def sizes(directory: Path) -> dict[str, float]:
    """Agent steps, bytes of replay files and of compressed actions alone, and the
    actions' empirical entropies (bits per step, order 0 and order 1)."""
    steps = files = actions = 0
    single: Counter = Counter()
    pairs: Counter = Counter()
    previous: Counter = Counter()
    for path in (directory / "replays").rglob("*.saber-replay"):
        replay = read_replay(path)
        steps += replay.header.steps
        files += path.stat().st_size
        actions += len(bz2.compress(replay.actions, 9))  # the file's bz2 stream
        single.update(replay.actions)
        pairs.update(zip(replay.actions, replay.actions[1:], strict=False))
        previous.update(replay.actions[:-1])
    conditional = entropy(pairs) - entropy(previous)  # H(a_t | a_t-1) = H(pair) - H(a_t-1)
    return {"steps": steps, "files": files, "actions": actions,
            "order0": entropy(single), "order1": conditional}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", default="random", help="an agent spec, as saber eval --agent")
    parser.add_argument("--game", default="pong")
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--workers", type=int, default=0,
                        help="0: in this process (the worst case); N: N worker processes")  # fmt: skip
    parser.add_argument("--sizes", type=Path, default=None, metavar="RUN",
                        help="only report the sizes of the replays of this run directory")  # fmt: skip
    add_options(parser, "replay-overhead")
    args = parser.parse_args()
    if args.sizes is not None:
        measurement = Measurement(
            args,
            page="eval",
            order=62,
            title="The size of a replay",
            benchmark=__file__,
            name="replay-sizes",
        )
        episodes = sum(1 for _ in (args.sizes / "replays").rglob("*.saber-replay"))
        measurement.text(f"`{args.sizes.name}`: {episodes} recorded episodes.")
        report_sizes(sizes(args.sizes), episodes, measurement)
        measurement.write()
        return
    measurement = Measurement(
        args,
        page="eval",
        order=60,
        title="What recording replays costs",
        benchmark=__file__,
    )
    load = os.getloadavg()[0]
    rates: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    recorded: Path | None = None
    frames = set()
    for replays in (False, True):  # warm-up, not timed: imports, the ROM, the agent's model
        shutil.rmtree(run(args.agent, args.game, 1, replays, args.workers)[3])
    for index in range(args.rounds):
        order = (False, True) if index % 2 == 0 else (True, False)
        for replays in order:
            played, wall, cpu, directory = run(
                args.agent, args.game, args.episodes, replays, args.workers
            )
            frames.add(played)
            rates[replays].append((played / wall, played / cpu))
            if replays:
                if recorded is not None:
                    shutil.rmtree(recorded)
                recorded = directory
            else:
                shutil.rmtree(directory)
    print(f"load average {load:.2f} before, {os.getloadavg()[0]:.2f} after")
    measurement.text(
        f"{args.agent} on {args.game}: {args.episodes} episodes ({', '.join(map(str, frames))} "
        f"frames) per evaluation, {args.rounds} interleaved rounds (ABBA), "
        f"{f'{args.workers} worker processes' if args.workers else 'in this process'}; "
        "medians of the rounds:"
    )
    measurement.table(
        ["variant", "frames/s (wall)", "frames per CPU s"],
        [
            [
                label,
                f"{statistics.median(rate for rate, _ in rates[replays]):,.0f}",
                f"{statistics.median(rate for _, rate in rates[replays]):,.0f}",
            ]
            for replays, label in ((False, "without replays"), (True, "with replays"))
        ],
    )
    costs = []
    for column, name in ((0, "wall-clock"), (1, "CPU")):
        without = [rates[False][i][column] for i in range(args.rounds)]
        with_ = [rates[True][i][column] for i in range(args.rounds)]
        paired = [100 * (1 - w / o) for w, o in zip(with_, without, strict=True)]
        of_medians = 100 * (1 - statistics.median(with_) / statistics.median(without))
        costs.append(
            [
                f"{name} throughput",
                f"{statistics.median(paired):+.2f}%",
                f"{min(paired):+.1f}% .. {max(paired):+.1f}%",
                f"{of_medians:+.2f}%",
            ]
        )
    measurement.text("The cost of recording (the goal: at most 3%):")
    measurement.table(
        ["cost of recording", "median of the rounds' ratios", "rounds", "ratio of the medians"],
        costs,
    )
    assert recorded is not None
    size = sizes(recorded)
    shutil.rmtree(recorded)
    report_sizes(size, args.episodes, measurement)
    measurement.write()


def report_sizes(size: dict[str, float], episodes: int, measurement: Measurement) -> None:
    """Record the bytes per 1,000 steps beside the entropies."""
    per = 1000 / size["steps"]
    measurement.text(
        f"size: {size['steps']:,} steps in {size['files']:,} bytes of replay files "
        f"({size['files'] / episodes:,.0f} bytes per episode) = "
        f"{size['files'] * per:,.0f} bytes per 1,000 steps (header and checksum included); "
        f"the compressed actions alone {size['actions'] * per:,.0f} bytes per 1,000 steps"
    )
    measurement.text(
        f"entropy per 1,000 steps: uniform over 18 actions {125 * FLOOR_BITS:,.0f} bytes "
        f"({FLOOR_BITS:.3f} bits per step); this policy's actions, order 0 "
        f"{125 * size['order0']:,.0f} bytes ({size['order0']:.3f} bits per step), order 1 "
        f"{125 * size['order1']:,.0f} bytes ({size['order1']:.3f} bits per step)"
    )


if __name__ == "__main__":
    main()
