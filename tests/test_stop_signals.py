"""Ctrl-C's and SIGTERM's handler (saber.stop_signals): it never interrupts an import, it
acts once, and a stop whose exception Python swallowed is still acted on."""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from saber.stop_signals import Terminated, stop_if_requested, stop_signals_as_interrupts

STOPS = [(signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, Terminated)]


@pytest.fixture(autouse=True)
def pythons_own_handlers() -> Iterator[None]:
    """Python's handlers, whatever the test runner started with (a background job's shell
    makes SIGINT ignored), put back after the test."""
    before = {signum: signal.getsignal(signum) for signum, _ in STOPS}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    yield
    for signum, handler in before.items():
        signal.signal(signum, handler)


@pytest.mark.parametrize(("signum", "raised"), STOPS, ids=["sigint", "sigterm"])
def test_a_stop_during_an_import_is_acted_on_once_the_import_is_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signum: int, raised: type
) -> None:
    # The signal lands in the module's body, mid-import: raising there would leave the
    # module half made (a clean stop that failed on its next import) or an import lock held
    # (one that hung).
    name = f"imported_while_stopped_{signum}"
    (tmp_path / f"{name}.py").write_text(
        f"import signal, time\nsignal.raise_signal({signum})\ntime.sleep(0.2)\nWHOLE = True\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with stop_signals_as_interrupts(), pytest.raises(raised) as stopped:
            __import__(name)
            time.sleep(5)  # the stop is acted on here, after the import
        assert type(stopped.value) is raised
        assert sys.modules[name].WHOLE
    finally:
        sys.modules.pop(name, None)


def test_once_a_stop_is_acted_on_later_stop_signals_are_ignored() -> None:
    with stop_signals_as_interrupts():
        with pytest.raises(Terminated):
            signal.raise_signal(signal.SIGTERM)
        # The clean stop goes on: neither a second SIGTERM nor a Ctrl-C breaks it.
        signal.raise_signal(signal.SIGTERM)
        signal.raise_signal(signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_a_command_that_ends_after_a_stop_ignores_the_signals_from_then_on() -> None:
    with pytest.raises(KeyboardInterrupt), stop_signals_as_interrupts(exiting=True):
        signal.raise_signal(signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN


def test_handlers_the_program_chose_are_left_alone() -> None:
    def own(signum: int, frame: object) -> None: ...

    signal.signal(signal.SIGTERM, own)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a background job's
    with stop_signals_as_interrupts():
        assert signal.getsignal(signal.SIGTERM) is own
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize(("signum", "raised"), STOPS, ids=["sigint", "sigterm"])
def test_a_stop_whose_exception_was_swallowed_is_raised_at_the_next_check(
    signum: int, raised: type
) -> None:
    class SwallowsInDel:
        def __del__(self) -> None:
            signal.raise_signal(signum)  # Python prints the exception, goes on

    with stop_signals_as_interrupts():
        SwallowsInDel()  # dropped at once: __del__ runs here
        with pytest.raises(raised) as stopped:
            stop_if_requested()
        assert type(stopped.value) is raised
    with stop_signals_as_interrupts():
        stop_if_requested()  # a fresh stop forgets the last one: nothing to act on
