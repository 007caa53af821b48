"""Aggregates over games: SABER's median, mean and classes, and statistics beyond the paper.

Every function is pure numpy over stated shapes. Conventions:

- G is the number of games, R the number of bootstrap resamples, A the number of agents.
- Normalized scores are in percent (see :mod:`saber.scoring.normalize`).
- Infinite gameplay is ``+inf``. SABER (section 4 of ``protocol.md``) counts an infinite
  game as 200% in the *mean* of world-record-normalized scores; everywhere else it is
  larger than any finite score: superhuman, and sorted to the top by the median.

Example:
    >>> scores = np.array([0.5, 5.0, 20.0, 80.0, np.inf])
    >>> float(median_score(scores)), float(mean_score(scores))
    (20.0, 61.1)
    >>> class_counts(scores)
    {'failing': 1, 'poor': 1, 'medium': 1, 'fair': 1, 'superhuman': 1}
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "CLASS_NAMES",
    "CLASS_THRESHOLDS",
    "INFINITE_MEAN_VALUE",
    "Summary",
    "WelchResult",
    "bootstrap_game_means",
    "class_counts",
    "classify",
    "game_means",
    "inter_algorithm_normalize",
    "interquartile_mean",
    "mean_score",
    "median_score",
    "optimality_gap",
    "percentile_interval",
    "performance_profile",
    "probability_of_improvement",
    "regularized_incomplete_beta",
    "stratified_bootstrap_ci",
    "student_t_two_tailed_p",
    "summarize",
    "welch_t_test",
]

# SABER's classes of a world-record-normalized score, percent: failing < 1 <= poor < 10
# <= medium < 50 <= fair < 100 <= superhuman.
CLASS_NAMES: tuple[str, ...] = ("failing", "poor", "medium", "fair", "superhuman")
CLASS_THRESHOLDS: tuple[float, ...] = (1.0, 10.0, 50.0, 100.0)
CLASS_ROUNDING_DECIMALS = 9

# Percent given to an infinite game in the mean of world-record-normalized scores.
INFINITE_MEAN_VALUE = 200.0


def game_means(episodes: Sequence[ArrayLike]) -> NDArray:
    """Per-game mean of episode scores; a game with any infinite episode is infinite.

    SABER marks a game infinite as soon as one of its episodes is, whatever the others.

    Args:
        episodes: G arrays of episode scores, shapes (n_g,) with n_g >= 1.

    Returns:
        Array of shape (G,), ``+inf`` for infinite games.
    """
    means = np.empty(len(episodes))
    for g, scores in enumerate(episodes):
        scores = np.asarray(scores, dtype=float)
        if scores.size == 0:
            raise ValueError(f"Expect at least one episode per game, game {g} has none")
        means[g] = np.inf if np.isposinf(scores).any() else scores.mean()
    return means


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
    rounded = np.round(_no_nan(normalized), CLASS_ROUNDING_DECIMALS)
    return np.searchsorted(CLASS_THRESHOLDS, rounded, side="right")


def class_counts(normalized: ArrayLike) -> dict[str, int]:
    """Number of games in each SABER class.

    Args:
        normalized: scores of shape (G,), percent; ``+inf`` is superhuman.

    Returns:
        ``{"failing": n, "poor": n, "medium": n, "fair": n, "superhuman": n}``.
    """
    counts = np.bincount(classify(normalized).ravel(), minlength=len(CLASS_NAMES))
    return dict(zip(CLASS_NAMES, (int(n) for n in counts), strict=True))


def median_score(normalized: ArrayLike) -> NDArray:
    """Median over games; infinite games sort to the top.

    Args:
        normalized: scores of shape (..., G), percent, no NaN.

    Returns:
        Array of shape (...); ``+inf`` only if the middle game(s) are infinite.
    """
    return np.median(_no_nan(normalized), axis=-1)


def _finite_or(normalized: ArrayLike, infinite_value: float) -> NDArray:
    normalized = _no_nan(normalized)
    return np.where(np.isposinf(normalized), infinite_value, normalized)


def mean_score(
    normalized: ArrayLike, infinite_value: float | None = INFINITE_MEAN_VALUE
) -> NDArray:
    """Mean over games, with an infinite game counted as ``infinite_value`` percent.

    Args:
        normalized: scores of shape (..., G), percent, no NaN.
        infinite_value: percent for an infinite game: 200 for SABER's world-record mean;
            None leaves infinite games out of the mean (NaN if every game is infinite).

    Returns:
        Array of shape (...).
    """
    if infinite_value is not None:
        return np.mean(_finite_or(normalized, infinite_value), axis=-1)
    normalized = _no_nan(normalized)
    finite = ~np.isposinf(normalized)
    count = finite.sum(axis=-1)
    total = np.where(finite, normalized, 0.0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def interquartile_mean(
    normalized: ArrayLike, infinite_value: float = INFINITE_MEAN_VALUE
) -> NDArray:
    """Interquartile mean over games (Agarwal et al. 2021): the mean of the middle 50%.

    Exactly ``scipy.stats.trim_mean(x, 0.25)``: ``floor(G / 4)`` games are cut at each
    end. Being a mean, it counts an infinite game as ``infinite_value`` percent, like
    SABER's mean.

    Args:
        normalized: scores of shape (..., G), percent, no NaN.
        infinite_value: percent for an infinite game.

    Returns:
        Array of shape (...).
    """
    ordered = np.sort(_finite_or(normalized, infinite_value), axis=-1)
    n_games = ordered.shape[-1]
    cut = n_games // 4
    return ordered[..., cut : n_games - cut].mean(axis=-1)


def optimality_gap(normalized: ArrayLike, target: float = 100.0) -> NDArray:
    """Optimality gap (Agarwal et al. 2021): mean over games of ``max(0, target - score)``.

    With the world record as target (100%), it is how far on average the agent stays
    below the record; games above it (infinite ones too) count 0. Lower is better.

    Args:
        normalized: scores of shape (..., G), percent, no NaN.
        target: percent counted as optimal.

    Returns:
        Array of shape (...), percent.
    """
    return np.mean(np.maximum(target - _no_nan(normalized), 0.0), axis=-1)


def performance_profile(normalized: ArrayLike, thresholds: ArrayLike) -> NDArray:
    """Score distribution (Agarwal et al. 2021): the fraction of games scoring above each threshold.

    Args:
        normalized: scores of shape (..., G), percent, no NaN; infinite games are above all.
        thresholds: T thresholds in percent, shape (T,).

    Returns:
        Array of shape (..., T), fractions in [0, 1].
    """
    normalized = _no_nan(normalized)
    thresholds = np.asarray(thresholds, dtype=float)
    return np.mean(normalized[..., None, :] > thresholds[:, None], axis=-1)


def bootstrap_game_means(
    episodes: Sequence[ArrayLike],
    rng: np.random.Generator,
    n_resamples: int = 2000,
    infinite: ArrayLike | None = None,
    chunk: int = 250,
) -> NDArray:
    """Stratified bootstrap of per-game means: episodes are resampled within each game.

    Each resample draws n_g episodes with replacement from game g's n_g episodes, for
    every game, and averages them. Vectorized over resamples (in chunks, to bound memory
    at about ``chunk * max(n_g) * G`` floats); reproducible for a given ``rng`` state.

    Args:
        episodes: G arrays of episode scores (normalized or raw), shapes (n_g,).
        rng: the random generator; its state advances.
        n_resamples: R, the number of resamples.
        infinite: optional bool array (G,): games to keep infinite in every resample
            (SABER marks a game infinite when any episode is). Episodes equal to
            ``+inf`` mark their game infinite as well.
        chunk: resamples drawn at once.

    Returns:
        Array of shape (R, G).
    """
    counts = np.array([np.size(e) for e in episodes])
    if counts.size == 0 or counts.min() < 1:
        raise ValueError("Expect at least one game and one episode per game")
    n_max = int(counts.max())
    padded = np.zeros((len(episodes), n_max))
    for g, scores in enumerate(episodes):
        padded[g, : counts[g]] = np.asarray(scores, dtype=float)
    forced = np.isposinf(padded).any(axis=1)
    if infinite is not None:
        forced |= np.asarray(infinite, dtype=bool)
    padded[forced] = 0.0  # overwritten below; keeps inf out of the sums
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
    means[:, forced] = np.inf
    return means


def percentile_interval(samples: ArrayLike, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of bootstrap statistics.

    Args:
        samples: R statistics, shape (R,).
        level: coverage, e.g. 0.95 for a 95% interval.

    Returns:
        ``(low, high)``: the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles
        (linear interpolation, numpy's default); ``inf`` where they fall among infinite
        statistics.
    """
    samples = np.asarray(samples, dtype=float)
    # Infinite statistics (a median landing on infinite games) make numpy interpolate
    # inf - inf = NaN between two infinite neighbours; that quantile is infinite.
    with np.errstate(invalid="ignore"):
        quantiles = np.quantile(samples, [(1 - level) / 2, (1 + level) / 2])
    if np.isposinf(samples).any() and not np.isnan(samples).any():
        quantiles = np.where(np.isnan(quantiles), np.inf, quantiles)
    low, high = quantiles
    return float(low), float(high)


