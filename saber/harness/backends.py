"""Where work units run: this process, local worker processes, or a Dask cluster.

Every backend takes units with :meth:`~Backend.submit` and hands back the workers'
messages (:mod:`saber.harness.work`) from :meth:`~Backend.events` as they arrive, so
records are stored as their episodes finish. Retries and storage are not their business
(see :mod:`saber.harness.evaluate`); reporting a lost worker is.

* :class:`InlineBackend` (``workers=0``): runs units here, one after the other. For
  debugging and for policies that cannot be pickled.
* :class:`LocalBackend`: ``workers`` processes (``spawn``: a clean interpreter each, no
  inherited threads), each running one unit at a time. Each worker has its own pipe; a
  worker that dies is reported as a failure of its unit and replaced. Workers ignore
  Ctrl-C: the main process decides how to stop.
* :class:`DaskBackend`: one task per unit on a Dask cluster (``pip install
  "saber-ale[dask]"``). Records stream back as Dask events while a unit runs and again
  with its result (duplicates are dropped by the caller), so none is lost if an event is.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import queue
import signal
import uuid
from collections import deque
from collections.abc import Iterator
from typing import Any, Protocol

from saber.errors import SaberError
from saber.harness.runner import execute_unit
from saber.harness.work import (
    EpisodeDone,
    Event,
    FramesPlayed,
    Job,
    UnitFailed,
    UnitFinished,
    WorkUnit,
)

__all__ = ["Backend", "BackendError", "DaskBackend", "InlineBackend", "LocalBackend"]

DASK_EXTRA_HINT = 'pip install "saber-ale[dask]"'


class BackendError(SaberError):
    """A backend that cannot start: Dask missing, a scheduler that cannot be reached."""


class Backend(Protocol):
    """Runs work units and reports what happens to them."""

    def submit(self, unit: WorkUnit) -> None:
        """Queue a unit; it runs when a worker is free."""

    def events(self, timeout: float) -> Iterator[Event]:
        """Messages that arrive within about ``timeout`` seconds (0: only those waiting)."""

    def close(self) -> None:
        """Stop every worker now; units still running are abandoned."""


class InlineBackend:
    """Runs each unit in this process when :meth:`events` is asked for messages."""

    def __init__(self, job: Job) -> None:
        self.job = job
        self._pending: deque[WorkUnit] = deque()

    def submit(self, unit: WorkUnit) -> None:
        self._pending.append(unit)

    def events(self, timeout: float) -> Iterator[Event]:
        if self._pending:
            yield from execute_unit(self._pending.popleft(), self.job)

    def close(self) -> None:
        self._pending.clear()


def _worker_main(connection: multiprocessing.connection.Connection, job: Job) -> None:
    """A local worker: run the units it is sent until it is sent ``None``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process handles Ctrl-C
    while True:
        unit = connection.recv()
        if unit is None:
            return
        for event in execute_unit(unit, job):
            connection.send(event)


class _Worker:
    def __init__(self, context: Any, job: Job) -> None:
        self.connection, child = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child, job), daemon=True)
        self.process.start()
        child.close()  # so that the parent sees EOF when the worker dies
        self.unit: WorkUnit | None = None


class LocalBackend:
    """``workers`` local processes, one unit each at a time.

    Args:
        job: the run's policy and settings; pickled once per worker.
        workers: number of processes (one per core is the default of ``evaluate``).
    """

    def __init__(self, job: Job, workers: int) -> None:
        self.job = job
        self._context = multiprocessing.get_context("spawn")
        self._pending: deque[WorkUnit] = deque()
        self._workers = [_Worker(self._context, job) for _ in range(workers)]
        self._deaths_in_a_row = 0  # deaths with no message in between: workers cannot start

    def submit(self, unit: WorkUnit) -> None:
        self._pending.append(unit)
        self._dispatch()

    def _dispatch(self) -> None:
        for worker in self._workers:
            if not self._pending:
                return
            if worker.unit is None:
                worker.unit = self._pending.popleft()
                worker.connection.send(worker.unit)

    def events(self, timeout: float) -> Iterator[Event]:
        handles = {worker.connection: worker for worker in self._workers}
        handles.update({worker.process.sentinel: worker for worker in self._workers})
        ready = multiprocessing.connection.wait(list(handles), timeout)
        for worker in dict.fromkeys(handles[handle] for handle in ready):
            yield from self._receive(worker)
        self._dispatch()

    def _receive(self, worker: _Worker) -> Iterator[Event]:
        try:
            while worker.connection.poll():
                event = worker.connection.recv()
                if isinstance(event, UnitFinished | UnitFailed):
                    worker.unit = None
                self._deaths_in_a_row = 0
                yield event
        except (EOFError, OSError):
            pass  # the worker is gone: everything it sent has been read
        if not worker.process.is_alive():
            yield from self._replace(worker)

    def _replace(self, worker: _Worker) -> Iterator[Event]:
        exit_code = worker.process.exitcode
        worker.connection.close()
        self._deaths_in_a_row += 1
        if self._deaths_in_a_row > 2 * len(self._workers) + 2:
            raise BackendError(
                f"Worker processes keep dying before they send anything (last exit code "
                f"{exit_code}). A script that calls evaluate must do so under "
                "`if __name__ == '__main__':` (worker processes import it); otherwise run "
                "with workers=0 (--workers 0) to see the error in this process."
            )
        index = self._workers.index(worker)
        self._workers[index] = _Worker(self._context, self.job)
        if worker.unit is not None:
            yield UnitFailed(
                worker.unit.unit_id,
                "worker",
                f"the worker process died (exit code {exit_code}) while running this episode",
            )

    def close(self) -> None:
        for worker in self._workers:
            if worker.process.is_alive():
                worker.process.kill()
        for worker in self._workers:
            worker.process.join(timeout=10)
            worker.connection.close()
        self._workers = []
        self._pending.clear()


