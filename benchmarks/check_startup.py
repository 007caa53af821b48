"""What the quick probe (saber.check) adds to the start-up of ``saber eval``.

Each round runs, in fresh processes (the probe's verdict is kept per process), the same
1-episode evaluation of the NOOP agent on Pong in this process (``workers=0``), once
with the probe (the default) and once without (``EnvOptions(allow_non_saber=True)``, which skips it);
the two are interleaved, and the table gives the median and spread of the per-round
differences and ratios. It also times the probe alone in a fresh process (cold: imports,
twin emulators, the ROM table) and again in the same process (warm: other options).

A 1-episode run is the worst case for the ratio; a SABER evaluation plays 6,100 episodes,
against which the probe is a constant.

Run: ``python benchmarks/check_startup.py [--rounds 5]``; it writes
``benchmarks/results/check-startup.json`` for docs/measurements/check.md.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

from _results import Measurement, add_options

EVAL = """
import time, tempfile, saber
started = time.perf_counter()
saber.evaluate("noop", "pong", episodes=1, backend=saber.harness.Inline(), out=tempfile.mkdtemp(),
               env_options=saber.harness.EnvOptions(allow_non_saber={allow}), progress=False)
print(time.perf_counter() - started)
"""

PROBE = """
import time
started = time.perf_counter()
from saber.check.gate import require_saber_env
require_saber_env()
cold = time.perf_counter() - started
started = time.perf_counter()
require_saber_env({"frame_skip": 4})  # other options: probed again, warm
print(cold, time.perf_counter() - started)
"""


def _run(code: str) -> list[float]:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [float(value) for value in done.stdout.split()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    add_options(parser, "check-startup")
    args = parser.parse_args()
    measurement = Measurement(
        args,
        page="check",
        order=20,
        title="What the quick probe adds to `saber eval`'s start-up",
        benchmark=__file__,
    )
    differences, ratios, colds, warms = [], [], [], []
    for _ in range(args.rounds):
        (probed,) = _run(EVAL.format(allow=False))
        (skipped,) = _run(EVAL.format(allow=True))
        cold, warm = _run(PROBE)
        differences.append(probed - skipped)
        ratios.append(probed / skipped)
        colds.append(cold)
        warms.append(warm)

    def spread(values: list[float]) -> str:
        return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"

    rows = [
        ["`saber.evaluate` of 1 episode, with the probe minus without", f"{spread(differences)} s"],
        ["`saber.evaluate` of 1 episode, with the probe over without", f"{spread(ratios)}x"],
        ["the quick probe alone, in a fresh process", f"{spread(colds)} s"],
        ["the quick probe alone, warm (other options)", f"{spread(warms)} s"],
    ]
    measurement.text(
        f"Median (min-max) of {args.rounds} interleaved rounds in fresh processes; the "
        "evaluation is the NOOP agent's, 1 episode of Pong, in the calling process:"
    )
    measurement.table(["what", "median (min-max)"], rows)
    measurement.write()


if __name__ == "__main__":
    main()
