"""rliable's statistics over a (runs x games) matrix, and the bootstraps that give intervals.

rliable's definitions, computed without it (``tests/scoring/test_rliable.py`` compares);
docs/reports.md describes each. Infinite gameplay is fed in by :mod:`saber.scoring.rules`.

    >>> scores = np.array([[0.0, 10.0, 50.0, 200.0], [2.0, 20.0, 70.0, 100.0]])  # (R=2, G=4)
    >>> float(aggregate_median(scores)), float(aggregate_iqm(scores))
    (37.5, 37.5)
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

# The optimality gap's gamma, percent: the world record (or the human score).
OPTIMALITY_TARGET = 100.0


def _matrix(scores: ArrayLike) -> NDArray:
    scores = np.asarray(scores, dtype=float)
    if scores.ndim < 2 or 0 in scores.shape[-2:]:
        raise ValueError(
            f"Expect scores of shape (..., runs, games) with at least one of each, "
            f"actually: {scores.shape}"
        )
    if np.isnan(scores).any():
        raise ValueError("Expect no NaN scores: leave games without a reference score out")
    return scores


def aggregate_median(scores: ArrayLike) -> NDArray:
    """Median over games of the per-game mean over runs (rliable ``aggregate_median``).

    Args:
        scores: shape (..., R, G), percent.

    Returns:
        Shape (...); ``+inf`` when the middle game(s) are infinite.
    """
    return np.median(np.mean(_matrix(scores), axis=-2), axis=-1)


def aggregate_mean(scores: ArrayLike) -> NDArray:
    """Mean over games of the per-game mean over runs (rliable ``aggregate_mean``).

    Args:
        scores: shape (..., R, G), percent, finite (see :func:`~saber.scoring.rules.counted_in_means`).

    Returns:
        Shape (...).
    """
    return np.mean(np.mean(_matrix(scores), axis=-2), axis=-1)


def aggregate_iqm(scores: ArrayLike) -> NDArray:
    """Interquartile mean of all R x G entries: ``scipy.stats.trim_mean(x, 0.25)``.

    rliable ``aggregate_iqm``: ``floor(R * G / 4)`` entries are cut at each end.

    Args:
        scores: shape (..., R, G), percent, finite.

    Returns:
        Shape (...).
    """
    scores = _matrix(scores)
    flat = scores.reshape(*scores.shape[:-2], -1)
    if flat.shape[-1] < 4:
        # trim_mean cuts int(0.25 n) = 0 entries below 4: it is the mean of the entries in
        # the order its partition on (0, n - 1) leaves them, sorted for n <= 3. The same
        # number without importing SciPy, about 0.6 s of CPU at the start of every short
        # `saber eval` (tested equal to trim_mean, bit for bit).
        return np.asarray(np.mean(np.sort(flat, axis=-1), axis=-1))
    import scipy.stats  # here, not at import: see above

    return np.asarray(scipy.stats.trim_mean(flat, proportiontocut=0.25, axis=-1))


def aggregate_optimality_gap(scores: ArrayLike, gamma: float = OPTIMALITY_TARGET) -> NDArray:
    """How far below ``gamma`` the entries stay on average (rliable's name and definition).

    ``gamma - mean(min(scores, gamma))`` over all R x G entries; lower is better.

    Args:
        scores: shape (..., R, G), percent; ``+inf`` counts as ``gamma``.
        gamma: percent counted as optimal.

    Returns:
        Shape (...), percent.

    Example:
        >>> scores = np.array([[0.0, 10.0, 50.0, 200.0], [2.0, 20.0, 70.0, 100.0]])  # (R=2, G=4)
        >>> float(aggregate_mean(scores)), float(aggregate_optimality_gap(scores))
        (56.5, 56.0)
    """
    return gamma - np.mean(np.minimum(_matrix(scores), gamma), axis=(-2, -1))


def score_distribution(scores: ArrayLike, thresholds: ArrayLike) -> NDArray:
    """Performance profile: the fraction of all R x G entries above each threshold.

    rliable's ``score_distributions`` (``use_score_distribution=True``).

    Args:
        scores: shape (..., R, G), percent; ``+inf`` is above every threshold.
        thresholds: T thresholds in percent, shape (T,).

    Returns:
        Shape (..., T), fractions in [0, 1].
    """
    scores = _matrix(scores)
    thresholds = np.asarray(thresholds, dtype=float)
    flat = scores.reshape(*scores.shape[:-2], 1, -1)
    return np.mean(flat > thresholds[:, None], axis=-1)


def probability_of_improvement(x: ArrayLike, y: ArrayLike) -> float:
    """P(X > Y): per game, Mann-Whitney's U over runs divided by ``R_x * R_y``; averaged.

    rliable ``probability_of_improvement``, with ``scipy.stats.mannwhitneyu``. Raw or
    normalized scores give the same answer (normalization is increasing per game).

    Args:
        x: X's scores, shape (R_x, G).
        y: Y's scores, shape (R_y, G), the same games in the same order.

    Returns:
        A probability in [0, 1]; 0.5 on a game where both are identical.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.ndim != 2 or y.ndim != 2 or x.shape[1] != y.shape[1] or x.shape[1] == 0:
        raise ValueError(
            f"Expect (runs, games) arrays of the same games, got {x.shape} and {y.shape}"
        )
    import scipy.stats

    per_game = []
    for game in range(x.shape[1]):
        if np.array_equal(x[:, game], y[:, game]):
            per_game.append(0.5)  # rliable's special case; mannwhitneyu agrees
            continue
        u = scipy.stats.mannwhitneyu(x[:, game], y[:, game], alternative="greater").statistic
        per_game.append(u / (x.shape[0] * y.shape[0]))
    return float(np.mean(per_game))


def pairwise_improvement(x: ArrayLike, y: ArrayLike) -> NDArray:
    """:func:`probability_of_improvement` over leading (resample) axes, by counting pairs.

    U / (n m) is the fraction of (x, y) pairs with x > y, ties counting one half; this
    counts them directly so that thousands of bootstrap resamples need no loop.

    Args:
        x: shape (..., R_x, G).
        y: shape (..., R_y, G).

    Returns:
        Shape (...).
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    a, b = x[..., :, None, :], y[..., None, :, :]
    return np.mean((a > b) + 0.5 * (a == b), axis=(-3, -2, -1))


def improvement_over_episodes(
    x: Sequence[ArrayLike],
    y: Sequence[ArrayLike],
    rng: np.random.Generator,
    n_resamples: int,
) -> tuple[float, NDArray]:
    """P(X > Y) with episodes in place of runs, and its stratified bootstrap over episodes.

    Per game, the fraction of (X episode, Y episode) pairs with X's higher, ties counting
    one half (Mann-Whitney's U over ``n_g * m_g``: rliable's per-game statistic, for
    episodes); averaged over games. Each resample redraws every game's episodes of each
    agent from its own (rliable's ``StratifiedIndependentBootstrap``, with episodes for
    runs), as counts: a resample's pair fraction is ``w K v / (n m)`` for the pair matrix
    ``K`` and the draw counts ``w``, ``v``.

    Args:
        x: G arrays of X's episode scores (raw or normalized; ``+inf``: infinite gameplay).
        y: G arrays of Y's, the same games in the same order.
        rng: the random generator; its state advances.
        n_resamples: B.

    Returns:
        ``(p, samples)``: the estimate and the B resampled estimates, shape (B,).
    """
    if len(x) != len(y) or not len(x):
        raise ValueError(f"Expect the same games for both agents, got {len(x)} and {len(y)}")
    point, samples = [], np.zeros(n_resamples)
    for a, b in zip(x, y, strict=True):
        a, b = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
        if not (a.size and b.size):
            raise ValueError("Expect at least one episode per game for each agent")
        pairs = (a[:, None] > b[None, :]) + 0.5 * (a[:, None] == b[None, :])  # (n, m)
        point.append(pairs.mean())
        w = rng.multinomial(a.size, np.full(a.size, 1 / a.size), size=n_resamples)
        v = rng.multinomial(b.size, np.full(b.size, 1 / b.size), size=n_resamples)
        samples += ((w @ pairs) * v).sum(axis=1) / (a.size * b.size)
    return float(np.mean(point)), samples / len(x)


def bootstrap_runs(scores: ArrayLike, rng: np.random.Generator, n_resamples: int) -> NDArray:
    """Stratified bootstrap over runs: each game's R entries are redrawn from its own R.

    rliable's ``StratifiedBootstrap`` (``task_bootstrap=False``): for every resample and
    every game, R run indices drawn with replacement, independently per game.

    Args:
        scores: shape (R, G).
        rng: the random generator; its state advances.
        n_resamples: B.

    Returns:
        Shape (B, R, G).
    """
    scores = _matrix(scores)
    runs, games = scores.shape
    picks = rng.integers(0, runs, size=(n_resamples, runs, games))
    return np.take_along_axis(scores[None], picks, axis=1)


def bootstrap_episode_means(
    episodes: Sequence[ArrayLike],
    rng: np.random.Generator,
    n_resamples: int,
    chunk: int = 250,
) -> NDArray:
    """Stratified bootstrap over episodes (one run): per-game means of redrawn episodes.

    Each resample draws n_g episodes with replacement from game g's n_g, for every game,
    and averages them. Vectorized over resamples (in chunks, to bound memory at about
    ``chunk * max(n_g) * G`` floats); reproducible for a given ``rng`` state. A game with
    an infinite episode stays infinite in every resample (SABER's rule, not a sampling
    question).

    Args:
        episodes: G arrays of episode scores (normalized or raw), shapes (n_g,).
        rng: the random generator; its state advances.
        n_resamples: B.
        chunk: resamples drawn at once.

    Returns:
        Shape (B, G).
    """
    counts = np.array([np.size(e) for e in episodes])
    if counts.size == 0 or counts.min() < 1:
        raise ValueError("Expect at least one game and one episode per game")
    n_max = int(counts.max())
    padded = np.zeros((len(episodes), n_max))
    for g, scores in enumerate(episodes):
        padded[g, : counts[g]] = np.asarray(scores, dtype=float)
    infinite = np.isposinf(padded).any(axis=1)
    padded[infinite] = 0.0  # overwritten below; keeps inf out of the sums
    used = np.arange(n_max)[:, None] < counts[None, :]  # (n_max, G): draw j counts for game g
    ragged = not used.all()
    flat, offsets = padded.ravel(), np.arange(len(episodes)) * n_max  # flat index: g * n_max + j
    means = np.empty((n_resamples, len(episodes)))
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        # One uniform draw per (resample, slot, game), scaled to that game's own n_g.
        picks = (rng.random((size, n_max, len(episodes))) * counts).astype(np.intp)
        drawn = np.take(flat, picks + offsets)  # (size, n_max, G)
        if ragged:
            drawn *= used
        means[start : start + size] = drawn.sum(axis=1) / counts
    means[:, infinite] = np.inf
    return means


def percentile_interval(samples: ArrayLike, level: float = 0.95) -> tuple[NDArray, NDArray]:
    """Percentile interval of bootstrap statistics (rliable's ``method="percentile"``).

    Args:
        samples: B statistics along the first axis, shape (B, ...).
        level: coverage, e.g. 0.95 for a 95% interval.

    Returns:
        ``(low, high)``, each of shape (...): the ``(1 - level) / 2`` and ``(1 + level) / 2``
        quantiles (linear interpolation); ``inf`` where they fall among infinite statistics.
    """
    samples = np.asarray(samples, dtype=float)
    # Infinite statistics (a median landing on infinite games) make numpy interpolate
    # inf - inf = NaN between two infinite neighbours; that quantile is infinite.
    with np.errstate(invalid="ignore"):
        low, high = np.quantile(samples, [(1 - level) / 2, (1 + level) / 2], axis=0)
    if np.isposinf(samples).any():
        low, high = (np.where(np.isnan(q), np.inf, q) for q in (low, high))
    return low, high


@dataclass(frozen=True)
class WelchResult:
    """Welch's two-sample t-test (``scipy.stats.ttest_ind(equal_var=False)``).

    Attributes:
        t: the t statistic, positive when X's mean is higher.
        df: Welch-Satterthwaite degrees of freedom.
        p_value: two-tailed p-value.
    """

    t: float
    df: float
    p_value: float


def welch_t_test(x: ArrayLike, y: ArrayLike) -> WelchResult:
    """Two-tailed Welch t-test between two agents' scores on one game.

    As in the ALE paper (Bellemare et al. 2013): unequal variances and Welch-Satterthwaite
    degrees of freedom, computed by ``scipy.stats.ttest_ind(x, y, equal_var=False)``.

    Args:
        x: X's finite scores (episodes, or per-run means), shape (n,), n >= 2.
        y: Y's finite scores, shape (m,), m >= 2.

    Returns:
        The statistic, degrees of freedom and two-tailed p-value. If both samples have
        zero variance (where scipy has no answer), equal means give ``t = 0, p = 1`` and
        different ones ``t = ±inf, p = 0``, with df ``n + m - 2``.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size < 2 or y.size < 2:
        raise ValueError(f"Expect at least 2 scores per agent, actually: {x.size} and {y.size}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("Expect finite scores for a t-test (infinite gameplay has none)")
    if x.var() == 0.0 and y.var() == 0.0:
        df = float(x.size + y.size - 2)
        diff = float(x.mean() - y.mean())
        if diff == 0.0:
            return WelchResult(0.0, df, 1.0)
        return WelchResult(float(np.copysign(np.inf, diff)), df, 0.0)
    import scipy.stats

    with warnings.catch_warnings():
        # One constant sample (every episode the same score) is a valid Welch test, yet
        # scipy warns about "catastrophic cancellation" in its variance.
        warnings.filterwarnings("ignore", "Precision loss", RuntimeWarning)
        result = scipy.stats.ttest_ind(x, y, equal_var=False)
    return WelchResult(float(result.statistic), float(result.df), float(result.pvalue))


def inter_algorithm_normalize(scores: ArrayLike) -> NDArray:
    """Inter-algorithm normalization of the ALE paper (Bellemare et al. 2013), in percent.

    Each game is scaled to the range of the agents compared: ``100 * (s - min) / (max -
    min)`` over agents, so the worst agent gets 0 and the best 100 on every game. An
    infinite score is the limit of that formula: it gets 100 and every finite score 0.
    A game where all agents score the same (all infinite included) has no range: NaN.

    Args:
        scores: raw per-game scores of shape (A, G).

    Returns:
        Array of shape (A, G), percent.
    """
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 2 or np.isnan(scores).any():
        raise ValueError(f"Expect scores of shape (agents, games) without NaN, got {scores.shape}")
    low, high = scores.min(axis=0), scores.max(axis=0)
    with np.errstate(invalid="ignore"):
        scaled = 100.0 * (scores - low) / (high - low)  # finite / inf -> 0 when one is infinite
    scaled = np.where(np.isposinf(scores), 100.0, scaled)
    return np.where(high > low, scaled, np.nan)
