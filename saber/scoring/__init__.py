"""Scoring: normalized scores, SABER's aggregates over games, Atari-N estimates.

Pure numpy (and scipy for the textbook tests); every function states the shapes it takes:

- :mod:`~saber.scoring.normalize`: world-record, beginner-human and average-human
  normalization (percent).
- :mod:`~saber.scoring.stats`: rliable's aggregates over a (runs x games) matrix (median,
  mean, IQM, optimality gap, score distributions, probability of improvement), the
  stratified bootstraps over runs or episodes, Welch t-tests, inter-algorithm normalization.
- :mod:`~saber.scoring.rules`: SABER's own rules: infinite gameplay at 200% in means, the
  five classes.
- :mod:`~saber.scoring.atari5`: Atari-1/3/5/10 estimates of the 57-game median, and
  per-game predictions.
- :mod:`~saber.scoring.scorefile`: reading score CSVs and harness results (with runs).
- :mod:`~saber.scoring.references`: shipped reference agents (the SABER paper's, a
  measured random agent, Dopamine's).
- :mod:`~saber.scoring.dopamine`: Dopamine's published training curves (6 agents x 5 runs,
  every 1M-frame iteration; not SABER, and labelled so).

Example:
    >>> import numpy as np
    >>> from saber.scoring import aggregate_median, class_counts, normalize
    >>> wr = normalize([21.0, 50000.0], ["pong", "breakout"], "world_record")
    >>> class_counts(wr)["superhuman"], float(aggregate_median(wr[None, :])) > 100
    (2, True)
"""

from __future__ import annotations

from saber.errors import UnknownReferenceError
from saber.scoring.atari5 import atari_n_estimate
from saber.scoring.csvscores import read_score_csv
from saber.scoring.normalize import Reference, human_normalize, normalize, world_record_normalize
from saber.scoring.references import list_references, reference_table, training_reference
from saber.scoring.rules import class_counts
from saber.scoring.runscores import read_harness_results
from saber.scoring.scorefile import read_scores
from saber.scoring.scoretable import ScoreTable, merge_tables
from saber.scoring.stats import (
    aggregate_iqm,
    aggregate_mean,
    aggregate_median,
    aggregate_optimality_gap,
    bootstrap_runs,
    probability_of_improvement,
    score_distribution,
    welch_t_test,
)

__all__ = [
    "Reference",
    "ScoreTable",
    "UnknownReferenceError",
    "aggregate_iqm",
    "aggregate_mean",
    "aggregate_median",
    "aggregate_optimality_gap",
    "atari_n_estimate",
    "bootstrap_runs",
    "class_counts",
    "human_normalize",
    "list_references",
    "merge_tables",
    "normalize",
    "probability_of_improvement",
    "read_harness_results",
    "read_score_csv",
    "read_scores",
    "reference_table",
    "score_distribution",
    "training_reference",
    "welch_t_test",
    "world_record_normalize",
]
