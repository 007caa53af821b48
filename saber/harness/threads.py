"""Each worker process's share of the cores for the policy's thread pools (``C // W``).

Set through the variables the libraries read when they load; one the user set is left
as it is. docs/harness.md ("Threads: each worker's share of the cores") says why.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
)


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity where the system has one
    (``taskset``, a batch system's allocation), else every core of the machine."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def policy_threads(workers: int, cores: int | None = None) -> int:
    """Threads for each of ``workers`` processes on ``cores`` cores (default: the usable
    ones, :func:`usable_cores`)."""
    cores = cores or usable_cores()
    return max(1, cores // max(1, workers))


def thread_variables(threads: int, environ: dict[str, str] | None = None) -> dict[str, str]:
    """The variables to set for a worker with ``threads`` threads, leaving the user's alone.

    >>> thread_variables(1, {"OMP_NUM_THREADS": "4"})["OPENBLAS_NUM_THREADS"]
    '1'
    >>> "OMP_NUM_THREADS" in thread_variables(1, {"OMP_NUM_THREADS": "4"})
    False
    """
    environ = dict(os.environ) if environ is None else environ
    chosen = {name: str(threads) for name in THREAD_VARIABLES if name not in environ}
    if threads == 1 and "XLA_FLAGS" not in environ:
        chosen["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    return chosen


@contextmanager
def worker_environment(threads: int) -> Iterator[dict[str, str]]:
    """Within the block, processes started inherit the thread variables (``spawn`` copies
    ``os.environ``); afterwards this process's environment is as it was."""
    chosen = thread_variables(threads)
    os.environ.update(chosen)
    try:
        yield chosen
    finally:
        for name in chosen:
            os.environ.pop(name, None)
