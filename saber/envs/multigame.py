"""Many games in one vector env: ``gymnasium.make_vec("SABER/Atari5", num_envs=10)``.

Each game is one :class:`~saber.envs.vector.SaberVectorEnv`; this class deals the rows out
(sub-env ``i`` plays game ``i % len(games)``) and gathers them back, every engine stepping
at once (docs/environments.md, "Many games in one vector env").
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Protocol, TypeVar

import numpy as np
from gymnasium.error import ResetNeeded
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv

from saber.envs.emulator import refuse_pickling
from saber.envs.infos import place_rows
from saber.envs.vector import SaberVectorEnv
from saber.envs.vector_args import (
    ResetSeed,
    checked_actions,
    per_row_seeds,
    reset_mask,
    set_spaces,
)
from saber.envs.wrappers import RAW_REWARD
from saber.errors import SaberError, UnknownGameError
from saber.games import GameInfo, game_sets, resolve_games
from saber.registration import env_id

_StepResult = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]
GAME = "game"  # the info key naming each sub-env's game (its ROM id)


class _Closable(Protocol):
    def close(self) -> None: ...


_Env = TypeVar("_Env", bound=_Closable)


class SaberMultiGameVectorEnv(VectorEnv):
    """``num_envs`` SABER environments of several games, stepped as one batch.

    Sub-env ``i`` plays game ``i % G`` of the ``G`` games, in the order given (a named
    set's order is :func:`saber.games.game_sets`'). Every sub-env has the observation
    space ``uint8`` (4, 84, 84) and the action space ``Discrete(18)``. ``num_envs`` must
    be a multiple of ``G``, so every game has as many sub-envs.

    Sub-env ``i`` plays exactly what ``gymnasium.make("SABER/<its game>")`` plays for the
    same seeds and actions; its records (``info["saber"]``, mask ``info["_saber"]``) are
    the single env's. ``info["game"]`` (``object`` array, (num_envs,)) holds each
    sub-env's ROM id at reset and at every step; the rest of ``info``, the seeding
    (``reset(seed=s)`` seeds sub-env ``i`` with ``s + i``), ``seed_each_episode``,
    ``episode_seeds``, ``step_async``/``step_wait`` and the autoreset modes are those of
    :class:`~saber.envs.vector.SaberVectorEnv`.

    Args:
        games: the games, in any spelling (a list, or a comma-separated string; a named
            set such as ``"atari5"`` counts as its games); each at most once.
        num_envs: number of sub-environments, a multiple of the number of games
            (default: one per game).
        game_set: instead of ``games``, a named set of :func:`saber.games.game_sets`
            (``SABER/Atari5`` and the other set ids give it).
        num_threads: emulation threads of each game's engine (0: the cores shared out
            among the games, at least one each).
        autoreset_mode, render_mode, checkpoint_frames: as for
            :class:`~saber.envs.vector.SaberVectorEnv` (the same for every game).
        **overrides: fields of :class:`~saber.protocol.settings.SaberSettings`, as for
            :class:`~saber.envs.vector.SaberVectorEnv` (the same for every game).

    Example:
        >>> import gymnasium as gym
        >>> import numpy as np
        >>> envs = gym.make_vec("SABER/Atari5", num_envs=10)
        >>> obs, info = envs.reset(seed=0)  # sub-env i seeded with 0 + i
        >>> obs.shape, envs.single_action_space
        ((10, 4, 84, 84), Discrete(18))
        >>> info["game"][:6].tolist()
        ['battle_zone', 'double_dunk', 'name_this_game', 'phoenix', 'qbert', 'battle_zone']
        >>> obs, rewards, terminated, truncated, info = envs.step(np.zeros(10, dtype=int))
        >>> info["episode_frame_number"][:3], info["game"][9]
        (array([4, 4, 4]), 'qbert')
        >>> envs.close()
    """

    metadata: ClassVar[dict[str, Any]] = {"autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        games: str | Sequence[str] | None = None,
        num_envs: int | None = None,
        *,
        game_set: str | None = None,
        num_threads: int = 0,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        render_mode: str | None = None,
        checkpoint_frames: dict[str, int] | None = None,
        **overrides: Any,
    ) -> None:
        infos, _, num_envs = dealt_games(games, game_set, num_envs, num_threads)
        count = len(infos)
        per_game = num_envs // count
        threads = num_threads or threads_per_game(count, per_game)
        self.games: tuple[str, ...] = tuple(game.ale_id for game in infos)
        self.num_envs = num_envs
        self.vector_envs: tuple[SaberVectorEnv, ...] = ()
        envs = one_per_game(
            lambda game: SaberVectorEnv(
                game,
                per_game,
                num_threads=threads,
                autoreset_mode=autoreset_mode,
                render_mode=render_mode,
                checkpoint_frames=checkpoint_frames,
                **overrides,
            ),
            self.games,
        )
        self.vector_envs = envs
        first = envs[0]
        self.autoreset_mode = first.autoreset_mode
        self.metadata = {"autoreset_mode": self.autoreset_mode}
        self.saber_settings = first.saber_settings
        self.checkpoint_frames = first.checkpoint_frames
        set_spaces(self, self.saber_settings, num_envs)
        self.row_games = np.array([self.games[i % count] for i in range(num_envs)], dtype=object)
        self.row_games.flags.writeable = False
        # Threaded engines last: a step waits first on the engines that run in this
        # process, which emulate while the threaded ones work on their own threads.
        self._wait_order = sorted(range(count), key=lambda g: envs[g].uses_threads)
        self._in_flight = False

    # ------------------------------------------------------------- attributes
    @property
    def seed_each_episode(self) -> bool:
        """Each episode started without a seed takes one from its sub-env's seed stream
        (as :class:`~saber.envs.vector.SaberVectorEnv`'s); set for every game at once."""
        return self.vector_envs[0].seed_each_episode

    @seed_each_episode.setter
    def seed_each_episode(self, value: bool) -> None:
        for env in self.vector_envs:
            env.seed_each_episode = value

    @property
    def episode_seeds(self) -> np.ndarray:
        """Each sub-env's current episode seed (int64, (num_envs,)), -1 where it has none."""
        return self._gather([env.episode_seeds.copy() for env in self.vector_envs])

    # ------------------------------------------------------------------ reset
    def reset(
        self, *, seed: ResetSeed = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset all sub-envs, or those of ``options["reset_mask"]`` (bool, (num_envs,))."""
        self._check_open()
        mask = reset_mask(options, self.num_envs)
        if mask is None:
            mask = np.ones(self.num_envs, dtype=bool)
        # The seed of each reset row, in row order (s + k for the k-th, as a single game's
        # vector env gives), dealt out to the games' envs by row.
        seeds = per_row_seeds(seed, int(np.count_nonzero(mask)))
        if seeds and seeds[0] is not None:
            self._np_random, self._np_random_seed = seeding.np_random(seeds[0])
        row_seeds = np.full(self.num_envs, -1, dtype=np.int64)
        row_seeds[mask] = [-1 if s is None else s for s in seeds]
        count = len(self.games)
        observations, frames, lives = [], [], []
        for g, env in enumerate(self.vector_envs):
            game_mask = mask[g::count]
            game_seeds = row_seeds[g::count][game_mask]
            env_options = dict(options or {}, reset_mask=game_mask.copy())
            obs, info = env.reset(seed=None if seed is None else game_seeds, options=env_options)
            observations.append(obs)
            frames.append(info["episode_frame_number"])
            lives.append(info.get("lives"))
        info = {"episode_frame_number": self._gather(frames), GAME: self.row_games.copy()}
        if lives[0] is not None:  # life_signal (not SABER): every game's env gives it
            info["lives"] = self._gather(lives)
        return self._gather(observations), info

    # ------------------------------------------------------------------- step
    def step(self, actions: Any) -> _StepResult:
        """Step every sub-env; see :class:`~saber.envs.vector.SaberVectorEnv` for what
        happens after an episode ends."""
        self.step_async(actions)
        return self.step_wait()

    def step_async(self, actions: Any) -> None:
        """:meth:`step`'s first half: every game's engine starts its step."""
        self._check_open()
        if self._in_flight:
            raise RuntimeError("a step is in flight (step_async): call step_wait() first")
        actions = checked_actions(actions, self.num_envs)
        self._check_ready()  # before any game starts: a refusal leaves no step half sent
        count = len(self.games)
        for g, env in enumerate(self.vector_envs):
            env.step_async(actions[g::count])
        self._in_flight = True

    def step_wait(self) -> _StepResult:
        """:meth:`step`'s second half: waits for every game's step, returns the batch."""
        if not self._in_flight:
            raise RuntimeError("step_wait() without step_async(): start a step first")
        self._in_flight = False
        waited = {g: self.vector_envs[g].step_wait() for g in self._wait_order}
        results = [waited[g] for g in range(len(self.games))]
        obs, rewards, terminated, truncated = (
            self._gather([result[part] for result in results]) for part in range(4)
        )
        infos = [result[4] for result in results]
        info: dict[str, Any] = {
            "episode_frame_number": self._gather([i["episode_frame_number"] for i in infos]),
            GAME: self.row_games.copy(),
        }
        if RAW_REWARD in infos[0]:
            info[RAW_REWARD] = self._gather([i[RAW_REWARD] for i in infos])
        if "lives" in infos[0]:  # life_signal (not SABER)
            info["lives"] = self._gather([i["lives"] for i in infos])
        if any("saber" in i for i in infos):
            info["saber"], info["_saber"] = self._gather_records(infos)
        return obs, rewards, terminated, truncated, info

    # ---------------------------------------------------------------- helpers
    def _gather(self, parts: list[np.ndarray]) -> np.ndarray:
        """One array of all rows from each game's rows (game ``g``'s are rows g::G)."""
        if len(parts) == 1:  # one game: its rows are all rows (its env's arrays are fresh)
            return parts[0]
        first = parts[0]
        out = np.empty((self.num_envs, *first.shape[1:]), dtype=first.dtype)
        count = len(parts)
        for g, part in enumerate(parts):
            out[g::count] = part
        return out

    def _gather_records(self, infos: list[dict[str, Any]]) -> tuple[dict[str, Any], np.ndarray]:
        """The games' ``info["saber"]`` as one dict of (num_envs,) arrays and its mask.

        Records of different games hold the same keys (the same checkpoints for all)."""
        count = len(self.games)
        parts = [
            (slice(g, None, count), {**info["saber"], "_saber": info["_saber"]})
            for g, info in enumerate(infos)
            if "saber" in info
        ]
        records = place_rows(parts, self.num_envs)
        mask = records.pop("_saber")
        return records, mask

    def _check_ready(self) -> None:
        if not all(env.started for env in self.vector_envs):
            raise ResetNeeded("Cannot call step() before reset(): call env.reset() first.")
        if self.autoreset_mode == AutoresetMode.DISABLED:
            ended = self._gather([env.needs_reset for env in self.vector_envs])
            if ended.any():
                raise ResetNeeded(
                    f"Sub-envs {np.flatnonzero(ended).tolist()} have ended: reset them with "
                    f"env.reset(options={{'reset_mask': mask}}) before stepping "
                    f"(autoreset is disabled)."
                )

    def _check_open(self) -> None:
        if not self.vector_envs:
            raise RuntimeError(f"{type(self).__name__} is closed: make a new one to play on.")

    def __getstate__(self) -> None:
        refuse_pickling(self)

    def close_extras(self, **kwargs: Any) -> None:
        """Stop every game's engine now."""
        envs, self.vector_envs = self.vector_envs, ()
        self._in_flight = False
        for env in envs:
            env.close()


def dealt_games(
    games: str | Sequence[str] | None, game_set: str | None, num_envs: Any, num_threads: Any
) -> tuple[tuple[GameInfo, ...], str, int]:
    """The games of a multi-game env, the id it is played under (``"SABER/Atari5"``) and
    its number of sub-envs (``num_envs``; None: one per game), with ``num_envs`` and
    ``num_threads`` checked: the one home of what the numpy and the saber.jax multi-game
    envs accept, so both refuse the same input in the same words.

    Raises:
        UnknownGameError, SaberError: as :func:`_games_of`.
        ValueError: ``num_envs`` not a positive int or not a multiple of the number of
            games; ``num_threads`` not an int of 0 or more.
    """
    infos = _games_of(games, game_set)
    name = _env_name(game_set)
    count = len(infos)
    if num_envs is None:
        num_envs = count
    if not isinstance(num_envs, int) or isinstance(num_envs, bool) or num_envs <= 0:
        raise ValueError(f"Expect `num_envs` to be a positive int, actually: {num_envs!r}")
    if num_envs % count:
        raise ValueError(
            f"Expect `num_envs` to be a multiple of the {count} games of {name} (sub-env "
            f"i plays game i % {count}, every game as many), actually: {num_envs}"
        )
    if not isinstance(num_threads, int) or isinstance(num_threads, bool) or num_threads < 0:
        raise ValueError(f"Expect `num_threads` to be 0 or more, actually: {num_threads!r}")
    return infos, name, num_envs


def one_per_game(make: Callable[[str], _Env], games: Sequence[str]) -> tuple[_Env, ...]:
    """``make(game)`` for each game, in order; if one fails, those made are closed (their
    engines' threads stop) before the error goes on."""
    envs: list[_Env] = []
    try:
        for game in games:
            envs.append(make(game))
    except BaseException:
        for env in envs:
            env.close()
        raise
    return tuple(envs)


def _games_of(games: str | Sequence[str] | None, game_set: str | None) -> tuple[GameInfo, ...]:
    """The games to play, from ``games`` or a named ``game_set``, each once.

    Raises:
        UnknownGameError: an unknown game or set, no games, or a game given twice.
        SaberError: both ``games`` and ``game_set``.
    """
    if game_set is not None:
        if games is not None:
            raise SaberError(
                f"{_env_name(game_set)} plays its own games; for games of your choice use "
                "gymnasium.make_vec('SABER/Games', num_envs=..., games=[...])"
            )
        sets = game_sets()
        if game_set not in sets:
            raise UnknownGameError(
                f"Unknown set of games {game_set!r}; known sets: {', '.join(sets)}"
            )
        return sets[game_set]
    if games is None or not games:
        raise UnknownGameError(
            "SABER/Games needs its games: gymnasium.make_vec('SABER/Games', num_envs=..., "
            "games=['pong', 'breakout']), or a set id such as SABER/Atari5"
        )
    items = [part.strip() for part in games.split(",")] if isinstance(games, str) else games
    if not all(isinstance(item, str) for item in items):
        raise UnknownGameError(f"Expect `games` to be names of games, actually: {games!r}")
    found: list[GameInfo] = []
    for item in items:
        for game in resolve_games([item]):
            if game in found:
                raise UnknownGameError(
                    f"{game.ale_id} is given twice in `games`; give each game once (sub-env i "
                    "plays game i % len(games): num_envs gives each game its sub-envs)"
                )
            found.append(game)
    return tuple(found)


def _env_name(game_set: str | None) -> str:
    """The id a set is played under (``"atari5"`` -> ``"SABER/Atari5"``)."""
    return "SABER/Games" if game_set is None else env_id(game_set)


def threads_per_game(games: int, per_game: int) -> int:
    """Each game's engine's threads: the cores shared out, at least one, at most its rows."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(per_game, -(-(cores or 1) // games)))


def _no_single_env(**kwargs: Any) -> None:
    """The single-env entry point of a set id: refused in one line (a set is a vector env)."""
    game_set = kwargs.get("game_set")
    name = _env_name(game_set)
    games = game_sets().get(game_set or "", ())
    if not games:
        raise SaberError(
            "SABER/Games is many games in one vector env: gymnasium.make_vec('SABER/Games', "
            "num_envs=..., games=[...]); for one game, gymnasium.make('SABER/<Game>')"
        )
    raise SaberError(
        f"{name} is a set of {len(games)} games, played as one vector env: "
        f"gymnasium.make_vec('{name}', num_envs={len(games)}); for one of its games, "
        f"gymnasium.make('{games[0].env_id}')"
    )
