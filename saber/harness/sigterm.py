"""SIGTERM handled as Ctrl-C: the workers are stopped, finished episodes are on disk, and
the same call resumes (:func:`saber.evaluate` while it runs, ``saber eval`` for its life)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from types import FrameType

# How long the stop waits for an import in progress to end before it interrupts it anyway
# (seconds), and how often it looks again (seconds).
_IMPORT_GRACE = 5.0
_RETRY = 0.02


class Terminated(KeyboardInterrupt):
    """The process was sent SIGTERM (``kill PID``, a batch system's stop): handled as
    Ctrl-C is (the workers are stopped, finished episodes are on disk, the same call
    resumes), and a ``KeyboardInterrupt`` to code that catches that."""


def terminate_once() -> Callable[[int, object], None]:
    """A SIGTERM handler that raises :class:`Terminated` the first time and ignores every
    later SIGTERM: a batch system or a user that sends two in a row (50 ms apart, or to
    the whole process group) still gets the clean stop, with the session recorded as
    interrupted and exit status 143, not a death by the signal halfway through it. A
    SIGTERM that lands in an import is acted on when the import is over (within
    ``_IMPORT_GRACE`` seconds), never inside Python's import machinery.
    ``saber eval`` installs it for its whole life; :func:`evaluate` while it runs."""
    sent = False
    deferred_since: float | None = None

    def terminated(signum: int, frame: FrameType | None) -> None:
        nonlocal sent, deferred_since
        if sent:
            return
        now = time.monotonic()
        if _importing(frame) and (deferred_since is None or now - deferred_since < _IMPORT_GRACE):
            # An exception raised inside Python's import machinery leaves the module half
            # made, or one of importlib's locks held, and the clean stop then fails on the
            # next import (a traceback) or hangs on it. The signal is sent again shortly,
            # to be acted on once the import is over.
            deferred_since = deferred_since if deferred_since is not None else now
            threading.Timer(_RETRY, os.kill, (os.getpid(), signal.SIGTERM)).start()
            return
        sent = True
        _state.requested = True
        raise Terminated()

    _state.requested = False
    return terminated


class _State:
    """Whether this process was sent the SIGTERM that the installed handler acted on."""

    requested = False


_state = _State()


def stop_if_terminated() -> None:
    """Raise :class:`Terminated` if SIGTERM was acted on and the stop is still going on:
    the handler's exception is lost when the signal lands in a ``__del__`` or a weakref
    callback (Python prints it and goes on). The run loop asks between messages."""
    if _state.requested:
        raise Terminated()


def _importing(frame: FrameType | None) -> bool:
    """Whether ``frame`` or one that called it runs in importlib's bootstrap: a module's
    import (its body included) or an import lock's bookkeeping."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib._bootstrap"):
            return True
        frame = frame.f_back
    return False


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
