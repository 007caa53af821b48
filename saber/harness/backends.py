"""Where work units run: this process, local worker processes, or a Dask cluster.

Every backend takes units with :meth:`~Backend.submit` and hands back the workers'
messages (:mod:`saber.harness.work`) from :meth:`~Backend.events` as they arrive, so
records are stored as their episodes finish. Retries and storage are not their business
(see :mod:`saber.harness.evaluate`); reporting a lost worker is.

* :class:`InlineBackend` (``workers=0``): runs units here, one after the other. For
  debugging and for policies that cannot be pickled.
* :class:`LocalBackend`: ``workers`` processes (``spawn``: a clean interpreter each, no
  inherited threads), each playing one vector env at a time. A worker whose unit has
  started all its episodes is sent the next unit of the same game, which takes the
  rows as they free up (the policy's batch stays full between units); idle workers
  are served first. Each worker has its own pipe; a worker that dies is reported as
  one failure of the units it had started (those it had not are run elsewhere) and
  replaced. Workers ignore Ctrl-C: the main process decides how to stop.
* :class:`DaskBackend`: one task per unit on a Dask cluster (``pip install
  "saber-ale[dask]"``). Records stream back as Dask events while a unit runs and again
  with its result (duplicates are dropped by the caller), so none is lost if an event is.
  Before the first unit, every connected worker checks that it can load the policy (one
  clear error instead of a failure per unit). TLS: a ``tls://`` address with a
  ``distributed.Security`` (or Dask's ``distributed.comm.tls`` configuration).

Unit deadline (``unit_timeout`` seconds): a unit that sends nothing (no frames, no
episode) for that long is stopped and reported as a ``timeout`` failure: the local worker
process is killed and replaced; the Dask worker is restarted through its nanny. The
inline backend cannot stop its own process and has no deadline.
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import multiprocessing.connection
import os
import pickle
import queue
import time
import uuid
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, Union

from saber.errors import SaberError
from saber.harness.child import become_child_process
from saber.harness.policies import PolicyError, resolve_spec
from saber.harness.policy_process import PolicyLink, PolicyProcess, remote_policy
from saber.harness.threads import (
    policy_threads,
    thread_variables,
    usable_cores,
    worker_environment,
)
from saber.harness.work import (
    EpisodeDone,
    Event,
    FailureKind,
    FramesPlayed,
    Job,
    UnitDrained,
    UnitFailed,
    UnitFinished,
    UnitStarted,
    WorkUnit,
)

__all__ = [
    "Backend",
    "BackendError",
    "Dask",
    "DaskBackend",
    "Inline",
    "InlineBackend",
    "LocalBackend",
    "Processes",
    "RunsOn",
    "capped_to_work",
    "workers_line",
]

_POLL_SECONDS = 0.5  # how long LocalBackend.check_spec waits for messages at a time
DASK_EXTRA_HINT = (
    'pip install "saber-ale[dask]"' + """ (or, from a checkout, pip install ".[dask]")"""
)


def timeout_message(seconds: float) -> str:
    """The reason recorded for a unit stopped at its deadline (the same every time, so
    repeated hangs are recognized as one failure)."""
    return (
        f"no frame progress for {seconds:g} s (the unit deadline, --unit-timeout): the "
        "policy or the worker hung, and the worker was stopped"
    )


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
        from saber.harness.runner import execute_unit

        if self._pending:
            yield from execute_unit(self._pending.popleft(), self.job)

    def close(self) -> None:
        from saber.harness.runner import release_envs

        self._pending.clear()
        release_envs()  # the env kept between units: this process goes on without it


@dataclass(frozen=True)
class _SpecVerdict:
    """A local worker's first message for an agent spec: None, or why it cannot load."""

    error: str | None


