"""envpool's Python API over SABER: ``from saber import envpool`` in place of ``import envpool``.

envpool 1.x's interface over :class:`saber.envs.vector.SaberVectorEnv`; an argument SABER
fixes is accepted at SABER's value only. docs/rl-libraries.md ("envpool and CleanRL's
envpool scripts") says what is translated and how.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import gymnasium
import numpy as np

from saber.envs.factory import resolve_rom_id
from saber.envs.infos import place_rows
from saber.envs.vector import SaberVectorEnv
from saber.envs.wrappers import RAW_REWARD
from saber.errors import EnvPoolError, ProtocolError, UnknownSettingError
from saber.games import ale_id_to_env_name, supported_rom_ids
from saber.protocol.settings import NUM_ACTIONS, SaberSettings

__all__ = [
    "SaberEnvPool",
    "list_all_envs",
    "make",
    "make_gym",
    "make_gymnasium",
]

ENV_TYPES = ("gym", "gymnasium")
DEFAULT_SEED = 42  # envpool's

_SABER = SaberSettings()
# envpool's arguments that SABER fixes -> SABER's value (refused at any other value).
SABER_VALUES: dict[str, Any] = {
    "episodic_life": False,  # an episode ends only at game over
    "zero_discount_on_life_loss": False,
    "repeat_action_probability": _SABER.repeat_action_probability,
    "noop_max": 0,  # the game's own start state: no no-op starts (docs/protocol.md)
    "use_fire_reset": False,  # no automatic FIRE
    "full_action_space": True,  # the 18 joystick actions in every game
    "max_episode_steps": _SABER.max_episode_frames // _SABER.frame_skip,  # the 100-hour cap
    "frame_skip": _SABER.frame_skip,
    "stack_num": _SABER.stack_size,
    "img_height": _SABER.screen_size,
    "img_width": _SABER.screen_size,
    "gray_scale": True,
    "use_inter_area_resize": False,  # SABER resizes bilinearly
    "max_num_players": 1,
}
# envpool's arguments with no effect here: where the ROMs are (ale-py's), thread pinning
# (ale-py's engine pins none), and the reset info envpool 1.x always returns.
IGNORED = ("base_path", "thread_affinity_offset", "gym_reset_return_info")


def list_all_envs() -> list[str]:
    """The task ids :func:`make` knows, in envpool's spelling (``Pong-v5``)."""
    return [f"{ale_id_to_env_name(rom_id)}-v5" for rom_id in supported_rom_ids()]


def make(task_id: str, env_type: str, **kwargs: Any) -> SaberEnvPool:
    """envpool's ``make`` over SABER (docs/rl-libraries.md says what each argument does).

    Raises:
        UnknownGameError: ``task_id`` names no game.
        ProtocolError: an argument contradicts SABER (one line: the argument, SABER's value).
        UnknownSettingError: an argument envpool's Atari envs do not take.
        EnvPoolError: ``env_type`` unknown, ``gym`` missing for ``env_type="gym"``, or a
            ``num_envs``/``batch_size``/``seed`` that cannot be used.
    """
    if env_type not in ENV_TYPES:
        raise EnvPoolError(
            f"saber.envpool makes env_type 'gym' or 'gymnasium', not {env_type!r} "
            "(dm_env is not supported)"
        )
    if "life_signal" in kwargs:
        raise ProtocolError(
            "saber.envpool gives no life signal (life_signal): use saber.make_vec or "
            "gymnasium.make_vec, whose info['lives'] has it with life_signal=True"
        )
    for name, value in kwargs.items():
        if name in SABER_VALUES and not _same(value, SABER_VALUES[name]):
            raise ProtocolError(
                f"{name}={value!r} contradicts SABER: SABER's value is "
                f"{name}={SABER_VALUES[name]!r} (pass that, or leave the argument out)"
            )
    used = ("num_envs", "batch_size", "num_threads", "seed", "reward_clip")
    unknown = sorted(set(kwargs) - set(SABER_VALUES) - set(IGNORED) - set(used))
    if unknown:
        raise UnknownSettingError(
            f"saber.envpool.make() got an unexpected keyword argument {unknown[0]!r}; it "
            f"takes {', '.join(used)} and envpool's Atari arguments at SABER's values"
        )
    return SaberEnvPool(
        task_id,
        env_type,
        num_envs=kwargs.get("num_envs", 1),
        batch_size=kwargs.get("batch_size", 0),
        num_threads=kwargs.get("num_threads", 0),
        seed=kwargs.get("seed", DEFAULT_SEED),
        reward_clip=kwargs.get("reward_clip", False),
    )


