"""Vector envs as the probe sees them: one adapter per kind, each driving row 0 (env 0).

:class:`VectorSubject` (Gymnasium), :class:`Sb3VecSubject` (Stable-Baselines3) and
:class:`EnvpoolSubject` (envpool's API); docs/check.md says how what is under the batch
decides how the rules are measured.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np

from saber.check.emulator import Emulator, reach, step_counters

if TYPE_CHECKING:  # the Gymnasium step tuple: one home, saber.envs.wrappers
    from saber.envs.wrappers import StepResult as Step

# The game a SaberVectorEnv is switched to for following: its frames tell the 18 actions
# apart, a life is lost within a few hundred steps, and its 20-point shots show whether
# the score is clipped (Breakout's first bricks score 1: clipping could not be told).
FOLLOWED_GAME = "seaquest"
# The game each SaberVectorEnv was made with, before SaberVectorSeams switched it.
_PLAYED_GAMES: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def row_of(infos: dict[str, Any], row: int = 0) -> dict[str, Any]:
    """Row ``row`` of a vector env's info dict (keys whose ``_key`` mask says the row has
    no value are left out; nested dicts are read the same way)."""
    found = {}
    for key, value in infos.items():
        if key.startswith("_"):
            continue
        mask = infos.get(f"_{key}")
        if mask is not None and not mask[row]:
            continue
        found[key] = (
            row_of(value, row)
            if isinstance(value, dict)
            else (value[row] if np.ndim(value) else value)
        )
    return found


class SaberVectorSeams:
    """What the probe needs of a ``SaberVectorEnv`` to follow its row 0: its game, row 0's
    ALE seed, its clock of frames since a reward and its engine's step (the seam where
    the engine's output can be tampered with before the env's rules read it).

    At construction the env is switched to :data:`FOLLOWED_GAME` (a new engine of the
    env's kind, threaded or sequential, for that ROM, built with the env's own settings:
    the analogue of the probes loading their game under a single env, whose ALE keeps its
    settings); the env's rules and the wrappers above it stay as they are. An env given
    to ``saber.check`` itself (not a factory) is left on that game.

    Args:
        env: the ``SaberVectorEnv`` (``gymnasium.make_vec("SABER/<Game>").unwrapped``).
    """

    reward_clock = "SaberVectorEnv._last_reward_frame"

    def __init__(self, env: Any) -> None:
        self.env = env
        # The game the env was made with (kept per env: each probe makes its own adapter).
        self.played_game: str = _PLAYED_GAMES.setdefault(env, env.rom_id)
        if env.engine is not None and env.rom_id != FOLLOWED_GAME:
            env.switch_game(FOLLOWED_GAME)
        self.rom_id: str = env.rom_id

    def ale_seed(self, seed: int) -> int:
        """Row 0's ALE seed after ``reset(seed=seed)`` (SABER's seed stream)."""
        from saber.envs.emulator import SeedStream

        return SeedStream(seed).next_ale_seed()

    def advance_reward_clock(self, frames: int) -> bool:
        """Move every row's frame of its last reward ``frames`` back."""
        self.env.shift_reward_clock(frames)
        return True

    @contextmanager
    def tampered(self, tamper: Callable[..., tuple[Any, ...]]) -> Iterator[bool]:
        """Within: the engine's output ``(frames, rewards, game_over, episode_frames)``
        passes through ``tamper`` (called with a leading handle, None, as saber.jax's
        engine step has one) before the env's rules read it."""
        engine = self.env.engine
        engine_step = engine.step

        def step(actions: Any, reset_rows: Any, ale_seeds: Any) -> tuple[Any, ...]:
            return tuple(tamper(None, *engine_step(actions, reset_rows, ale_seeds))[1:])

        engine.step = step
        try:
            yield True
        finally:
            del engine.step  # the engine's own method again

    def episode_frame(self) -> int:
        """Row 0's emulator frames this episode (for adapters whose info lacks them)."""
        return int(self.env.episode_frames[0])


def saber_vector_under(env: Any) -> Any | None:
    """The ``SaberVectorEnv`` under ``env`` (through Gymnasium wrappers, SB3 ``VecEnv``
    wrappers and adapters holding one as ``venv``, ``envs``, ``env`` or ``vec_env``; of a
    ``SaberMultiGameVectorEnv``, its first game's, which holds row 0), or None."""
    from saber.envs.multigame import SaberMultiGameVectorEnv
    from saber.envs.vector import SaberVectorEnv

    seen: set[int] = set()
    while env is not None and id(env) not in seen:
        seen.add(id(env))
        unwrapped = getattr(env, "unwrapped", env)
        if isinstance(unwrapped, SaberVectorEnv):
            return unwrapped
        if isinstance(unwrapped, SaberMultiGameVectorEnv):  # row 0: its first game's row 0
            return unwrapped.vector_envs[0] if unwrapped.vector_envs else None
        env = next(
            (
                inner
                for name in ("venv", "envs", "env", "vec_env")
                if (inner := getattr(env, name, None)) is not None and not isinstance(inner, list)
            ),
            None,
        )
    return None


