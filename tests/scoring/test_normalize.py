"""Normalization formulas against hand-computed values from the SABER table."""

from __future__ import annotations

import math

import numpy as np
import pytest

from saber.scoring import human_normalize, normalize, world_record_normalize
from saber.scoring.normalize import baseline_arrays, has_baseline


def test_world_record_formula_uses_absolute_range():
    # Skiing's record (-3,272) is above random (-16,267.91): a positive range either way.
    assert world_record_normalize(-3272.0, -16267.91, -3272.0) == 100.0
    # A record below random would flip the sign without the absolute value.
    assert world_record_normalize(5.0, 10.0, 0.0) == pytest.approx(-50.0)


def test_world_record_of_venture_is_exact_at_ten_percent():
    # Venture: random 0, record 38,900; 3,890 is 10% of it.
    assert normalize([3890.0], ["venture"], "world_record").tolist() == [10.0]


def test_agent_at_the_record_is_exactly_100_percent():
    # Pong: random -20.34, record 21; 100 * 41.34 / 41.34 must not come out 99.999...
    assert normalize([21.0], ["Pong"], "world_record").tolist() == [100.0]


def test_human_normalized_uses_saber_random_and_mnih_human():
    # Breakout: random 1.5, human 30.5 -> (30.5 - 1.5) / 29 = 100%.
    assert normalize([30.5], ["breakout"], "human")[0] == pytest.approx(100.0)
    assert human_normalize(16.0, 1.5, 30.5) == pytest.approx(50.0)


def test_human_average_uses_the_atari57_table():
    # Alien in the Atari-57 table: random 227.75, human average 7127.7 (SABER's random: 211.9).
    value = normalize([7127.7], ["alien"], "human_average")[0]
    assert value == pytest.approx(100.0)
    assert normalize([227.75], ["alien"], "human_average")[0] == pytest.approx(0.0)


def test_missing_baselines_are_nan_not_numbers():
    scores = normalize([[0.0, 0.0, 0.0]], ["tennis", "double_dunk", "surround"], "world_record")
    assert np.isnan(scores).all()
    assert np.isnan(normalize([0.0], ["air_raid"], "human")).all()
    assert not np.isnan(normalize([0.0], ["surround"], "human_average")).any()


def test_has_baseline_counts_58_records_and_56_humans():
    from saber.games import saber_games

    games = [g.ale_id for g in saber_games()]
    assert sum(has_baseline(g, "world_record") for g in games) == 58
    assert sum(has_baseline(g, "human") for g in games) == 56


def test_infinite_score_normalizes_to_infinity():
    assert normalize([math.inf], ["battle_zone"], "world_record")[0] == math.inf


def test_shapes_broadcast_over_leading_axes():
    scores = np.zeros((3, 4, 2))
    assert normalize(scores, ["venture", "freeway"], "world_record").shape == (3, 4, 2)


def test_shape_mismatch_and_unknown_reference_are_errors():
    with pytest.raises(ValueError, match="last axis"):
        normalize([1.0, 2.0], ["pong"], "world_record")
    with pytest.raises(ValueError, match="Unknown reference 'wr'"):
        baseline_arrays(["pong"], "wr")  # type: ignore[arg-type]
