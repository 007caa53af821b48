"""The Dask running backend: one task per work unit on a Dask cluster (``pip install
"saber-ale[dask]"``).

Records stream back as Dask events while a unit runs and again with its result
(duplicates are dropped by the caller), so none is lost if an event is. Before the first
unit, every connected worker checks that it can load the policy (one clear error instead
of a failure per unit). TLS: a ``tls://`` address with a ``distributed.Security`` (or
Dask's ``distributed.comm.tls`` configuration). A unit that sends nothing for
``unit_timeout`` seconds is reported as a ``timeout`` failure, and its Dask worker is
restarted through its nanny.
"""

from __future__ import annotations

import contextlib
import os
import queue
import time
import uuid
from collections.abc import Iterator
from typing import Any

from saber.harness.backend_base import DASK_EXTRA_HINT, BackendError, timeout_message
from saber.harness.policies import PolicyError, resolve_spec
from saber.harness.work import (
    EpisodeDone,
    Event,
    FramesPlayed,
    Job,
    UnitFailed,
    UnitStarted,
    WorkUnit,
)

__all__ = ["DaskBackend"]


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
            message = {"unit_id": unit.unit_id, "record": event.record, "replay": event.replay}
            worker.log_event(topic, message)
        elif isinstance(event, FramesPlayed):
            worker.log_event(topic, {"unit_id": unit.unit_id, "frames": event.frames})
            continue
        events.append(event)
    return events


async def _exit_worker_process() -> None:
    """Run on a Dask worker whose task hangs: end its process at once (a coroutine, so
    that the scheduler does not wait for an answer that cannot come)."""

    os._exit(1)


def _dask_check_policy(job: Job) -> None:
    """Run on every Dask worker before the first unit: the job arrived (so the policy
    unpickles there) and a spec's module imports there."""
    if isinstance(job.policy, str):
        resolve_spec(job.policy)


def _security(security: Any) -> Any:
    """A ``distributed.Security`` from one, or from a dict of its keyword arguments."""
    if security is None or not isinstance(security, dict):
        return security
    from distributed import Security

    return Security(require_encryption=True, **security)


class DaskBackend:
    """One Dask task per unit on the scheduler at ``address`` (a local cluster if None).

    Args:
        job: the run's policy and settings; sent with each unit.
        address: scheduler address (``tcp://host:8786``, ``tls://host:8786``), or None to
            start a ``LocalCluster`` of ``workers`` single-threaded worker processes.
        workers: worker processes of the local cluster (ignored with an address).
        timeout: seconds to wait for the scheduler.
        unit_timeout: seconds without a message from a started unit before its worker is
            restarted (None: no deadline).
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
        try:
            from distributed import Client, LocalCluster
        except ImportError as error:
            raise BackendError(
                f"The dask backend needs Dask's distributed scheduler: {DASK_EXTRA_HINT}"
            ) from error
        security = _security(security)
        self.unit_timeout = unit_timeout
        self._cluster = None
        if address is None:
            self._cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                **({} if security is None else {"security": security}),
            )
        try:
            self.client = Client(
                address or self._cluster,
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
        self._futures: dict[int, Any] = {}
        self._running: dict[int, tuple[str, float]] = {}  # unit -> (worker, last message)

    def _check_workers(self, job: Job) -> None:
        """One clear error, before any unit runs, if a worker cannot load the policy."""
        try:
            results = self.client.run(_dask_check_policy, job, on_error="return")
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
            yield from self._stop_hung_units()
            return
        while True:
            yield from self._translate(kind, payload)
            try:
                kind, payload = self._queue.get_nowait()
            except queue.Empty:
                break
        yield from self._stop_hung_units()

    def _translate(self, kind: str, payload: Any) -> Iterator[Event]:
        if kind == "event":
            _, message = payload  # (timestamp, message)
            unit_id = message["unit_id"]
            if unit_id in self._futures:
                worker = message.get("started") or self._running.get(unit_id, ("", 0.0))[0]
                self._running[unit_id] = (worker, time.monotonic())
            if "record" in message:
                yield EpisodeDone(unit_id, message["record"], message.get("replay"))
            elif "frames" in message:
                yield FramesPlayed(unit_id, message["frames"])
            return
        self._running.pop(payload, None)
        future = self._futures.pop(payload, None)
        if future is None or future.status == "cancelled":
            return
        if future.status == "finished":
            yield from future.result()
            return
        error = future.exception()
        yield UnitFailed(payload, "worker", f"{type(error).__name__}: {error}")

    def _stop_hung_units(self) -> Iterator[Event]:
        if self.unit_timeout is None:
            return
        now = time.monotonic()
        hung = [
            (unit_id, worker)
            for unit_id, (worker, last) in self._running.items()
            if now - last > self.unit_timeout
        ]
        for unit_id, worker in hung:
            del self._running[unit_id]
            future = self._futures.pop(unit_id, None)
            if future is not None:
                self.client.cancel([future], force=True)
            # A thread cannot be stopped: its worker process exits, and its nanny starts a
            # new one (without a nanny, the worker is gone).
            with contextlib.suppress(Exception):
                self.client.run(_exit_worker_process, workers=[worker], wait=False)
            yield UnitFailed(unit_id, "timeout", timeout_message(self.unit_timeout))

    def close(self) -> None:
        futures = list(getattr(self, "_futures", {}).values())
        self._futures = {}
        try:
            if futures:
                self.client.cancel(futures, force=True)
            if hasattr(self, "_topic"):
                self.client.unsubscribe_topic(self._topic)
        finally:
            self.client.close()
            if self._cluster is not None:
                self._cluster.close()
