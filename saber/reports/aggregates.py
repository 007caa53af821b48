"""The aggregates of one agent at one time limit, for one normalization, with intervals.

:func:`block_aggregates` gives a report section's ``world_record`` or ``human`` block;
docs/reports.md describes the statistics.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from saber.games import get_game
from saber.reports.model import NO_INTERVAL, Aggregates, Interval, Profile, Resampled
from saber.scoring import Reference, stats
from saber.scoring.rules import class_counts, counted_in_means, game_mean

# Thresholds of the score distribution, percent of the record: -1000% .. -0.1%, 0%, then
# 0.1% .. 1000%, 20 per decade. Negative ones too: an agent near or below random (many
# entries under 0%) has its whole curve in the report, not only the part above 0%.
_POSITIVE_THRESHOLDS = np.logspace(-1, 3, 81)
PROFILE_THRESHOLDS = np.concatenate([-_POSITIVE_THRESHOLDS[::-1], [0.0], _POSITIVE_THRESHOLDS])
NO_SABER_BASELINE = "no SABER baseline"
_MISSING_SCORE = {"world_record": "no world record", "human": "no human score"}

Statistic = Callable[[NDArray], NDArray]


def finite(value: float | None) -> float | None:
    """``value`` as a float, or None when it is None or not finite (JSON has no inf)."""
    if value is None:
        return None
    value = float(value)
    return value if np.isfinite(value) else None


def finite_interval(low: float, high: float) -> Interval:
    """``(low, high)``, each end :func:`finite`."""
    return (finite(low), finite(high))


def _left_out_reason(game: str, reference: Reference) -> str:
    return _MISSING_SCORE[reference] if get_game(game).in_saber else NO_SABER_BASELINE


class Resampler:
    """Bootstrap resamples of a section's (R, G) matrix, as rliable or (one run) by episodes."""

    def __init__(self, unit: Resampled | None, seed: int, n_resamples: int) -> None:
        self.unit, self.seed, self.n_resamples = unit, seed, n_resamples

    def samples(self, matrix: NDArray, episode_scores: list[NDArray]) -> NDArray | None:
        """(B, R, G) resampled matrices; None when the section has no intervals.

        Args:
            matrix: the (R, G) matrix of per-run, per-game means (games with the reference).
            episode_scores: per game, the single run's normalized episodes (``"episodes"``).
        """
        # A fresh generator per call: a block's intervals do not depend on which other
        # agents, time limits or normalizations share the report.
        rng = np.random.default_rng(self.seed)
        if self.unit == "runs":
            return stats.bootstrap_runs(matrix, rng, self.n_resamples)
        if self.unit == "episodes":
            return stats.bootstrap_episode_means(episode_scores, rng, self.n_resamples)[:, None, :]
        return None


def _statistics(infinite_in_means: bool) -> dict[str, Statistic]:
    # World record: infinite counts 200% in the means. Human: infinite columns are removed
    # before (left_out_of_mean), so what reaches the means is finite.
    def means_view(x: NDArray) -> NDArray:
        return counted_in_means(x) if infinite_in_means else x

    return {
        "median": stats.aggregate_median,
        "mean": lambda x: stats.aggregate_mean(means_view(x)),
        "iqm": lambda x: stats.aggregate_iqm(means_view(x)),
        "optimality_gap": stats.aggregate_optimality_gap,
    }


def block_aggregates(
    games: list[str],
    matrix: NDArray,
    episode_scores: list[NDArray],
    reference: Reference,
    resampler: Resampler,
    level: float,
) -> Aggregates:
    """Aggregates of one normalization over the (R, G) matrix (NaN columns: no reference)."""
    has_score = ~np.isnan(matrix).any(axis=0) if matrix.size else np.zeros(len(games), bool)
    kept = [g for g, ok in zip(games, has_score, strict=True) if ok]
    left_out = sorted(g for g, ok in zip(games, has_score, strict=True) if not ok)
    x = matrix[:, has_score]
    eps = [e for e, ok in zip(episode_scores, has_score, strict=True) if ok]
    infinite_cols = np.isposinf(x).any(axis=0)
    infinite = [g for g, inf in zip(kept, infinite_cols, strict=True) if inf]
    world_record = reference == "world_record"
    # Human scores: the 200% rule is SABER's world-record rule, so an infinite game has no
    # value in a human-normalized mean: it is left out of the mean and the IQM (listed).
    mean_cols = np.ones(len(kept), bool) if world_record else ~infinite_cols
    left_out_of_mean = [] if world_record else infinite
    reasons = {g: _left_out_reason(g, reference) for g in left_out}
    per_game_mean = np.array([game_mean(x[:, j]) for j in range(len(kept))] if x.shape[0] else [])
    statistics = _statistics(world_record)
    values: dict[str, float | None] = dict.fromkeys(statistics)
    cis: dict[str, Interval] = dict.fromkeys(statistics, NO_INTERVAL)
    samples = resampler.samples(x, eps) if x.size else None
    for name, statistic in statistics.items():
        cols = mean_cols if name in ("mean", "iqm") else slice(None)
        data = x[:, cols]
        if data.size == 0:
            continue  # no game counts (or none with a run): no value, not NaN
        values[name] = float(statistic(data))
        if samples is not None:
            cis[name] = finite_interval(
                *stats.percentile_interval(statistic(samples[..., cols]), level)
            )
    median = values["median"]
    return Aggregates(
        median=finite(median),
        median_infinite=median is not None and bool(np.isposinf(median)),
        mean=finite(values["mean"]),
        iqm=finite(values["iqm"]),
        optimality_gap=finite(values["optimality_gap"]),
        games=len(kept),
        left_out=left_out,
        left_out_reasons=reasons,
        infinite=infinite,
        left_out_of_mean=left_out_of_mean,
        classes=class_counts(per_game_mean),
        median_ci=cis["median"],
        mean_ci=cis["mean"],
        iqm_ci=cis["iqm"],
        optimality_gap_ci=cis["optimality_gap"],
        profile=profile(x, samples, level) if world_record else None,
    )


def profile(x: NDArray | None, samples: NDArray | None, level: float) -> Profile:
    thresholds = [float(t) for t in PROFILE_THRESHOLDS]
    nothing: list[float | None] = [None] * len(thresholds)
    if x is None or x.size == 0:
        return Profile(thresholds, nothing, list(nothing), list(nothing))
    fractions = [float(f) for f in stats.score_distribution(x, PROFILE_THRESHOLDS)]
    if samples is None:
        return Profile(thresholds, list(fractions), list(nothing), list(nothing))
    low, high = stats.percentile_interval(
        stats.score_distribution(samples, PROFILE_THRESHOLDS), level
    )
    return Profile(thresholds, list(fractions), [float(v) for v in low], [float(v) for v in high])
