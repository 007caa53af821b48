"""The run directory: its files, typed records of their contents, the one reader and writer.

Layout of a run directory (``saber eval --out DIR``):

* ``episodes.jsonl``: one JSON object per line, appended, flushed and fsynced as it is
  written, and never rewritten: an :class:`EpisodeLine` per finished episode, and a
  :class:`FailedAttempt` per episode attempt that failed;
* ``run.json``: the run's provenance (:class:`RunFile`), rewritten atomically; it keeps
  one :class:`Session` per ``saber eval`` that opened the directory;
* ``.lock``: held while a run writes, so two runs cannot interleave in one directory;
* ``videos/``: films of episodes, when asked for (:mod:`saber.training.video`).

Everything that reads or writes these files goes through the modules named here (this
module is their public home, re-exporting what they define):

* :mod:`saber.protocol.records`: file names, the lines of ``episodes.jsonl``
  (:class:`EpisodeLine`, :class:`FailedAttempt`), the failure summary, the errors;
* :mod:`saber.protocol.runfile`: ``run.json`` (:class:`RunFile`, :class:`Session`) and
  what it says the run asked for (:class:`RunRequest`);
* :mod:`saber.protocol.reading`: the one reader (:func:`read_episode_lines`,
  :func:`read_run_json`, :func:`read_run_file`) and the integrity checks
  (:func:`check_episodes_log`, :func:`run_key`);
* :mod:`saber.protocol.durable`: the one writer (:func:`write_atomically`,
  :func:`writing_atomically`, :func:`append_whole`, :class:`EpisodeAppender`,
  :func:`write_run_file`, :func:`lock_directory`);
* :mod:`saber.protocol.torn`: completing a line cut short by a crash
  (:func:`complete_torn_line`).

The JSON keys are those of saber 0.2 (and 0.1), so old directories read.
"""

from __future__ import annotations

from saber.protocol import durable, reading, records, runfile, torn
from saber.protocol.durable import *  # noqa: F403
from saber.protocol.reading import *  # noqa: F403
from saber.protocol.records import *  # noqa: F403
from saber.protocol.runfile import *  # noqa: F403
from saber.protocol.torn import *  # noqa: F403

# Each module's public names (its __all__), so this list and theirs cannot drift apart.
__all__ = [
    *records.__all__,
    *runfile.__all__,
    *reading.__all__,
    *durable.__all__,
    *torn.__all__,
]
