"""rliable's statistics over (runs x games) matrices and the bootstraps, on hand-computed answers.

The same numbers computed by rliable itself: ``test_rliable.py`` (marker ``rliable``).
"""

from __future__ import annotations

import math

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
    welch_t_test,
)
from saber.scoring.rules import counted_in_means
from saber.scoring.stats import (
    bootstrap_episode_means,
    improvement_over_episodes,
    inter_algorithm_normalize,
    pairwise_improvement,
    percentile_interval,
)

INF = math.inf


def row(*scores: float) -> np.ndarray:
    """One run: a (1, G) matrix."""
    return np.array([scores])


# --- median, mean, IQM, optimality gap --------------------------------------------------


def test_median_of_odd_and_even_counts():
    assert aggregate_median(row(3.0, 1.0, 2.0)) == 2.0
    assert aggregate_median(row(4.0, 1.0, 3.0, 2.0)) == 2.5


def test_median_and_mean_take_the_per_game_mean_over_runs_first():
    # Runs x games: per-game means 1, 15, 60, 150.
    scores = np.array([[0.0, 10.0, 50.0, 200.0], [2.0, 20.0, 70.0, 100.0]])
    assert aggregate_median(scores) == 37.5
    assert aggregate_mean(scores) == 56.5


def test_infinite_games_sort_to_the_top_of_the_median():
    assert aggregate_median(row(1.0, 2.0, INF)) == 2.0
    assert aggregate_median(row(1.0, INF, INF)) == INF
    # A game is infinite in its mean over runs as soon as one run is.
    assert aggregate_median(np.array([[1.0, 5.0, INF], [1.0, 5.0, 3.0]])) == 5.0


def test_infinite_game_counts_200_percent_in_the_mean():
    assert aggregate_mean(counted_in_means(row(0.0, 100.0, INF))) == pytest.approx(100.0)


def test_aggregates_refuse_nan_and_empty_matrices():
    with pytest.raises(ValueError, match="NaN"):
        aggregate_median(row(1.0, math.nan))
    with pytest.raises(ValueError, match="runs, games"):
        aggregate_mean(np.zeros((0, 3)))


def test_aggregates_work_over_leading_resample_axes():
    samples = np.array([[[1.0, 2.0, 3.0]], [[10.0, 20.0, 30.0]]])  # (B=2, R=1, G=3)
    assert aggregate_median(samples).tolist() == [2.0, 20.0]
    assert aggregate_mean(samples).tolist() == pytest.approx([2.0, 20.0])
    assert aggregate_iqm(samples).shape == (2,)


def test_iqm_cuts_a_quarter_of_all_entries_at_each_end():
    # 8 entries: cut 2 at each end -> mean of 3, 4, 5, 6.
    assert aggregate_iqm(row(8.0, 1.0, 7.0, 2.0, 6.0, 3.0, 5.0, 4.0)) == 4.5
    # The same 8 numbers as 2 runs x 4 games: the IQM pools every (run, game) entry.
    assert aggregate_iqm(np.array([[8.0, 1.0, 7.0, 2.0], [6.0, 3.0, 5.0, 4.0]])) == 4.5
    # 6 entries: floor(6 / 4) = 1 cut at each end -> mean of 1, 10, 50, 100 (inf -> 200 cut).
    assert aggregate_iqm(counted_in_means(row(0.0, 1.0, 10.0, 50.0, 100.0, INF))) == 40.25
    # 3 entries: nothing cut.
    assert aggregate_iqm(row(1.0, 2.0, 6.0)) == 3.0


@pytest.mark.parametrize("entries", [1, 2, 3, 4, 5])
def test_iqm_is_scipys_trim_mean_bit_for_bit_below_and_at_four_entries(entries):
    """Below 4 entries the IQM skips SciPy (it trims nothing): the same bits as trim_mean,
    on scores whose sum depends on the order they are added in."""
    import scipy.stats

    rng = np.random.default_rng(entries)
    scale = rng.choice([1e-3, 1.0, 1e6], size=(500, 1, 1))
    samples = rng.normal(size=(500, 1, entries)) * scale + rng.choice([0.0, 1e3], (500, 1, 1))
    expected = scipy.stats.trim_mean(samples.reshape(500, -1), 0.25, axis=-1)
    assert np.array_equal(aggregate_iqm(samples), expected)
    assert np.array_equal(aggregate_iqm(samples.transpose(0, 2, 1)), expected)


def test_iqm_counts_infinite_as_200_when_it_is_not_cut():
    assert aggregate_iqm(counted_in_means(row(0.0, 50.0, INF, INF))) == pytest.approx(125.0)


def test_optimality_gap():
    # 100 - mean(min(x, 100)) = 100 - (0 + 50 + 100 + 100) / 4
    assert aggregate_optimality_gap(row(0.0, 50.0, 150.0, INF)) == pytest.approx(37.5)
    assert (
        aggregate_optimality_gap(np.array([[0.0, 10.0, 50.0, 200.0], [2.0, 20.0, 70.0, 100.0]]))
        == 56.0
    )


