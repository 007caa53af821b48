"""Work of a board build shared among worker processes: verifications, reports, figures.

The entries are dealt out to one process per core; few jobs stay in this process (a worker
starts numpy, scipy and the emulator again). Ctrl-C and SIGTERM raise in this process
(:mod:`saber.stop_signals`); the workers ignore both and are terminated at once, so a stop
takes seconds however long the jobs are.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import signal
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")

IN_PROCESS_AT_MOST = 2  # jobs done here rather than start workers for them


def processes(workers: int | None) -> int:
    """Worker processes for ``workers`` (None: one per core; 0 or 1: this process)."""
    return (os.cpu_count() or 1) if workers is None else workers


def _quiet_worker() -> None:
    """A worker's start: a stop is the main process's to act on."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def run_all(
    function: Callable[..., T], jobs: Sequence[tuple[Any, ...]], workers: int | None
) -> list[T | BaseException]:
    """``function(*job)`` for each job, in order: its result, or the exception it raised
    (one job's failure is its entry's status, never the build's).

    ``function`` must be a module's top-level function (the workers import it by name).
    A ``KeyboardInterrupt`` (Ctrl-C, SIGTERM) terminates the workers and goes on up.
    """
    count = processes(workers)
    if count <= 1 or len(jobs) <= IN_PROCESS_AT_MOST:
        return [_guarded(function, job) for job in jobs]
    context = multiprocessing.get_context("spawn")
    pool = concurrent.futures.ProcessPoolExecutor(
        min(count, len(jobs)), context, initializer=_quiet_worker
    )
    try:
        futures = [pool.submit(function, *job) for job in jobs]
        found: list[T | BaseException] = []
        for future in futures:
            try:
                found.append(future.result())
            except Exception as error:  # a job's error, or its worker's death
                found.append(error)
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        for child in multiprocessing.active_children():  # the pool's: at once
            child.terminate()
        raise
    pool.shutdown()
    return found


def _guarded(function: Callable[..., T], job: tuple[Any, ...]) -> T | BaseException:
    try:
        return function(*job)
    except Exception as error:  # one job's failure is its entry's status
        return error
