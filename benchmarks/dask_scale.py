"""The harness on a cluster of many workers: the main process's cost per work unit, and
the store's write rate, from which the largest cluster one ``saber eval`` serves.

* ``cluster``: a ``LocalCluster`` of ``--workers`` single-threaded worker processes (64 by
  default: a cluster simulated on one machine), one warm-up run (every worker imports
  saber and ale-py), then ``saber.evaluate`` of ``--units`` units of tiny episodes (noop
  on Pong, ``max_episode_frames`` 40: about a ROM reload and 10 steps each, so the
  units are nearly all overhead). Reported: wall time, units per second, and the CPU
  seconds of this process per unit: the Dask client, the store (one fsync per record and
  per replay) and, in a ``LocalCluster``, the scheduler and the 64 nannies too (so the
  figure is an upper bound of what ``saber eval`` itself spends against a remote
  scheduler).
* ``store``: ``ResultsStore.write_replay`` then ``write`` of ``--records`` records (each
  a real record and its 2 KB replay), as the run loop stores an episode: records per
  second on this disk.

The largest cluster: the main process serves ``1 / cpu_per_unit`` units per second
on one core; a worker finishes a unit every ``unit_seconds`` (8 SABER episodes of a
random agent take minutes of emulation), so ``unit_seconds / cpu_per_unit`` workers keep
it busy; the store bounds the episodes per second the same way.

    python benchmarks/dask_scale.py [--workers 64] [--units 256] [--records 2000]

It writes ``benchmarks/results/dask-scale.json`` for docs/measurements/eval.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from pathlib import Path

from _results import Measurement, add_options

from saber.harness import Dask, EnvOptions, Inline, evaluate

TINY = EnvOptions({"max_episode_frames": 40}, allow_non_saber=True)


def cpu_seconds() -> float:
    """CPU seconds of this process (user + system, every thread)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def cluster_cost(workers: int, units: int) -> dict[str, float]:
    """Wall time and this process's CPU per unit for ``units`` one-episode units."""
    from distributed import LocalCluster

    start = time.monotonic()
    with (
        LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        tempfile.TemporaryDirectory() as folder,
    ):
        started = time.monotonic() - start
        backend = Dask(cluster.scheduler_address, workers=workers, timeout=120, envs_per_worker=1)
        # Warm-up: every worker imports saber, ale-py and the ROM on its first unit.
        evaluate("noop", "pong", workers, out=Path(folder) / "warm", backend=backend,
                 env_options=TINY, progress=False)  # fmt: skip
        # workers=units: one episode per unit (saber.harness.work.plan_units).
        backend = Dask(cluster.scheduler_address, workers=units, timeout=120, envs_per_worker=1)
        before, wall = cpu_seconds(), time.monotonic()
        result = evaluate("noop", "pong", units, out=Path(folder) / "run", backend=backend,
                          env_options=TINY, progress=False)  # fmt: skip
        wall, cpu = time.monotonic() - wall, cpu_seconds() - before
    assert result.finished == units, result.failed[:1]
    return {"start_s": started, "wall_s": wall, "units_per_s": units / wall,
            "cpu_ms_per_unit": 1000 * cpu / units}  # fmt: skip


def store_rate(records: int) -> float:
    """Records (each with its replay) stored per second, as the run loop stores them."""
    from saber.harness.store import ResultsStore, run_provenance
    from saber.protocol.seeds import SEED_SCHEME

    with tempfile.TemporaryDirectory() as folder:
        source = evaluate("noop", "pong", 1, out=Path(folder) / "one", backend=Inline(),
                          env_options=TINY, progress=False)  # fmt: skip
        record = source.records[0]
        replay = (Path(folder) / "one" / record["replay"]).read_bytes()
        run = run_provenance(settings={}, deviations={}, agent="noop", games=["pong"],
                         episodes=records, base_seed=0, seed_scheme=SEED_SCHEME)  # fmt: skip
        store = ResultsStore.open(Path(folder) / "store", run)
        try:
            start = time.monotonic()
            for episode in range(records):
                name = f"replays/pong/episode-{episode}.saber-replay"
                store.write_replay(name, replay)
                store.write({**record, "episode": episode, "replay": name})
            return records / (time.monotonic() - start)
        finally:
            store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=64)
    parser.add_argument("--units", type=int, default=256)
    parser.add_argument("--records", type=int, default=2000)
    add_options(parser, "dask-scale")
    args = parser.parse_args()
    measurement = Measurement(
        args,
        page="eval",
        order=70,
        title="The harness on a cluster of many workers",
        benchmark=__file__,
    )
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    rate = store_rate(args.records)
    cost = cluster_cost(args.workers, args.units)
    measurement.table(
        ["measured", "value"],
        [
            ["the store: records per second, each with its replay, fsynced", f"{rate:,.0f}"],
            [f"a `LocalCluster` of {args.workers} workers: start-up", f"{cost['start_s']:.1f} s"],
            [
                f"{args.units} units of tiny episodes: wall time",
                f"{cost['wall_s']:.1f} s ({cost['units_per_s']:.1f} units/s)",
            ],
            ["this process's CPU per unit", f"{cost['cpu_ms_per_unit']:.1f} ms"],
        ],
    )
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    measurement.write()


if __name__ == "__main__":
    main()