def test_score_distribution_counts_entries_strictly_above():
    profile = score_distribution(row(0.0, 10.0, 100.0, INF), [0.0, 10.0, 50.0, 1e9])
    assert profile.tolist() == [0.75, 0.5, 0.5, 0.25]
    two_runs = score_distribution(np.array([[0.0, 10.0], [20.0, 30.0]]), [5.0])
    assert two_runs.tolist() == [0.75]


# --- bootstrap ------------------------------------------------------------------------


def test_run_bootstrap_redraws_runs_within_each_game():
    # Game 0 has runs {1, 2}, game 1 runs {10, 20}: draws stay in their own game.
    scores = np.array([[1.0, 10.0], [2.0, 20.0]])
    samples = bootstrap_runs(scores, np.random.default_rng(0), 500)
    assert samples.shape == (500, 2, 2)
    assert set(np.unique(samples[:, :, 0])) == {1.0, 2.0}
    assert set(np.unique(samples[:, :, 1])) == {10.0, 20.0}
    # Games are resampled independently: some resample takes run 0 for one game, run 1
    # for the other (a whole-run bootstrap never would).
    assert np.any((samples[:, 0, 0] == 1.0) & (samples[:, 0, 1] == 20.0))
    again = bootstrap_runs(scores, np.random.default_rng(0), 500)
    assert np.array_equal(samples, again)


def test_episode_bootstrap_is_reproducible_and_seeded():
    episodes = [np.arange(10.0), np.arange(5.0) * 3]
    a = bootstrap_episode_means(episodes, np.random.default_rng(7), 300)
    b = bootstrap_episode_means(episodes, np.random.default_rng(7), 300)
    c = bootstrap_episode_means(episodes, np.random.default_rng(8), 300)
    assert a.shape == (300, 2)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_episode_bootstrap_chunks_do_not_change_the_shape_or_range():
    episodes = [np.array([0.0, 10.0]), np.array([5.0])]
    means = bootstrap_episode_means(episodes, np.random.default_rng(0), 101, chunk=7)
    assert means.shape == (101, 2)
    # a game of one episode never varies; a mean of two draws of {0, 10} is 0, 5 or 10
    assert np.all(means[:, 1] == 5.0)
    assert set(np.unique(means[:, 0])) <= {0.0, 5.0, 10.0}


def test_episode_bootstrap_resamples_within_each_game_with_its_own_count():
    episodes = [np.full(3, 1.0), np.full(100, 2.0), np.array([4.0])]
    means = bootstrap_episode_means(episodes, np.random.default_rng(0), 50)
    assert np.all(means == [1.0, 2.0, 4.0])


def test_episode_bootstrap_keeps_infinite_games_infinite():
    episodes = [np.array([1.0, 2.0]), np.array([3.0, INF])]
    means = bootstrap_episode_means(episodes, np.random.default_rng(0), 20)
    assert np.all(np.isinf(means[:, 1])) and np.all(np.isfinite(means[:, 0]))


def test_percentile_interval_with_infinite_statistics():
    low, high = percentile_interval([1.0, 2.0, INF, INF, INF])
    assert (float(low), float(high)) == pytest.approx((1.1, INF))
    low, high = percentile_interval(np.arange(101.0), level=0.9)
    assert (float(low), float(high)) == pytest.approx((5.0, 95.0))


def test_percentile_interval_per_column():
    samples = np.stack([np.arange(101.0), 2 * np.arange(101.0)], axis=1)  # (B, 2)
    low, high = percentile_interval(samples, level=0.9)
    assert low.tolist() == pytest.approx([5.0, 10.0]) and high.tolist() == pytest.approx(
        [95.0, 190.0]
    )


def test_run_bootstrap_interval_brackets_the_median():
    rng = np.random.default_rng(0)
    scores = rng.normal([10.0, 20.0, 30.0], 1.0, size=(20, 3))
    samples = bootstrap_runs(scores, np.random.default_rng(1), 500)
    low, high = percentile_interval(aggregate_median(samples))
    assert low < 20.0 < high
    assert high - low < 1.5


# --- probability of improvement ---------------------------------------------------------


def test_probability_of_improvement_by_hand():
    # Runs x games. Game 0: X {20, 22} vs Y {19, 21}: 3 of 4 pairs won -> 0.75.
    # Game 1: X {5, 5} vs Y {5, 1}: (5,5) ties x2 -> 0.5 each, (5,1) wins x2 -> 0.75.
    x = np.array([[20.0, 5.0], [22.0, 5.0]])
    y = np.array([[19.0, 5.0], [21.0, 1.0]])
    assert probability_of_improvement(x, y) == pytest.approx(0.75)
    assert pairwise_improvement(x, y) == pytest.approx(0.75)


def test_probability_of_improvement_is_symmetric_and_half_on_equal_scores():
    x, y = np.array([[1.0], [4.0], [2.0]]), np.array([[3.0], [2.0]])
    assert probability_of_improvement(x, y) + probability_of_improvement(y, x) == pytest.approx(1)
    assert probability_of_improvement(x, x) == 0.5


