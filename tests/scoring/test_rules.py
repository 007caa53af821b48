"""SABER's own rules: classes, infinite gameplay at 200% in means, per-game means."""

from __future__ import annotations

import math

import numpy as np
import pytest

from saber.scoring.rules import class_counts, classify, counted_in_means, game_mean

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


def test_game_mean_is_infinite_if_any_episode_is():
    assert game_mean([1.0, 3.0]) == 2.0
    assert game_mean([5.0, INF, 7.0]) == INF
    assert game_mean([5.0, 7.0], infinite=True) == INF  # a finite score recorded at the cap
    with pytest.raises(ValueError):
        game_mean([])


def test_infinite_counts_200_percent_in_means_only():
    assert counted_in_means([0.0, 100.0, INF]).tolist() == [0.0, 100.0, 200.0]
    assert counted_in_means(np.array([[INF]]), infinite_value=150.0).tolist() == [[150.0]]
    with pytest.raises(ValueError, match="NaN"):
        counted_in_means([1.0, math.nan])