def _worker_main(
    connection: multiprocessing.connection.Connection,
    job: Job,
    threads: int = 1,
    slot: int = 0,
    link: PolicyLink | None = None,
) -> None:
    """A local worker: run the units it is sent until it is sent ``None``.

    A unit sent while the worker plays another of the same game (the main process sends
    one when that unit has started all its episodes) joins it: its episodes take the
    rows of the vector env as they free up, so the policy's batch stays full.
    """
    become_child_process()
    import cv2  # the frame resize's pool: the worker's share too (saber.harness.threads)

    # The env stack is imported by the workers that play, not by the main process that
    # imports this module to start them (saber.harness.evaluate's imports).
    from saber.harness.runner import execute_unit

    cv2.setNumThreads(threads)
    remote = None
    if link is not None:
        # --policy-process: the policy lives there; its build verdict is this worker's.
        remote, verdict = remote_policy(link, slot)
        connection.send(_SpecVerdict(verdict))
        job = dataclasses.replace(job, policy=remote)
    elif isinstance(job.policy, str):
        # Import the agent's module (PyTorch, say: seconds) now, while the main process
        # probes and plans, not when the first unit arrives; the verdict goes to the main
        # process, which checks a module:attr spec this way (LocalBackend.check_spec).
        try:
            resolve_spec(job.policy)
            connection.send(_SpecVerdict(None))
        except PolicyError as error:
            connection.send(_SpecVerdict(str(error)))
    arrived: deque[WorkUnit | None] = deque()  # received while playing, not yet joined

    def more(game: str) -> WorkUnit | None:
        while connection.poll():  # never blocks
            arrived.append(connection.recv())
        head = arrived[0] if arrived else None
        if head is not None and head.game == game and head.attempt == 0:
            return arrived.popleft()
        return None

    try:
        while True:
            unit = arrived.popleft() if arrived else connection.recv()
            if unit is None:
                return
            for event in execute_unit(unit, job, more=more):
                connection.send(event)
            if remote is not None:
                remote.rest()  # this vector env is done: the policy need not wait for it
    except (EOFError, OSError):
        return  # the main process is gone (killed outright): nothing to report to


class _Worker:
    def __init__(
        self, context: Any, job: Job, threads: int, slot: int, link: PolicyLink | None
    ) -> None:
        self.connection, child = context.Pipe()
        self.process = context.Process(
            target=_worker_main, args=(child, job, threads, slot, link), daemon=True
        )
        with worker_environment(threads):  # the policy's thread pools: its share of the cores
            self.process.start()
        child.close()  # so that the parent sees EOF when the worker dies
        self.units: list[WorkUnit] = []  # sent and not finished, in the order sent
        self.started: set[int] = set()  # those of its units it has started
        # Its last unit has started every episode (UnitDrained): it takes one more unit of
        # that game into its vector env's rows as they free up.
        self.drained = False
        # Last message about its units; None until one starts (spawning a worker
        # imports saber, which on a loaded machine may take longer than a short deadline).
        self.last_progress: float | None = None

    def send(self, unit: WorkUnit) -> None:
        if not self.units:
            self.last_progress = None
        self.units.append(unit)
        self.drained = False
        # It may have died (at start, say): LocalBackend.events then reports it and re-queues.
        with contextlib.suppress(OSError):
            self.connection.send(unit)

    def done(self, unit_ids: Iterable[int]) -> None:
        ended = set(unit_ids)
        self.units = [unit for unit in self.units if unit.unit_id not in ended]
        self.started -= ended
        if not self.units:
            self.drained = False

    def failure(self, kind: FailureKind, error: str) -> tuple[UnitFailed, list[WorkUnit]]:
        """It died or was stopped: one failure of its first unit and the others it had
        started, and the units it had not started yet (to run elsewhere, not failed)."""
        first, *others = self.units
        failed = [unit.unit_id for unit in others if unit.unit_id in self.started]
        waiting = [unit for unit in others if unit.unit_id not in self.started]
        self.units, self.started, self.drained = [], set(), False
        return UnitFailed(first.unit_id, kind, error, also=tuple(failed)), waiting

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(timeout=10)
        self.connection.close()


