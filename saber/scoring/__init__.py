"""Scoring: normalized scores, SABER's aggregates over games, Atari-N estimates.

Pure numpy; every function states the shapes it takes. The pieces:

- :mod:`~saber.scoring.normalize`: world-record, beginner-human and average-human
  normalization (percent).
- :mod:`~saber.scoring.aggregate`: per-game means, median / mean (infinite gameplay at
  200%) / classes, IQM, optimality gap, stratified bootstrap intervals, probability of
  improvement, Welch t-tests, inter-algorithm normalization.
- :mod:`~saber.scoring.atari5`: Atari-1/3/5/10 estimates of the 57-game median, and
  per-game predictions.
- :mod:`~saber.scoring.scorefile`: reading score CSVs and harness results.

Example:
    >>> from saber.scoring import normalize, summarize
    >>> wr = normalize([21.0, 50000.0], ["pong", "breakout"], "world_record")
    >>> summary = summarize(dict(zip(["pong", "breakout"], wr)))
    >>> summary.classes["superhuman"], summary.games
    (2, ('pong', 'breakout'))
"""

from __future__ import annotations

from saber.scoring.aggregate import (
    CLASS_NAMES,
    CLASS_THRESHOLDS,
    INFINITE_MEAN_VALUE,
    Summary,
    WelchResult,
    bootstrap_game_means,
    class_counts,
    classify,
    game_means,
    inter_algorithm_normalize,
    interquartile_mean,
    mean_score,
    median_score,
    optimality_gap,
    percentile_interval,
    performance_profile,
    probability_of_improvement,
    regularized_incomplete_beta,
    stratified_bootstrap_ci,
    student_t_two_tailed_p,
    summarize,
    welch_t_test,
)
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
from saber.scoring.scorefile import (
    TIME_LIMITS,
    EpisodeScore,
    GameEpisodes,
    ScoreTable,
    merge_tables,
    read_harness_results,
    read_score_csv,
    read_scores,
)

__all__ = [
    "CAVEAT",
    "CLASS_NAMES",
    "CLASS_THRESHOLDS",
    "ESTIMATE_SUBSETS",
    "INFINITE_MEAN_VALUE",
    "REFERENCES",
    "TIME_LIMITS",
    "EpisodeScore",
    "GameEpisodes",
    "Reference",
    "ScoreTable",
    "Summary",
    "WelchResult",
    "atari57_median",
    "atari_n_estimate",
    "baseline_arrays",
    "bootstrap_game_means",
    "class_counts",
    "classify",
    "game_means",
    "has_baseline",
    "human_normalize",
    "inter_algorithm_normalize",
    "interquartile_mean",
    "mean_score",
    "median_score",
    "merge_tables",
    "missing_games",
    "normalize",
    "optimality_gap",
    "percentile_interval",
    "performance_profile",
    "predict_game_scores",
    "probability_of_improvement",
    "read_harness_results",
    "read_score_csv",
    "read_scores",
    "regularized_incomplete_beta",
    "stratified_bootstrap_ci",
    "student_t_two_tailed_p",
    "subset_weights",
    "summarize",
    "welch_t_test",
    "world_record_normalize",
]
