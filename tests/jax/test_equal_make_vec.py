"""saber.jax equals make_vec step for step: observations, rewards, terminated, truncated,
episode frame numbers and every episode-record field but wall-clock ``seconds``.

Random actions (all 18) from a seeded generator go to both envs. Each case asserts that
it crossed what it is about (game overs, truncations), so a quiet run cannot pass for one.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.jax.helpers import compare_with_make_vec

pytestmark = pytest.mark.jax

STEPS = 1_500

CASES = [
    # game, envs, seed, overrides, (min game overs, min truncations)
    ("Breakout", 4, 0, {}, (4, 0)),  # the defaults: SABER itself
    ("Breakout", 2, 11, {"clip_rewards": True, "max_frames_without_reward": 300}, (0, 20)),
    ("Pong", 4, 1, {"max_episode_frames": 2_000, "clip_rewards": True}, (0, 8)),
    (
        "SpaceInvaders",
        4,
        7,
        {"max_episode_frames": 1_600, "checkpoint_frames": {"1min": 3_600, "20s": 1_200}},
        (1, 8),
    ),
    ("Seaquest", 3, 3, {"repeat_action_probability": 0.0, "rollover_mode": "ignore"}, (2, 0)),
]


@pytest.mark.parametrize(("game", "num_envs", "seed", "overrides", "minimum"), CASES)
def test_saber_jax_equals_make_vec(
    game: str, num_envs: int, seed: int, overrides: dict[str, Any], minimum: tuple[int, int]
) -> None:
    counts = compare_with_make_vec(game, num_envs, seed, STEPS, **overrides)
    assert counts["game_over"] >= minimum[0], counts
    assert counts["truncated"] >= minimum[1], counts
    assert counts["episodes"] == counts["game_over"] + counts["truncated"]


# Games where ALE plays starting actions at every reset, which its engine counts as episode
# frames and SABER does not (Double Dunk: about 21 frames, Berzerk: 20): the frame numbers,
# the cap and the records' frames after a reload (Double Dunk) and after the engine's own
# restart at a game over (Berzerk).
STARTING_ACTIONS = [
    # game, envs, seed, overrides, steps, (min game overs, min truncations)
    ("DoubleDunk", 2, 0, {"max_episode_frames": 1_000}, 400, (0, 2)),
    ("Berzerk", 2, 0, {}, 400, (2, 0)),
]


@pytest.mark.parametrize(
    ("game", "num_envs", "seed", "overrides", "steps", "minimum"), STARTING_ACTIONS
)
def test_frames_start_at_the_reset_in_games_with_starting_actions(
    game: str,
    num_envs: int,
    seed: int,
    overrides: dict[str, Any],
    steps: int,
    minimum: tuple[int, int],
) -> None:
    counts = compare_with_make_vec(game, num_envs, seed, steps, **overrides)
    assert counts["game_over"] >= minimum[0], counts
    assert counts["truncated"] >= minimum[1], counts