class LocalBackend:
    """``workers`` local processes, one unit each at a time.

    Args:
        job: the run's policy and settings; pickled once per worker.
        workers: number of processes (one per core is the default of ``evaluate``).
        unit_timeout: seconds without a message from a busy worker before it is killed
            (None: no deadline).
        policy_process: build the policy once, in a process of its own that acts for
            every worker (:mod:`saber.harness.policy_process`), instead of once per worker.
    """

    def __init__(
        self,
        job: Job,
        workers: int,
        unit_timeout: float | None = None,
        policy_process: bool = False,
    ) -> None:
        self.job = job
        self.unit_timeout = unit_timeout
        self._context = multiprocessing.get_context("spawn")
        self._pending: deque[WorkUnit] = deque()
        self.threads = policy_threads(workers)
        self._policy: PolicyProcess | None = None
        if policy_process:
            # One thread for the policy's CPU pools: on an accelerator it launches kernels
            # and copies; a CPU policy ran as fast with one thread as with two on 2 cores,
            # with 25% less CPU (idle pools spin while the workers emulate; docs/harness.md).
            with worker_environment(1):
                self._policy = PolicyProcess(
                    self._context, job.policy, job.settings, workers, job.envs_per_worker
                )
        self._workers = [self._new_worker(slot) for slot in range(workers)]
        self._deaths_in_a_row = 0  # deaths with no message in between: workers cannot start
        self._spec_verdict: _SpecVerdict | None = None  # the first worker's, for a spec

    def _new_worker(self, slot: int) -> _Worker:
        link = self._policy.link if self._policy is not None else None
        return _Worker(self._context, self.job, self.threads, slot, link)

    def check_spec(self) -> None:
        """Wait for the first worker's verdict on the agent spec (it imports the module at
        start); raise its :class:`PolicyError` here, before any unit is sent."""
        if not isinstance(self.job.policy, str):
            return
        while self._spec_verdict is None:
            for _ in self.events(_POLL_SECONDS):
                pass  # before any unit is sent, workers send nothing else
        if self._spec_verdict.error is not None:
            raise PolicyError(self._spec_verdict.error)

    def submit(self, unit: WorkUnit) -> None:
        self._pending.append(unit)
        self._dispatch()

    def _dispatch(self) -> None:
        for worker in self._workers:  # idle workers first
            if not self._pending:
                return
            if not worker.units:
                worker.send(self._pending.popleft())
        for worker in self._workers:  # then a worker whose rows are about to idle
            if not self._pending:
                return
            head = self._pending[0]
            if worker.drained and head.attempt == 0 and head.game == worker.units[-1].game:
                worker.send(self._pending.popleft())

    def events(self, timeout: float) -> Iterator[Event]:
        handles = {worker.connection: worker for worker in self._workers}
        handles.update({worker.process.sentinel: worker for worker in self._workers})
        ready = multiprocessing.connection.wait(list(handles), timeout)
        for worker in dict.fromkeys(handles[handle] for handle in ready):
            yield from self._receive(worker)
        yield from self._stop_hung_workers()
        self._dispatch()

    def _receive(self, worker: _Worker) -> Iterator[Event]:
        try:
            while worker.connection.poll():
                event = worker.connection.recv()
                worker.last_progress = time.monotonic()
                self._deaths_in_a_row = 0
                if isinstance(event, _SpecVerdict):
                    self._spec_verdict = self._spec_verdict or event
                    continue
                if isinstance(event, UnitDrained):  # for the dispatch, not the run
                    last = worker.units[-1] if worker.units else None
                    worker.drained = (
                        last is not None and last.unit_id == event.unit_id and last.attempt == 0
                    )
                    continue
                if isinstance(event, UnitStarted):
                    worker.started.add(event.unit_id)
                elif isinstance(event, UnitFinished):
                    worker.done([event.unit_id])
                elif isinstance(event, UnitFailed):
                    worker.done([event.unit_id, *event.also])
                yield event
        except (EOFError, OSError):
            pass  # the worker is gone: everything it sent has been read
        if not worker.process.is_alive():
            yield from self._replace(worker)

    def _stop_hung_workers(self) -> Iterator[Event]:
        if self.unit_timeout is None:
            return
        now = time.monotonic()
        for index, worker in enumerate(self._workers):
            last = worker.last_progress
            if worker.units and last is not None and now - last > self.unit_timeout:
                worker.stop()
                self._workers[index] = self._new_worker(index)
                failure, waiting = worker.failure("timeout", timeout_message(self.unit_timeout))
                self._pending.extendleft(reversed(waiting))
                yield failure

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
        self._workers[index] = self._new_worker(index)
        if worker.units and worker.units[0].unit_id not in worker.started:
            # It died before starting its first unit (at start: a script workers cannot
            # import, say): none of its episodes ran, so none failed; they run elsewhere.
            self._pending.extendleft(reversed(worker.units))
        elif worker.units:
            failure, waiting = worker.failure(
                "worker",
                f"the worker process died (exit code {exit_code}) while running this episode",
            )
            self._pending.extendleft(reversed(waiting))
            yield failure

    def close(self) -> None:
        for worker in self._workers:
            if worker.process.is_alive():
                worker.process.kill()
        for worker in self._workers:
            worker.stop()
        self._workers = []
        self._pending.clear()
        if self._policy is not None:
            self._policy.close()
            self._policy = None


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


