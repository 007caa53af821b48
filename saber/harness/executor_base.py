"""What every executor (a started backend) is: the :class:`Executor` protocol, :class:`BackendError`,
and the reason recorded for a unit stopped at its deadline.

Every executor and backend imports this module, and it imports none of them.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from typing import Protocol

from saber.harness.work import Event, WorkUnit

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


# What a user can do about the signals a worker process dies of most often.
_SIGNAL_MEANINGS = {
    signal.SIGSEGV: "a segmentation fault: the policy, or a library it calls, crashed",
    signal.SIGKILL: "kill -9, or the system's out-of-memory killer",
    signal.SIGABRT: "a library it calls aborted",
    signal.SIGBUS: "a crash in native code, or a full /dev/shm",
    signal.SIGTERM: "a stop from outside, or Dask's memory limit",
}


def death_cause(exit_code: int) -> str:
    """How a worker process ended, named: its exit code, and for a signal (a negative exit
    code) the signal and what it usually means.

    >>> death_cause(3)
    'exit code 3'
    >>> death_cause(-9)
    "exit code -9: killed by SIGKILL (kill -9, or the system's out-of-memory killer)"
    """
    if exit_code >= 0:
        return f"exit code {exit_code}"
    try:
        number = signal.Signals(-exit_code)
    except ValueError:
        return f"exit code {exit_code}: killed by signal {-exit_code}"
    meaning = _SIGNAL_MEANINGS.get(number)
    return f"exit code {exit_code}: killed by {number.name}" + (f" ({meaning})" if meaning else "")


class Executor(Protocol):
    """Runs work units and reports what happens to them: a backend started
    (:meth:`saber.harness.backends.Backend.start`), which owns its workers' start, the
    checks before the first unit, the messages, the failures and the close."""

    def check_policy(self) -> None:
        """Raise :class:`~saber.errors.PolicyError` here, before anything is stored, if
        the policy cannot be built where it will act."""

    def submit(self, unit: WorkUnit) -> None:
        """Queue a unit; it runs when a worker is free."""

    def events(self, timeout: float) -> Iterator[Event]:
        """Messages that arrive within about ``timeout`` seconds (0: only those waiting)."""

    def close(self) -> None:
        """Stop every worker now; units still running are abandoned."""
