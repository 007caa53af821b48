"""Atari-N estimates and per-game models against the paper's formula, by hand."""

from __future__ import annotations

import math

import pytest

from saber.errors import UnknownGameError
from saber.scoring import atari_n_estimate, normalize
from saber.scoring.atari5 import atari57_median, missing_games, predict_game_scores, subset_weights

ATARI5 = ("battle_zone", "double_dunk", "name_this_game", "phoenix", "qbert")


def test_atari5_weights_are_the_papers():
    assert subset_weights("atari5") == {
        "battle_zone": 0.3820,
        "double_dunk": 0.0679,
        "name_this_game": 0.3108,
        "phoenix": 0.1241,
        "qbert": 0.0805,
    }
    assert len(subset_weights("atari10")) == 10
    with pytest.raises(UnknownGameError, match="atari7"):
        subset_weights("atari7")


def test_estimate_formula_in_percent():
    z = {g: 100.0 for g in ATARI5}
    # 10 ** (sum w * log10(1 + 100)) - 1, with sum w = 0.9653
    assert atari_n_estimate(z) == pytest.approx(10 ** (0.9653 * math.log10(101)) - 1)


def test_estimate_clips_negative_scores_at_zero():
    z = {g: -30.0 for g in ATARI5}
    assert atari_n_estimate(z) == pytest.approx(0.0)
    z["battle_zone"] = 999.0
    assert atari_n_estimate(z) == pytest.approx(10 ** (0.3820 * 3) - 1)


def test_atari1_uses_name_this_game_alone():
    assert atari_n_estimate({"name_this_game": 99.0}, "atari1") == pytest.approx(
        10 ** (0.9976 * 2) - 1
    )


def test_missing_or_infinite_game_gives_no_estimate():
    z = {g: 100.0 for g in ATARI5[1:]}
    assert atari_n_estimate(z) is None
    assert missing_games(z, "atari5") == ["battle_zone"]
    z["battle_zone"] = math.inf
    assert atari_n_estimate(z) is None


def test_atari10_model_predicts_its_own_inputs_exactly():
    # The amidar row of the Atari-10 models is the identity (intercept 0, amidar weight 1).
    z = {g: 40.0 for g in subset_weights("atari10")}
    z["amidar"] = 123.0
    predicted = predict_game_scores(z, "atari10")
    assert predicted is not None and len(predicted) == 57
    assert predicted["amidar"] == pytest.approx(123.0)


def test_atari5_model_prediction_from_zero_scores_is_the_intercept():
    predicted = predict_game_scores({g: 0.0 for g in ATARI5}, "atari5")
    assert predicted is not None
    assert predicted["alien"] == pytest.approx(10**-0.807 - 1)  # alien's intercept: -0.807


def test_prediction_needs_every_input():
    assert predict_game_scores({"qbert": 10.0}, "atari5") is None


def test_human_average_normalization_feeds_the_estimate():
    # Scores at the Atari-57 average human are 100% in every game.
    from saber.games import get_game

    scores = [get_game(g).atari57_human for g in ATARI5]
    z = dict(zip(ATARI5, normalize(scores, list(ATARI5), "human_average"), strict=True))
    assert atari_n_estimate(z) == pytest.approx(10 ** (0.9653 * math.log10(101)) - 1)


def test_measured_median_needs_all_57_games():
    from saber.games import atari57_games

    z = {g.ale_id: float(i) for i, g in enumerate(atari57_games())}
    assert atari57_median(z) == 28.0  # median of 0..56
    del z["surround"]
    assert atari57_median(z) is None
