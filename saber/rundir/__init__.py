"""The run directory: its files, typed records of their contents, the one reader and writer.

``saber eval --out DIR`` writes it; ``saber report``, ``verify``, ``replay``, ``repair`` and
``board`` read it, all through this package's modules. docs/harness.md ("Output files")
gives its layout; docs/architecture.md its modules.
"""

from __future__ import annotations

from saber.errors import RunDirectoryError, StoreWriteError
from saber.rundir.damage import check_run_directory
from saber.rundir.reading import (
    read_episode_lines,
    read_run_file,
)
from saber.rundir.records import EPISODES_FILE, RUN_FILE, EpisodeLine, FailedAttempt
from saber.rundir.repair import repair_run
from saber.rundir.runfile import RunFile, Session

__all__ = [
    "EPISODES_FILE",
    "RUN_FILE",
    "EpisodeLine",
    "FailedAttempt",
    "RunDirectoryError",
    "RunFile",
    "Session",
    "StoreWriteError",
    "check_run_directory",
    "read_episode_lines",
    "read_run_file",
    "repair_run",
]