def _env_row(info: dict[str, Any], row: int) -> dict[str, Any]:
    """Row ``row`` of an envpool-style info dict, without ``players`` (envpool's nested
    per-player ids, which hold no row of their own)."""
    return row_of({key: value for key, value in info.items() if key != "players"}, row)


class _Followable:
    """The follower's view of a batch with a ``SaberVectorEnv`` under it (``seams``): an
    adapter is followed when its emulator is out of reach and the seams are there."""

    emulator: Emulator | None
    seams: SaberVectorSeams | None

    @property
    def followable(self) -> bool:
        return self.emulator is None and self.seams is not None

    @property
    def rom_id(self) -> str:
        assert self.seams is not None
        return self.seams.rom_id

    @property
    def reward_clock(self) -> str:
        return SaberVectorSeams.reward_clock

    @property
    def game_text(self) -> str:
        assert self.seams is not None
        if self.seams.played_game == self.seams.rom_id:
            return f"{self.seams.rom_id} (the env's own game)"
        return (
            f"{self.seams.rom_id} (loaded under the SaberVectorEnv: a new engine of that ROM "
            f"with the env's own settings; the env played {self.seams.played_game})"
        )

    def ale_seed(self, seed: int) -> int:
        assert self.seams is not None
        return self.seams.ale_seed(seed)

    def advance_reward_clock(self, frames: int) -> bool:
        return self.seams is not None and self.seams.advance_reward_clock(frames)

    @contextmanager
    def tampered(self, tamper: Callable[..., tuple[Any, ...]]) -> Iterator[bool]:
        if self.seams is None:
            yield False
            return
        with self.seams.tampered(tamper) as reached:
            yield reached


def _seams(env: Any, emulator: Emulator | None) -> SaberVectorSeams | None:
    if emulator is not None:
        return None  # row 0's emulator is reached: no following needed
    saber = saber_vector_under(env)
    return SaberVectorSeams(saber) if saber is not None else None


class VectorSubject(_Followable):
    """A Gymnasium vector env: every row gets the same action; the probe reads row 0.

    Row 0's emulator is reached under a ``SyncVectorEnv``; under a ``SaberVectorEnv``
    (``gymnasium.make_vec("SABER/Pong")``) row 0 is followed; an ``AsyncVectorEnv`` hides
    its emulators.
    """

    def __init__(self, env: gym.vector.VectorEnv) -> None:
        self.env = env
        self.action_space = env.single_action_space
        self.emulator = reach(env)
        subs = getattr(env.unwrapped, "envs", None)
        self.step_counters = step_counters(subs[0]) if subs else []
        self.seams = _seams(env, self.emulator)

    def reset(self, seed: int | None = None) -> tuple[Any, dict[str, Any]]:
        obs, infos = self.env.reset(seed=seed)
        return obs[0], row_of(infos)

    def step(self, action: int) -> Step:
        actions = np.full(self.env.num_envs, action, dtype=np.int64)
        obs, rewards, terminated, truncated, infos = self.env.step(actions)
        return obs[0], float(rewards[0]), bool(terminated[0]), bool(truncated[0]), row_of(infos)

    def close(self) -> None:
        self.env.close()


def is_sb3_vec_env(env: Any) -> bool:
    """SB3's ``VecEnv`` interface, duck-typed (SB3 need not be installed to check others)."""
    return all(hasattr(env, name) for name in ("step_async", "step_wait", "reset", "num_envs"))


class Sb3VecSubject(_Followable):
    """A Stable-Baselines3 ``VecEnv``: row 0 of a batch that resets itself at each
    episode's end. At an end, the observation returned is the ended episode's last
    (``info["terminal_observation"]``), as a Gymnasium env returns it, and
    ``info["TimeLimit.truncated"]`` tells a truncation from a termination.

    Row 0's emulator is reached under a ``DummyVecEnv`` (its first env); under saber's
    adapter of a ``SaberVectorEnv`` row 0 is followed; a ``SubprocVecEnv`` hides its
    emulators.
    """

    def __init__(self, env: Any) -> None:
        self.env = env
        self.action_space = env.action_space
        subs = getattr(getattr(env, "unwrapped", env), "envs", None)
        first = subs[0] if isinstance(subs, list) and subs else None
        self.emulator = reach(first) if first is not None else None
        self.step_counters = step_counters(first) if first is not None else []
        self.seams = _seams(env, self.emulator)

    def reset(self, seed: int | None = None) -> tuple[Any, dict[str, Any]]:
        if seed is not None:
            self.env.seed(seed)  # SB3: row i gets seed + i at the next reset
        obs = self.env.reset()
        infos = getattr(self.env, "reset_infos", None)
        info = dict(infos[0]) if infos else {}
        self._frame_number(info, ended=False)
        return obs[0], info

    def step(self, action: int) -> Step:
        self.env.step_async(np.full(self.env.num_envs, action))
        obs, rewards, dones, infos = self.env.step_wait()
        info = dict(infos[0])
        done = bool(dones[0])
        truncated = done and bool(info.get("TimeLimit.truncated", False))
        newest = info["terminal_observation"] if done and "terminal_observation" in info else obs[0]
        self._frame_number(info, ended=done)
        return newest, float(rewards[0]), done and not truncated, truncated, info

    def _frame_number(self, info: dict[str, Any], ended: bool) -> None:
        """Row 0's emulator frame counter where the adapter's info lacks it (the follower
        reads it at every step): the episode record's at an end, else the env's own."""
        if "episode_frame_number" in info or self.seams is None:
            return
        record = info.get("saber")
        if ended and isinstance(record, dict) and "frames" in record:
            info["episode_frame_number"] = int(record["frames"])
        elif not ended:
            info["episode_frame_number"] = self.seams.episode_frame()

    def close(self) -> None:
        self.env.close()