def stratified_bootstrap_ci(
    episodes: Sequence[ArrayLike],
    statistic: Callable[[NDArray], NDArray],
    rng: np.random.Generator,
    n_resamples: int = 2000,
    level: float = 0.95,
    infinite: ArrayLike | None = None,
) -> tuple[float, float]:
    """Confidence interval of an aggregate by stratified bootstrap over episodes.

    Args:
        episodes: G arrays of normalized episode scores, shapes (n_g,), percent.
        statistic: maps per-game means (R, G) to aggregates (R,), e.g. :func:`median_score`.
        rng: the random generator; its state advances.
        n_resamples: R.
        level: coverage of the interval.
        infinite: optional bool array (G,) of games infinite in every resample.

    Returns:
        ``(low, high)`` in the statistic's unit.
    """
    means = bootstrap_game_means(episodes, rng, n_resamples, infinite=infinite)
    return percentile_interval(statistic(means), level)


def probability_of_improvement(
    x_episodes: Sequence[ArrayLike], y_episodes: Sequence[ArrayLike]
) -> float:
    """Probability that agent X beats agent Y on a random episode of a random game.

    The Mann-Whitney statistic per game, ``P(X > Y) + P(X = Y) / 2`` over all pairs of
    one X episode and one Y episode, averaged over games (Agarwal et al. 2021). Raw or
    normalized scores give the same answer (normalization is increasing per game).

    Args:
        x_episodes: G arrays of X's episode scores, shapes (n_g,).
        y_episodes: G arrays of Y's episode scores, shapes (m_g,), same games in order.

    Returns:
        A probability in [0, 1].
    """
    if len(x_episodes) != len(y_episodes) or not x_episodes:
        raise ValueError("Expect the same, non-zero number of games for both agents")
    per_game = []
    for x, y in zip(x_episodes, y_episodes, strict=True):
        x = np.asarray(x, dtype=float)[:, None]
        y = np.asarray(y, dtype=float)[None, :]
        per_game.append(np.mean((x > y) + 0.5 * (x == y)))
    return float(np.mean(per_game))