def make_gym(task_id: str, **kwargs: Any) -> SaberEnvPool:
    """``make(task_id, "gym", ...)``."""
    return make(task_id, "gym", **kwargs)


def make_gymnasium(task_id: str, **kwargs: Any) -> SaberEnvPool:
    """``make(task_id, "gymnasium", ...)``."""
    return make(task_id, "gymnasium", **kwargs)


def _same(value: Any, saber_value: Any) -> bool:
    if isinstance(saber_value, bool):
        return (
            isinstance(value, (bool, np.bool_, int))
            and value in (0, 1)
            and (bool(value) == saber_value)
        )
    return isinstance(value, (int, float, np.number)) and value == saber_value


def _gym_module() -> Any:
    try:
        import gym  # the old package, not Gymnasium: what env_type="gym" promises
    except ImportError:
        raise EnvPoolError(
            "env_type='gym' gives the old gym package's spaces and API, and gym is not "
            "installed: pip install gym (CleanRL's envpool scripts use gym==0.23.1), or "
            "use env_type='gymnasium'"
        ) from None
    return gym


def _old_gym_api(gym: Any) -> bool:
    """envpool 0.x's rule: gym before 0.26 resets to ``obs`` and steps to 4 values."""
    major, minor = (int(part) for part in gym.__version__.split(".")[:2])
    return (major, minor) < (0, 26)


