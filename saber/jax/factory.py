"""``saber.jax.make``: the env of one game, or of several in one batch."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from saber.jax.env import SaberJaxEnv
from saber.jax.multigame import SaberJaxMultiGameEnv, set_of_name


def make(
    game: str | Sequence[str], num_envs: int | None = None, **kwargs: Any
) -> SaberJaxEnv | SaberJaxMultiGameEnv:
    """``num_envs`` SABER envs of ``game`` for JAX::

        env = make("Pong", num_envs=8)
        state, obs, info = env.reset(seed=0)  # row i seeded with seed + i
        state, obs, reward, terminated, truncated, info = env.step(state, actions)

    Several games in one env (``saber.jax.multigame.SaberJaxMultiGameEnv``; row ``i`` plays
    game ``i % G``, as ``gymnasium.make_vec("SABER/Atari5")``): a named set
    (``"SABER/Atari5"``, ``"Atari10"``), a list of games or a comma-separated string.

    Args:
        game: any spelling of a game (``"Pong"``, ``"pong"``, ``"SABER/Pong"``), a set's
            name, or a list of games.
        num_envs: number of rows (several games: a multiple of their number); default:
            one row per game (``saber check saber.jax:make --game SABER/Atari5`` checks
            the set so).
        **kwargs: ``num_threads`` (emulation threads; 0: one per core),
            ``checkpoint_frames`` (as make_vec's) and any
            :class:`~saber.protocol.SaberSettings` field (``clip_rewards=True``...).

    Returns:
        A :class:`SaberJaxEnv` (one game) or a ``SaberJaxMultiGameEnv`` (several).
    """
    if not isinstance(game, str) or "," in game:
        return SaberJaxMultiGameEnv(game, num_envs, **kwargs)
    game_set = set_of_name(game)
    if game_set is not None:
        return SaberJaxMultiGameEnv(None, num_envs, game_set=game_set, **kwargs)
    return SaberJaxEnv(game, 1 if num_envs is None else num_envs, **kwargs)
