"""Where :func:`saber.evaluate` runs its episodes, and how: :class:`Inline`,
:class:`Processes` (the default) and :class:`Dask`.

Each holds the options that change how fast episodes run but never what they score, only
those it honours; :meth:`start` gives its executor. docs/harness.md describes each.
"""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from saber.errors import PolicyError, SaberError, counted
from saber.harness.executor_base import Executor
from saber.harness.local_executors import InlineExecutor, LocalExecutor
from saber.harness.options import Recording, check_count
from saber.harness.threads import policy_threads, thread_variables, usable_cores
from saber.harness.work import Job

# The policy's batch. With real policies (benchmarks/eval_speed.py defaults; the figures are on
# docs/measurements/eval.md) 8 envs ran within noise of 16, and they fill every row with
# half the episodes and leave fewer rows idle at a game's end.
DEFAULT_ENVS_PER_WORKER = 8
# Seconds without frame progress before a unit's worker is stopped: far above a seeded
# reset (0.25 s) or a policy's batch, short enough that a hang costs minutes, not hours.
DEFAULT_UNIT_TIMEOUT = 300.0


def _check_picklable(job: Job) -> None:
    try:
        pickle.dumps(job)
    except Exception as error:
        raise PolicyError(
            f"The policy cannot be sent to worker processes ({type(error).__name__}: {error}). "
            "Define it at module level and pass it as 'module:attr', or use "
            "backend=Inline() (--workers 0) to run in this process."
        ) from None


class _Options:
    """The checks and the defaults that every backend object shares."""

    workers: int | None = None
    envs_per_worker: int = DEFAULT_ENVS_PER_WORKER
    emulation_threads: int | None = None
    unit_timeout: float | None = None

    def __post_init__(self) -> None:
        kind = type(self).__name__
        if self.workers is not None:
            check_count(f"{kind}(workers)", self.workers)
        check_count(f"{kind}(envs_per_worker)", self.envs_per_worker)
        if self.emulation_threads is not None:
            check_count(f"{kind}(emulation_threads)", self.emulation_threads)
        timeout = self.unit_timeout
        if timeout is not None and (isinstance(timeout, bool) or not timeout > 0):
            raise SaberError(
                f"Expect `{kind}(unit_timeout)` to be positive or None, actually: {timeout!r}"
            )

    @property
    def parallelism(self) -> int:
        """Units that run at once (planned)."""
        # One worker per core: with real policies (benchmarks/eval_speed.py defaults,
        # docs/measurements/eval.md) one worker of 8 envs was slower than two and used more
        # CPU (its policy's threads and its emulation threads contend).
        return self.workers or usable_cores()

    def threads_per_env(self) -> int:
        """Threads of each vector env (0: one per core): ``emulation_threads`` if set,
        else one each when several units share the cores, all of them for one."""
        if self.emulation_threads is not None:
            return self.emulation_threads
        return 0 if self.parallelism <= 1 else 1

    # What its workers are called in the line that caps them (None: it has none to cap).
    workers_kind: ClassVar[str | None] = None
    # Whether its executor starts before the quick probe: worker processes that import
    # saber and the agent's module meanwhile (benchmarks/eval_speed.py least-work).
    starts_before_probe: ClassVar[bool] = False
    # Whether this process imports a ``module:attr`` agent's module to check it (False:
    # the workers import it, and this process reads its source instead).
    imports_the_agent: ClassVar[bool] = True

    def check_recording(self, recording: Recording) -> None:
        """Refuse here, before anything runs, what this backend cannot record."""

    def workers_line(self) -> str | None:
        """What its workers will run, for people (None: nothing worth saying)."""
        return None


@dataclass(frozen=True)
class Inline(_Options):
    """Run every unit in this process, one after the other (``saber eval --workers 0``):
    for debugging, and for policies that cannot be pickled. No unit deadline: this process
    cannot stop itself.

    Attributes:
        envs_per_worker: sub-envs of the vector env: the policy's batch size.
        emulation_threads: threads of the vector env; None: one per core.
    """

    envs_per_worker: int = DEFAULT_ENVS_PER_WORKER
    emulation_threads: int | None = None

    starts_before_probe: ClassVar[bool] = True  # it plays here: its modules are the probe's

    @property
    def parallelism(self) -> int:
        """Units that run at once."""
        return 1

    def start(self, job: Job) -> Executor:
        """The executor: this backend started."""
        return InlineExecutor(job)


