"""``saber verify``: a run directory is a claim; only what replay reproduces is proof.

Each finished episode of a run directory names its replay and the replay's SHA-256
(``episodes.jsonl``: ``replay``, ``replay_sha256``). Verifying a run:

1. holds its records to its request (``run.json``'s games x episodes, each exactly once;
   a duplicate or a record outside the request fails, a missing episode is counted:
   :class:`Wholeness`);
2. checks every replay statically, sampled or not (:func:`~saber.replay.verify.episode.
   static_check`): a regular file inside the run directory, of a size its header allows,
   whose SHA-256 is the record's and whose header names the record's game, episode,
   seed, agent, run and steps, the seed being its episode's under the run's base seed;
3. plays the drawn replays again from their seeds, under the settings their headers
   record, in fresh envs, without the policy (:class:`~saber.replay.simulate.
   Resimulation`), in worker processes, and rebuilds each record from the play: every
   field a score, an aggregate or a flag is computed from (:data:`CHECKED_FIELDS`) must
   equal the record's, exactly, or fails naming the field;
4. judges the run by its replays' headers, never by ``run.json``: a ``run.json`` whose
   settings, deviations, agent or run name disagree with them fails, naming what.

The results are typed and frozen (:mod:`saber.replay.verify.result`): a reader that shows
verified numbers takes them from :meth:`VerifyResult.proven_records`.

What it proves: the play in the replays produces the scores, under the settings in their
headers, on this emulator. What it does not prove: that a given policy produced that play
(anyone can write actions); that the base seed was not chosen among many; anything about
episodes that are not in the directory (it counts them).

>>> from pathlib import Path
>>> VerifyResult(Path("run")).summary()
'run: no finished episode to verify'
"""

from __future__ import annotations

# The names of saber verify, at this package (redundant aliases: re-exported).
from saber.replay.verify.episode import CHECKED_FIELDS as CHECKED_FIELDS
from saber.replay.verify.episode import why_unproven as why_unproven
from saber.replay.verify.result import EpisodeCheck as EpisodeCheck
from saber.replay.verify.result import Failure as Failure
from saber.replay.verify.result import VerifyResult as VerifyResult
from saber.replay.verify.result import Wholeness as Wholeness
from saber.replay.verify.run import verify_run as verify_run
from saber.replay.verify.run import versions_here as versions_here
from saber.replay.verify.training import verify_training_log as verify_training_log
