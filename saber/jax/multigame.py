"""Many games in one saber.jax env: ``saber.jax.make("Atari5", num_envs=10)``.

One :class:`~saber.jax.env.SaberJaxEnv` per game (the XLA engine holds one ROM), stepped
in one traced function with the rows interleaved as ``gymnasium.make_vec("SABER/Atari5")``
does (docs/jax.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from saber.envs.emulator import legal_action_count
from saber.envs.multigame import dealt_games, one_per_game, threads_per_game
from saber.envs.vector_args import set_spaces
from saber.games import game_sets
from saber.jax.env import EnvState, SaberJaxEnv, check_seed, checked_actions
from saber.protocol import NUM_ACTIONS

GameStates = tuple[EnvState, ...]  # one state per game, in the order of ``games``


class SaberJaxMultiGameEnv:
    """``num_envs`` SABER envs of several games as pure JAX functions, one batch.

    The contract of :class:`~saber.jax.env.SaberJaxEnv` (``reset(seed)``,
    ``step(state, actions)``, the same spaces, info and records), over rows of several
    games: row ``i`` plays game ``i % G`` and is seeded with ``seed + i``, as
    ``gymnasium.make_vec("SABER/Games", games=..., num_envs=...)``. The state is a tuple
    of the games' :class:`~saber.jax.env.EnvState` (a pytree). ``info["game"]`` is
    ``int32`` (num_envs,), each row's index into :attr:`games` (JAX arrays hold no
    strings); :attr:`row_games` holds the names.

    Attributes:
        games: the games' ROM ids, in order.
        row_games: ``object`` (num_envs,): each row's ROM id.
        envs: one :class:`~saber.jax.env.SaberJaxEnv` per game, ``num_envs // G`` rows each.
        num_envs, saber_settings, checkpoint_frames, record_keys, the spaces: as
            :class:`~saber.jax.env.SaberJaxEnv`'s.
    """

    def __init__(
        self,
        games: str | Sequence[str] | None = None,
        num_envs: int | None = None,
        *,
        game_set: str | None = None,
        num_threads: int = 0,
        **kwargs: Any,
    ) -> None:
        infos, name, num_envs = dealt_games(games, game_set, num_envs, num_threads)
        count = len(infos)
        for game in infos:
            legal = legal_action_count(game.ale_id)
            if legal != NUM_ACTIONS:
                raise ValueError(
                    f"saber.jax cannot run {name}: it holds {game.env_id}, of whose "
                    f"{NUM_ACTIONS} actions ale-py calls only {legal} legal, and its XLA engine "
                    f"can send no others (docs/jax.md). All its games in one numpy vector env: "
                    f'gymnasium.make_vec("{name}", num_envs={num_envs}); in saber.jax, a list '
                    f"of games without {game.env_id}."
                )
        per_game = num_envs // count
        # The games step one after another, each on its engine's threads: each may use
        # every core (as if it were the only game), and no more threads than it has rows.
        threads = num_threads or threads_per_game(1, per_game)
        self.games: tuple[str, ...] = tuple(game.ale_id for game in infos)
        self.num_envs = num_envs
        self.envs: tuple[SaberJaxEnv, ...] = one_per_game(
            lambda game: SaberJaxEnv(game, per_game, num_threads=threads, **kwargs), self.games
        )
        first = self.envs[0]
        self.saber_settings = first.saber_settings
        self.checkpoint_frames = first.checkpoint_frames
        self.record_keys = first.record_keys
        self.row_games = np.array([self.games[i % count] for i in range(num_envs)], dtype=object)
        self.row_games.flags.writeable = False
        self._game_codes = np.arange(num_envs, dtype=np.int32) % count
        set_spaces(self, self.saber_settings, num_envs)

    def __repr__(self) -> str:
        return f"SaberJaxMultiGameEnv({list(self.games)!r}, num_envs={self.num_envs})"

    def close(self) -> None:
        """Stop every game's engine (see :meth:`SaberJaxEnv.close`)."""
        for env in self.envs:
            env.close()

    def reset(self, seed: int | jax.Array) -> tuple[GameStates, jax.Array, dict[str, Any]]:
        """Start every row: row ``i`` seeded with ``seed + i`` (as make_vec's).

        Args:
            seed: a non-negative int (or int32 scalar array, traced or not) below
                ``2**31 - num_envs``.

        Returns:
            ``(state, obs, info)`` as :meth:`SaberJaxEnv.reset`'s, ``info["game"]`` added.
        """
        check_seed(seed, self.num_envs)
        seeds = jnp.asarray(seed, dtype=jnp.int32) + jnp.arange(self.num_envs, dtype=jnp.int32)
        count = len(self.envs)
        results = [env._reset_rows(seeds[g::count]) for g, env in enumerate(self.envs)]
        state = tuple(result[0] for result in results)
        obs = self._gather([result[1] for result in results])
        info = jax.tree.map(lambda *parts: self._gather(parts), *(r[2] for r in results))
        info["game"] = jnp.asarray(self._game_codes)
        return state, obs, info

    def step(
        self, state: GameStates, actions: jax.Array
    ) -> tuple[GameStates, jax.Array, jax.Array, jax.Array, jax.Array, dict[str, Any]]:
        """Step every row with ``actions`` (int32 (n,), each in 0..17): each game's rows
        by that game's :meth:`SaberJaxEnv.step`.

        Returns:
            ``(state, obs, reward, terminated, truncated, info)`` as
            :meth:`SaberJaxEnv.step`'s, ``info["game"]`` added.
        """
        actions = checked_actions(actions, self.num_envs)
        count = len(self.envs)
        results = [
            env.step(game_state, actions[g::count])
            for g, (env, game_state) in enumerate(zip(self.envs, state, strict=True))
        ]
        new_state = tuple(result[0] for result in results)
        obs, reward, terminated, truncated = (
            self._gather([result[part] for result in results]) for part in range(1, 5)
        )
        info = jax.tree.map(lambda *parts: self._gather(parts), *(r[5] for r in results))
        info["game"] = jnp.asarray(self._game_codes)
        return new_state, obs, reward, terminated, truncated, info

    def _gather(self, parts: Sequence[jax.Array]) -> jax.Array:
        """One array of all rows from each game's (game ``g``'s are rows g::G)."""
        if len(parts) == 1:
            return parts[0]
        stacked = jnp.stack(parts, axis=1)  # (per_game, G, ...): row k * G + g
        return stacked.reshape((self.num_envs, *stacked.shape[2:]))


def set_of_name(game: str) -> str | None:
    """The set a name given to :func:`saber.jax.make` stands for (``"SABER/Atari5"``,
    ``"Atari5"`` -> ``"atari5"``), or None where it names one game."""
    name = game.removeprefix("SABER/").lower()
    return name if name in game_sets() else None
