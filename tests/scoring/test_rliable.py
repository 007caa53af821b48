"""saber's statistics against rliable 1.2 itself, on identical (runs x games) matrices.

Marker ``rliable`` (deselected by default; CI's rliable stage runs ``-m rliable`` after
``pip install ".[test,rliable-check]"``). Selected without rliable installed, these tests
fail: whoever asks for them wants them run.

- Point estimates (median, mean, IQM, optimality gap, score distribution, probability of
  improvement) must equal rliable's to 1e-9.
- Interval ends must agree within Monte Carlo error: both are percentile intervals of
  B stratified-bootstrap resamples with different random numbers. The Monte Carlo error
  of an interval end is measured, not assumed: saber's interval is recomputed with
  K = 20 other seeds, and the difference from rliable's may be up to 4 standard
  deviations of a difference of two such ends (``4 * sqrt(2) * sd``). Measuring it
  covers statistics with few distinct values (medians of rounded scores), whose quantiles
  jump, where a normal approximation would be too tight.

Where saber deliberately differs (infinite gameplay, SABER's classes) rliable has no
counterpart; those rules are tested in ``test_rules.py`` and ``tests/reports``.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from saber.scoring import (
    aggregate_iqm,
    aggregate_mean,
    aggregate_median,
    aggregate_optimality_gap,
    bootstrap_runs,
    probability_of_improvement,
    score_distribution,
)
from saber.scoring.stats import (
    improvement_over_episodes,
    pairwise_improvement,
    percentile_interval,
)

pytestmark = pytest.mark.rliable

B = 2000
TAUS = np.linspace(-10.0, 250.0, 27)


@pytest.fixture(autouse=True)
def rliable_installed() -> None:
    missing = [m for m in ("rliable", "arch") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.fail(
            f'-m rliable needs {" and ".join(missing)}: pip install "saber-ale[rliable-check]" '
            'or, from a checkout, pip install ".[test,rliable-check]"'
        )


def matrices() -> list[np.ndarray]:
    """Runs x games matrices of normalized scores (percent), shapes as papers have them."""
    rng = np.random.default_rng(2021)
    return [
        rng.gamma(0.6, 60.0, size=(5, 57)),  # 5 seeds, 57 games, a heavy right tail
        rng.normal(40.0, 30.0, size=(3, 10)),  # negative scores too
        rng.gamma(1.0, 50.0, size=(10, 5)),
        np.round(rng.gamma(1.0, 50.0, size=(4, 7)), -1),  # ties
        rng.gamma(1.0, 50.0, size=(1, 26)),  # one run
    ]


def rliable_metrics():
    from rliable import metrics

    return {
        "median": (aggregate_median, metrics.aggregate_median),
        "mean": (aggregate_mean, metrics.aggregate_mean),
        "iqm": (aggregate_iqm, metrics.aggregate_iqm),
        "optimality_gap": (
            aggregate_optimality_gap,
            lambda x: metrics.aggregate_optimality_gap(x, gamma=100.0),
        ),
    }


@pytest.mark.parametrize("index", range(5))
def test_point_estimates_equal_rliable(index):
    scores = matrices()[index]
    for name, (ours, theirs) in rliable_metrics().items():
        assert float(ours(scores)) == pytest.approx(float(theirs(scores)), abs=1e-9), name


@pytest.mark.parametrize("index", range(5))
def test_score_distribution_equals_rliable(index):
    from rliable import library

    scores = matrices()[index]
    profiles, _ = library.create_performance_profile({"a": scores}, TAUS, reps=2)
    assert score_distribution(scores, TAUS) == pytest.approx(profiles["a"], abs=1e-9)


def test_probability_of_improvement_equals_rliable():
    from rliable import metrics

    rng = np.random.default_rng(7)
    for runs_x, runs_y in ((5, 5), (3, 10), (1, 4), (4, 4)):
        x = np.round(rng.gamma(1.0, 50.0, size=(runs_x, 12)), -1)  # rounded: ties happen
        y = np.round(rng.gamma(1.0, 45.0, size=(runs_y, 12)), -1)
        expected = float(metrics.probability_of_improvement(x, y))
        assert probability_of_improvement(x, y) == pytest.approx(expected, abs=1e-9)
        assert float(pairwise_improvement(x, y)) == pytest.approx(expected, abs=1e-9)
    same = rng.normal(size=(3, 4))
    assert probability_of_improvement(same, same) == float(
        metrics.probability_of_improvement(same, same)
    )


def tolerance(interval_ends, seeds: int = 20) -> np.ndarray:
    """Four Monte Carlo standard deviations of the difference of two interval ends.

    Args:
        interval_ends: seed -> saber's ``(low, high)`` (arrays of any one shape).
        seeds: how many seeds measure the spread.

    Returns:
        Tolerances of shape (2, ...): for the low and the high ends.
    """
    ends = np.array([np.stack(interval_ends(seed)) for seed in range(100, 100 + seeds)])
    return 4 * np.sqrt(2) * ends.std(axis=0, ddof=1) + 1e-9


@pytest.mark.parametrize("index", range(4))
def test_intervals_agree_with_rliable_within_monte_carlo_error(index):
    from rliable import library

    scores = matrices()[index]
    np.random.seed(index)  # rliable draws its run indices from numpy's global generator
    for name, (ours, theirs) in rliable_metrics().items():
        _, intervals = library.get_interval_estimates(
            {"a": scores}, lambda x, f=theirs: np.array([f(x)]), reps=B
        )

        def ends(seed: int, ours=ours) -> tuple[np.ndarray, np.ndarray]:
            return percentile_interval(ours(bootstrap_runs(scores, np.random.default_rng(seed), B)))

        low, high = ends(index)
        tol_low, tol_high = tolerance(ends)
        assert float(low) == pytest.approx(intervals["a"][0, 0], abs=float(tol_low)), name
        assert float(high) == pytest.approx(intervals["a"][1, 0], abs=float(tol_high)), name


def test_score_distribution_bands_agree_with_rliable():
    from rliable import library

    scores = matrices()[0]
    np.random.seed(1)
    _, bands = library.create_performance_profile({"a": scores}, TAUS, reps=B)

    def ends(seed: int) -> tuple[np.ndarray, np.ndarray]:
        samples = bootstrap_runs(scores, np.random.default_rng(seed), B)
        return percentile_interval(score_distribution(samples, TAUS))

    low, high = ends(1)
    # Fractions move in steps of 1 / (R G): a band end can differ by one step at least.
    tol_low, tol_high = tolerance(ends) + 1.0 / scores.size
    assert np.all(np.abs(low - bands["a"][0]) <= tol_low)
    assert np.all(np.abs(high - bands["a"][1]) <= tol_high)


def test_probability_of_improvement_interval_agrees_with_rliable():
    from rliable import library, metrics

    rng = np.random.default_rng(11)
    # rliable calls mannwhitneyu per game and resample: kept small (8 games, 1,000 resamples).
    reps = 1000
    x, y = rng.gamma(1.0, 55.0, size=(5, 8)), rng.gamma(1.0, 45.0, size=(4, 8))
    np.random.seed(2)
    _, intervals = library.get_interval_estimates(
        {"x,y": [x, y]},
        lambda a, b: np.array([metrics.probability_of_improvement(a, b)]),
        reps=reps,
    )

    def ends(seed: int) -> tuple[np.ndarray, np.ndarray]:
        generator = np.random.default_rng(seed)
        samples = pairwise_improvement(
            bootstrap_runs(x, generator, reps), bootstrap_runs(y, generator, reps)
        )
        return percentile_interval(samples)

    low, high = ends(2)
    tol_low, tol_high = tolerance(ends)
    assert float(low) == pytest.approx(intervals["x,y"][0, 0], abs=float(tol_low))
    assert float(high) == pytest.approx(intervals["x,y"][1, 0], abs=float(tol_high))


def test_improvement_over_episodes_is_rliables_with_episodes_for_runs():
    """With as many episodes on every game, episodes stand where rliable's runs stand: the
    same estimate, and intervals that agree within Monte Carlo error."""
    from rliable import library, metrics

    rng = np.random.default_rng(13)
    reps = 1000
    x = np.round(rng.gamma(1.0, 50.0, size=(6, 5)), -1)  # (episodes, games); ties happen
    y = np.round(rng.gamma(1.0, 40.0, size=(9, 5)), -1)
    expected = float(metrics.probability_of_improvement(x, y))
    point, _ = improvement_over_episodes(list(x.T), list(y.T), np.random.default_rng(0), 10)
    assert point == pytest.approx(expected, abs=1e-9)
    np.random.seed(4)
    _, intervals = library.get_interval_estimates(
        {"x,y": [x, y]},
        lambda a, b: np.array([metrics.probability_of_improvement(a, b)]),
        reps=reps,
    )

    def ends(seed: int) -> tuple[np.ndarray, np.ndarray]:
        _, samples = improvement_over_episodes(
            list(x.T), list(y.T), np.random.default_rng(seed), reps
        )
        return percentile_interval(samples)

    low, high = ends(4)
    tol_low, tol_high = tolerance(ends)
    assert float(low) == pytest.approx(intervals["x,y"][0, 0], abs=float(tol_low))
    assert float(high) == pytest.approx(intervals["x,y"][1, 0], abs=float(tol_high))


def test_a_report_with_runs_equals_rliable_on_its_matrix(tmp_path):
    """End to end: a CSV of 3 runs x 4 games through saber report, against rliable."""
    from rliable import metrics

    from saber.reports import make_report
    from saber.scoring import normalize, read_scores

    games = ["pong", "breakout", "venture", "qbert"]
    raw = np.array(
        [[10.0, 30.0, 100.0, 5000.0], [12.0, 45.0, 0.0, 7000.0], [-5.0, 20.0, 300.0, 2500.0]]
    )
    rows = [
        f"s{r},{g},{e},{raw[r, j] + (e - 0.5) * 2}"
        for r in range(3)
        for j, g in enumerate(games)
        for e in range(2)
    ]
    (tmp_path / "s.csv").write_text("run,game,episode,score\n" + "\n".join(rows) + "\n")
    section = make_report(read_scores(tmp_path / "s.csv"), n_resamples=50).agents["agent"]["saber"]
    assert section.resampled == "runs" and section.runs == ["s0", "s1", "s2"]
    order = sorted(games)
    matrix = normalize(raw[:, [games.index(g) for g in order]], order, "world_record")
    wr = section.world_record
    assert wr.median == pytest.approx(float(metrics.aggregate_median(matrix)), abs=1e-9)
    assert wr.mean == pytest.approx(float(metrics.aggregate_mean(matrix)), abs=1e-9)
    assert wr.iqm == pytest.approx(float(metrics.aggregate_iqm(matrix)), abs=1e-9)
    gap = float(metrics.aggregate_optimality_gap(matrix, gamma=100.0))
    assert wr.optimality_gap == pytest.approx(gap, abs=1e-9)
    # The report's score distribution, over its own thresholds (negative ones included).
    from rliable import library

    taus = np.array(wr.profile.thresholds_pct)
    profiles, _ = library.create_performance_profile({"a": matrix}, taus, reps=2)
    assert wr.profile.fraction_above == pytest.approx(profiles["a"], abs=1e-9)


def test_dopamine_band_agrees_with_rliable_per_game_interval():
    """The training figure's band: rliable's interval of one game's mean over 5 runs."""
    from rliable import library

    from saber.scoring import dopamine

    values = dopamine.iteration_scores("breakout", "rainbow")[:, [9, 49, 99, 198]]  # (5, 4)
    for column in range(values.shape[1]):
        runs = values[:, [column]]  # rliable's (runs, tasks) with one task
        np.random.seed(column)
        _, intervals = library.get_interval_estimates(
            {"a": runs}, lambda x: np.array([np.mean(x)]), reps=B
        )

        def ends(seed: int, runs=runs) -> tuple[np.ndarray, np.ndarray]:
            _, low, high = dopamine.run_band(runs, seed=seed, n_resamples=B)
            return low, high

        low, high = ends(0)
        tol = tolerance(ends)
        assert abs(low[0] - intervals["a"][0, 0]) <= tol[0][0]
        assert abs(high[0] - intervals["a"][1, 0]) <= tol[1][0]
