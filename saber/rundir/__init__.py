"""The run directory: its files, typed records of their contents, the one reader and writer.

``saber eval --out DIR`` writes it; ``saber report``, ``verify``, ``replay``, ``repair`` and
``board`` read it. Its format is a package of its own, beside the SABER rules
(:mod:`saber.protocol`) that its lines record.

Layout of a run directory (``saber eval --out DIR``):

* ``episodes.jsonl``: one JSON object per line, appended, flushed and fsynced as it is
  written, and never rewritten: an :class:`EpisodeLine` per finished episode, and a
  :class:`FailedAttempt` per episode attempt that failed;
* ``run.json``: the run's provenance (:class:`RunFile`), rewritten atomically; it keeps
  one :class:`Session` per ``saber eval`` that opened the directory;
* ``.lock``: held while a run writes, so two runs cannot interleave in one directory;
* ``replays/``: one replay per episode, when asked for (:mod:`saber.protocol.replay` is
  their format, :func:`write_replay` writes them);
* ``videos/``: films of episodes, when asked for (:mod:`saber.training.video`).

Everything that reads or writes these files goes through the modules named here (this
package exports the few a reader of run directories needs; the rest are internal):

* :mod:`saber.rundir.records`: file names, the lines of ``episodes.jsonl``
  (:class:`EpisodeLine`, :class:`FailedAttempt`), the failure summary, the errors;
* :mod:`saber.rundir.runfile`: ``run.json`` (:class:`RunFile`, :class:`Session`) and
  what it says the run asked for (:class:`RunRequest`);
* :mod:`saber.rundir.reading`: the one reader (:func:`read_episode_lines`,
  :func:`read_run_json`, :func:`read_run_file`) and the integrity checks
  (:func:`check_episodes_log`, :func:`run_key`);
* :mod:`saber.rundir.durable`: the one writer (:func:`write_atomically`,
  :func:`writing_atomically`, :func:`append_whole`, :class:`EpisodeAppender`,
  :func:`write_run_file`, :func:`lock_directory`, :func:`write_replay`);
* :mod:`saber.rundir.torn`: completing a line cut short by a crash
  (:func:`complete_torn_line`);
* :mod:`saber.rundir.damage` and :mod:`saber.rundir.repair`: what ``saber repair``
  finds wrong in a directory and how it mends it.

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
