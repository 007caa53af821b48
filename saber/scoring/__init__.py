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

from saber.scoring.atari5 import (
    CAVEAT,
    ESTIMATE_SUBSETS,
    atari57_median,
    atari_n_estimate,
    missing_games,
    predict_game_scores,
    subset_weights,
)
from saber.scoring.normalize import (
    REFERENCES,
    Reference,
    baseline_arrays,
    has_baseline,
    human_normalize,
    normalize,
    world_record_normalize,
)
from saber.scoring.references import (
    ReferenceInfo,
    UnknownReferenceError,
    list_references,
    reference_table,
    training_reference,
)
from saber.scoring.rules import (
    CLASS_NAMES,
    CLASS_THRESHOLDS,
    INFINITE_MEAN_VALUE,
    class_counts,
    classify,
    counted_in_means,
    game_mean,
)
from saber.scoring.scorefile import read_harness_results, read_score_csv, read_scores
from saber.scoring.scoretable import (
    DEFAULT_RUN,
    EpisodeScore,
    GameEpisodes,
    ScoreTable,
    merge_tables,
)
from saber.scoring.stats import (
    WelchResult,
    aggregate_iqm,
    aggregate_mean,
    aggregate_median,
    aggregate_optimality_gap,
    bootstrap_episode_means,
    bootstrap_runs,
    inter_algorithm_normalize,
    percentile_interval,
    probability_of_improvement,
    score_distribution,
    welch_t_test,
)

__all__ = [
    "CAVEAT",
    "CLASS_NAMES",
    "CLASS_THRESHOLDS",
    "DEFAULT_RUN",
    "ESTIMATE_SUBSETS",
    "INFINITE_MEAN_VALUE",
    "REFERENCES",
    "EpisodeScore",
    "GameEpisodes",
    "Reference",
    "ReferenceInfo",
    "ScoreTable",
    "UnknownReferenceError",
    "WelchResult",
    "aggregate_iqm",
    "aggregate_mean",
    "aggregate_median",
    "aggregate_optimality_gap",
    "atari57_median",
    "atari_n_estimate",
    "baseline_arrays",
    "bootstrap_episode_means",
    "bootstrap_runs",
    "class_counts",
    "classify",
    "counted_in_means",
    "game_mean",
    "has_baseline",
    "human_normalize",
    "inter_algorithm_normalize",
    "list_references",
    "merge_tables",
    "missing_games",
    "normalize",
    "percentile_interval",
    "predict_game_scores",
    "probability_of_improvement",
    "read_harness_results",
    "read_score_csv",
    "read_scores",
    "reference_table",
    "score_distribution",
    "subset_weights",
    "training_reference",
    "welch_t_test",
    "world_record_normalize",
]
