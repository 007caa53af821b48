"""Work of a board build shared among worker processes: verifications, reports, figures.

A first build of many entries spends its time playing replays, bootstrapping intervals and
drawing figures, one entry at a time each, and independent of the others: the entries are
dealt out to one process per core. Few jobs stay in this process (a worker process starts
numpy, scipy and the emulator again: a second or two).
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")

IN_PROCESS_AT_MOST = 2  # jobs done here rather than start workers for them


def processes(workers: int | None) -> int:
    """Worker processes for ``workers`` (None: one per core; 0 or 1: this process)."""
    return (os.cpu_count() or 1) if workers is None else workers


def run_all(
    function: Callable[..., T], jobs: Sequence[tuple[Any, ...]], workers: int | None
) -> list[T | BaseException]:
    """``function(*job)`` for each job, in order: its result, or the exception it raised
    (one job's failure is its entry's status, never the build's).

    ``function`` must be a module's top-level function (the workers import it by name).
    """
    count = processes(workers)
    if count <= 1 or len(jobs) <= IN_PROCESS_AT_MOST:
        return [_guarded(function, job) for job in jobs]
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(min(count, len(jobs)), context) as pool:
        futures = [pool.submit(function, *job) for job in jobs]
        found: list[T | BaseException] = []
        for future in futures:
            try:
                found.append(future.result())
            except Exception as error:  # a job's error, or its worker's death
                found.append(error)
        return found


def _guarded(function: Callable[..., T], job: tuple[Any, ...]) -> T | BaseException:
    try:
        return function(*job)
    except Exception as error:  # one job's failure is its entry's status
        return error
