"""SABER's own aggregation rules on top of rliable's statistics: infinite gameplay, classes.

docs/reports.md and ``protocol.md`` section 4 give the rules.

    >>> class_counts([0.5, 5.0, 20.0, 80.0, float("inf")])
    {'failing': 1, 'poor': 1, 'medium': 1, 'fair': 1, 'superhuman': 1}
    >>> counted_in_means([10.0, float("inf")]).tolist()
    [10.0, 200.0]
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

# SABER's classes of a world-record-normalized score, percent: failing < 1 <= poor < 10
# <= medium < 50 <= fair < 100 <= superhuman.
CLASS_NAMES: tuple[str, ...] = ("failing", "poor", "medium", "fair", "superhuman")
CLASS_THRESHOLDS: tuple[float, ...] = (1.0, 10.0, 50.0, 100.0)
CLASS_ROUNDING_DECIMALS = 9

# Percent given to an infinite game in the means (mean, IQM) of world-record-normalized scores.
INFINITE_MEAN_VALUE = 200.0


def game_mean(scores: ArrayLike, infinite: bool = False) -> float:
    """Mean of one game's episode (or run) scores; infinite if any of them is.

    SABER marks a game infinite as soon as one of its episodes is, whatever the others;
    the same rule makes a game's mean over runs infinite when one run is.

    Args:
        scores: raw or normalized scores, shape (n,), n >= 1; ``+inf`` for infinite ones.
        infinite: the game is known to be infinite (a finite score recorded at the cap).

    Returns:
        The mean, or ``+inf``.
    """
    scores = np.asarray(scores, dtype=float)
    if scores.size == 0:
        raise ValueError("Expect at least one score per game")
    return float("inf") if infinite or np.isposinf(scores).any() else float(scores.mean())


def counted_in_means(normalized: ArrayLike, infinite_value: float = INFINITE_MEAN_VALUE) -> NDArray:
    """Scores as they enter a mean: ``+inf`` becomes ``infinite_value`` percent (SABER: 200).

    Args:
        normalized: scores of any shape, percent, no NaN.
        infinite_value: percent of an infinite score.

    Returns:
        A float array of the same shape.
    """
    normalized = no_nan(normalized)
    return np.where(np.isposinf(normalized), infinite_value, normalized)


def classify(normalized: ArrayLike) -> NDArray:
    """SABER class index of each normalized score (0 failing ... 4 superhuman).

    Args:
        normalized: world-record-normalized scores in percent, any shape, no NaN. A score
            within 1e-9 points of a threshold counts as on it.

    Returns:
        Integer array of the same shape, indexing :data:`CLASS_NAMES`.
    """
    # Rounded to 1e-9 percentage points so that floating-point error in the normalization
    # never moves a score sitting on a threshold (10% = 3,890 in Venture) to the class
    # below; side="right": a score on a threshold belongs to the class above it.
    rounded = np.round(no_nan(normalized), CLASS_ROUNDING_DECIMALS)
    return np.searchsorted(CLASS_THRESHOLDS, rounded, side="right")


def class_counts(normalized: ArrayLike) -> dict[str, int]:
    """Number of games in each SABER class.

    Args:
        normalized: scores of shape (G,), percent; ``+inf`` is superhuman.

    Returns:
        ``{"failing": n, "poor": n, "medium": n, "fair": n, "superhuman": n}``.
    """
    counts = np.bincount(
        classify(np.asarray(normalized, dtype=float)).ravel(), minlength=len(CLASS_NAMES)
    )
    return dict(zip(CLASS_NAMES, (int(n) for n in counts), strict=True))


def no_nan(normalized: ArrayLike) -> NDArray:
    """``normalized`` as a float array, refusing NaN (a game without the reference score)."""
    normalized = np.asarray(normalized, dtype=float)
    if np.isnan(normalized).any():
        raise ValueError(
            "Expect no NaN scores: leave games without a reference score out of the aggregates"
        )
    return normalized
