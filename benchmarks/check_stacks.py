"""How long the full ``saber check`` takes on real-world stacks, and its goal: under 30 s.

Each round runs the full check (every rule, sticky statistics included) of each stack in
a fresh process, the stacks interleaved, and times each probe inside it; the table gives
the median and spread of the whole check per stack, the goal's verdict, and the median
time of each probe. The stacks are the named real-world ones (their code as in
``scripts/atari_setups.py``) and the slowest of them, Stable-Baselines3's ``AtariWrapper``
over ``ALE/Pong-v5`` (16 emulator frames a step: the twin replays of the sticky-action
probe grow with the square of that), which took 57 s before the replays shared their
frames and the sticky probe stopped at a settled interval.

Run: ``python benchmarks/check_stacks.py [--rounds 3] [--stacks NAME ...]`` (needs
stable-baselines3 for the SB3 and CleanRL stacks).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

GOAL_SECONDS = 30.0
ROOT = Path(__file__).resolve().parents[1]

STACKS = {
    "SB3 AtariWrapper over ALE/Pong-v5": "sb3_atari_wrapper_over_pong_v5",
    "CleanRL make_env (Breakout)": "cleanrl_make_env",
    "SB3 make_atari_env (Breakout)": "sb3_make_atari_env",
    "Gymnasium AtariPreprocessing (Breakout)": "gymnasium_atari_preprocessing",
    "SABER/Breakout": "saber_env",
}

# One full check in a fresh process, each probe timed (the probes of saber.check.probes.FULL
# wrapped in place before the check runs); prints JSON.
CHECK = """
import json, sys, time
sys.path.insert(0, {scripts!r})
import gymnasium as gym
import atari_setups
import saber.check.api as api
from saber.check import probes

def sb3_atari_wrapper_over_pong_v5():
    from stable_baselines3.common.atari_wrappers import AtariWrapper
    return AtariWrapper(gym.make("ALE/Pong-v5"))

factory = globals().get({name!r}) or getattr(atari_setups, {name!r})
seconds = {{}}

def timed(probe):
    def run(subject):
        started = time.perf_counter()
        try:
            return probe(subject)
        finally:
            seconds[probe.__name__] = seconds.get(probe.__name__, 0.0) + time.perf_counter() - started
    return run

api.FULL = tuple((timed(probe), rules) for probe, rules in probes.FULL)
started = time.perf_counter()
result = api.check(factory)
total = time.perf_counter() - started
print(json.dumps({{"total": total, "probes": seconds,
                  "statuses": {{r.rule: r.status.value for r in result.rules}}}}))
"""


def _run(name: str) -> dict:
    code = CHECK.format(scripts=str(ROOT / "scripts"), name=name)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--stacks", nargs="*", default=list(STACKS), choices=list(STACKS))
    args = parser.parse_args()
    runs: dict[str, list[dict]] = {stack: [] for stack in args.stacks}
    for round_ in range(args.rounds):
        for stack in args.stacks:
            runs[stack].append(_run(STACKS[stack]))
            print(f"round {round_ + 1}: {stack}: {runs[stack][-1]['total']:.1f} s", flush=True)
    print()
    print(
        f"| stack | full check, median (min-max) | goal < {GOAL_SECONDS:.0f} s | slowest probes (median) |"
    )
    print("|---|---|---|---|")
    for stack, results in runs.items():
        totals = [r["total"] for r in results]
        median = statistics.median(totals)
        probes = {
            probe: statistics.median(r["probes"].get(probe, 0.0) for r in results)
            for probe in results[0]["probes"]
        }
        slowest = sorted(probes.items(), key=lambda item: -item[1])[:3]
        shown = ", ".join(
            f"{probe.removeprefix('probe_')} {value:.1f} s" for probe, value in slowest
        )
        verdict = "met" if max(totals) < GOAL_SECONDS else "NOT met"
        print(
            f"| {stack} | {median:.1f} s ({min(totals):.1f}-{max(totals):.1f}) | {verdict} | "
            f"{shown} |"
        )


if __name__ == "__main__":
    main()
