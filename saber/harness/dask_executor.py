"""The Dask executor: one task per work unit on a Dask cluster (``pip install
"saber-ale[dask]"``).

Records stream back as Dask events while a unit runs and again with its result
(duplicates are dropped by the caller), so none is lost if an event is. Before the first
unit, every connected worker checks that it can load the policy (one clear error instead
of a failure per unit). TLS: a ``tls://`` address with a ``distributed.Security`` (or
Dask's ``distributed.comm.tls`` configuration).

Faults (:mod:`saber.harness.dask_faults` names them):

* A unit that sends nothing for ``unit_timeout`` seconds is reported as a ``timeout``
  failure, and its Dask worker is killed through its nanny (which starts a new one),
  from a thread of its own: a stopped worker never holds up the others' episodes. A unit
  that the scheduler gave to a worker which says nothing (no message of any unit, no
  heartbeat to the scheduler) counts the same deadline from the moment it was seen
  there: a worker stopped while idle is handed units like any other.
* The policy check before the first unit waits ``unit_timeout`` seconds at the most for
  each worker; one that does not answer is left to the unit deadline. The check is a task
  on the worker's thread, not a call on its event loop: a worker slow to build the policy
  (a large model, a machine under load) keeps sending heartbeats, and its units wait
  behind the check instead of being failed.
* Workers that die running a unit (Dask's ``KilledWorker``) fail it with a reason that
  names the signal and nothing that changes from unit to unit (no task key, no address).
* A worker stopped at the unit deadline is replaced by its nanny. One that is not (a
  worker started with ``--no-nanny``, or a nanny that closed while restarting it) leaves
  the units waiting for a worker that never comes: once the run has stopped a worker and
  the scheduler then has none at all for ``unit_timeout + timeout`` seconds while units
  wait, the run ends (:class:`BackendError`), and the same command resumes it on a
  cluster with workers. (A cluster without workers before the run stopped one, one that
  scales up on demand say, is waited for.)
* A lost scheduler ends the run (:class:`BackendError`) once Dask has tried to reconnect
  for ``timeout`` seconds, or as soon as it reconnects to a scheduler restarted at the
  same address (which knows none of the run's units); units in flight are not failed
  (nothing of theirs failed), and the same command on a cluster that works resumes them.
* :meth:`DaskExecutor.close` never raises and never waits on a scheduler that is gone.
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

from saber.errors import BackendError, PolicyError
from saber.harness.dask_faults import (
    DaskClientLogs,
    killed_worker_reason,
    no_worker_message,
    scheduler_lost_message,
    stop_worker_in_background,
)
from saber.harness.executor_base import DASK_EXTRA_HINT, timeout_message
from saber.harness.policies import policy_of
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
# Seconds between two questions to the scheduler about which worker holds the units that
# have not started (only while some have not, and only with a unit deadline).
_ASSIGNMENT_POLL = 1.0


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


def _dask_check_policy(job: Job) -> None:
    """Run on every Dask worker before the first unit: the job arrived (so the policy
    unpickles there), a spec's module imports there, and the policy builds (kept for the
    units: built once per worker process, as it would be at the first unit)."""
    policy_of(job.policy)


_CONNECTION_LOST = "scheduler-connection-lost"  # Dask's reason for the futures it cancels


def _cancelled_for(future: Any) -> str | None:
    """Why Dask cancelled ``future`` (its FutureCancelledError's reason), if it says."""
    return getattr(getattr(getattr(future, "_state", None), "exception", None), "reason", None)


def _security(security: Any) -> Any:
    """A ``distributed.Security`` from one, or from a dict of its keyword arguments."""
    if security is None or not isinstance(security, dict):
        return security
    from distributed import Security

    return Security(require_encryption=True, **security)


def _connect(address: str | None, workers: int, timeout: float, security: Any) -> tuple[Any, Any]:
    """(the local cluster started here, or None; a client of the scheduler at ``address``,
    or of that cluster). ``security``: a ``distributed.Security``, a dict of its
    arguments, or None (:func:`_security`).

    Raises:
        BackendError: Dask is not installed, or the scheduler cannot be reached within
            ``timeout`` seconds.
    """
    try:
        from distributed import Client, LocalCluster
    except ImportError as error:
        raise BackendError(
            f"The dask backend needs Dask's distributed scheduler: {DASK_EXTRA_HINT}"
        ) from error
    security = _security(security)
    cluster = None
    if address is None:
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            # No dashboard; the scheduler's HTTP server (its health routes) on a free
            # port: its default, 8787, is any other Dask cluster's on the machine, and
            # Dask says "Perhaps you already have a cluster running?" when it is taken.
            scheduler_kwargs={"dashboard_address": ":0"},
            **({} if security is None else {"security": security}),
        )
    try:
        client = Client(
            address or cluster,
            timeout=timeout,
            **({} if security is None else {"security": security}),
        )
    except (
        OSError,
        TimeoutError,
        ValueError,
        TypeError,
    ) as error:  # TypeError: TLS, no certificates
        tls_hint = (
            " A tls:// scheduler needs the client's certificates: --tls-ca-file, "
            "--tls-cert and --tls-key (or Dask's distributed.comm.tls configuration)."
            if str(address).startswith("tls://")
            else ""
        )
        raise BackendError(
            f"Cannot reach the Dask scheduler at {address} within {timeout:g} s "
            f"({type(error).__name__}: {error}). Is the scheduler running, and is the "
            f"address right (tcp://host:8786)?{tls_hint}"
        ) from None
    return cluster, client