class SaberEnvPool:
    """``num_envs`` SABER envs of one game behind envpool's interface (docs/rl-libraries.md).

    Attributes:
        num_envs, batch_size: envpool's (``batch_size`` envs per ``recv``).
        is_async: ``batch_size < num_envs``.
        observation_space, action_space: ONE env's (envpool's convention): ``uint8``
            (4, 84, 84) and ``Discrete(18)``, from ``gym`` or Gymnasium by ``env_type``.
        config: envpool's configuration dict, SABER's values filled in.
        all_env_ids: ``int32`` ``arange(num_envs)``.
    """

    def __init__(
        self,
        task_id: str,
        env_type: str,
        *,
        num_envs: int,
        batch_size: int,
        num_threads: int,
        seed: int | list[int] | np.ndarray,
        reward_clip: bool,
    ) -> None:
        if not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise EnvPoolError(f"num_envs must be a positive int, not {num_envs!r}")
        num_envs = int(num_envs)
        batch_size = num_envs if batch_size == 0 else batch_size
        if not isinstance(batch_size, (int, np.integer)) or not 0 < batch_size <= num_envs:
            raise EnvPoolError(f"batch_size must be in 0..num_envs={num_envs}, not {batch_size!r}")
        if num_envs % batch_size:
            raise EnvPoolError(
                f"batch_size={batch_size} must divide num_envs={num_envs}: saber.envpool "
                "steps the envs in groups of batch_size"
            )
        if not isinstance(reward_clip, (bool, np.bool_)):
            raise EnvPoolError(f"reward_clip must be a bool, not {reward_clip!r}")
        if isinstance(num_threads, bool) or not isinstance(num_threads, (int, np.integer)):
            raise EnvPoolError(f"num_threads must be an int (0: one per core), not {num_threads!r}")
        self.env_seeds = _env_seeds(seed, num_envs)
        self.rom_id = resolve_rom_id(task_id)
        self.env_type = env_type
        self.num_envs = num_envs
        self.batch_size = int(batch_size)
        self.is_async = self.batch_size < num_envs
        self.reward_clip = bool(reward_clip)
        self.all_env_ids = np.arange(num_envs, dtype=np.int32)
        spaces: Any = gymnasium.spaces
        self._old_api = False
        if env_type == "gym":
            gym = _gym_module()
            spaces, self._old_api = gym.spaces, _old_gym_api(gym)
        size, stack = _SABER.screen_size, _SABER.stack_size
        self.observation_space = spaces.Box(0, 255, (stack, size, size), np.uint8)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.config = {
            "num_envs": num_envs,
            "batch_size": self.batch_size,
            "num_threads": num_threads,
            "seed": seed,
            "reward_clip": self.reward_clip,
            "task": self.rom_id,
            **SABER_VALUES,
        }
        groups = num_envs // self.batch_size
        threads = num_threads if num_threads <= 0 else max(1, num_threads // groups)
        # Rewards stay raw in the vector env: info["reward"] is the raw reward, clipped here.
        self._groups = [
            SaberVectorEnv(self.rom_id, self.batch_size, num_threads=threads) for _ in range(groups)
        ]
        self._elapsed = np.zeros(num_envs, dtype=np.int32)
        self._ended = np.zeros(num_envs, dtype=bool)  # the next step autoresets these
        self._group_started = [False] * groups
        self._started = False  # every group reset once
        self._group_ids = [  # each group's env ids in row order: what recv returns
            self.all_env_ids[group * self.batch_size : (group + 1) * self.batch_size]
            for group in range(groups)
        ]
        # The batches sent and not yet received, oldest first: (group, the results of a
        # reset, or None for a step in flight in the group's engine).
        self._pending: deque[tuple[int, tuple[Any, ...] | None]] = deque()
        self._busy = [False] * groups

    def __len__(self) -> int:
        return self.num_envs

    @property
    def vec_env(self) -> SaberVectorEnv:
        """The :class:`SaberVectorEnv` that plays env 0 (its row 0): what ``saber check``
        follows on a twin emulator, as it does under SB3's and Gymnasium's vector envs."""
        return self._groups[0]

    # ----------------------------------------------------------------- reset
    def reset(
        self,
        env_id: Any = None,
        *,
        seed: Any = None,
        options: dict[str, Any] | None = None,
    ) -> Any:
        """Reset the envs of ``env_id`` (all by default) and return their observations
        (with an info dict, but for the old gym API). The first reset seeds env ``i``
        with its seed of ``make``; a later one continues each env's random stream.

        ``seed`` is not envpool's (its seeds are fixed by ``make``): given, every env is
        reset and env ``i`` seeded with ``seed + i``, as ``gymnasium.make_vec``'s reset
        does; ``saber check`` uses it to replay a seeded episode.
        """
        del options
        self._check_idle()
        if seed is not None:
            if env_id is not None:
                raise EnvPoolError("reset(seed=...) resets every env: give no env_id")
            self.env_seeds = _env_seeds(seed, self.num_envs)
            self._group_started = [False] * len(self._groups)  # each seeded anew
        ids = self.all_env_ids if env_id is None else self._env_ids(env_id)
        groups = sorted({int(i) // self.batch_size for i in ids})
        if not self._started and len(groups) < len(self._groups):
            raise EnvPoolError("the first reset must reset every env (call reset())")
        results = [
            self._reset_group(group, self._first_reset(group), ids[ids // self.batch_size == group])
            for group in groups
        ]
        obs = np.concatenate([result[0] for result in results])
        order = _positions(np.concatenate([r[4]["env_id"] for r in results]), ids)
        obs = obs[order]
        if self._old_api:
            return obs
        info = _placed_info([r[4] for r in results], ids)
        return obs, info

    def async_reset(self) -> None:
        """Reset every env; ``recv`` then returns them ``batch_size`` at a time (reward 0)."""
        self._check_idle()
        for group in range(len(self._groups)):
            self._pending.append((group, self._reset_group(group, self._first_reset(group))))
            self._busy[group] = True

    def _first_reset(self, group: int) -> bool:
        """Whether ``group`` is reset for the first time (then seeded); marks it started.
        Called where the reset is asked for, not on the group's thread, so that ``send``
        sees every group started as soon as ``async_reset`` returns."""
        first = not self._group_started[group]
        self._group_started[group] = True
        self._started = all(self._group_started)
        return first

    def _reset_group(
        self, group: int, first: bool, ids: np.ndarray | None = None
    ) -> tuple[Any, ...]:
        """Reset the envs ``ids`` of ``group`` (all by default); the whole group's results."""
        vector = self._groups[group]
        rows = slice(group * self.batch_size, (group + 1) * self.batch_size)
        mask = np.ones(self.batch_size, dtype=bool)
        if ids is not None:
            mask[:] = False
            mask[ids - rows.start] = True
        if first:  # env i gets its seed of make(); later resets continue its stream
            obs, reset_info = vector.reset(seed=self.env_seeds[rows])
        else:
            obs, reset_info = vector.reset(options={"reset_mask": mask})
        self._elapsed[rows][mask] = 0
        self._ended[rows][mask] = False
        zeros = np.zeros(self.batch_size, dtype=np.float32)
        no = np.zeros(self.batch_size, dtype=bool)
        return obs, zeros, no, no, self._info(rows, zeros, no, no, reset_info)

    # ------------------------------------------------------------------ step
    def step(self, action: Any, env_id: Any = None) -> Any:
        """``send(action, env_id)`` then ``recv()``: envpool's synchronous step."""
        self.send(action, env_id)
        return self.recv()

    def send(self, action: Any, env_id: Any = None) -> None:
        """Start the step of the envs of ``env_id`` (all, in sync mode; one batch ``recv``
        returned, in async mode) with ``action`` (ints in 0..17, one per id, in the order
        of the ids); ``recv`` returns its results."""
        group, actions = self._batch_actions(action, env_id)
        if not self._started:
            raise EnvPoolError("step() before reset(): call reset() or async_reset() first")
        if self._busy[group]:
            raise EnvPoolError(
                f"envs {group * self.batch_size}..{(group + 1) * self.batch_size - 1} were "
                "sent twice without a recv() between"
            )
        self._groups[group].step_async(actions)
        self._busy[group] = True
        self._pending.append((group, None))

    def _batch_actions(self, action: Any, env_id: Any) -> tuple[int, np.ndarray]:
        """The group ``env_id`` names and its actions in row order (``int64``, a copy).

        The ids as ``recv`` returned them (or none, in sync mode) take two numpy calls;
        any other order, or ids that are not one group's, the general check."""
        actions = np.asarray(action["action"] if isinstance(action, dict) else action)
        if env_id is None:
            if self.is_async:
                raise EnvPoolError(
                    "in async mode send(action, env_id) needs the env_id that recv returned"
                )
            group, ids = 0, self.all_env_ids
        else:
            ids = np.asarray(env_id).reshape(-1)
            in_order = ids.shape == (self.batch_size,) and ids.dtype.kind in "iu"
            group = int(ids[0]) // self.batch_size if in_order else 0
            if not (
                in_order
                and 0 <= group < len(self._groups)
                and np.array_equal(ids, self._group_ids[group])
            ):
                return self._reordered_actions(actions, self._env_ids(env_id))
        _check_action_count(actions, ids)
        return group, actions.astype(np.int64)

    def _reordered_actions(self, actions: np.ndarray, ids: np.ndarray) -> tuple[int, np.ndarray]:
        """``_batch_actions`` for ids in any order: checked to be one group's, then the
        actions put in row order."""
        _check_action_count(actions, ids)
        group = int(ids[0]) // self.batch_size
        first = group * self.batch_size
        if not np.array_equal(np.sort(ids), np.arange(first, first + self.batch_size)):
            raise EnvPoolError(
                f"send() takes the env ids of one batch, as recv returned them (here "
                f"{first}..{first + self.batch_size - 1}), not {ids.tolist()}"
            )
        ordered = np.empty(self.batch_size, dtype=np.int64)
        ordered[ids - first] = actions
        return group, ordered

    def recv(self, reset: bool = False, return_info: bool = True) -> Any:
        """The results of the oldest batch sent: envpool's step tuple (docs/rl-libraries.md)."""
        del reset, return_info  # envpool's flags of its own result format
        if not self._pending:
            raise EnvPoolError("recv() with nothing sent: call send() or async_reset() first")
        group, result = self._pending.popleft()
        self._busy[group] = False
        if result is None:  # a step in flight
            result = self._step_group(group)
        obs, reward, terminated, truncated, info = result
        if self._old_api:
            return obs, reward, terminated | truncated, info
        return obs, reward, terminated, truncated, info

    def _step_group(self, group: int) -> tuple[Any, ...]:
        """Wait for ``group``'s step in flight; envpool's step tuple of it."""
        rows = slice(group * self.batch_size, (group + 1) * self.batch_size)
        obs, raw, terminated, truncated, saber_info = self._groups[group].step_wait()
        # envpool's elapsed_step: 0 on the step that starts an episode (the autoreset,
        # whose action the env ignored), one more on every other step.
        elapsed = self._elapsed[rows]  # a view: updated in place
        elapsed += 1
        elapsed[self._ended[rows]] = 0
        ended = self._ended[rows]
        np.logical_or(terminated, truncated, out=ended)
        raw = raw.astype(np.float32)
        reward = np.sign(raw) if self.reward_clip else raw  # envpool clips to the sign
        return (
            obs,
            reward,
            terminated,
            truncated,
            self._info(rows, raw, terminated, truncated, saber_info),
        )

    def _info(
        self,
        rows: slice,
        raw: np.ndarray,
        terminated: np.ndarray,
        truncated: np.ndarray,
        saber_info: dict[str, Any],
    ) -> dict[str, Any]:
        env_id = self.all_env_ids[rows].copy()
        info: dict[str, Any] = {
            "env_id": env_id,
            "players": {"env_id": env_id},
            "lives": np.zeros(len(env_id), dtype=np.int32),  # no life signal (protocol.md)
            "reward": raw.copy(),
            "terminated": terminated.astype(np.int32),
            "TimeLimit.truncated": truncated.copy(),
            "elapsed_step": self._elapsed[rows].copy(),
        }
        if "episode_frame_number" in saber_info:  # SABER's clock, in emulator frames
            info["episode_frame_number"] = saber_info["episode_frame_number"]  # a fresh array
        if self.reward_clip:  # the key every saber env uses under clipping, beside envpool's
            info[RAW_REWARD] = info["reward"]
        if "saber" in saber_info:
            info["saber"], info["_saber"] = saber_info["saber"], saber_info["_saber"]
        return info

    # ---------------------------------------------------------------- helpers
    def _check_idle(self) -> None:
        if self._pending:
            raise EnvPoolError("a batch was sent and not received: call recv() first")

    def _env_ids(self, env_id: Any) -> np.ndarray:
        ids = np.asarray(env_id).reshape(-1)
        if ids.dtype.kind not in "iu" or ((ids < 0) | (ids >= self.num_envs)).any():
            raise EnvPoolError(f"env_id must be ints in 0..{self.num_envs - 1}, not {env_id!r}")
        if len(np.unique(ids)) != len(ids):
            raise EnvPoolError(f"env_id names an env twice: {ids.tolist()}")
        return ids.astype(np.int32)

    def xla(self) -> Any:
        """envpool's XLA interface: not here; saber.jax is SABER's (docs/jax.md)."""
        raise EnvPoolError(
            "saber.envpool has no xla(): for JAX training loops use saber.jax.make "
            "(docs/jax.md, 'Porting from envpool or purejaxql')"
        )

    def close(self, **kwargs: Any) -> None:
        """Stop every group's emulator (a step in flight is received first)."""
        del kwargs
        self._pending.clear()
        for vector in self._groups:
            vector.close()

    def __enter__(self) -> SaberEnvPool:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()


def _env_seeds(seed: Any, num_envs: int) -> np.ndarray:
    """One seed per env (``int64``): ``seed + i`` for an int, as envpool does."""
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        if not 0 <= int(seed) < 2**31:  # checked before numpy sees it: 2**70 overflows int64
            raise EnvPoolError(
                f"seed must be in 0..2**31-1 (SABER's seeds are non-negative), not {seed!r}"
            )
        seeds = int(seed) + np.arange(num_envs, dtype=np.int64)
    else:
        seeds = np.asarray(seed)
        if seeds.shape != (num_envs,) or seeds.dtype.kind not in "iu":
            raise EnvPoolError(f"seed must be an int or one int per env ({num_envs}), not {seed!r}")
        seeds = seeds.astype(np.int64)
    if (seeds < 0).any() or (seeds >= 2**31).any():
        raise EnvPoolError(
            f"seeds must be in 0..2**31-1 (SABER's seeds are non-negative), got {seed!r}"
        )
    return seeds


def _check_action_count(actions: np.ndarray, ids: np.ndarray) -> None:
    if actions.shape != ids.shape:
        raise EnvPoolError(
            f"send() got {actions.shape[0] if actions.ndim else 'no'} actions for "
            f"{len(ids)} env ids"
        )


def _positions(order: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Indices into ``order`` (ids) that give ``ids``, in their order."""
    where = {int(env): index for index, env in enumerate(order)}
    return np.array([where[int(env)] for env in ids], dtype=np.intp)


def _placed_info(infos: list[dict[str, Any]], ids: np.ndarray) -> dict[str, Any]:
    """The groups' reset infos as one: the rows of ``ids``, in their order."""
    position = {int(env): index for index, env in enumerate(ids)}
    parts = []
    for info in infos:
        kept = np.array([int(env) in position for env in info["env_id"]], dtype=bool)
        rows = np.array([position[int(env)] for env in info["env_id"][kept]], dtype=np.intp)
        skipped = ("players", "saber", "_saber")
        parts.append(
            (rows, {key: value[kept] for key, value in info.items() if key not in skipped})
        )
    placed: dict[str, Any] = place_rows(parts, len(ids))
    placed["players"] = {"env_id": placed["env_id"]}
    return placed
