"""What goes wrong on a Dask cluster, in the harness's words: a worker that died (and of
what), a worker that hangs (ended without waiting for it), a cluster left without a
worker, a scheduler that is gone.

The Dask backend (:mod:`saber.harness.dask_executor`) reports these; this module turns
Dask's own objects (``KilledWorker``, a nanny's log) into reasons that are the same for
the same cause, so that the repeated-failure stop (:mod:`saber.harness.run_loop`)
compares causes, not task keys or worker addresses.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import threading
import time
from typing import Any

from saber.harness.executor_base import death_cause

NANNY_LOG_WAIT = 3.0  # seconds to look for a dead worker's exit status in its nanny's log
_LOG_POLL = 0.25  # seconds between two looks (the nanny logs the death once it notices it)


def scheduler_lost_message(address: str, timeout: float | None) -> str:
    """The one line for a scheduler that is gone (the run loop adds what is on disk):
    ``timeout``, the seconds Dask tried to reconnect; None: it reconnected to a scheduler
    restarted at the same address."""
    what = (
        f"no answer within {timeout:g} s of trying to reconnect, --dask-timeout"
        if timeout is not None
        else "it restarted: the units it ran are gone, and so are its workers, which Dask "
        "closes with their scheduler"
    )
    return (
        f"Lost the Dask scheduler at {address} ({what}): start it and its workers again, "
        "or another cluster, and run the same command (with that cluster's --address) to "
        "resume"
    )


def no_worker_message(address: str, seconds: float) -> str:
    """The one line for a cluster left without a worker after the run stopped a hung one
    (the run loop adds what is on disk); ``seconds``: how long it had none."""
    return (
        f"No Dask worker at the scheduler {address} for {seconds:g} s (--unit-timeout plus "
        "--dask-timeout) after the run stopped a hung worker: no new one took its place (a "
        "worker started with --no-nanny is not replaced, and a nanny may close while "
        "restarting its worker). Start workers (dask worker, with its nanny), and run the "
        "same command to resume"
    )


class DaskClientLogs:
    """Dask's client-side loggers, silenced while the harness speaks for them: while the
    client reconnects to a lost scheduler (Dask's "Failed to reconnect" line, then the
    run's own, which says what to do), and while a reconnecting client is closed (Dask
    logs the attempts it cancels as an error with a traceback)."""

    _NAMES = ("distributed.client", "distributed.utils")

    def __init__(self) -> None:
        self._saved: list[tuple[logging.Logger, int]] | None = None

    def quiet(self) -> None:
        """Silence them (until :meth:`restore`)."""
        if self._saved is None:
            self._saved = [(logger, logger.level) for logger in map(logging.getLogger, self._NAMES)]
            for logger, _ in self._saved:
                logger.setLevel(logging.CRITICAL + 1)

    def restore(self) -> None:
        """Give them back the levels they had."""
        for logger, level in self._saved or ():
            logger.setLevel(level)
        self._saved = None


def killed_worker_reason(client: Any, error: Any) -> str:
    """The reason recorded for a unit whose Dask workers died running it
    (``distributed.KilledWorker``): the same text for the same cause on any worker.

    The signal or exit status comes from the nanny of the last worker that died (Dask's
    scheduler does not know it); without a nanny, or if it does not answer within
    :data:`NANNY_LOG_WAIT` seconds, the reason says so.
    """
    worker = error.last_worker
    tries = error.allowed_failures + 1
    exit_code = _exit_code_from_nanny(client, worker.nanny, worker.pid) if worker.nanny else None
    cause = death_cause(exit_code) if exit_code is not None else "cause not known to its nanny"
    return (
        f"the Dask worker process died ({cause}) while running this episode; Dask ran the "
        f"unit on {tries} worker(s), and each died"
    )


def _exit_code_from_nanny(client: Any, nanny: str, pid: int | None) -> int | None:
    """The exit code (-N: signal N) that ``nanny`` logged for its worker process ``pid``."""
    if pid is None:
        return None
    pattern = re.compile(
        rf"Worker process {pid} (was killed by signal (\d+)|exited with status (\d+))"
    )

    async def logs() -> list[Any]:
        return await asyncio.wait_for(client.rpc(nanny).get_logs(n=200), NANNY_LOG_WAIT)

    deadline = time.monotonic() + NANNY_LOG_WAIT
    while True:
        try:
            entries = client.sync(logs)
        except Exception:  # a nanny gone or mute: the cause stays unknown
            return None
        for entry in entries:
            found = pattern.search(str(entry[-1]))
            if found:
                return -int(found[2]) if found[2] else int(found[3])
        if time.monotonic() >= deadline:
            return None
        time.sleep(_LOG_POLL)


async def _exit_worker_process() -> None:
    """Run on a Dask worker without a nanny: end its process at once (a coroutine, so
    that the scheduler does not wait for an answer that cannot come)."""
    os._exit(1)


def stop_worker_in_background(client: Any, worker: str) -> None:
    """End the Dask worker at ``worker`` (its unit hung) without waiting for it.

    Dask restarts it (``Client.restart_workers``): its nanny kills the worker process
    (with SIGKILL once a request to close goes unanswered, so a stopped process too) and
    starts a new one; a worker whose nanny does not answer either (a frozen machine) is
    removed by the scheduler at Dask's restart timeout. Either way its queued tasks go to
    other workers. Dask restarts only workers with a nanny: one without is asked to exit.
    The calls wait on a machine that may not answer, so they run in a daemon thread: the
    run goes on storing the other workers' episodes meanwhile.
    """

    def stop() -> None:
        try:
            client.restart_workers([worker], raise_for_error=False)
        except ValueError:  # Dask restarts only a worker that has a nanny
            with contextlib.suppress(Exception):
                client.run(_exit_worker_process, workers=[worker], wait=False)
        except (Exception, asyncio.CancelledError):  # the worker or the scheduler is gone
            pass

    threading.Thread(target=stop, name=f"saber-stop-{worker}", daemon=True).start()
