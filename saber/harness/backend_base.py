"""What every running backend is: the :class:`Backend` protocol, :class:`BackendError`,
and the reason recorded for a unit stopped at its deadline.

The running backends (:mod:`saber.harness.local_backend`, :mod:`saber.harness.dask_backend`)
and the objects that choose one (:mod:`saber.harness.backends`) all import this module,
and it imports none of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from saber.errors import BackendError
from saber.harness.work import Event, WorkUnit

__all__ = ["DASK_EXTRA_HINT", "Backend", "BackendError", "timeout_message"]

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


class Backend(Protocol):
    """Runs work units and reports what happens to them."""

    def submit(self, unit: WorkUnit) -> None:
        """Queue a unit; it runs when a worker is free."""

    def events(self, timeout: float) -> Iterator[Event]:
        """Messages that arrive within about ``timeout`` seconds (0: only those waiting)."""

    def close(self) -> None:
        """Stop every worker now; units still running are abandoned."""
