"""Ctrl-C and SIGTERM as a clean stop: workers stopped, finished episodes on disk, the same
call resumes. Both raise in the main thread, a signal inside an import is acted on once
the import is over, and later signals wait until the stop is done (docs/architecture.md).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from types import FrameType

# How long a stop waits for an import in progress to end before it interrupts it anyway
# (seconds), and how often it looks again (seconds).
_IMPORT_GRACE = 5.0
_RETRY = 0.02


class Terminated(KeyboardInterrupt):
    """The process was sent SIGTERM (``kill PID``, a batch system's stop): handled as
    Ctrl-C is (the workers are stopped, finished episodes are on disk, the same call
    resumes), and a ``KeyboardInterrupt`` to code that catches that."""


_RAISES: dict[int, type[KeyboardInterrupt]] = {
    signal.SIGINT: KeyboardInterrupt,
    signal.SIGTERM: Terminated,
}


class _State:
    """The stop this process acted on (None: none yet), and since when (``time.monotonic``
    seconds) each signal has waited for an import to end."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.acted: type[KeyboardInterrupt] | None = None
        self.deferred_since: dict[int, float] = {}


_state = _State()


def _stop(signum: int, frame: FrameType | None) -> None:
    """The handler of both signals: see the module's docstring."""
    if _state.acted is not None:
        # A batch system or a user that sends two in a row (50 ms apart, to the whole
        # process group, or Ctrl-C pressed twice) still gets the clean stop, with the
        # session recorded as interrupted, not an exception halfway through that stop.
        return
    now = time.monotonic()
    since = _state.deferred_since.get(signum, now)
    if _importing(frame) and now - since < _IMPORT_GRACE:
        # An exception raised inside Python's import machinery leaves the module half
        # made, or one of importlib's locks held: the clean stop then fails on the next
        # import (a traceback) or hangs on it. The signal is sent again shortly, to be
        # acted on once the import is over.
        _state.deferred_since[signum] = since
        threading.Timer(_RETRY, os.kill, (os.getpid(), signum)).start()
        return
    _state.acted = _RAISES[signum]
    raise _state.acted()


def stop_if_requested() -> None:
    """Raise the stop that a signal asked for, if one did and the stop is still going on:
    the handler's exception is lost when the signal lands in a ``__del__`` or a weakref
    callback (Python prints it and goes on). The run loop asks between messages."""
    if _state.acted is not None:
        raise _state.acted()


def _importing(frame: FrameType | None) -> bool:
    """Whether ``frame`` or one that called it runs in importlib's bootstrap: a module's
    import (its body included) or an import lock's bookkeeping."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib._bootstrap"):
            return True
        frame = frame.f_back
    return False


def _python_default(signum: int) -> Callable[..., object] | int | None:
    """What Python installs for ``signum`` when the program installs nothing."""
    return signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL


@contextlib.contextmanager
def stop_signals_as_interrupts(*, exiting: bool = False) -> Iterator[None]:
    """While running, Ctrl-C and SIGTERM stop as the module's docstring says, in the main
    thread, for each of them whose handler is still Python's own (a handler the program
    installed is left alone, and so is a SIGINT that the shell made ignored: a background
    job's). On leaving, the handlers before are put back; with ``exiting`` (the process
    ends next: a ``saber`` command), after a stop they ignore the signal instead, so that
    a second one cannot break the exit halfway."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    installed: dict[int, Callable[..., object] | int | None] = {}
    for signum in _RAISES:
        if signal.getsignal(signum) is _python_default(signum):
            installed[signum] = signal.signal(signum, _stop)
    if installed:
        _state.reset()
    try:
        yield
    finally:
        stopped = _state.acted is not None
        for signum, previous in installed.items():
            signal.signal(signum, signal.SIG_IGN if exiting and stopped else previous)
