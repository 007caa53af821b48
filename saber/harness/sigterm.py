"""SIGTERM handled as Ctrl-C: the workers are stopped, finished episodes are on disk, and
the same call resumes (:func:`saber.evaluate` while it runs, ``saber eval`` for its life)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator


class Terminated(KeyboardInterrupt):
    """The process was sent SIGTERM (``kill PID``, a batch system's stop): handled as
    Ctrl-C is (the workers are stopped, finished episodes are on disk, the same call
    resumes), and a ``KeyboardInterrupt`` to code that catches that."""


def terminate_once() -> Callable[[int, object], None]:
    """A SIGTERM handler that raises :class:`Terminated` the first time and ignores every
    later SIGTERM: a batch system or a user that sends two in a row (50 ms apart, or to
    the whole process group) still gets the clean stop, with the session recorded as
    interrupted and exit status 143, not a death by the signal halfway through it.
    ``saber eval`` installs it for its whole life; :func:`evaluate` while it runs."""
    sent = False

    def terminated(signum: int, frame: object) -> None:
        nonlocal sent
        if not sent:
            sent = True
            raise Terminated()

    return terminated


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """While running, SIGTERM raises :class:`Terminated` in the main thread (once: see
    :func:`terminate_once`), unless the program installed a SIGTERM handler of its own
    (which is then left alone)."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    ):
        yield
        return
    signal.signal(signal.SIGTERM, terminate_once())
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