@dataclass(frozen=True)
class Processes(_Options):
    """Local worker processes (``spawn``), one vector env each at a time (the default).

    Attributes:
        workers: worker processes; None: one per usable core (the CPU affinity:
            ``taskset`` or a batch system's allocation, else every core).
        policy_process: one copy of the policy, in a process of its own that acts for
            every worker on batches of ``workers x envs_per_worker`` observations (a policy
            on a GPU: one model, one CUDA context; :mod:`saber.harness.policy_process`).
            False (the default): each worker builds its own.
        envs_per_worker: sub-envs of each worker's vector env: the policy's batch size.
        emulation_threads: threads of each worker's vector env; None: one per core with a
            single worker, else 1 (W processes use W cores).
        unit_timeout: seconds a unit may go without frame progress before its worker is
            stopped and the unit fails (retried once, then recorded); None: no deadline.
    """

    workers: int | None = None
    policy_process: bool = False
    envs_per_worker: int = DEFAULT_ENVS_PER_WORKER
    emulation_threads: int | None = None
    unit_timeout: float | None = DEFAULT_UNIT_TIMEOUT

    workers_kind: ClassVar[str | None] = "worker processes"
    starts_before_probe: ClassVar[bool] = True
    imports_the_agent: ClassVar[bool] = False

    def check_recording(self, recording: Recording) -> None:
        """Refuse videos with one policy process for every worker."""
        if recording.video and self.policy_process:
            # Filming an episode takes minutes, during which, in lockstep, every other
            # worker would wait for this one (and could reach its unit deadline).
            raise SaberError(
                "Cannot film episodes (video) with one policy process for every worker "
                "(policy_process, --policy-process): run the videos separately, or without it"
            )

    def workers_line(self) -> str | None:
        """``2 worker processes, 1 thread each for the policy (OMP_NUM_THREADS, ...)``."""
        workers = self.parallelism
        if self.policy_process:
            return (
                f"{counted(workers, 'worker process')} and one policy process, which acts for "
                f"{'it' if workers == 1 else 'all of them'} on batches of "
                f"{workers * self.envs_per_worker}"
            )
        threads = policy_threads(workers)
        chosen = ", ".join(sorted(thread_variables(threads))) or "none: you set them all"
        each = " each" if workers > 1 else ""
        return (
            f"{counted(workers, 'worker process')}, {counted(threads, 'thread')}{each} for the "
            f"policy ({chosen}; a variable you set wins)"
        )

    def start(self, job: Job) -> Executor:
        """Start the workers (the job must pickle: each worker gets a copy)."""
        _check_picklable(job)
        return LocalExecutor(
            job,
            self.parallelism,
            unit_timeout=self.unit_timeout,
            policy_process=self.policy_process,
        )


@dataclass(frozen=True)
class Dask(_Options):
    """A Dask cluster (extra ``dask``): the scheduler at ``address``, or a local cluster.
    Each task emulates on one thread.

    Attributes:
        address: scheduler address (``tcp://host:8786``, ``tls://host:8786``); None starts
            a ``LocalCluster`` of ``workers`` single-threaded processes.
        workers: size of the local cluster (None: one per usable core); with an address, how
            many units are planned at once.
        timeout: seconds to wait for the scheduler (and, beyond ``unit_timeout``, for a
            worker in place of one that the run stopped).
        security: TLS: a ``distributed.Security``, or a dict of its arguments
            (``tls_ca_file``, ``tls_client_cert``, ``tls_client_key``); None uses Dask's
            configuration (``distributed.comm.tls.*``).
        envs_per_worker: sub-envs of each task's vector env: the policy's batch size.
        unit_timeout: seconds a started unit may go without a message (or a unit handed
            to a worker that never starts it) before its worker is restarted and the unit
            fails; None: no deadline.
    """

    address: str | None = None
    workers: int | None = None
    timeout: float = 10.0
    security: Any = None
    envs_per_worker: int = DEFAULT_ENVS_PER_WORKER
    unit_timeout: float | None = DEFAULT_UNIT_TIMEOUT

    workers_kind: ClassVar[str | None] = "Dask workers"

    def threads_per_env(self) -> int:
        """One thread per Dask task."""
        return 1

    def start(self, job: Job) -> Executor:
        """Connect (or start the local cluster) and check that every worker loads the policy."""
        from saber.harness.dask_start import start_dask  # Dask's modules: only for Dask

        return start_dask(
            job,
            self.address,
            self.parallelism,
            self.timeout,
            unit_timeout=self.unit_timeout,
            security=self.security,
        )


