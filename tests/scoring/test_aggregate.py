"""SABER's aggregate rules and the statistics beyond the paper, on hand-computed answers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from saber.scoring import (
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

INF = math.inf


# --- classes ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("score", "name"),
    [
        (-50.0, "failing"),
        (0.0, "failing"),
        (0.999, "failing"),
        (1.0, "poor"),
        (9.999, "poor"),
        (10.0, "medium"),
        (49.999, "medium"),
        (50.0, "fair"),
        (99.999, "fair"),
        (100.0, "superhuman"),
        (1e6, "superhuman"),
        (INF, "superhuman"),
    ],
)
def test_class_boundaries_are_exact(score, name):
    assert class_counts([score])[name] == 1


def test_floating_point_error_does_not_move_a_score_below_its_threshold():
    assert classify([100.0 - 1e-12, 50.0 - 1e-12, 1.0 - 1e-12]).tolist() == [4, 3, 1]
    assert classify([100.0 - 1e-6]).tolist() == [3]  # a real shortfall still counts


def test_class_counts_of_a_mixed_list():
    counts = class_counts([0.5, 5.0, 20.0, 70.0, 80.0, 150.0, INF])
    assert counts == {"failing": 1, "poor": 1, "medium": 1, "fair": 2, "superhuman": 2}


# --- median, mean and the 200% rule ----------------------------------------------------


def test_median_of_odd_and_even_counts():
    assert median_score([3.0, 1.0, 2.0]) == 2.0
    assert median_score([4.0, 1.0, 3.0, 2.0]) == 2.5


def test_infinite_games_sort_to_the_top_of_the_median():
    assert median_score([1.0, 2.0, INF]) == 2.0
    assert median_score([1.0, INF, INF]) == INF


def test_infinite_game_counts_200_percent_in_the_mean():
    # (0 + 100 + 200) / 3
    assert mean_score([0.0, 100.0, INF]) == pytest.approx(100.0)


def test_mean_can_leave_infinite_games_out():
    assert mean_score([0.0, 100.0, INF], infinite_value=None) == pytest.approx(50.0)
    assert np.isnan(mean_score([INF], infinite_value=None))


def test_aggregates_refuse_nan():
    with pytest.raises(ValueError, match="NaN"):
        median_score([1.0, math.nan])


def test_aggregates_work_along_the_last_axis():
    scores = np.array([[1.0, 2.0, 3.0], [10.0, 20.0, INF]])
    assert median_score(scores).tolist() == [2.0, 20.0]
    assert mean_score(scores).tolist() == pytest.approx([2.0, 230.0 / 3])


# --- IQM, optimality gap, profile ------------------------------------------------------


def test_iqm_cuts_a_quarter_at_each_end():
    # 8 games: cut 2 at each end -> mean of 3, 4, 5, 6.
    assert interquartile_mean([8.0, 1.0, 7.0, 2.0, 6.0, 3.0, 5.0, 4.0]) == 4.5
    # 6 games: floor(6 / 4) = 1 cut at each end -> mean of 1, 10, 50, 100 (inf -> 200 cut).
    assert interquartile_mean([0.0, 1.0, 10.0, 50.0, 100.0, INF]) == pytest.approx(40.25)
    # 3 games: nothing cut.
    assert interquartile_mean([1.0, 2.0, 6.0]) == 3.0


def test_iqm_counts_infinite_as_200_when_it_is_not_cut():
    # 4 games, 1 cut at each end: the two infinite games leave one 200% in the middle.
    assert interquartile_mean([0.0, 50.0, INF, INF]) == pytest.approx(125.0)


def test_optimality_gap():
    # max(0, 100 - x): 100, 50, 0, 0
    assert optimality_gap([0.0, 50.0, 150.0, INF]) == pytest.approx(37.5)


def test_performance_profile_counts_games_strictly_above():
    profile = performance_profile([0.0, 10.0, 100.0, INF], [0.0, 10.0, 50.0, 1e9])
    assert profile.tolist() == [0.75, 0.5, 0.5, 0.25]


# --- per-game means and summaries ------------------------------------------------------


def test_game_means_mark_a_game_infinite_if_any_episode_is():
    assert game_means([[1.0, 3.0], [5.0, INF, 7.0]]).tolist() == [2.0, INF]


def test_summarize_lists_left_out_and_infinite_games():
    summary = summarize({"a": 0.0, "b": math.nan, "c": 100.0, "d": INF})
    assert summary.games == ("a", "c", "d")
    assert summary.left_out == ("b",)
    assert summary.infinite == ("d",)
    assert summary.median == 100.0
    assert summary.mean == pytest.approx(100.0)
    assert summary.classes["superhuman"] == 2


def test_summarize_without_infinite_value_lists_games_left_out_of_the_mean():
    summary = summarize({"a": 0.0, "c": 100.0, "d": INF}, infinite_mean_value=None)
    assert summary.mean == pytest.approx(50.0)
    assert summary.left_out_of_mean == ("d",)
    assert summary.median == 100.0


def test_summarize_with_no_counted_game():
    summary = summarize({"tennis": math.nan})
    assert summary.games == () and summary.left_out == ("tennis",)
    assert math.isnan(summary.median)


# --- bootstrap ------------------------------------------------------------------------


def test_bootstrap_is_reproducible_and_seeded():
    episodes = [np.arange(10.0), np.arange(5.0) * 3]
    a = bootstrap_game_means(episodes, np.random.default_rng(7), 300)
    b = bootstrap_game_means(episodes, np.random.default_rng(7), 300)
    c = bootstrap_game_means(episodes, np.random.default_rng(8), 300)
    assert a.shape == (300, 2)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_bootstrap_chunks_do_not_change_the_shape_or_range():
    episodes = [np.array([0.0, 10.0]), np.array([5.0])]
    means = bootstrap_game_means(episodes, np.random.default_rng(0), 101, chunk=7)
    assert means.shape == (101, 2)
    # a game of one episode never varies; a mean of two draws of {0, 10} is 0, 5 or 10
    assert np.all(means[:, 1] == 5.0)
    assert set(np.unique(means[:, 0])) <= {0.0, 5.0, 10.0}


def test_bootstrap_resamples_within_each_game_with_its_own_count():
    # Ragged games: every resample mean must be a mean of draws from that game only.
    episodes = [np.full(3, 1.0), np.full(100, 2.0), np.array([4.0])]
    means = bootstrap_game_means(episodes, np.random.default_rng(0), 50)
    assert np.all(means == [1.0, 2.0, 4.0])


def test_bootstrap_keeps_infinite_games_infinite():
    episodes = [np.array([1.0, 2.0]), np.array([3.0, INF]), np.array([5.0, 6.0])]
    means = bootstrap_game_means(
        episodes, np.random.default_rng(0), 20, infinite=[False, False, True]
    )
    assert np.all(np.isinf(means[:, 1:])) and np.all(np.isfinite(means[:, 0]))


def test_percentile_interval_with_infinite_statistics():
    assert percentile_interval([1.0, 2.0, INF, INF, INF]) == pytest.approx((1.1, INF))
    assert percentile_interval(np.arange(101.0), level=0.9) == pytest.approx((5.0, 95.0))


def test_bootstrap_interval_brackets_the_median():
    rng = np.random.default_rng(0)
    episodes = [rng.normal(m, 1.0, size=50) for m in (10.0, 20.0, 30.0)]
    low, high = stratified_bootstrap_ci(episodes, median_score, np.random.default_rng(1), 500)
    assert low < 20.0 < high
    assert high - low < 1.5


# --- probability of improvement ---------------------------------------------------------


def test_probability_of_improvement_by_hand():
    # Game 1: X {20, 22} vs Y {19, 21}: 3 of 4 pairs won -> 0.75.
    # Game 2: X {5, 5} vs Y {5, 1}: pairs (5,5) tie x2 -> 0.5 each, (5,1) win x2 -> 0.75.
    p = probability_of_improvement([[20.0, 22.0], [5.0, 5.0]], [[19.0, 21.0], [5.0, 1.0]])
    assert p == pytest.approx((0.75 + 0.75) / 2)


def test_probability_of_improvement_is_symmetric():
    x, y = [[1.0, 4.0, 2.0]], [[3.0, 2.0]]
    assert probability_of_improvement(x, y) + probability_of_improvement(y, x) == pytest.approx(1)


# --- Welch t-test and the t distribution ------------------------------------------------


def test_t_distribution_known_values():
    assert student_t_two_tailed_p(2.0, 10) == pytest.approx(0.07339, abs=5e-6)
    assert student_t_two_tailed_p(1.0, 1) == pytest.approx(0.5, abs=1e-12)  # Cauchy
    assert student_t_two_tailed_p(0.0, 5) == pytest.approx(1.0)
    # df = 2 has the closed form p = 1 - |t| / sqrt(t^2 + 2).
    assert student_t_two_tailed_p(3.0, 2) == pytest.approx(1 - 3 / math.sqrt(11), abs=1e-12)
    # Large df: the normal distribution, P(|Z| > 1.959964) = 0.05.
    assert student_t_two_tailed_p(1.959964, 1e7) == pytest.approx(0.05, abs=1e-5)
    assert student_t_two_tailed_p(-2.0, 10) == student_t_two_tailed_p(2.0, 10)


def test_incomplete_beta_closed_forms():
    for x in (0.0, 0.1, 0.5, 0.93, 1.0):
        assert regularized_incomplete_beta(1.0, 1.0, x) == pytest.approx(x, abs=1e-14)
        assert regularized_incomplete_beta(3.0, 1.0, x) == pytest.approx(x**3, abs=1e-13)
        assert regularized_incomplete_beta(1.0, 4.0, x) == pytest.approx(1 - (1 - x) ** 4)
    assert regularized_incomplete_beta(7.5, 7.5, 0.5) == pytest.approx(0.5, abs=1e-13)
    with pytest.raises(ValueError):
        regularized_incomplete_beta(1.0, 1.0, 1.5)


def test_welch_by_hand():
    # x = {20, 22}, y = {19, 21}: diff 1, variances 2 and 2, se = sqrt(2), df = 2.
    result = welch_t_test([20.0, 22.0], [19.0, 21.0])
    assert result.t == pytest.approx(1 / math.sqrt(2))
    assert result.df == pytest.approx(2.0)
    assert result.p_value == pytest.approx(1 - (1 / math.sqrt(2)) / math.sqrt(2.5))


def test_welch_with_one_constant_sample_has_the_other_samples_df():
    # y = {0, 389}: variance 75,660.5, se = 194.5, t = (3890 - 194.5) / 194.5 = 19, df = 1.
    result = welch_t_test([3890.0, 3890.0], [0.0, 389.0])
    assert result.t == pytest.approx(19.0)
    assert result.df == pytest.approx(1.0)
    assert result.p_value == pytest.approx(1 - 2 / math.pi * math.atan(19.0))


def test_welch_degenerate_and_bad_inputs():
    assert welch_t_test([1.0, 1.0], [1.0, 1.0]).p_value == 1.0
    same = welch_t_test([2.0, 2.0], [1.0, 1.0])
    assert same.t == INF and same.p_value == 0.0
    with pytest.raises(ValueError, match="at least 2"):
        welch_t_test([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="finite"):
        welch_t_test([1.0, INF], [1.0, 2.0])


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
