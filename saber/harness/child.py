"""What every child process of the harness does first: the local workers and the policy
process (``--policy-process``) alike, so that both stop the same way."""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import signal
import threading


def become_child_process() -> None:
    """Leave Ctrl-C and SIGTERM to the main process, and die with it.

    The main process handles Ctrl-C and SIGTERM (sent to the whole process group, say) and
    stops its children itself: a worker that died of the signal first would be recorded as
    a failed attempt.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _exit_with_parent()


def _exit_with_parent() -> None:
    """End this process as soon as its parent is gone, whatever it is doing.

    A child notices a parent that exits normally (its pipe closes), but not one killed
    outright (``kill -9``) while the child is busy: a policy that hangs would then keep
    the process, and its memory, forever. A daemon thread waits on the parent's sentinel
    (a pipe that the operating system closes when the parent dies) and exits at once.
    """
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(1)

    threading.Thread(target=watch, name="saber-parent-watch", daemon=True).start()
