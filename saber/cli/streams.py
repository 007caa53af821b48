"""Where a command's output goes: stdout for its result, stderr for everything else."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def prints_to_stderr() -> Iterator[None]:
    """While the agent is imported, built and run: its prints go to stderr, so that stdout
    carries only the report.

    Python's ``sys.stdout`` is redirected for this process, and file descriptor 1 as well:
    the worker processes and the policy process started meanwhile inherit it (their
    ``print`` writes to it), and so does C code writing to fd 1 directly. Where fd 1 is
    closed, only ``sys.stdout`` is redirected.
    """
    sys.stdout.flush()
    try:
        saved: int | None = os.dup(1)
    except OSError:
        saved = None
    else:
        os.dup2(2, 1)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)
