"""Playing episodes in worker processes, with progress counted in agent steps, and a stop
that takes seconds: on Ctrl-C or SIGTERM the workers are terminated at once (docs/verify.md).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from saber.errors import BackendError

T = TypeVar("T")
REPORT_STEPS = 10_000  # agent steps between two reports of a playing episode
_POLL_SECONDS = 0.25  # how often the main process looks at the workers' progress
_reported: Callable[[int], None] | None = None  # where report() counts, in this process


def report(steps: int) -> None:
    """Count ``steps`` agent steps played (to the progress of :func:`play_all`)."""
    if _reported is not None and steps:
        _reported(steps)


def _worker_start(counter: Any) -> None:
    """A worker's start: the stop is the main process's to act on, ale-py says only
    errors, and :func:`report` adds to the shared ``counter``."""
    global _reported
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _quiet_emulator()

    def add(steps: int) -> None:
        with counter.get_lock():
            counter.value += steps

    _reported = add


def _quiet_emulator() -> None:
    import ale_py

    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)


def _check_alive(workers: set[int | None]) -> None:
    """Raise if a worker of ``workers`` (process ids) has ended: a pool's workers never
    end on their own, and the episode it played would be waited on for ever."""
    alive = {child.pid for child in multiprocessing.active_children()}
    if workers - alive:
        raise BackendError(
            "A worker process playing replays ended abruptly (killed by the system, or the "
            "emulator crashed): verify again with --workers 0 to see which episode"
        )


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
        work: each job's agent steps, the total of the progress bar.
        progress: show the bar (None: when stderr is a terminal).
    """
    global _reported
    workers = (os.cpu_count() or 1) if workers is None else workers
    found: list[Any] = [None] * len(jobs)
    with _bar(sum(work), progress) as bar:
        if workers <= 1 or len(jobs) <= 1:
            _quiet_emulator()
            _reported = bar.update
            try:
                found = [function(job) for job in jobs]
            finally:
                _reported = None
            return found
        context = multiprocessing.get_context("spawn")
        counter = context.Value("q", 0)
        before = {child.pid for child in multiprocessing.active_children()}
        pool = context.Pool(min(workers, len(jobs)), _worker_start, (counter,))
        try:
            started = {child.pid for child in multiprocessing.active_children()} - before
            results = pool.imap_unordered(_indexed, [(function, i, j) for i, j in enumerate(jobs)])
            for _ in jobs:
                while True:
                    try:
                        index, value = results.next(timeout=_POLL_SECONDS)
                        break
                    except multiprocessing.TimeoutError:
                        bar.update(counter.value - bar.n)
                        _check_alive(started)
                found[index] = value
                bar.update(counter.value - bar.n)
            pool.close()
        finally:
            pool.terminate()  # at once: a stop (or an error) leaves no worker playing
            pool.join()
    return found
