"""Starting the Dask backend: connecting to the scheduler (or starting a local cluster),
then every worker's check that it builds the policy before the first unit (one clear error
instead of a failure per unit). Why the check is a task: docs/harness.md, "Dask clusters".
"""

from __future__ import annotations

import contextlib
import time
import uuid
from typing import Any

from saber.errors import BackendError, PolicyError
from saber.harness.dask_executor import DaskExecutor
from saber.harness.executor_base import DASK_EXTRA_HINT
from saber.harness.policies import policy_of
from saber.harness.work import Job


def start_dask(
    job: Job,
    address: str | None,
    workers: int,
    timeout: float = 10.0,
    unit_timeout: float | None = None,
    security: Any = None,
) -> DaskExecutor:
    """The Dask executor, connected to the scheduler at ``address`` (a local cluster of
    ``workers`` single-threaded processes if None), once every worker built the policy.

    Args:
        job: the run's policy and settings; sent with each unit.
        address: scheduler address (``tcp://host:8786``, ``tls://host:8786``), or None.
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
    cluster, client = _connect(address, workers, timeout, security)
    try:
        check_workers(client, job, unit_timeout)
        return DaskExecutor(client, cluster, job, timeout, unit_timeout)
    except BaseException:
        DaskExecutor.disconnect(client, cluster, timeout)
        raise


def _dask_check_policy(job: Job) -> None:
    """Run on every Dask worker before the first unit: the job arrived (so the policy
    unpickles there), a spec's module imports there, and the policy builds (kept for the
    units: built once per worker process, as it would be at the first unit)."""
    policy_of(job.policy)


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


def check_workers(client: Any, job: Job, unit_timeout: float | None) -> None:
    """One clear error, before any unit runs, if a worker cannot load the policy."""
    try:
        results = _policy_verdicts(client, job, unit_timeout)
    except Exception as error:  # the job itself could not be sent
        raise PolicyError(
            f"The policy cannot be sent to the Dask workers ({type(error).__name__}: "
            f"{error}). Pass it as 'module:attr' with that module installed on every worker."
        ) from None
    broken = {worker: result for worker, result in results.items() if isinstance(result, Exception)}
    if broken:
        worker, error = sorted(broken.items())[0]
        raise PolicyError(
            f"{len(broken)} of {len(results)} Dask workers cannot load the policy; "
            f"{worker}: {type(error).__name__}: {error}. Every worker needs saber and the "
            "agent's module importable (install it there, or client.upload_file)."
        )


def _policy_verdicts(client: Any, job: Job, unit_timeout: float | None) -> dict[str, Any]:
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
    if unit_timeout is None:
        return client.run(_dask_check_policy, job, on_error="return")
    token = uuid.uuid4().hex[:8]
    checks = {
        worker: client.submit(
            _dask_check_policy,
            job,
            workers=[worker],
            allow_other_workers=False,
            pure=False,
            key=f"saber-policy-check-{token}-{index}",
        )
        for index, worker in enumerate(client.nthreads())
    }
    deadline = time.monotonic() + unit_timeout
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
            client.cancel(late, force=True)
    return verdicts
