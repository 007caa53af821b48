"""Playing episodes in worker processes, with progress, and a stop that takes seconds.

Ctrl-C and SIGTERM raise in the main process (:mod:`saber.stop_signals`, which every
``saber`` command installs): the workers, which ignore both, are then terminated at once
rather than left to finish their episodes (a replay of the 100-hour cap plays for
hours), and the stop goes on up. Verifying writes nothing, so nothing is left half-written.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")


def _quiet_worker() -> None:
    """A worker's start: the stop is the main process's to act on, and ale-py says only
    errors."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    import ale_py

    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)


def _indexed(call: tuple[Callable[[Any], T], int, Any]) -> tuple[int, T]:
    function, index, job = call
    return index, function(job)


@contextmanager
def _bar(total: int, enabled: bool | None) -> Iterator[Any]:
    """A tqdm bar on stderr counting agent steps (as ``saber eval``'s counts episodes)."""
    from tqdm import tqdm

    bar = tqdm(total=total, desc="saber verify", unit="step", unit_scale=True, file=sys.stderr,
               disable=not (sys.stderr.isatty() if enabled is None else enabled),
               dynamic_ncols=True)  # fmt: skip
    try:
        yield bar
    finally:
        bar.close()


def play_all(
    function: Callable[[Any], T],
    jobs: list[Any],
    work: list[int],
    workers: int | None,
    progress: bool | None,
) -> list[T]:
    """``function(job)`` of each job, in job order: in this process (``workers`` 0 or 1,
    or one job), else in ``workers`` spawned processes (None: one per core).

    Args:
        work: each job's agent steps, for the progress bar.
        progress: show the bar (None: when stderr is a terminal).
    """
    workers = (os.cpu_count() or 1) if workers is None else workers
    found: list[Any] = [None] * len(jobs)
    with _bar(sum(work), progress) as bar:
        if workers <= 1 or len(jobs) <= 1:
            import ale_py

            ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)
            for index, job in enumerate(jobs):
                found[index] = function(job)
                bar.update(work[index])
            return found
        context = multiprocessing.get_context("spawn")
        pool = context.Pool(min(workers, len(jobs)), initializer=_quiet_worker)
        try:
            calls = [(function, index, job) for index, job in enumerate(jobs)]
            for index, value in pool.imap_unordered(_indexed, calls):
                found[index] = value
                bar.update(work[index])
            pool.close()
        finally:
            pool.terminate()  # at once: a stop (or an error) leaves no worker playing
            pool.join()
    return found