@dataclass(frozen=True)
class WelchResult:
    """Welch's two-sample t-test.

    Attributes:
        t: the t statistic, positive when X's mean is higher.
        df: Welch-Satterthwaite degrees of freedom.
        p_value: two-tailed p-value.
    """

    t: float
    df: float
    p_value: float


def welch_t_test(x: ArrayLike, y: ArrayLike) -> WelchResult:
    """Two-tailed Welch t-test between two agents' episode scores on one game.

    As in the ALE paper (Bellemare et al. 2013): unequal variances,
    ``t = (mean_x - mean_y) / sqrt(s_x^2 / n + s_y^2 / m)`` with sample variances, and
    Welch-Satterthwaite degrees of freedom.

    Args:
        x: X's finite episode scores, shape (n,), n >= 2.
        y: Y's finite episode scores, shape (m,), m >= 2.

    Returns:
        The statistic, degrees of freedom and two-tailed p-value. If both samples have
        zero variance, equal means give ``t = 0, p = 1`` and different ones
        ``t = ±inf, p = 0`` (df is then ``n + m - 2``).
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size < 2 or y.size < 2:
        raise ValueError(f"Expect at least 2 episodes per agent, actually: {x.size} and {y.size}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("Expect finite episode scores for a t-test (infinite gameplay has none)")
    vx, vy = x.var(ddof=1) / x.size, y.var(ddof=1) / y.size
    diff = float(x.mean() - y.mean())
    if vx + vy == 0.0:
        df = float(x.size + y.size - 2)
        return (
            WelchResult(0.0, df, 1.0)
            if diff == 0
            else WelchResult(math.copysign(math.inf, diff), df, 0.0)
        )
    t = diff / math.sqrt(vx + vy)
    df = (vx + vy) ** 2 / (vx**2 / (x.size - 1) + vy**2 / (y.size - 1))
    return WelchResult(t, float(df), student_t_two_tailed_p(t, df))


def student_t_two_tailed_p(t: float, df: float) -> float:
    """Two-tailed p-value of Student's t distribution: ``P(|T| >= |t|)``.

    Uses ``P(|T| >= |t|) = I_{df / (df + t^2)}(df / 2, 1 / 2)``, the regularized
    incomplete beta function.

    Args:
        t: the statistic.
        df: degrees of freedom, > 0 (need not be an integer).
    """
    if df <= 0:
        raise ValueError(f"Expect `df` to be positive, actually: {df}")
    if math.isinf(t):
        return 0.0
    return regularized_incomplete_beta(df / 2.0, 0.5, df / (df + t * t))


def regularized_incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function ``I_x(a, b)``, for a, b > 0, 0 <= x <= 1.

    The continued fraction of Numerical Recipes (``betai``/``betacf``, modified Lentz),
    applied where it converges fast and mirrored with ``I_x(a, b) = 1 - I_{1-x}(b, a)``
    elsewhere; accurate to about 1e-14.
    """
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"Expect 0 <= x <= 1, actually: {x}")
    if x in (0.0, 1.0):
        return x
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_continued_fraction(a, b, x) / a
    return 1.0 - front * _beta_continued_fraction(b, a, 1.0 - x) / b


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    tiny, eps = 1e-300, 1e-15

    def guard(value: float) -> float:  # Lentz: keep denominators away from zero
        return tiny if abs(value) < tiny else value

    d = 1.0 / guard(1.0 - (a + b) * x / (a + 1.0))
    c, h = 1.0, d
    for m in range(1, 1000):
        even = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        d = 1.0 / guard(1.0 + even * d)
        c = guard(1.0 + even / c)
        h *= d * c
        odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1.0 / guard(1.0 + odd * d)
        c = guard(1.0 + odd / c)
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < eps:
            return h
    raise ArithmeticError(f"Incomplete beta did not converge for a={a}, b={b}, x={x}")


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


