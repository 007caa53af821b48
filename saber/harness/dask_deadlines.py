"""The unit deadline on a Dask cluster (``--unit-timeout``), which Dask has not: units
gone quiet, or waiting on a worker that says nothing, fail and their workers are restarted.
The rules, and the scheduler's own worker TTL beside them: docs/harness.md, "Dask
clusters".
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from typing import Any

from saber.errors import BackendError
from saber.harness.dask_faults import no_worker_message, stop_worker_in_background
from saber.harness.executor_base import timeout_message
from saber.harness.work import Event, UnitFailed

# Seconds between two questions to the scheduler about which worker holds the units that
# have not started (only while some have not, and only with a unit deadline).
_ASSIGNMENT_POLL = 1.0


class UnitDeadlines:
    """The deadlines of a :class:`~saber.harness.dask_executor.DaskExecutor`'s units.

    Args:
        client: the executor's ``distributed.Client``.
        futures: the executor's units in flight (unit id -> future), read and pruned here.
        unit_timeout: seconds (None: no deadline).
        timeout: ``--dask-timeout``: each question to the scheduler waits that long at most.
        address: the scheduler's, for the message of a cluster left without a worker.
    """

    def __init__(
        self,
        client: Any,
        futures: dict[int, Any],
        unit_timeout: float | None,
        timeout: float,
        address: str,
    ) -> None:
        self.client = client
        self.unit_timeout = unit_timeout
        self.timeout = timeout
        self.address = address
        self._futures = futures
        self._connection_lost = False
        self._running: dict[int, tuple[str, float]] = {}  # unit -> (worker, last message)
        # Units not started yet that the scheduler gave to a worker: unit -> (worker, since).
        self._assigned: dict[int, tuple[str, float]] = {}
        # Worker -> when it was last heard from: a message of a unit, a heartbeat that the
        # scheduler saw, or its stop. A unit that it holds and has not started waits
        # behind another, or for the worker to take it: not hung.
        self._heard: dict[str, float] = {}
        self._heartbeats: dict[str, float | None] = {}  # worker -> last heartbeat's time
        # Whether the run stopped a worker (at a unit deadline), and since when the
        # scheduler has said it has no worker at all while units wait (None: it has one).
        self._stopped_a_worker = False
        self._workerless_since: float | None = None
        self._next_poll = 0.0
        self._asking = False  # a question to the scheduler is on its way (_ask_scheduler)
        self._answer: tuple[float, dict[str, Any], dict[str, Any]] | None = None

    def message(self, unit_id: int, started_on: str | None, sender: str | None) -> None:
        """A unit's message (``started_on``: the worker, for its start), sent by ``sender``
        (the scheduler names the worker of every event)."""
        if unit_id in self._futures:
            worker = started_on or self._running.get(unit_id, ("", 0.0))[0]
            self._running[unit_id] = (worker, time.monotonic())
            self._assigned.pop(unit_id, None)
        if sender:
            self._heard[sender] = time.monotonic()

    def forget(self, unit_id: int) -> None:
        """The unit ended (its future is done): no deadline for it."""
        self._running.pop(unit_id, None)
        self._assigned.pop(unit_id, None)

    def check(self, connection_lost: bool) -> Iterator[Event]:
        """Fail the units past their deadline, and stop their workers: first the units
        that started and went quiet, then those given to a worker that never started
        them. A stopped worker's other units get a deadline more (Dask moves them
        elsewhere once the worker is gone: they are not failed)."""
        if self.unit_timeout is None:
            return
        self._connection_lost = connection_lost
        now = time.monotonic()
        self._track_assignments(now)
        self._check_workers_left(now)
        for unit_id, (worker, last) in list(self._running.items()):
            if now - last > self.unit_timeout:
                del self._running[unit_id]
                yield from self._stop(unit_id, worker, now)
        for unit_id, (worker, since) in list(self._assigned.items()):
            if now - max(since, self._heard.get(worker, since)) > self.unit_timeout:
                del self._assigned[unit_id]
                yield from self._stop(unit_id, worker, now)

    def _stop(self, unit_id: int, worker: str, now: float) -> Iterator[Event]:
        """Fail a unit at its deadline: cancel its task, stop its worker (once)."""
        future = self._futures.pop(unit_id, None)
        if future is not None:
            # The scheduler answers a cancel itself; it does not wait on the worker.
            with contextlib.suppress(Exception):
                self.client.cancel([future], force=True)
        # A thread cannot be stopped: its worker process is killed, and its nanny
        # starts a new one (without a nanny, the worker is gone). Once: a worker stopped
        # at this `now` is already on its way out.
        if worker and self._heard.get(worker) != now:
            stop_worker_in_background(self.client, worker)
            self._heard[worker] = now
            self._stopped_a_worker = True
        yield UnitFailed(unit_id, "timeout", timeout_message(self.unit_timeout or 0.0))

    def _ask_scheduler(self) -> None:
        """Ask the scheduler which worker holds each task and when each worker last sent a
        heartbeat, on the client's event loop: the run loop never waits for the answer
        (:attr:`_answer`, read by the next :meth:`_track_assignments`), and one question
        at a time, each bounded by ``timeout``."""
        if self._asking or self.client.status != "running":
            return
        self._asking = True
        scheduler = self.client.scheduler

        async def ask() -> None:
            try:
                processing = await asyncio.wait_for(
                    scheduler.processing(workers=None), self.timeout
                )
                identity = await asyncio.wait_for(scheduler.identity(), self.timeout)
                self._answer = (time.monotonic(), processing, identity)
            except Exception:  # a scheduler that does not answer: _check_scheduler decides
                pass
            finally:
                self._asking = False

        try:
            self.client.loop.add_callback(ask)
        except Exception:  # a closed loop
            self._asking = False

    def _track_assignments(self, now: float) -> None:
        """From the scheduler's latest answer (asked at most every
        :data:`_ASSIGNMENT_POLL` seconds, never while it is lost): which worker holds each
        unit that has not started, and which workers sent a heartbeat since the last
        answer. The unit's deadline counts from when it is first seen on that worker, or
        when the worker was last heard."""
        waiting = {
            future.key: unit_id
            for unit_id, future in self._futures.items()
            if unit_id not in self._running
        }
        if not waiting:
            self._assigned.clear()
            self._workerless_since = None
            return
        if now >= self._next_poll and not self._connection_lost:
            self._next_poll = now + _ASSIGNMENT_POLL
            self._ask_scheduler()
        answer, self._answer = self._answer, None
        if answer is None:
            return
        now, processing, identity = answer
        if identity.get("workers"):
            self._workerless_since = None
        elif self._workerless_since is None:
            self._workerless_since = now
        for worker, about in identity.get("workers", {}).items():
            # Compared with its last value, not with this clock: the scheduler's may differ.
            if about.get("last_seen") != self._heartbeats.get(worker):
                self._heartbeats[worker] = about.get("last_seen")
                self._heard[worker] = now
        assigned: dict[int, tuple[str, float]] = {}
        for worker, keys in processing.items():
            for key in keys:
                unit_id = waiting.get(key)
                if unit_id is not None:
                    seen = self._assigned.get(unit_id)
                    assigned[unit_id] = seen if seen and seen[0] == worker else (worker, now)
        self._assigned = assigned

    def _check_workers_left(self, now: float) -> None:
        """Raise :class:`BackendError` once the units wait on a cluster left without a
        worker by the run's own stops: no worker for ``unit_timeout + timeout`` seconds
        (a nanny starts a new one within seconds), after the run stopped one."""
        if not self._stopped_a_worker or self._workerless_since is None:
            return
        wait = (self.unit_timeout or 0.0) + self.timeout
        if now - self._workerless_since > wait:
            raise BackendError(no_worker_message(self.address, wait))