def test_pairwise_improvement_matches_mann_whitney_over_resamples():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(5, 4)), rng.normal(size=(3, 4))
    bx, by = bootstrap_runs(x, rng, 20), bootstrap_runs(y, rng, 20)
    expected = [probability_of_improvement(a, b) for a, b in zip(bx, by, strict=True)]
    assert pairwise_improvement(bx, by) == pytest.approx(expected, abs=1e-12)


def test_improvement_over_episodes_by_hand():
    # Game 0: X {1, 2, 3} vs Y {0, 2, 4}: 1 > 0; 2 > 0, 2 = 2; 3 > 0, 3 > 2: 4.5 of 9.
    # Game 1: X {7} vs Y {5, 9}: 1 of 2. Mean: (0.5 + 0.5) / 2.
    x, y = (
        [np.array([1.0, 2.0, 3.0]), np.array([7.0])],
        [np.array([0.0, 2.0, 4.0]), np.array([5.0, 9.0])],
    )
    point, samples = improvement_over_episodes(x, y, np.random.default_rng(0), 4000)
    assert point == pytest.approx(0.5)
    assert samples.shape == (4000,) and samples.min() >= 0.0 and samples.max() <= 1.0
    assert samples.mean() == pytest.approx(0.5, abs=0.02)  # the bootstrap centres on it
    again = improvement_over_episodes(x, y, np.random.default_rng(0), 4000)[1]
    assert np.array_equal(samples, again)  # reproducible for a given generator


def test_improvement_over_episodes_without_overlap_or_spread_has_one_value():
    # Every X episode below every Y episode: every resample gives 0; one episode a side: 1.
    _, apart = improvement_over_episodes([np.array([0.0, 1.0])], [np.array([5.0, 6.0])],
                                         np.random.default_rng(1), 50)  # fmt: skip
    assert set(apart) == {0.0}
    _, single = improvement_over_episodes([np.array([3.0])], [np.array([2.0])],
                                          np.random.default_rng(1), 50)  # fmt: skip
    assert set(single) == {1.0}
    # Infinite gameplay beats any finite episode, and ties with itself.
    point, _ = improvement_over_episodes([np.array([np.inf, np.inf])], [np.array([9e9, np.inf])],
                                         np.random.default_rng(1), 5)  # fmt: skip
    assert point == pytest.approx(0.75)


def test_improvement_over_episodes_refuses_other_games():
    with pytest.raises(ValueError, match="the same games"):
        improvement_over_episodes([np.array([1.0])], [], np.random.default_rng(0), 5)


# --- Welch t-test (scipy) ---------------------------------------------------------------


def test_welch_by_hand():
    # x = {20, 22}, y = {19, 21}: diff 1, variances 2 and 2, se = sqrt(2), df = 2.
    result = welch_t_test([20.0, 22.0], [19.0, 21.0])
    assert result.t == pytest.approx(1 / math.sqrt(2))
    assert result.df == pytest.approx(2.0)
    # df = 2 has the closed form p = 1 - |t| / sqrt(t^2 + 2).
    assert result.p_value == pytest.approx(1 - (1 / math.sqrt(2)) / math.sqrt(2.5))


def test_welch_with_one_constant_sample_has_the_other_samples_df():
    # y = {0, 389}: variance 75,660.5, se = 194.5, t = (3890 - 194.5) / 194.5 = 19, df = 1.
    result = welch_t_test([3890.0, 3890.0], [0.0, 389.0])
    assert result.t == pytest.approx(19.0)
    assert result.df == pytest.approx(1.0)
    assert result.p_value == pytest.approx(1 - 2 / math.pi * math.atan(19.0))  # Cauchy


def test_welch_degenerate_and_bad_inputs():
    assert welch_t_test([1.0, 1.0], [1.0, 1.0]).p_value == 1.0
    same = welch_t_test([2.0, 2.0], [1.0, 1.0])
    assert same.t == INF and same.p_value == 0.0
    with pytest.raises(ValueError, match="at least 2"):
        welch_t_test([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="finite"):
        welch_t_test([1.0, INF], [1.0, 2.0])


def test_no_hand_written_special_functions_in_the_public_api():
    import saber.scoring

    assert not hasattr(saber.scoring, "regularized_incomplete_beta")
    assert not hasattr(saber.scoring, "student_t_two_tailed_p")


# --- inter-algorithm normalization ------------------------------------------------------


def test_inter_algorithm_normalization_by_hand():
    scores = [[0.0, 10.0, 7.0], [5.0, 30.0, 7.0], [10.0, 20.0, 7.0]]
    scaled = inter_algorithm_normalize(scores)
    assert scaled[:, 0].tolist() == [0.0, 50.0, 100.0]
    assert scaled[:, 1].tolist() == [0.0, 100.0, 50.0]
    assert np.isnan(scaled[:, 2]).all()  # a tie has no range


def test_inter_algorithm_normalization_with_infinite_gameplay():
    scaled = inter_algorithm_normalize([[1.0, INF], [5.0, INF], [INF, INF]])
    assert scaled[:, 0].tolist() == [0.0, 0.0, 100.0]
    assert np.isnan(scaled[:, 1]).all()
