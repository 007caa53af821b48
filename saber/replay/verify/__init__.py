"""``saber verify``: a run directory is a claim; only what replay reproduces is proof.

It holds the records to the run's request, checks every replay, plays a draw of them again
and judges the run by the replays' headers (docs/verify.md: the steps, what it proves).

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