def _is_rom(rom_id: str) -> bool:
    from ale_py import roms

    return roms.get_rom_path(rom_id) is not None


def is_envpool_like(env: Any) -> bool:
    """envpool's API (``send``, ``recv``, ``async_reset``), duck-typed."""
    return all(callable(getattr(env, name, None)) for name in ("send", "recv", "async_reset"))


class EnvpoolSubject(_Followable):
    """An env with envpool's API: ``send(actions, env_id)`` then ``recv()`` until a batch
    holds env 0 (``info["env_id"]``); the other rows of each batch get the same action.

    envpool seeds at construction (``envpool.make(..., seed=)``), not at reset: a seed
    given to :meth:`reset` is ignored (the probes that need seeded starts find them
    unreproducible and say so), but by ``saber.envpool``, which takes make_vec's seeded
    reset. ``reset`` resets every env (``async_reset``), after collecting the results
    still in flight.

    Args:
        env: an envpool env (``envpool.make(..., env_type="gymnasium")``; any ``batch_size``)
            or an env with its API (``saber.envpool``).
    """

    def __init__(self, env: Any) -> None:
        self.env = env
        single = getattr(env, "single_action_space", None)  # envpool's is action_space
        self.action_space = single if single is not None else env.action_space
        self.emulator = None  # envpool's emulators run in C++, out of reach
        self.step_counters: list[Any] = []
        self.seams = _seams(env, None)
        config = getattr(env, "config", None)
        config = config if isinstance(config, dict) else {}
        self.num_envs = int(config.get("num_envs") or getattr(env, "num_envs", None) or len(env))
        # The game (envpool's "task" is the ALE's ROM id), for following env 0 by the RAM
        # envpool reports (saber.check.probes.ram_followed); its settings are not read.
        task = config.get("task")
        self._task = task if isinstance(task, str) and _is_rom(task) else None
        self._waiting: np.ndarray | None = None  # ids received and not yet sent again
        self._in_flight = 0  # envs sent whose results have not come back

    @property
    def rom_id(self) -> str:
        if self.seams is not None:
            return self.seams.rom_id
        assert self._task is not None
        return self._task

    @property
    def ram_followable(self) -> bool:
        """Env 0 can be followed by its RAM (``info["ram"]``): its game is known."""
        return self.seams is None and self._task is not None

    def _until_env_zero(self, action: int) -> tuple[Any, ...]:
        """Receive batches until one holds env 0, sending ``action`` to the envs of each
        batch without it; env 0's row of that batch (its ids then wait for a send)."""
        while True:
            obs, rewards, terminated, truncated, info = self.env.recv()
            ids = np.asarray(info["env_id"]).reshape(-1)
            self._in_flight -= len(ids)
            where = np.flatnonzero(ids == 0)
            if len(where):
                self._waiting = ids
                row = int(where[0])
                return obs[row], rewards[row], terminated[row], truncated[row], _env_row(info, row)
            self._send(ids, action)

    def _send(self, ids: np.ndarray, action: int) -> None:
        self.env.send(np.full(len(ids), action, dtype=np.int32), ids.astype(np.int32))
        self._in_flight += len(ids)

    def reset(self, seed: int | None = None) -> tuple[Any, dict[str, Any]]:
        while self._in_flight > 0:  # envpool's reset is undefined with envs in flight
            _, _, _, _, info = self.env.recv()
            self._in_flight -= len(np.asarray(info["env_id"]).reshape(-1))
        if seed is not None and self.seams is not None:
            # saber.envpool (a SaberVectorEnv under it) takes make_vec's seeded reset:
            # the seeded episodes the probes replay can be played again.
            obs, info = self.env.reset(seed=seed)
            batch = int(getattr(self.env, "batch_size", self.num_envs))
            self._waiting = np.arange(batch, dtype=np.int32)  # env 0's batch: sent next
            return obs[0], _env_row(info, 0)
        self.env.async_reset()
        self._in_flight = self.num_envs
        obs, _, _, _, info = self._until_env_zero(0)
        return obs, info

    def step(self, action: int) -> Step:
        assert self._waiting is not None, "reset() first"
        self._send(self._waiting, action)
        obs, reward, terminated, truncated, info = self._until_env_zero(action)
        return obs, float(reward), bool(terminated), bool(truncated), info

    def close(self) -> None:
        close = getattr(self.env, "close", None)
        if callable(close):
            close()
