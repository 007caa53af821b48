"""What the probe drives: any env, seen as one stream of steps (:class:`Subject`).

A vector env goes through its kind's adapter (:mod:`saber.check.vector`); an adapter that
is ``followable`` or ``ram_followable`` is followed on a twin (docs/check.md).
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import gymnasium as gym
import numpy as np

from saber.check.emulator import Emulator, reach, step_counters
from saber.check.vector import (
    FOLLOWED_GAME,
    EnvpoolSubject,
    Sb3VecSubject,
    VectorSubject,
    is_envpool_like,
    is_sb3_vec_env,
    row_of,
)
from saber.errors import SaberError

if TYPE_CHECKING:  # the Gymnasium step tuple: one home, saber.envs.wrappers
    from saber.envs.wrappers import StepResult as Step


@runtime_checkable
class Subject(Protocol):
    """One env as the probe sees it.

    Attributes:
        action_space: the agent's action space (one row's, for a vector env).
        emulator: the ALE under the stack, or None when it cannot be reached.
        step_counters: wrappers that count steps (Gymnasium ``TimeLimit``), which the
            frame-cap probe advances with the emulator's frame counter.
    """

    action_space: gym.Space
    emulator: Emulator | None
    step_counters: list[Any]

    def reset(self, seed: int | None = None) -> tuple[Any, dict[str, Any]]: ...

    def step(self, action: int) -> Step: ...

    def close(self) -> None: ...


class EnvSubject:
    """A single Gymnasium env."""

    def __init__(self, env: gym.Env) -> None:
        self.env = env
        self.action_space = env.action_space
        self.emulator = reach(env)
        self.step_counters = step_counters(env)

    def reset(self, seed: int | None = None) -> tuple[Any, dict[str, Any]]:
        return self.env.reset(seed=seed)

    def step(self, action: int) -> Step:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, float(reward), bool(terminated), bool(truncated), info

    def close(self) -> None:
        self.env.close()


class FunctionalSubject:
    """An env of pure functions, ``reset(seed) -> (state, obs, info)`` and
    ``step(state, actions) -> (state, obs, reward, terminated, truncated, info)`` over
    ``num_envs`` rows (saber's JAX envs, ``saber.jax.make``): the adapter threads the
    state, sends the same action to every row and reads row 0.

    Its emulators run in ale-py's C++ engine, out of reach: the probe follows row 0 on a
    twin emulator (:mod:`saber.check.follow`) started from ``rom_id`` and
    :meth:`ale_seed`, and provokes what play cannot reach quickly through the state
    (:meth:`advance_reward_clock`) or the engine's step (:meth:`tampered`). Steps run
    compiled (``jax.jit`` of the env's ``step``), as users run them.

    saber.jax's many-games env (``saber.jax.make("SABER/Atari5")``) is followed the same
    way through its first game's env, which holds row 0; that env is switched to
    :data:`~saber.check.vector.FOLLOWED_GAME` (a new engine of that ROM with the env's own
    settings, as a ``SaberVectorEnv`` is for the check), since the first game of a set
    need not show every rule (an env given to ``saber.check`` itself is left so).
    """

    emulator = None
    followable = True  # the probes follow it (saber.check.api)
    reward_clock = "EnvState.last_reward_frame"

    def __init__(self, env: Any) -> None:
        self.env = env
        # The SaberJaxEnv whose rows hold row 0: the env, or a many-games env's first game.
        self.played_game: str | None = None
        games = getattr(env, "envs", None)
        if games is not None:
            self.played_game = getattr(env, "_check_played_game", env.games[0])
            env._check_played_game = self.played_game
            if games[0].rom_id != FOLLOWED_GAME:
                env.envs = (_jax_env_like(games[0], FOLLOWED_GAME), *games[1:])
                games[0].close()
        self.engine_env: Any = env if games is None else env.envs[0]
        self.rom_id: str = self.engine_env.rom_id
        self.action_space = env.single_action_space
        self.step_counters: list[Any] = []
        self._state: Any = None
        self._jitted: Callable[..., tuple[Any, ...]] | None = None

    def reset(self, seed: int | None = None) -> tuple[Any, dict[str, Any]]:
        self._state, obs, info = self.env.reset(0 if seed is None else seed)
        return np.asarray(obs)[0], row_of(_numpy(info))

    def _compiled_step(self) -> Callable[..., tuple[Any, ...]]:
        if self._jitted is None:
            import jax  # the JAX extra: only an env of saber.jax gets here

            self._jitted = jax.jit(self.env.step)
        return self._jitted

    @property
    def game_text(self) -> str:
        """The game row 0 plays, and why (the probes' evidence names it)."""
        if self.played_game is None or self.played_game == self.rom_id:
            return f"{self.rom_id} (the env's own game)"
        return (
            f"{self.rom_id} (loaded as the first game of saber.jax's many-games env: a new "
            f"engine of that ROM with the env's own settings; the env played {self.played_game})"
        )

    def ale_seed(self, seed: int) -> int:
        """Row 0's ALE seed after ``reset(seed)`` under SABER's seed stream (an env that
        seeds otherwise is not followed: its rules come out unknown or failed, never passed)."""
        from saber.envs.emulator import SeedStream

        return SeedStream(seed).next_ale_seed()

    def advance_reward_clock(self, frames: int) -> bool:
        """Move every row's frame of its last reward ``frames`` back (the stuck timeout's
        clock, ``EnvState.last_reward_frame``; of every game's state in a many-games env);
        False when the state has no such field."""
        many = isinstance(self._state, tuple) and not hasattr(self._state, "_replace")
        states = self._state if many else (self._state,)
        if not all(
            hasattr(state, "_replace") and hasattr(state, "last_reward_frame") for state in states
        ):
            return False
        moved = tuple(
            state._replace(last_reward_frame=state.last_reward_frame - frames) for state in states
        )
        self._state = moved if many else moved[0]
        return True

    @contextmanager
    def tampered(self, tamper: Callable[..., tuple[Any, ...]]) -> Iterator[bool]:
        """Within: the engine's output ``(handle, frames, rewards, game_over,
        episode_frames)`` passes through ``tamper`` before the env's rules read it (the
        JAX analogue of rewriting RAM or counters in a reachable emulator). Yields False,
        tampering nothing, when the env has no engine seam (``_engine_step``)."""
        env = self.engine_env
        engine_step = getattr(env, "_engine_step", None)
        if engine_step is None:
            yield False
            return
        env._engine_step = lambda *args: tamper(*engine_step(*args))
        try:
            yield True
        finally:
            del env._engine_step  # the env's own method again

    def step(self, action: int) -> Step:
        actions = np.full(self.env.num_envs, action, dtype=np.int32)
        tampered = "_engine_step" in vars(self.engine_env)
        # Compiled, as users run it (and about 90x faster than op by op); a tampered step
        # runs op by op, so that the compiled step never holds a tamper.
        step = self.env.step if tampered else self._compiled_step()
        self._state, obs, reward, terminated, truncated, info = step(self._state, actions)
        row = row_of(_numpy(info))
        return (
            np.asarray(obs)[0],
            float(np.asarray(reward)[0]),
            bool(np.asarray(terminated)[0]),
            bool(np.asarray(truncated)[0]),
            row,
        )

    def close(self) -> None:
        self.env.close()


def _jax_env_like(env: Any, game: str) -> Any:
    """A saber.jax env of ``game`` with ``env``'s rows, settings and checkpoints."""
    import dataclasses

    settings = env.saber_settings
    overrides = {
        field.name: getattr(settings, field.name) for field in dataclasses.fields(settings)
    }
    return type(env)(game, env.num_envs, checkpoint_frames=env.checkpoint_frames, **overrides)


def _numpy(infos: dict[str, Any]) -> dict[str, Any]:
    """An info dict of JAX arrays (nested dicts too) as numpy arrays."""
    return {k: _numpy(v) if isinstance(v, dict) else np.asarray(v) for k, v in infos.items()}


def subject_of(env: Any) -> Subject:
    """The :class:`Subject` of an env: a Gymnasium env, a vector env (Gymnasium's, an SB3
    ``VecEnv``, envpool's), or a Subject already."""
    if is_envpool_like(env):  # before VectorEnv: envpool's Gymnasium envs are VectorEnvs too
        return EnvpoolSubject(env)
    if isinstance(env, gym.vector.VectorEnv):
        return VectorSubject(env)
    if isinstance(env, gym.Env):
        return EnvSubject(env)
    if isinstance(env, Subject):
        return env
    if is_sb3_vec_env(env):
        return Sb3VecSubject(env)
    jax_envs = sys.modules.get("saber.jax")  # never imported here: JAX is an extra
    many_games = sys.modules.get("saber.jax.multigame")
    if (jax_envs is not None and isinstance(env, jax_envs.SaberJaxEnv)) or (
        many_games is not None and isinstance(env, many_games.SaberJaxMultiGameEnv)
    ):
        return FunctionalSubject(env)
    raise SaberError(
        f"Expect a Gymnasium env, a Gymnasium vector env or a saber.check Subject, "
        f"actually: {type(env).__name__}"
    )


def resolve_target(target: str, game: str | None = None) -> Callable[[], Any]:
    """A factory of fresh envs for a ``saber check`` target.

    Args:
        target: a registered id (``"SABER/Pong"``, ``"ALE/Pong-v5"``; a set id such as
            ``"SABER/Atari5"`` is made with ``make_vec``, one sub-env per game) or
            ``"module:factory"``, a callable returning an env or a vector env.
        game: passed to the factory (``factory(game)``), or for an id with a game
            argument (``"SABER/Pong"`` is Pong whatever ``game`` says: an error).

    Raises:
        SaberError: an unknown id, a module or attribute that does not exist, or
            ``game`` given for a registered id.
    """
    module_name, colon, attribute = target.partition(":")
    if colon and all(part.isidentifier() for part in attribute.split(".")):
        try:
            factory: Any = importlib.import_module(module_name)
            for part in attribute.split("."):
                factory = getattr(factory, part)
        except (ImportError, AttributeError) as error:
            raise SaberError(
                f"Cannot load {target!r}: {error}. Expect 'module:factory', a callable "
                "returning a Gymnasium env or vector env."
            ) from error
        if not callable(factory):
            raise SaberError(
                f"{target} is an object of type {type(factory).__name__}, not callable; "
                "saber check needs a factory that takes no argument (with --game, the game "
                "alone) and returns an env"
            )
        _check_signature(target, factory, game)
        return (lambda: factory(game)) if game is not None else factory
    if game is not None:
        raise SaberError(
            f"--game is for 'module:factory' targets; {target!r} names its game already"
        )
    import saber.envs  # noqa: F401  registers SABER/*

    try:
        if colon:  # "module:Env-id": Gymnasium imports the module, which registers the id
            importlib.import_module(module_name)
        spec = gym.spec(attribute if colon else target)
    except (gym.error.Error, ImportError) as error:
        raise SaberError(
            f"No registered env {target!r} ({error}). Expect an id such as 'SABER/Pong' or "
            "'ALE/Pong-v5', or 'module:factory'."
        ) from error
    game_set = spec.kwargs.get("game_set")
    if game_set is not None:  # SABER/Atari5 and the other sets: a vector env, one row a game
        from saber.games import game_sets

        return lambda: gym.make_vec(target, num_envs=len(game_sets()[game_set]))
    return lambda: gym.make(target)


def _check_signature(target: str, factory: Callable[..., Any], game: str | None) -> None:
    """Refuse, in one line, a factory that cannot be called as ``saber check`` calls it:
    ``factory()``, or ``factory(game)`` with ``--game``.

    Raises:
        SaberError: the call would not bind to the factory's parameters.
    """
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # a builtin without a signature: let the call tell
        return
    call = "factory(game)" if game is not None else "factory()"
    try:
        signature.bind(*([game] if game is not None else []))
    except TypeError:
        hint = (
            "; pass --game to call it with the game"
            if game is None and _binds(signature, "pong")
            else ""
        )
        raise SaberError(
            f"{target} takes {signature}, but saber check calls {call}: give it a factory "
            f"that takes no argument (with --game, the game alone) and returns an env{hint}"
        ) from None


def _binds(signature: inspect.Signature, *args: Any) -> bool:
    try:
        signature.bind(*args)
    except TypeError:
        return False
    return True


class ChainedSubject:
    """One episode shared by several probes, to save ROM loads (about 0.1 s each).

    A reset with the seed of the open episode is skipped while that episode has not
    ended (each probe loads its own game under the stack first, so what the previous
    one played does not matter); once a step ends it, the next reset is real.
    """

    def __init__(self, subject: Subject) -> None:
        self.inner = subject
        self.action_space = subject.action_space
        self.emulator = subject.emulator
        self.step_counters = subject.step_counters
        self._open: tuple[int | None, Any, dict[str, Any]] | None = None
        self.reset_skipped = False  # the last reset was skipped (restart reads it)

    def reset(self, seed: int | None = None) -> tuple[Any, dict[str, Any]]:
        self.reset_skipped = seed is not None and self._open is not None and self._open[0] == seed
        if self.reset_skipped and self._open is not None:
            return self._open[1], dict(self._open[2])
        obs, info = self.inner.reset(seed=seed)
        self._open = (seed, obs, dict(info))
        return obs, info

    def step(self, action: int) -> Step:
        result = self.inner.step(action)
        if result[2] or result[3]:
            self._open = None
        return result

    def close(self) -> None:
        self.inner.close()
