"""saber.jax's many-games env (``saber.jax.make(["Berzerk", "DoubleDunk"], num_envs=4)``):
each row equals the single-game saber.jax env of its game step for step, inside
``lax.scan`` under ``jit``; the whole batch equals ``gymnasium.make_vec("SABER/Games")``'s,
records and ``info["game"]`` included; a set it cannot play whole is refused in one line.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.jax.helpers import compare_with_make_vec

pytestmark = pytest.mark.jax


def test_many_games_equal_make_vec_of_the_same_games() -> None:
    """Berzerk (game overs, starting actions) and Double Dunk (starting actions, reloads
    after the cap) interleaved, two rows each, as make_vec's SABER/Games."""
    counts = compare_with_make_vec(["Berzerk", "DoubleDunk"], 4, 3, 250, max_episode_frames=800)
    assert counts["game_over"] >= 1, counts
    assert counts["truncated"] >= 2, counts


def test_each_row_plays_its_single_game_env_in_a_compiled_scan() -> None:
    """Row i of the many-games env, seeded s + i, against the single-game env of its game
    seeded s + i: one ``lax.scan`` of 120 steps each, the same actions."""
    import jax
    import jax.numpy as jnp

    from saber.jax import make

    games, seed, steps = ["Pong", "Breakout"], 5, 120
    overrides = {"max_episode_frames": 200}  # truncations, so reloads, within the scan
    many = make(games, num_envs=2, **overrides)
    singles = [make(game, num_envs=1, **overrides) for game in games]
    actions = jax.random.randint(jax.random.key(seed), (steps, 2), 0, 18, dtype=jnp.int32)

    def rollout(env, state, actions):
        def one(state, action):
            state, obs, reward, terminated, truncated, info = env.step(state, action)
            return state, (obs, reward, terminated, truncated, info["episode_frame_number"])

        return jax.lax.scan(one, state, actions)[1]

    try:
        assert list(many.row_games) == ["pong", "breakout"]
        state, obs, info = many.reset(seed)
        assert np.asarray(info["game"]).tolist() == [0, 1]
        together = jax.jit(lambda s, a: rollout(many, s, a))(state, actions)
        for row, env in enumerate(singles):
            state, first, _ = env.reset(seed + row)
            np.testing.assert_array_equal(np.asarray(first)[0], np.asarray(obs)[row])
            alone = jax.jit(lambda s, a, env=env: rollout(env, s, a))(
                state, actions[:, row : row + 1]
            )
            for mine, theirs in zip(together, alone, strict=True):
                np.testing.assert_array_equal(np.asarray(mine)[:, row], np.asarray(theirs)[:, 0])
        truncated = np.asarray(together[3])
        assert truncated.sum(axis=0).min() >= 1  # every row restarted from a reload
    finally:
        many.close()
        for env in singles:
            env.close()


@pytest.mark.parametrize(
    ("game", "num_envs", "message"),
    [
        (["pong", "skiing"], 2, "saber.jax cannot run SABER/Games: it holds SABER/Skiing"),
        (["pong", "breakout"], 3, "a multiple of the 2 games of SABER/Games"),
        ("Pong,Pong", 2, "pong is given twice"),
    ],
)
def test_what_many_games_cannot_be_is_refused_in_one_line(
    game: object, num_envs: int, message: str
) -> None:
    from saber.errors import SaberError
    from saber.jax import make

    with pytest.raises((ValueError, SaberError)) as caught:
        make(game, num_envs=num_envs)  # type: ignore[arg-type]
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("games", "num_envs", "num_threads"),
    [
        ("atari5", 7, 0),
        ("pong,breakout", 0, 0),
        ("pong,breakout", True, 0),
        ("pong,breakout", 2, -1),
    ],
    ids=["not-dealt-evenly", "no-rows", "bool-rows", "negative-threads"],
)
def test_many_games_refuse_what_make_vec_refuses_in_its_words(
    games: str, num_envs: object, num_threads: int
) -> None:
    """The checks of the games and of ``num_envs`` have one home (saber.envs.multigame):
    saber.jax says what make_vec says, word for word."""
    from saber.envs.multigame import SaberMultiGameVectorEnv
    from saber.jax import make

    kwargs = {"game_set": games} if games == "atari5" else {"games": games}
    with pytest.raises(ValueError) as numpy_error:
        SaberMultiGameVectorEnv(num_envs=num_envs, num_threads=num_threads, **kwargs)  # type: ignore[arg-type]
    name = "SABER/Atari5" if games == "atari5" else games
    with pytest.raises(ValueError) as jax_error:
        make(name, num_envs=num_envs, num_threads=num_threads)  # type: ignore[arg-type]
    assert str(jax_error.value) == str(numpy_error.value)
