"""What the quick probe (saber.check) adds to the start-up of ``saber eval``.

Each round runs, in fresh processes (the probe's verdict is kept per process), the same
1-episode evaluation of the NOOP agent on Pong in this process (``workers=0``), once
with the probe (the default) and once without (``EnvOptions(allow_non_saber=True)``, which skips it);
the two are interleaved, and the table gives the median and spread of the per-round
differences and ratios. It also times the probe alone in a fresh process (cold: imports,
twin emulators, the ROM table) and again in the same process (warm: other options).

A 1-episode run is the worst case for the ratio; a SABER evaluation plays 6,100 episodes
(about 40 minutes on 2 cores), against which the probe is a constant of a few seconds.

Run: ``python benchmarks/check_startup.py [--rounds 5]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

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
    args = parser.parse_args()
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

    rows = {
        "evaluate(1 episode) with the probe minus without, s": spread(differences),
        "evaluate(1 episode) with / without the probe": spread(ratios),
        "quick probe alone, cold process, s": spread(colds),
        "quick probe alone, warm (new options), s": spread(warms),
    }
    print(f"median (min-max) of {args.rounds} interleaved rounds")
    for name, value in rows.items():
        print(f"  {name:<55} {value}")
    print(json.dumps({"rounds": args.rounds, **rows}))


if __name__ == "__main__":
    main()
