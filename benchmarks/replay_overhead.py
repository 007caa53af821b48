"""What recording every episode's replay costs: evaluation throughput with and without
replays, side by side, and the bytes a replay takes per 1,000 agent steps.

In one run, with interleaved repeats (machine noise hits both variants alike), the same
episodes are evaluated in this process (``backend=Inline()``) with ``replays=False`` and
with ``replays=True``; each variant reports emulator frames per wall-clock second and per
CPU second of this process (CPU time hardly changes with what else runs on the machine).
The goal: recording costs at most 3% of evaluation throughput.

Sizes: the replay files of the recorded run, per 1,000 agent steps, whole files (header
and checksum included) and the compressed actions alone, against the entropy floor of
uniformly random actions over 18 (log2(18) bits per step: 521 bytes per 1,000 steps).
A policy that repeats itself compresses further; pass its spec with ``--agent``
(``module:attr``) to measure yours.

    python benchmarks/replay_overhead.py [--game pong] [--episodes 8] [--repeats 3] [--agent random]
"""

from __future__ import annotations

import argparse
import bz2
import math
import resource
import statistics
import tempfile
import time
from pathlib import Path

from saber.harness import Inline, evaluate
from saber.protocol.replay import read_replay


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run(agent: str, game: str, episodes: int, replays: bool) -> tuple[int, float, float, Path]:
    """Evaluate once; returns (frames, wall seconds, CPU seconds, directory)."""
    directory = Path(tempfile.mkdtemp(prefix="saber-replay-bench-"))
    started, cpu = time.perf_counter(), _cpu()
    result = evaluate(agent, game, episodes, out=directory, backend=Inline(),
                      envs_per_worker=episodes, progress=False, replays=replays)  # fmt: skip
    return result.frames, time.perf_counter() - started, _cpu() - cpu, directory


def sizes(directory: Path) -> tuple[int, int, int]:
    """(agent steps, bytes of replay files, bytes of compressed actions alone)."""
    steps = files = actions = 0
    for path in (directory / "replays").rglob("*.saber-replay"):
        data = path.read_bytes()
        replay = read_replay(path)
        steps += replay.header.steps
        files += len(data)
        # Everything but the magic, the header and the checksum: the bz2 stream.
        actions += len(bz2.compress(replay.actions, 9))
    return steps, files, actions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="pong")
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--agent", default="random")
    args = parser.parse_args()
    rates: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    recorded: Path | None = None
    for _ in range(args.repeats):
        for replays in (False, True):
            frames, wall, cpu, directory = run(args.agent, args.game, args.episodes, replays)
            rates[replays].append((frames / wall, frames / cpu))
            if replays:
                recorded = directory
    print(f"{args.agent} on {args.game}, {args.episodes} episodes, {args.repeats} repeats "
          "(median), in this process:")  # fmt: skip
    print(f"{'variant':<18} {'frames/s (wall)':>16} {'frames/CPU s':>14}")
    medians = {}
    for replays, label in ((False, "without replays"), (True, "with replays")):
        wall = statistics.median(rate for rate, _ in rates[replays])
        cpu = statistics.median(rate for _, rate in rates[replays])
        medians[replays] = (wall, cpu)
        print(f"{label:<18} {wall:>16,.0f} {cpu:>14,.0f}")
    print(
        f"cost of recording: {100 * (1 - medians[True][0] / medians[False][0]):+.2f}% of "
        f"wall-clock throughput, {100 * (1 - medians[True][1] / medians[False][1]):+.2f}% "
        "of CPU throughput (goal: at most 3%)"
    )
    assert recorded is not None
    steps, files, actions = sizes(recorded)
    floor = 1000 * math.log2(18) / 8
    print(
        f"size: {steps:,} steps in {files:,} bytes of replay files = "
        f"{1000 * files / steps:,.0f} bytes per 1,000 steps (header and checksum included); "
        f"the compressed actions alone {1000 * actions / steps:,.0f} bytes per 1,000 steps "
        f"(entropy of uniform actions over 18: {floor:,.0f})"
    )


if __name__ == "__main__":
    main()