@dataclass(frozen=True)
class Summary:
    """SABER's aggregates of one agent's per-game normalized scores.

    Attributes:
        games: ids of the games counted, in input order.
        left_out: games without the reference score, so not counted.
        infinite: counted games with infinite gameplay.
        median: median over the counted games, percent (``inf`` if the middle is infinite).
        mean: mean, infinite games at ``infinite_mean_value`` (or left out), percent.
        iqm: interquartile mean, percent.
        optimality_gap: mean shortfall below 100%, percent.
        classes: games per class, keys :data:`CLASS_NAMES`.
        left_out_of_mean: infinite games left out of the mean (when the mean has no value
            for infinite gameplay).
    """

    games: tuple[str, ...]
    left_out: tuple[str, ...]
    infinite: tuple[str, ...]
    median: float
    mean: float
    iqm: float
    optimality_gap: float
    classes: dict[str, int]
    left_out_of_mean: tuple[str, ...] = field(default=())


def summarize(
    normalized: Mapping[str, float],
    infinite_mean_value: float | None = INFINITE_MEAN_VALUE,
) -> Summary:
    """SABER's aggregates over games, leaving out (and listing) games without a reference.

    Args:
        normalized: per-game normalized scores, percent: game id -> score, NaN for a game
            without the reference score, ``+inf`` for infinite gameplay.
        infinite_mean_value: percent of an infinite game in the mean and the IQM (SABER:
            200 for world-record scores); None leaves infinite games out of the mean
            (listed in ``left_out_of_mean``) and counts them as 200% in the IQM.

    Returns:
        The :class:`Summary`; its statistics are NaN when no game counts.
    """
    counted = {g: s for g, s in normalized.items() if not math.isnan(s)}
    left_out = tuple(g for g, s in normalized.items() if math.isnan(s))
    infinite = tuple(g for g, s in counted.items() if math.isinf(s) and s > 0)
    values = np.array(list(counted.values()), dtype=float)
    if values.size == 0:
        nan = math.nan
        return Summary((), left_out, (), nan, nan, nan, nan, class_counts(values))
    iqm_infinite = INFINITE_MEAN_VALUE if infinite_mean_value is None else infinite_mean_value
    return Summary(
        games=tuple(counted),
        left_out=left_out,
        infinite=infinite,
        median=float(median_score(values)),
        mean=float(mean_score(values, infinite_mean_value)),
        iqm=float(interquartile_mean(values, iqm_infinite)),
        optimality_gap=float(optimality_gap(values)),
        classes=class_counts(values),
        left_out_of_mean=infinite if infinite_mean_value is None else (),
    )


def _no_nan(normalized: ArrayLike) -> NDArray:
    normalized = np.asarray(normalized, dtype=float)
    if np.isnan(normalized).any():
        raise ValueError(
            "Expect no NaN scores: leave games without a reference score out (see summarize)"
        )
    return normalized
