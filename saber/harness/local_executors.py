"""The executors of this machine: :class:`InlineExecutor` (this process) and
:class:`LocalExecutor` (local worker processes).

docs/harness.md ("Workers") describes how units are sent, how a dead or quiet worker is
replaced, and the unit deadline.
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import multiprocessing.connection
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from saber.errors import BackendError, PolicyError
from saber.harness import work
from saber.harness.child import become_child_process
from saber.harness.executor_base import death_cause, timeout_message
from saber.harness.policies import PolicyFactory, policy_of
from saber.harness.policy_process import PolicyLink, PolicyProcess, remote_policy
from saber.harness.threads import policy_threads, worker_environment
from saber.harness.work import Event, FailureKind, Job, WorkUnit

_POLL_SECONDS = 0.5  # how long LocalExecutor.check_policy waits for messages at a time


class InlineExecutor:
    """Runs each unit in this process when :meth:`events` is asked for messages."""

    def __init__(self, job: Job) -> None:
        # Imported when the executor starts, not when it is first asked for messages: the
        # emulator's modules are then whole before a unit runs, and a Ctrl-C or SIGTERM
        # that lands in this import stops the session here, where nothing was played yet.
        from saber.harness import runner

        self.job = job
        self._runner = runner
        self._pending: deque[WorkUnit] = deque()

    def check_policy(self) -> None:
        """Build the policy here, once, and keep it for the run."""
        policy_of(self.job.policy)

    def submit(self, unit: WorkUnit) -> None:
        self._pending.append(unit)

    def events(self, timeout: float) -> Iterator[Event]:
        """Play the next unit here. ``timeout`` 0 is a drain after Ctrl-C, which asks only
        for messages that already arrived: this executor has none, and starts nothing."""
        if self._pending and timeout > 0:
            yield from self._runner.execute_unit(self._pending.popleft(), self.job)

    def close(self) -> None:
        self._pending.clear()
        self._runner.release_envs()  # the env kept between units: this process goes on without it


@dataclass(frozen=True)
class _SpecVerdict:
    """A local worker's first message for a policy it builds (an agent spec, a factory, a
    class): None, or why it cannot be built."""

    error: str | None


def _built_here(policy: Any) -> bool:
    """Whether a worker builds the job's policy (a spec, a factory, a class), rather than
    receiving the policy object itself."""
    return isinstance(policy, (str, PolicyFactory, type))


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
    elif _built_here(job.policy):
        # Import the agent's module (PyTorch, say: seconds) and build the policy now, while
        # the main process probes and plans, not when the first unit arrives (it is kept
        # for every unit); the verdict goes to the main process, which refuses a policy
        # that cannot be built before anything is stored (LocalExecutor.check_policy).
        try:
            policy_of(job.policy)
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
        # It has sent a message (its policy verdict, a unit's): started up. A unit sent to
        # it then counts the deadline from its sending: a worker stopped while idle
        # (SIGSTOP) never starts it.
        self.spoke = False

    def send(self, unit: WorkUnit) -> None:
        if not self.units:
            self.last_progress = time.monotonic() if self.spoke else None
        self.units.append(unit)
        self.drained = False
        # It may have died (at start, say): LocalExecutor.events then reports it and re-queues.
        with contextlib.suppress(OSError):
            self.connection.send(unit)

    def done(self, unit_ids: Iterable[int]) -> None:
        ended = set(unit_ids)
        self.units = [unit for unit in self.units if unit.unit_id not in ended]
        self.started -= ended
        if not self.units:
            self.drained = False

    def failure(self, kind: FailureKind, error: str) -> tuple[work.UnitFailed, list[WorkUnit]]:
        """It died or was stopped: one failure of its first unit and the others it had
        started, and the units it had not started yet (to run elsewhere, not failed)."""
        first, *others = self.units
        failed = [unit.unit_id for unit in others if unit.unit_id in self.started]
        waiting = [unit for unit in others if unit.unit_id not in self.started]
        self.units, self.started, self.drained = [], set(), False
        return work.UnitFailed(first.unit_id, kind, error, also=tuple(failed)), waiting

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(timeout=10)
        self.connection.close()


class LocalExecutor:
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
            # and copies; a CPU policy ran as fast with one thread as with two, with less
            # CPU (idle pools spin while the workers emulate; docs/measurements/eval.md).
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

    def check_policy(self) -> None:
        """Wait for the first worker's verdict on the policy it builds at its start (an
        agent spec's module imported, a factory called); raise its :class:`PolicyError`
        here, before any unit is sent."""
        if not _built_here(self.job.policy):
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
                worker.spoke = True
                self._deaths_in_a_row = 0
                if isinstance(event, _SpecVerdict):
                    self._spec_verdict = self._spec_verdict or event
                    continue
                if isinstance(event, work.UnitDrained):  # for the dispatch, not the run
                    last = worker.units[-1] if worker.units else None
                    worker.drained = (
                        last is not None and last.unit_id == event.unit_id and last.attempt == 0
                    )
                    continue
                if isinstance(event, work.UnitStarted):
                    worker.started.add(event.unit_id)
                elif isinstance(event, work.UnitFinished):
                    worker.done([event.unit_id])
                elif isinstance(event, work.UnitFailed):
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
                f"the worker process died ({death_cause(exit_code)}) while running this episode",
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