# --- where evaluate() runs: the backend objects ------------------------------------------


def _check_count(name: str, value: object, minimum: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise SaberError(f"Expect `{name}` to be an integer >= {minimum}, actually: {value!r}")


def _check_picklable(job: Job) -> None:
    try:
        pickle.dumps(job)
    except Exception as error:
        raise PolicyError(
            f"The policy cannot be sent to worker processes ({type(error).__name__}: {error}). "
            "Define it at module level and pass it as 'module:attr', or use "
            "backend=Inline() (--workers 0) to run in this process."
        ) from None


@dataclass(frozen=True)
class Inline:
    """Run every unit in this process, one after the other (``saber eval --workers 0``):
    for debugging, and for policies that cannot be pickled. Emulation uses every core."""

    @property
    def parallelism(self) -> int:
        """Units that run at once."""
        return 1

    def emulation_threads(self) -> int:
        """Threads of each vector env (0: one per core)."""
        return 0

    def start(self, job: Job, unit_timeout: float | None) -> Backend:
        """The running backend (the inline one has no unit deadline)."""
        return InlineBackend(job)


@dataclass(frozen=True)
class Processes:
    """Local worker processes (``spawn``), one vector env each at a time (the default).

    Attributes:
        workers: worker processes; None: one per usable core (the CPU affinity:
            ``taskset`` or a batch system's allocation, else every core).
        policy_process: one copy of the policy, in a process of its own that acts for
            every worker on batches of ``workers x envs_per_worker`` observations (a policy
            on a GPU: one model, one CUDA context; :mod:`saber.harness.policy_process`).
            False (the default): each worker builds its own.
    """

    workers: int | None = None
    policy_process: bool = False

    def __post_init__(self) -> None:
        if self.workers is not None:
            _check_count("Processes(workers)", self.workers)

    @property
    def parallelism(self) -> int:
        """Units that run at once."""
        # One worker per core, measured with real policies (benchmarks/eval_defaults.py,
        # 2 cores): one worker of 8 envs ran at 0.64x (ppo-pong) and 0.80x (a PyTorch
        # NatureCNN) the frames/s of two, using 50% more CPU (its policy's two threads
        # and its two emulation threads contend).
        return self.workers or usable_cores()

    def emulation_threads(self) -> int:
        """One thread each when several processes share the cores; all of them for one."""
        return 0 if self.parallelism <= 1 else 1

    def start(self, job: Job, unit_timeout: float | None) -> Backend:
        """Start the workers (the job must pickle: each worker gets a copy)."""
        _check_picklable(job)
        return LocalBackend(
            job, self.parallelism, unit_timeout=unit_timeout, policy_process=self.policy_process
        )


@dataclass(frozen=True)
class Dask:
    """A Dask cluster (extra ``dask``): the scheduler at ``address``, or a local cluster.

    Attributes:
        address: scheduler address (``tcp://host:8786``, ``tls://host:8786``); None starts
            a ``LocalCluster`` of ``workers`` single-threaded processes.
        workers: size of the local cluster (None: one per usable core); with an address, how
            many units are planned at once.
        timeout: seconds to wait for the scheduler.
        security: TLS: a ``distributed.Security``, or a dict of its arguments
            (``tls_ca_file``, ``tls_client_cert``, ``tls_client_key``); None uses Dask's
            configuration (``distributed.comm.tls.*``).
    """

    address: str | None = None
    workers: int | None = None
    timeout: float = 10.0
    security: Any = None

    def __post_init__(self) -> None:
        if self.workers is not None:
            _check_count("Dask(workers)", self.workers)

    @property
    def parallelism(self) -> int:
        """Units that run at once (planned)."""
        return self.workers or usable_cores()

    def emulation_threads(self) -> int:
        """One thread per Dask task."""
        return 1

    def start(self, job: Job, unit_timeout: float | None) -> Backend:
        """Connect (or start the local cluster) and check that every worker loads the policy."""
        return DaskBackend(
            job,
            self.address,
            self.parallelism,
            self.timeout,
            unit_timeout=unit_timeout,
            security=self.security,
        )


RunsOn = Union[Inline, Processes, Dask]  # noqa: UP007 (a runtime alias: Python 3.10 too)
"""What :func:`saber.evaluate` takes as ``backend``."""


def capped_to_work(runs_on: RunsOn, work: int) -> tuple[RunsOn, str | None]:
    """``runs_on`` with no more workers than episodes to play, and the line that says so
    when workers were asked for by number (None otherwise).

    A worker (a local process, a Dask worker of a local cluster, a unit planned at once)
    plays one episode at the least: more than ``work`` of them would start, import and
    sit idle (``--workers 500`` for 2 episodes started 500 processes). With no work
    (every episode on disk) nothing is capped: nothing starts.

    Args:
        runs_on: the backend object.
        work: episodes left to play.
    """
    if isinstance(runs_on, Inline) or work < 1 or runs_on.parallelism <= work:
        return runs_on, None
    capped = dataclasses.replace(runs_on, workers=work)
    if runs_on.workers is None:  # one per core by default: the workers line says how many
        return capped, None
    kind = "Dask workers" if isinstance(runs_on, Dask) else "worker processes"
    return capped, (
        f"{runs_on.workers} {kind} asked for, but only {work} episode(s) to play: using {work}"
    )


def workers_line(runs_on: RunsOn, envs_per_worker: int) -> str | None:
    """What local worker processes will run, for people (None for the other backends):
    ``2 worker processes, 1 thread(s) each for the policy (OMP_NUM_THREADS, ...)``."""
    if not isinstance(runs_on, Processes):
        return None
    workers = runs_on.parallelism
    if runs_on.policy_process:
        return (
            f"{workers} worker processes and one policy process, which acts for all of "
            f"them on batches of {workers * envs_per_worker}"
        )
    threads = policy_threads(workers)
    chosen = ", ".join(sorted(thread_variables(threads))) or "none: you set them all"
    return (
        f"{workers} worker processes, {threads} thread(s) each for the policy ({chosen}; "
        "a variable you set wins)"
    )
