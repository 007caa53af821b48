"""The Dask executor: one task per work unit on a Dask cluster (``pip install
"saber-ale[dask]"``). Started by :mod:`saber.harness.dask_start`, its deadlines kept by
:mod:`saber.harness.dask_deadlines`, its faults named by :mod:`saber.harness.dask_faults`.
What each fault does to a run (a dead worker, a lost scheduler): docs/harness.md, "Dask
clusters".
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import pickle
import queue
import time
import uuid
from collections.abc import Iterator
from typing import Any

from saber.errors import BackendError
from saber.harness.dask_deadlines import UnitDeadlines
from saber.harness.dask_faults import (
    DaskClientLogs,
    killed_worker_reason,
    scheduler_lost_message,
)
from saber.harness.work import (
    EpisodeDone,
    Event,
    FramesPlayed,
    Job,
    UnitFailed,
    UnitStarted,
    WorkUnit,
)

# Seconds beyond --dask-timeout that the client may stay "connecting" before the run ends
# anyway: Dask closes the client after its own reconnect attempts of that length.
_RECONNECT_MARGIN = 5.0


def _dask_run_unit(unit: WorkUnit, job: Job, topic: str) -> list[Event]:
    """A Dask task: run a unit, streaming records as events; return every message."""
    from distributed import get_worker

    from saber.harness.runner import execute_unit

    worker = get_worker()
    events: list[Event] = []
    # One task per Dask thread: one emulation thread each.
    for event in execute_unit(unit, job, num_threads=1, worker=worker.address):
        if isinstance(event, UnitStarted):
            worker.log_event(topic, {"unit_id": unit.unit_id, "started": worker.address})
            continue
        if isinstance(event, EpisodeDone):
            # An event's message must be msgpack's: the typed line travels pickled.
            message = {"unit_id": unit.unit_id, "done": pickle.dumps(event)}
            worker.log_event(topic, message)
        elif isinstance(event, FramesPlayed):
            worker.log_event(topic, {"unit_id": unit.unit_id, "frames": event.frames})
            continue
        events.append(event)
    return events


_CONNECTION_LOST = "scheduler-connection-lost"  # Dask's reason for the futures it cancels


def _cancelled_for(future: Any) -> str | None:
    """Why Dask cancelled ``future`` (its ``FutureCancelledError``'s reason), if it says."""
    try:
        # A cancelled future answers at once; not 0 s, which asyncio.wait_for gives up on
        # before it looks at the answer.
        future.result(timeout=1)
    except concurrent.futures.CancelledError as error:
        return getattr(error, "reason", None)
    except Exception:
        pass
    return None


class DaskExecutor:
    """One Dask task per unit on a connected client (:func:`saber.harness.dask_start.start_dask`
    connects it and checks the workers first).

    Args:
        client: a ``distributed.Client`` of the scheduler.
        cluster: the local cluster started for the run, or None (closed with the client).
        job: the run's policy and settings; sent with each unit, not scattered: a worker
            stopped at the unit deadline would take scattered data with it.
        timeout: ``--dask-timeout``: seconds Dask tries to reconnect to a lost scheduler.
        unit_timeout: the unit deadline (:mod:`saber.harness.dask_deadlines`; None: none).
    """

    def __init__(
        self, client: Any, cluster: Any, job: Job, timeout: float, unit_timeout: float | None
    ) -> None:
        self.client = client
        self.timeout = timeout
        self.address = str(client.scheduler.address)
        self._cluster = cluster
        self._job = job
        self._logs = DaskClientLogs()
        self._futures: dict[int, Any] = {}
        self._unfetched: dict[int, Any] = {}  # finished units whose fetch the scheduler cut
        # Dask cancelled this client's futures: it lost the scheduler (and may reconnect,
        # to a scheduler restarted at the same address that knows none of them).
        self._connection_lost = False
        self._lost_since: float | None = None  # when the run saw the scheduler lost
        self._deadlines = UnitDeadlines(client, self._futures, unit_timeout, timeout, self.address)
        self._queue: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._topic = f"saber-{uuid.uuid4().hex}"
        client.subscribe_topic(self._topic, lambda event: self._queue.put(("event", event)))

    def check_policy(self) -> None:
        """Nothing more: every worker built the policy as the executor started."""

    def submit(self, unit: WorkUnit) -> None:
        if self._connection_lost or self.client.status != "running":
            return  # the run ends (_check_scheduler); a resume plays the unit's episodes
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
            yield from self._after_messages()
            return
        while True:
            yield from self._translate(kind, payload)
            try:
                kind, payload = self._queue.get_nowait()
            except queue.Empty:
                break
        yield from self._after_messages()

    def _after_messages(self) -> Iterator[Event]:
        """Check the scheduler (raise if it is gone), fetch the finished units that a
        scheduler's hiccup left unfetched, then check the unit deadlines."""
        self._check_scheduler()
        if self._unfetched and self.client.status == "running":
            for unit_id, future in list(self._unfetched.items()):
                del self._unfetched[unit_id]
                yield from self._fetch(unit_id, future)
        yield from self._deadlines.check(self._connection_lost)

    def _check_scheduler(self) -> None:
        """Raise :class:`BackendError` once the scheduler is lost for good: Dask gave up
        reconnecting, or reconnected to a scheduler restarted at the same address, which
        knows none of the run's units (and has none of its workers: Dask closes a worker
        whose scheduler is gone)."""
        status = self.client.status
        if status == "running" and not self._connection_lost:
            return
        now = time.monotonic()
        if self._lost_since is None:
            self._lost_since = now
            self._connection_lost = True
            self._logs.quiet()  # the run's own line says what Dask's would
        if status == "running":
            raise BackendError(scheduler_lost_message(self.address, None))
        if status == "connecting" and now - self._lost_since < self.timeout + _RECONNECT_MARGIN:
            return  # Dask is still trying; it gives up after `timeout` seconds
        raise BackendError(scheduler_lost_message(self.address, self.timeout))

    def _translate(self, kind: str, payload: Any) -> Iterator[Event]:
        if kind == "event":
            _, message = payload  # (timestamp, message)
            unit_id = message["unit_id"]
            # The scheduler names the worker of every event.
            self._deadlines.message(unit_id, message.get("started"), message.get("worker"))
            if "done" in message:
                yield pickle.loads(message["done"])  # from the run's own workers
            elif "frames" in message:
                yield FramesPlayed(unit_id, message["frames"])
            return
        unit_id = payload
        self._deadlines.forget(unit_id)
        future = self._futures.pop(unit_id, None)
        if future is None:  # cancelled here (its deadline), or already reported
            return
        if future.status == "cancelled":
            yield from self._cancelled(unit_id, future)
            return
        if future.status == "finished":
            yield from self._fetch(unit_id, future)
            return
        yield UnitFailed(unit_id, "worker", self._failure_reason(future.exception()))

    def _cancelled(self, unit_id: int, future: Any) -> Iterator[Event]:
        """A unit that Dask cancelled: the run ends if the connection was lost (nothing of
        the unit failed), else the unit failed."""
        if _cancelled_for(future) == _CONNECTION_LOST or self.client.status != "running":
            self._connection_lost = True
            return
        yield UnitFailed(
            unit_id,
            "worker",
            "the Dask scheduler cancelled the unit (another client cancelled it, or "
            "restarted the cluster)",
        )

    def _fetch(self, unit_id: int, future: Any) -> Iterator[Event]:
        """A finished unit's events, fetched from its worker through the scheduler. A fetch
        that a lost scheduler cuts short (Dask's ``CommClosedError`` is an ``OSError``) is
        not the unit's failure, nor a file's: the unit waits unfetched, fetched again while
        the client is connected (:meth:`_after_messages`); if the scheduler is gone for
        good the run ends there (:meth:`_check_scheduler`), and a resume plays the
        episodes it did not record. A unit that Dask cancelled meanwhile (it cancels
        every future of a lost connection) is a cancelled unit."""
        try:
            events = future.result(timeout=self.timeout + _RECONNECT_MARGIN)
        except concurrent.futures.CancelledError:
            yield from self._cancelled(unit_id, future)
            return
        except (OSError, TimeoutError, asyncio.TimeoutError):
            self._unfetched[unit_id] = future
            return
        yield from events

    def _failure_reason(self, error: BaseException) -> str:
        """The same reason for the same cause (no task key or worker address in it)."""
        from distributed import KilledWorker

        if isinstance(error, KilledWorker):
            return killed_worker_reason(self.client, error)
        return f"{type(error).__name__}: {error}"

    def close(self) -> None:
        """Cancel what runs and disconnect; never raises (it runs on the way out of an
        error or Ctrl-C, which it must not replace), never waits on a lost scheduler."""
        futures = [*self._futures.values(), *self._unfetched.values()]
        self._futures.clear()
        self._unfetched.clear()
        if self.client.status == "running":
            with contextlib.suppress(Exception):
                if futures:
                    self.client.cancel(futures, force=True)
                self.client.unsubscribe_topic(self._topic)
        self.disconnect(self.client, self._cluster, self.timeout)

    @staticmethod
    def disconnect(client: Any, cluster: Any, timeout: float) -> None:
        """Close ``client`` (and ``cluster``, if any) without raising or waiting on a lost
        scheduler. Closing a client that is reconnecting cancels its attempts, which Dask
        logs as an error with a traceback: the run has said what happened in its own line."""
        logs = DaskClientLogs()
        logs.quiet()
        try:
            with contextlib.suppress(Exception):
                client.close(timeout=timeout)
        finally:
            logs.restore()
        if cluster is not None:
            with contextlib.suppress(Exception):
                cluster.close()