def _dask_run_unit(unit: WorkUnit, job: Job, topic: str) -> list[Event]:
    """A Dask task: run a unit, streaming records as events; return every message."""
    from distributed import get_worker

    worker = get_worker()
    events: list[Event] = []
    for event in execute_unit(unit, job, num_threads=1):  # one task per Dask thread
        if isinstance(event, EpisodeDone):
            worker.log_event(topic, {"unit_id": unit.unit_id, "record": event.record})
        elif isinstance(event, FramesPlayed):
            worker.log_event(topic, {"unit_id": unit.unit_id, "frames": event.frames})
            continue
        events.append(event)
    return events


class DaskBackend:
    """One Dask task per unit on the scheduler at ``address`` (a local cluster if None).

    Args:
        job: the run's policy and settings; scattered to the workers once.
        address: scheduler address (``tcp://host:8786``), or None to start a
            ``LocalCluster`` of ``workers`` single-threaded worker processes.
        workers: worker processes of the local cluster (ignored with an address).
        timeout: seconds to wait for the scheduler.

    Raises:
        BackendError: Dask is not installed, or the scheduler cannot be reached.
    """

    def __init__(self, job: Job, address: str | None, workers: int, timeout: float = 10.0) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError as error:
            raise BackendError(
                f"The dask backend needs Dask's distributed scheduler: {DASK_EXTRA_HINT}"
            ) from error
        self._cluster = None
        if address is None:
            self._cluster = LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
            )
        try:
            self.client = Client(address or self._cluster, timeout=timeout)
        except (OSError, TimeoutError) as error:
            raise BackendError(
                f"Cannot reach the Dask scheduler at {address} within {timeout:g} s "
                f"({type(error).__name__}: {error}). Is the scheduler running, and is the "
                "address right (tcp://host:8786)?"
            ) from None
        self._queue: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._topic = f"saber-{uuid.uuid4().hex}"
        self.client.subscribe_topic(self._topic, lambda event: self._queue.put(("event", event)))
        self._job = self.client.scatter(job, broadcast=True, hash=False)
        self._futures: dict[int, Any] = {}

    def submit(self, unit: WorkUnit) -> None:
        future = self.client.submit(
            _dask_run_unit,
            unit,
            self._job,
            self._topic,
            key=f"saber-unit-{unit.unit_id}-{uuid.uuid4().hex[:8]}",
            pure=False,
        )
        self._futures[unit.unit_id] = future
        future.add_done_callback(
            lambda done, unit_id=unit.unit_id: self._queue.put(("done", unit_id))
        )

    def events(self, timeout: float) -> Iterator[Event]:
        try:
            kind, payload = (
                self._queue.get(timeout=timeout) if timeout else self._queue.get_nowait()
            )
        except queue.Empty:
            return
        while True:
            yield from self._translate(kind, payload)
            try:
                kind, payload = self._queue.get_nowait()
            except queue.Empty:
                return

    def _translate(self, kind: str, payload: Any) -> Iterator[Event]:
        if kind == "event":
            _, message = payload  # (timestamp, message)
            if "record" in message:
                yield EpisodeDone(message["unit_id"], message["record"])
            else:
                yield FramesPlayed(message["unit_id"], message["frames"])
            return
        future = self._futures.pop(payload, None)
        if future is None or future.status == "cancelled":
            return
        if future.status == "finished":
            yield from future.result()
            return
        error = future.exception()
        yield UnitFailed(payload, "worker", f"{type(error).__name__}: {error}")

    def close(self) -> None:
        futures = list(self._futures.values())
        self._futures.clear()
        try:
            if futures:
                self.client.cancel(futures, force=True)
            self.client.unsubscribe_topic(self._topic)
        finally:
            self.client.close()
            if self._cluster is not None:
                self._cluster.close()