class Backend(Protocol):
    """What :func:`saber.evaluate` takes as ``backend`` and ``saber eval --backend`` names:
    :class:`Inline`, :class:`Processes` or :class:`Dask`.

    "Backend" means this one thing, in the API, the CLI and the docs: where the episodes
    run. What a backend starts to run them is its executor
    (:class:`~saber.harness.executor_base.Executor`).
    """

    envs_per_worker: int
    workers_kind: ClassVar[str | None]
    starts_before_probe: ClassVar[bool]
    imports_the_agent: ClassVar[bool]

    @property
    def parallelism(self) -> int:
        """Units that run at once (planned)."""

    def threads_per_env(self) -> int:
        """Threads of each vector env (0: one per core)."""

    def check_recording(self, recording: Recording) -> None:
        """Refuse here what this backend cannot record."""

    def workers_line(self) -> str | None:
        """What its workers will run, for people (None: nothing worth saying)."""

    def start(self, job: Job) -> Executor:
        """Its executor, started."""


def backend_or_default(value: Any) -> Backend:
    """``value`` if it is one of the backends, ``Processes()`` for None; a
    :class:`SaberError` for anything else."""
    if value is None:
        return Processes()
    if not isinstance(value, (Inline, Processes, Dask)):
        raise SaberError(
            "Expect `backend` to be Inline(), Processes(workers=N) or Dask(address=...) "
            f"(saber.harness), actually: {value!r}"
        )
    return value


def backend_for(
    kind: str,
    workers: int | None = None,
    *,
    policy_process: bool = False,
    address: str | None = None,
    timeout: float = 10.0,
    security: Any = None,
    envs_per_worker: int = DEFAULT_ENVS_PER_WORKER,
    unit_timeout: float | None = DEFAULT_UNIT_TIMEOUT,
) -> Backend:
    """The backend object that ``saber eval``'s options name (the one home of that mapping).

    Args:
        kind: ``processes`` (``Processes``; ``Inline`` with ``workers=0``) or ``dask``.
        workers: ``--workers`` (None: one per usable core; 0: this process).
        policy_process, address, timeout, security, envs_per_worker, unit_timeout: the
            fields of the same names (``timeout``: ``--dask-timeout``).
    """
    if kind == "dask":
        return Dask(address, workers, timeout, security, envs_per_worker, unit_timeout)
    if kind != "processes":
        raise SaberError(f"Expect a backend `processes` or `dask`, actually: {kind!r}")
    if workers == 0:
        return Inline(envs_per_worker)
    return Processes(workers, policy_process, envs_per_worker, unit_timeout=unit_timeout)


def capped_to_work(runs_on: Backend, work: int) -> tuple[Backend, str | None]:
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
    kind = runs_on.workers_kind
    if kind is None or work < 1 or runs_on.parallelism <= work:
        return runs_on, None
    asked = runs_on.workers  # type: ignore[attr-defined]  # a backend with workers to cap
    capped = dataclasses.replace(runs_on, workers=work)  # type: ignore[type-var]
    if asked is None:  # one per core by default: the workers line says how many
        return capped, None
    return capped, f"{asked} {kind} asked for, but only {work} episode(s) to play: using {work}"
