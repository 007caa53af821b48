"""How long the full ``saber check`` takes on the named real-world stacks; the goal: the
slowest under 30 s.

Each round runs the full check (every rule, sticky statistics included) of each stack in
a fresh process, the stacks interleaved, and times each probe inside it; the table gives
the median and spread of the whole check per stack, the goal's verdict, and the median
time of the slowest probes. The stacks: the setups of ``docs/atari-setups.md`` (their
code in ``scripts/atari_setups.py``: ale-py v5, Gymnasium's ``AtariPreprocessing``,
SB3's ``AtariWrapper`` and ``make_atari_env``, CleanRL's ``make_env``, envpool 1.2.5,
SABER/Breakout), SABER/Pong and the wrapped variants the check tests probe
(``tests/check/stacks.py``), and the slowest, SB3's ``AtariWrapper`` over
``ALE/Pong-v5`` (16 emulator frames a step: the twin's replays of a sticky step grow with
the square of that), once the slowest.

Run: ``python benchmarks/check_stacks.py [--rounds 3] [--stacks NAME ...]`` (the SB3 and
CleanRL stacks need stable-baselines3, envpool's envpool==1.2.5: a stack whose library
is missing is listed as such, not timed). It writes ``benchmarks/results/check-stacks.json``
for docs/measurements/check.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from _results import Measurement, add_options

GOAL_SECONDS = 30.0
ROOT = Path(__file__).resolve().parents[1]

# name: (module, factory, the library it needs or None); atari_setups is scripts/'s.
STACKS = {
    "SB3 AtariWrapper over ALE/Pong-v5": (
        "tests.check.stacks",
        "sb3_atari_wrapper_over_v5",
        "stable_baselines3",
    ),
    "ale-py v5 (Breakout)": ("atari_setups", "ale_v5_defaults", None),
    "Gymnasium AtariPreprocessing (Breakout)": (
        "atari_setups",
        "gymnasium_atari_preprocessing",
        None,
    ),
    "SB3 AtariWrapper (Breakout-v5)": ("atari_setups", "sb3_atari_wrapper", "stable_baselines3"),
    "SB3 make_atari_env (Breakout)": ("atari_setups", "sb3_make_atari_env", "stable_baselines3"),
    "CleanRL make_env (Breakout)": ("atari_setups", "cleanrl_make_env", "stable_baselines3"),
    "envpool 1.2.5 (Breakout)": ("atari_setups", "envpool_defaults", "envpool"),
    "SABER/Breakout": ("atari_setups", "saber_env", None),
    "SABER/Pong": ("tests.check.stacks", "saber_env", None),
    **{
        f"SABER/Pong {what}": ("tests.check.stacks", factory, None)
        for what, factory in (
            ("+ TimeLimit(27,000)", "saber_with_time_limit"),
            ("+ ClipReward", "saber_with_clipping"),
            ("+ NormalizeReward", "saber_with_normalizer"),
            ("clip_rewards=True", "saber_clipped_by_option"),
            ("+ 6 actions", "saber_with_six_actions"),
            ("without sticky actions", "saber_without_sticky_actions"),
            ("without its timeout", "saber_without_timeout"),
            ("capped at 4,500 steps", "saber_with_fixed_cap"),
            ("+ timeout until the first reward", "saber_timeout_until_first_reward"),
            ("x2 in a SyncVectorEnv", "sync_vector_saber"),
        )
    },
    "Gymnasium AtariPreprocessing + life loss, no-ops (Breakout)": (
        "tests.check.stacks",
        "gymnasium_preprocessing",
        None,
    ),
}

# One full check in a fresh process, each probe timed (the probes of saber.check.probes.FULL
# wrapped in place before the check runs); prints JSON.
CHECK = """
import json, sys, time
sys.path[:0] = [{scripts!r}, {root!r}]
import importlib
import saber.check.api as api
from saber.check import probes

factory = getattr(importlib.import_module({module!r}), {name!r})
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


def _run(stack: str) -> dict:
    module, name, _ = STACKS[stack]
    code = CHECK.format(scripts=str(ROOT / "scripts"), root=str(ROOT), module=module, name=name)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    # The whole process too: what a user of `saber check` waits (imports included).
    return {
        **json.loads(done.stdout.strip().splitlines()[-1]),
        "process": time.perf_counter() - started,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--stacks", nargs="*", default=list(STACKS), choices=list(STACKS))
    add_options(parser, "check-stacks")
    args = parser.parse_args()
    measurement = Measurement(
        args, page="check", order=10, title="The full check of each stack", benchmark=__file__
    )
    missing = {
        stack: STACKS[stack][2]
        for stack in args.stacks
        if STACKS[stack][2] and importlib.util.find_spec(STACKS[stack][2]) is None
    }
    runs: dict[str, list[dict]] = {stack: [] for stack in args.stacks if stack not in missing}
    for round_ in range(args.rounds):
        for stack in runs:
            runs[stack].append(_run(stack))
            print(f"round {round_ + 1}: {stack}: {runs[stack][-1]['total']:.1f} s", flush=True)
    table = [
        [stack, f"not run: {need} is not installed", "", "", "", ""]
        for stack, need in missing.items()
    ]
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
        processes = [r["process"] for r in results]
        verdict = "met" if max(processes) < GOAL_SECONDS else "NOT met"
        counts = Counter(results[-1]["statuses"].values())
        verdicts = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        table.append(
            [
                stack,
                f"{median:.1f} s ({min(totals):.1f}-{max(totals):.1f})",
                f"{statistics.median(processes):.1f} s",
                verdict,
                shown,
                verdicts,
            ]
        )
    print()
    measurement.text(
        f"The full check of each stack in a fresh process, median of {args.rounds} rounds "
        f"(min-max), and the whole process (imports included); the goal: under {GOAL_SECONDS:.0f} s."
    )
    measurement.table(
        [
            "stack",
            "full check, median (min-max)",
            "whole process, median",
            f"goal < {GOAL_SECONDS:.0f} s",
            "slowest probes (median)",
            "verdicts",
        ],
        table,
        align=["left"] * 6,
    )
    measurement.write()


if __name__ == "__main__":
    main()