class DaskExecutor:
    """One Dask task per unit on the scheduler at ``address`` (a local cluster if None).

    Args:
        job: the run's policy and settings; sent with each unit.
        address: scheduler address (``tcp://host:8786``, ``tls://host:8786``), or None to
            start a ``LocalCluster`` of ``workers`` single-threaded worker processes.
        workers: worker processes of the local cluster (ignored with an address).
        timeout: seconds to wait for the scheduler (and, beyond ``unit_timeout``, for a
            worker in place of one that the run stopped).
        unit_timeout: seconds without a message from a started unit, or from the worker
            holding a unit not started, before the unit fails and its worker is restarted
            (None: no deadline).
        security: a ``distributed.Security``, or a dict of its arguments (``tls_ca_file``,
            ``tls_client_cert``, ``tls_client_key``: file paths or PEM text); None uses
            Dask's configuration (``distributed.comm.tls.*``).

    Raises:
        BackendError: Dask is not installed, or the scheduler cannot be reached.
        PolicyError: a worker cannot load the policy (its module is not installed there).
    """

    def __init__(
        self,
        job: Job,
        address: str | None,
        workers: int,
        timeout: float = 10.0,
        unit_timeout: float | None = None,
        security: Any = None,
    ) -> None:
        self.unit_timeout = unit_timeout
        self.timeout = timeout
        self._cluster, self.client = _connect(address, workers, timeout, security)
        # What close() needs, before anything that can fail and call it.
        self._logs = DaskClientLogs()
        self._futures: dict[int, Any] = {}
        self._unfetched: dict[int, Any] = {}  # finished units whose fetch the scheduler cut
        try:
            self._check_workers(job)
        except BaseException:
            self.close()
            raise
        self._queue: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._topic = f"saber-{uuid.uuid4().hex}"
        self.client.subscribe_topic(self._topic, lambda event: self._queue.put(("event", event)))
        # Sent with each task, not scattered: a worker stopped at the unit deadline would
        # take scattered data with it. Large models belong in a module:attr factory.
        self._job = job
        self.address = str(self.client.scheduler.address)
        self._running: dict[int, tuple[str, float]] = {}  # unit -> (worker, last message)
        # Dask cancelled this client's futures: it lost the scheduler (and may reconnect,
        # to a scheduler restarted at the same address that knows none of them).
        self._connection_lost = False
        self._lost_since: float | None = None  # when the run saw the scheduler lost
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

    def check_policy(self) -> None:
        """Nothing more: every worker built the policy as the executor started."""

    def _check_workers(self, job: Job) -> None:
        """One clear error, before any unit runs, if a worker cannot load the policy."""
        try:
            results = self._policy_verdicts(job)
        except Exception as error:  # the job itself could not be sent
            raise PolicyError(
                f"The policy cannot be sent to the Dask workers ({type(error).__name__}: "
                f"{error}). Pass it as 'module:attr' with that module installed on every worker."
            ) from None
        broken = {
            worker: result for worker, result in results.items() if isinstance(result, Exception)
        }
        if broken:
            worker, error = sorted(broken.items())[0]
            raise PolicyError(
                f"{len(broken)} of {len(results)} Dask workers cannot load the policy; "
                f"{worker}: {type(error).__name__}: {error}. Every worker needs saber and the "
                "agent's module importable (install it there, or client.upload_file)."
            )

    def _policy_verdicts(self, job: Job) -> dict[str, Any]:
        """Each worker's answer to :func:`_dask_check_policy`: None, or the exception it
        raised; a worker that gives none within ``unit_timeout`` seconds (stopped, cut
        off, or still building) is left out, and left to the unit deadline.

        With a deadline, one task per worker, held to it, rather than ``Client.run``:
        ``run`` calls the function on the worker's event loop, which sends no heartbeat
        until it returns, so a worker that took two deadlines to build the policy was
        taken for a stopped one. A check that has not answered is cancelled here; one
        that runs goes on to its end on its thread (the units wait behind it), and the
        policy it builds is kept for them. Without a deadline no worker is ever stopped,
        and ``run`` answers for a worker that died building the policy (a task held to
        it would wait for it forever)."""
        if self.unit_timeout is None:
            return self.client.run(_dask_check_policy, job, on_error="return")
        token = uuid.uuid4().hex[:8]
        checks = {
            worker: self.client.submit(
                _dask_check_policy,
                job,
                workers=[worker],
                allow_other_workers=False,
                pure=False,
                key=f"saber-policy-check-{token}-{index}",
            )
            for index, worker in enumerate(self.client.nthreads())
        }
        deadline = time.monotonic() + self.unit_timeout
        for check in checks.values():
            left = deadline - time.monotonic()
            if left <= 0:
                break
            with contextlib.suppress(Exception):  # its error, its deadline: read below
                check.result(timeout=left)
        # Read from each check's state, not from a wait that timed out: a check that has
        # finished by now is answered, even if an earlier one spent the deadline.
        verdicts: dict[str, Any] = {}
        late = []
        for worker, check in checks.items():
            if check.status == "finished":
                verdicts[worker] = None
            elif check.status == "error":
                verdicts[worker] = check.exception()
            elif check.status == "pending":
                late.append(check)
            # cancelled: a lost scheduler, and the run ends at its first unit
            # (_check_scheduler)
        if late:
            with contextlib.suppress(Exception):
                self.client.cancel(late, force=True)
        return verdicts

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
        yield from self._stop_hung_units()

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
            if unit_id in self._futures:
                worker = message.get("started") or self._running.get(unit_id, ("", 0.0))[0]
                self._running[unit_id] = (worker, time.monotonic())
                self._assigned.pop(unit_id, None)
            if message.get("worker"):  # the scheduler names the worker of every event
                self._heard[message["worker"]] = time.monotonic()
            if "done" in message:
                yield pickle.loads(message["done"])  # from the run's own workers
            elif "frames" in message:
                yield FramesPlayed(unit_id, message["frames"])
            return
        unit_id = payload
        self._running.pop(unit_id, None)
        self._assigned.pop(unit_id, None)
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

    def _stop_hung_units(self) -> Iterator[Event]:
        """Fail the units past their deadline, and stop their workers: first the units
        that started and went quiet, then those given to a worker that never started
        them. A stopped worker's other units get a deadline more (Dask moves them
        elsewhere once the worker is gone: they are not failed)."""
        if self.unit_timeout is None:
            return
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

    def close(self) -> None:
        """Cancel what runs and disconnect; never raises (it runs on the way out of an
        error or Ctrl-C, which it must not replace), never waits on a lost scheduler."""
        futures = [*self._futures.values(), *self._unfetched.values()]
        self._futures = {}
        self._unfetched = {}
        if self.client.status == "running":
            with contextlib.suppress(Exception):
                if futures:
                    self.client.cancel(futures, force=True)
                if hasattr(self, "_topic"):
                    self.client.unsubscribe_topic(self._topic)
        # Closing a client that is reconnecting cancels its attempts, which Dask logs as
        # an error with a traceback: the run has said what happened in its own line.
        self._logs.quiet()
        try:
            with contextlib.suppress(Exception):
                self.client.close(timeout=self.timeout)
        finally:
            self._logs.restore()
        if self._cluster is not None:
            with contextlib.suppress(Exception):
                self._cluster.close()
