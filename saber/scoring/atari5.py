"""Atari-N: estimates of the 57-game median human-normalized score from a few games.

The regression of Aitchison et al. (2022) and why it is only a guide under SABER
(:data:`CAVEAT`) are in docs/reports.md.

    >>> z = dict.fromkeys(["battle_zone", "double_dunk", "name_this_game", "phoenix", "qbert"], 100.0)
    >>> round(atari_n_estimate(z, "atari5"), 1)  # weights sum to 0.9653
    85.1
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping

import numpy as np

from saber.errors import UnknownGameError
from saber.games import atari57_games, get_game, read_data_csv

CAVEAT = (
    "Atari-N estimates use regressions fitted on published results without sticky actions "
    "and with a 30-minute cap (Aitchison et al. 2022); under SABER settings they are a guide, "
    "not a measurement."
)

# The subsets whose weights predict the 57-game median (the *_val ones are validation sets).
ESTIMATE_SUBSETS: tuple[str, ...] = (
    "atari1",
    "atari3",
    "atari5",
    "atari10",
    "atari3_val",
    "atari5_val",
)

# Per-game regression models shipped in saber/data, by the subset they take as input.
GAME_MODELS: dict[str, str] = {
    "atari5": "atari5_game_models.csv",
    "atari10": "atari10_game_models.csv",
}


def atari_n_log_transform(z: float) -> float:
    """The paper's transform of a human-normalized score in percent: ``log10(1 + max(0, z))``."""
    return math.log10(1.0 + max(0.0, z))


@functools.lru_cache(maxsize=16)
def subset_weights(subset: str) -> dict[str, float]:
    """Regression weights of an Atari-N subset: ale id -> weight.

    Args:
        subset: ``atari1``, ``atari3``, ``atari5``, ``atari10``, ``atari3_val``, ``atari5_val``.
    """
    rows = [row for row in read_data_csv("atari_subsets.csv") if row["subset"] == subset]
    if not rows:
        raise UnknownGameError(
            f"Unknown subset {subset!r}; known subsets: {', '.join(ESTIMATE_SUBSETS)}"
        )
    return {get_game(row["game"]).ale_id: float(row["coefficient"]) for row in rows}


def missing_games(z: Mapping[str, float], subset: str) -> list[str]:
    """Games of ``subset`` with no finite score in ``z`` (ale ids, subset order)."""
    return [g for g in subset_weights(subset) if g not in z or not math.isfinite(z[g])]


def atari_n_estimate(z: Mapping[str, float], subset: str = "atari5") -> float | None:
    """Estimate of the median human-normalized score over the 57 standard games.

    Args:
        z: per-game human-normalized scores in percent against the Atari-57 average-human
            table (reference ``"human_average"``), by ale id; extra games are ignored.
        subset: which Atari-N model (:data:`ESTIMATE_SUBSETS`).

    Returns:
        The estimate in percent, or None when a game of the subset has no finite score.
    """
    if missing_games(z, subset):
        return None
    weights = subset_weights(subset)
    log_estimate = sum(w * atari_n_log_transform(z[g]) for g, w in weights.items())
    return 10.0**log_estimate - 1.0


def atari57_median(z: Mapping[str, float]) -> float | None:
    """The measured median over the 57 standard games, what Atari-N estimates.

    Args:
        z: human-normalized scores in percent (reference ``"human_average"``) by ale id.

    Returns:
        The median in percent, or None unless all 57 games have a finite score.
    """
    games = [game.ale_id for game in atari57_games()]
    if any(g not in z or not math.isfinite(z[g]) for g in games):
        return None
    return float(np.median([z[g] for g in games]))


@functools.lru_cache(maxsize=4)
def _game_model(model: str) -> tuple[tuple[str, ...], np.ndarray, np.ndarray, tuple[str, ...]]:
    if model not in GAME_MODELS:
        raise UnknownGameError(f"Unknown game model {model!r}; known: {', '.join(GAME_MODELS)}")
    rows = read_data_csv(GAME_MODELS[model])
    inputs = tuple(name for name in rows[0] if name not in {"game", "intercept"})
    intercepts = np.array([float(row["intercept"]) for row in rows])
    coefficients = np.array([[float(row[name]) for name in inputs] for row in rows])
    targets = tuple(get_game(row["game"]).ale_id for row in rows)
    return inputs, intercepts, coefficients, targets


def predict_game_scores(z: Mapping[str, float], model: str = "atari5") -> dict[str, float] | None:
    """Predict every Atari-57 game's human-normalized score from the Atari-5 or -10 games.

    Args:
        z: human-normalized scores in percent (reference ``"human_average"``) by ale id;
            must hold the model's input games.
        model: ``"atari5"`` or ``"atari10"``.

    Returns:
        Predicted percent by ale id for the 57 games, or None when an input is missing
        or not finite. See :data:`CAVEAT`.
    """
    inputs, intercepts, coefficients, targets = _game_model(model)
    if any(g not in z or not math.isfinite(z[g]) for g in inputs):
        return None
    x = np.array([atari_n_log_transform(z[g]) for g in inputs])  # (inputs,)
    predicted = 10.0 ** (intercepts + coefficients @ x) - 1.0  # (57,)
    return dict(zip(targets, (float(p) for p in predicted), strict=True))
