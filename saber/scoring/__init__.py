"""Scoring: normalized scores, SABER's aggregates over games, Atari-N estimates, references.

Pure numpy (and scipy for the textbook tests); docs/reports.md describes each statistic.

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
