"""SIGTERM's handler (saber.harness.sigterm): it never interrupts an import, and a stop
whose exception Python swallowed is still acted on."""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

import pytest

from saber.harness.sigterm import Terminated, stop_if_terminated, terminate_once


def test_a_sigterm_during_an_import_stops_once_the_import_is_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The signal lands in the module's body, mid-import: raising there would leave the
    # module half made (the traceback of a clean stop that failed on its next import).
    (tmp_path / "imported_while_stopped.py").write_text(
        "import signal, time\nsignal.raise_signal(signal.SIGTERM)\ntime.sleep(0.2)\nWHOLE = True\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    previous = signal.signal(signal.SIGTERM, terminate_once())
    try:
        with pytest.raises(Terminated):
            import imported_while_stopped  # noqa: F401

            time.sleep(5)  # the stop is acted on here, after the import
        assert sys.modules["imported_while_stopped"].WHOLE
    finally:
        signal.signal(signal.SIGTERM, previous)
        sys.modules.pop("imported_while_stopped", None)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_stop_whose_exception_was_swallowed_is_raised_at_the_next_check() -> None:
    class SwallowsInDel:
        def __del__(self) -> None:
            signal.raise_signal(signal.SIGTERM)  # Python prints the exception, goes on

    previous = signal.signal(signal.SIGTERM, terminate_once())
    try:
        SwallowsInDel()  # dropped at once: __del__ runs here
        with pytest.raises(Terminated):
            stop_if_terminated()
    finally:
        signal.signal(signal.SIGTERM, previous)
        terminate_once()  # a fresh handler forgets the stop
    stop_if_terminated()  # nothing to act on
