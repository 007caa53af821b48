"""The harness on a cluster of many workers: the cost per work unit of the main process
and of the Dask scheduler, the store's write rate, and from them the largest cluster one
``saber eval`` serves.

* ``cluster``: a scheduler (``dask scheduler``) and ``--workers`` single-threaded worker
  processes (``dask worker --nworkers``, 64 by default: a cluster simulated on one
  machine), each a process of its own as on a real cluster, so that neither the
  scheduler nor the workers share the main process's CPU. One warm-up run (every worker
  imports saber and ale-py), then ``saber.evaluate`` of ``--units`` units of tiny
  episodes (noop on Pong, ``max_episode_frames`` 40: a ROM reload and 10 steps each, so
  the units are nearly all overhead). Reported: wall time, units per second, and the CPU
  seconds per unit of the main process (the Dask client and the store: one fsync per
  record and per replay) and of the scheduler (read from ``/proc``).
* ``store``: ``ResultsStore.write_replay`` then ``write`` of ``--records`` records (each
  a real record and its 2 KB replay), as the run loop stores an episode: records per
  second on this disk.

The largest cluster: each tiny unit holds one episode, so the CPU per unit is an upper
bound of the CPU per episode (a real unit holds 8 episodes or more, and pays the unit's
share once). A worker finishes an episode every ``--episode-seconds`` (0.59 s: the
random agent's full SABER run, 6,100 episodes of every game in 3,597 CPU seconds
(docs/measurements/eval.md); a trained agent mostly plays longer episodes, and always
pays its network at every step), so one core of the main process keeps
``episode_seconds / main_cpu_per_unit`` workers busy, one core of the scheduler
``episode_seconds / scheduler_cpu_per_unit``, and the store ``records_per_second *
episode_seconds``; the least of the three is the figure.

    python benchmarks/dask_scale.py [--workers 64] [--units 256] [--records 2000]

It writes ``benchmarks/results/dask-scale.json`` for docs/measurements/eval.md.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from _results import Measurement, add_options, cpu_seconds

from saber.harness import Dask, EnvOptions, Inline, evaluate

TINY = EnvOptions({"max_episode_frames": 40}, allow_non_saber=True)
TICKS = os.sysconf("SC_CLK_TCK")


def process_cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) of another process, from ``/proc/<pid>/stat``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime (fields 14, 15)


def scheduler_address(scheduler_file: Path, seconds: float) -> str:
    """The address in a starting scheduler's file, once the file is there and whole."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return str(json.loads(scheduler_file.read_text())["address"])
        except (OSError, ValueError, KeyError):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the scheduler did not start within {seconds} s") from None
            time.sleep(0.2)


@contextmanager
def cluster(folder: Path, workers: int) -> Iterator[tuple[str, subprocess.Popen]]:
    """A ``dask scheduler`` and ``workers`` worker processes on loopback, each started in
    a process of its own and killed on the way out: (the scheduler's address, its
    process)."""
    scheduler_file = folder / "scheduler.json"
    dask = [sys.executable, "-m"]
    processes = [
        subprocess.Popen(
            [*dask, "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
             "--no-dashboard", "--scheduler-file", str(scheduler_file)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
    ]  # fmt: skip
    try:
        address = scheduler_address(scheduler_file, seconds=60)
        processes.append(
            subprocess.Popen(
                [*dask, "distributed.cli.dask_worker", address, "--host", "127.0.0.1",
                 "--nworkers", str(workers), "--nthreads", "1", "--no-dashboard",
                 "--local-directory", str(folder)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            )
        )  # fmt: skip
        from distributed import Client

        with Client(address, timeout=120) as client:
            client.wait_for_workers(workers, timeout=600)
        yield address, processes[0]
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in reversed(processes):
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def cluster_cost(workers: int, units: int) -> dict[str, float]:
    """Wall time, and the main process's and the scheduler's CPU per unit, for ``units``
    one-episode units on a cluster of ``workers`` worker processes."""
    start = time.monotonic()
    with (
        tempfile.TemporaryDirectory() as folder,
        cluster(Path(folder), workers) as (
            address,
            scheduler,
        ),
    ):
        started = time.monotonic() - start
        backend = Dask(address, workers=workers, timeout=120, envs_per_worker=1)
        # Warm-up: every worker imports saber, ale-py and the ROM on its first unit.
        evaluate("noop", "pong", workers, out=Path(folder) / "warm", backend=backend,
                 env_options=TINY, progress=False)  # fmt: skip
        # workers=units: one episode per unit (saber.harness.work.plan_units).
        backend = Dask(address, workers=units, timeout=120, envs_per_worker=1)
        before, before_scheduler = cpu_seconds(), process_cpu_seconds(scheduler.pid)
        wall = time.monotonic()
        result = evaluate("noop", "pong", units, out=Path(folder) / "run", backend=backend,
                          env_options=TINY, progress=False)  # fmt: skip
        wall = time.monotonic() - wall
        cpu = cpu_seconds() - before
        scheduler_cpu = process_cpu_seconds(scheduler.pid) - before_scheduler
    assert result.finished == units, result.failed[:1]
    return {"start_s": started, "wall_s": wall, "units_per_s": units / wall,
            "cpu_ms_per_unit": 1000 * cpu / units,
            "scheduler_cpu_ms_per_unit": 1000 * scheduler_cpu / units}  # fmt: skip


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
    parser.add_argument("--episode-seconds", type=float, default=0.59,
                        help="a worker's CPU seconds per episode (the random agent's mean)")  # fmt: skip
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
    bounds = {
        "the main process (one core)": args.episode_seconds * 1000 / cost["cpu_ms_per_unit"],
        "the scheduler (one core)": args.episode_seconds * 1000 / cost["scheduler_cpu_ms_per_unit"],
        "the store": rate * args.episode_seconds,
    }
    measurement.table(
        ["measured", "value"],
        [
            ["the store: records per second, each with its replay, fsynced", f"{rate:,.0f}"],
            [
                f"a scheduler and {args.workers} worker processes: start-up",
                f"{cost['start_s']:.1f} s",
            ],
            [
                f"{args.units} one-episode units: wall time",
                f"{cost['wall_s']:.1f} s ({cost['units_per_s']:.1f} units/s)",
            ],
            ["the main process's CPU per unit (client and store)",
             f"{cost['cpu_ms_per_unit']:.1f} ms"],
            ["the scheduler's CPU per unit", f"{cost['scheduler_cpu_ms_per_unit']:.1f} ms"],
        ],
    )  # fmt: skip
    measurement.text(
        f"The largest cluster each part keeps busy, a worker finishing an episode every "
        f"{args.episode_seconds} s of CPU (the random agent's mean SABER episode over every "
        "game; an agent whose episodes cost more CPU is served by more workers), each tiny "
        "unit counted as a whole episode (a real unit holds 8 or more, and the scheduler "
        "and the client pay a unit's share once):"
    )
    measurement.table(
        ["bound by", "workers"], [[part, f"{workers:,.0f}"] for part, workers in bounds.items()]
    )
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    measurement.data = {"store_records_per_s": rate, **cost, "bounds": bounds}
    measurement.write()


if __name__ == "__main__":
    main()
