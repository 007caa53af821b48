"""The SABER environment as pure, jittable JAX functions: :func:`make`, :class:`SaberJaxEnv`.

Each step does what ``SaberVectorEnv.step`` does, in the same order, with ``jax.numpy``;
docs/jax.md gives the steps and the integer widths (scores exact up to 2**31 - 1).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from saber.envs import env_id, rules
from saber.envs.bilinear import bilinear_tables, resize_bilinear
from saber.envs.emulator import legal_action_count
from saber.envs.factory import resolve_rom_id
from saber.envs.vector_args import set_spaces
from saber.envs.wrappers import RAW_REWARD
from saber.errors import ProtocolError
from saber.jax import engine
from saber.jax.seeding import ale_seeds
from saber.protocol import NUM_ACTIONS, EpisodeEnd, EpisodeRecord, SaberSettings
from saber.protocol import checkpoint_frames as resolve_checkpoints

_NO_END = -1  # the ``end`` code of rows that did not end on the step


class EnvState(NamedTuple):
    """Everything a step needs besides the emulators (a pytree; per row: leading axis n).

    The emulators themselves live in ale-py's engine, named by ``handle``: a state is
    consumed by the step that takes it (stepping an older state again does not rewind
    the games), as with every emulator-backed JAX env.
    """

    handle: jax.Array  # uint8 (8,): the engine's address, threaded through for ordering
    stack: jax.Array  # uint8 (n, stack, size, size): the observation
    ended: jax.Array  # bool (n,): the row's episode ended on the last step
    game_over: jax.Array  # bool (n,): ... by a game over (no ROM reload at the restart)
    score: jax.Array  # int32 (n,): points, rollovers corrected
    checkpoint_scores: jax.Array  # int32 (n, checkpoints)
    steps: jax.Array  # int32 (n,)
    rollovers: jax.Array  # int32 (n,)
    last_reward_frame: jax.Array  # int32 (n,)
    seeds: jax.Array  # int32 (n,): the Gymnasium seed of each row's seed stream
    seeds_taken: jax.Array  # int32 (n,): ALE seeds the row's stream has given
    # int32 (n,): the engine's frame counter at the row's episode start. ALE plays a
    # game's starting actions at every reset (Name This Game: about 134 frames, Double
    # Dunk about 21) and the engine counts them; SABER counts from 0 at the reset.
    start_frames: jax.Array


class _Tally(NamedTuple):
    """What the rules make of one step (per row: leading axis n), for :meth:`SaberJaxEnv.step`."""

    rewards: jax.Array  # int32 (n,): the points of the step, rollovers corrected
    score: jax.Array  # int32 (n,)
    checkpoint_scores: jax.Array  # int32 (n, checkpoints)
    steps: jax.Array  # int32 (n,)
    rollovers: jax.Array  # int32 (n,)
    last_reward_frame: jax.Array  # int32 (n,)
    stuck: jax.Array  # bool (n,): truncated by the stuck timeout
    capped: jax.Array  # bool (n,): truncated by the frame cap


class SaberJaxEnv:
    """``num_envs`` SABER environments of one game as pure JAX functions.

    ``reset(seed)`` and ``step(state, actions)`` trace and compile like any JAX function
    (``jax.jit``, ``jax.lax.scan``); see :func:`make` for the contract.

    Attributes:
        num_envs: number of rows.
        rom_id: ale-py's name of the game.
        saber_settings: the :class:`SaberSettings` in force.
        checkpoint_frames: ``{name: emulator frame}`` of the record's checkpoint scores.
        observation_space, action_space: Gymnasium spaces of the batch, equal to
            make_vec's (``Box(0, 255, (n, 4, 84, 84), uint8)``, ``MultiDiscrete([18] * n)``:
            its samples are int64, which ``step`` takes);
        single_observation_space, single_action_space: those of one row.
    """

    def __init__(
        self,
        game: str,
        num_envs: int = 1,
        *,
        num_threads: int = 0,
        checkpoint_frames: dict[str, int] | None = None,
        **overrides: Any,
    ) -> None:
        # The engine's configuration is make_vec's, from its one home in saber.envs.vector.
        from saber.envs.engines import ThreadedEngine

        if not isinstance(num_envs, int) or isinstance(num_envs, bool) or num_envs <= 0:
            raise ValueError(f"Expect `num_envs` to be a positive int, actually: {num_envs!r}")
        self.saber_settings = settings = SaberSettings.from_overrides(**overrides)
        if settings.life_signal:
            raise ProtocolError(
                "saber.jax gives no life signal (life_signal=True): use saber.make_vec or "
                "gymnasium.make_vec, whose info['lives'] has it"
            )
        self.rom_id = resolve_rom_id(game)
        legal = legal_action_count(self.rom_id)
        name = env_id(self.rom_id)
        if legal != NUM_ACTIONS:
            raise ValueError(
                f"saber.jax cannot run {name}: ale-py calls only {legal} of its "
                f"{NUM_ACTIONS} actions legal, and its XLA engine can send no others, while "
                f"SABER gives the agent all {NUM_ACTIONS} (the game responds to them). Use "
                f'gymnasium.make_vec("{name}", num_envs={num_envs}) for this game: it runs '
                f"such games with the single env's emulator, every action reaching the game."
            )
        self.num_envs = num_envs
        self.checkpoint_frames = resolve_checkpoints(checkpoint_frames)
        self._engine = ThreadedEngine(self.rom_id, num_envs, settings, num_threads)
        engine.register_targets()
        self._handle = np.frombuffer(self._engine.ale.handle(), dtype=np.uint8).copy()
        self._tables = bilinear_tables(engine.SCREEN_SHAPE, settings.screen_size)
        # Rewards are integers: ``r <= t`` is ``r <= floor(t)``, compared exactly in int32.
        self._rollover_threshold = math.floor(settings.rollover_threshold)
        template = EpisodeRecord(
            0.0, dict.fromkeys(self.checkpoint_frames, 0.0), 0, 0, EpisodeEnd.GAME_OVER
        )
        self.record_keys = tuple(template.to_dict())  # make_vec's info["saber"] keys, in order
        set_spaces(self, settings, num_envs)  # make_vec's

    def __repr__(self) -> str:
        return f"SaberJaxEnv({self.rom_id!r}, num_envs={self.num_envs})"

    def close(self) -> None:
        """Stop the engine's threads and free the emulators.

        Tracing ``reset`` or ``step`` afterwards raises; a function compiled before the
        close still holds the engine's address, so do not call it again (the emulators it
        names are gone), just as with any handle-based XLA env.
        """
        self._engine.close()

    def _check_open(self) -> None:
        if self._engine.ale is None:
            raise RuntimeError(f"{self!r} is closed: make a new one to play on.")

    # ----------------------------------------------------------------- reset
    def reset(self, seed: int | jax.Array) -> tuple[EnvState, jax.Array, dict[str, Any]]:
        """Start every row: row ``i`` seeded with ``seed + i``, as make_vec's ``reset(seed=)``.

        Args:
            seed: a non-negative int (or int32 scalar array, traced or not) below
                ``2**31 - num_envs``.

        Returns:
            ``(state, obs, info)``: obs ``uint8`` (n, 4, 84, 84), the first frame in the
            newest slot and zeros before it; info ``{"episode_frame_number": zeros}``.
        """
        check_seed(seed, self.num_envs)
        rows = jnp.arange(self.num_envs, dtype=jnp.int32)
        return self._reset_rows(jnp.asarray(seed, dtype=jnp.int32) + rows)

    def _reset_rows(self, seeds: jax.Array) -> tuple[EnvState, jax.Array, dict[str, Any]]:
        """:meth:`reset` with each row's Gymnasium seed given (``int32`` (n,), each in
        ``[0, 2**31)``): the many-games env deals its rows' seeds out to its games."""
        self._check_open()
        n = self.num_envs
        rows = jnp.arange(n, dtype=jnp.int32)
        first = ale_seeds(seeds, jnp.zeros(n, jnp.int32), jnp.ones(n, bool))
        handle, frames, start_frames = engine.ffi_reset(jnp.asarray(self._handle), rows, first, n)
        settings = self.saber_settings
        size = settings.screen_size
        stack = jnp.zeros((n, settings.stack_size, size, size), jnp.uint8)
        stack = stack.at[:, -1].set(self._resize(frames))
        zeros = jnp.zeros(n, jnp.int32)
        state = EnvState(
            handle=handle,
            stack=stack,
            ended=jnp.zeros(n, bool),
            game_over=jnp.zeros(n, bool),
            score=zeros,
            checkpoint_scores=jnp.zeros((n, len(self.checkpoint_frames)), jnp.int32),
            steps=zeros,
            rollovers=zeros,
            last_reward_frame=zeros,
            seeds=seeds,
            seeds_taken=jnp.ones(n, jnp.int32),
            start_frames=start_frames,
        )
        return state, stack, {"episode_frame_number": zeros}

    def _resize(self, frames: jax.Array) -> jax.Array:
        return resize_bilinear(frames, self._tables, jnp)

    # ------------------------------------------------------------------ step
    def step(
        self, state: EnvState, actions: jax.Array
    ) -> tuple[EnvState, jax.Array, jax.Array, jax.Array, jax.Array, dict[str, Any]]:
        """Step every row with ``actions`` (int32 (n,), each in 0..17).

        A row that ended on the previous step starts its next episode instead (the action
        is ignored, reward 0), as make_vec's ``NEXT_STEP`` autoreset: after a game over
        the emulator's random stream carries on; after a truncation the ROM is reloaded
        with the row's next seed.

        Returns:
            ``(state, obs, reward, terminated, truncated, info)``: obs ``uint8``
            (n, 4, 84, 84); reward ``float32`` (n,) (clipped to [-1, 1] with
            ``clip_rewards``); terminated (game over) and truncated (stuck timeout or cap)
            ``bool`` (n,); info: ``episode_frame_number`` ``int32`` (n,), ``saber``
            (the episode records, make_vec's keys: scores ``int32``, ``end`` a code into
            :data:`saber.envs.rules.END_REASONS` (-1 where no episode ended),
            ``seconds`` NaN: no clock in compiled code) and its mask ``_saber``; with
            ``clip_rewards``, ``raw_reward`` ``float32`` (n,): the unclipped rewards.
            :func:`records` turns them into make_vec's dicts.
        """
        self._check_open()
        actions = checked_actions(actions, self.num_envs)
        handle, frames, rewards, game_over, episode_frames, reload, start_frames = (
            self._step_and_restart(state, actions)
        )
        stack = self._push_frames(state, frames)
        rewards, score, checkpoint_scores, steps, rollovers, last_reward_frame, stuck, capped = (
            self._apply_rules(state, rewards, game_over, episode_frames)
        )
        truncated = stuck | capped
        ended_now = game_over | truncated
        info = {
            "episode_frame_number": episode_frames,
            "saber": self._records(
                ended_now,
                game_over,
                stuck,
                capped,
                score,
                checkpoint_scores,
                episode_frames,
                steps,
                rollovers,
            ),
            "_saber": ended_now,
        }
        reward = rewards.astype(jnp.float32)
        if self.saber_settings.clip_rewards:
            info[RAW_REWARD] = reward  # make_vec's key: any logger can sum the raw score
            reward = jnp.clip(reward, -1.0, 1.0)
        new_state = EnvState(
            handle=handle,
            stack=stack,
            ended=ended_now,
            game_over=game_over,
            score=score,
            checkpoint_scores=checkpoint_scores,
            steps=steps,
            rollovers=rollovers,
            last_reward_frame=last_reward_frame,
            seeds=state.seeds,
            seeds_taken=state.seeds_taken + reload,
            start_frames=start_frames,
        )
        return new_state, stack, reward, game_over, truncated, info

    def _step_and_restart(
        self, state: EnvState, actions: jax.Array
    ) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array, jax.Array, jax.Array, jax.Array]:
        """The engine's step, then a seeded ROM reload of the rows truncated on the last
        step; rows that ended on the last step start their next episode (reward 0, no game
        over, frame 0).

        Returns:
            ``(handle, frames, rewards, game_over, episode_frames, reload, start_frames)``:
            ``reload`` ``bool`` (n,), the rows reloaded (each took a seed of its stream);
            ``start_frames`` the engine's counter at each row's episode start.
        """
        handle, frames, rewards, game_over, episode_frames = self._engine_step(
            state.handle, actions, state.start_frames
        )
        ended = state.ended
        # Rows the engine restarted itself (after a game over) start their episode at this
        # step's counter; rows reloaded below, at their reload's.
        start_frames = jnp.where(ended, episode_frames + state.start_frames, state.start_frames)
        reload = ended & ~state.game_over  # truncated rows: a seeded ROM reload
        new_seeds = jax.lax.cond(
            reload.any(),
            lambda: ale_seeds(state.seeds, state.seeds_taken, reload),
            lambda: jnp.full(self.num_envs, -1, jnp.int32),
        )
        handle, frames, start_frames = engine.reload_rows(
            handle, frames, start_frames, reload, new_seeds
        )
        rewards = jnp.where(ended, 0, rewards)
        game_over = jnp.where(ended, False, game_over)
        episode_frames = jnp.where(ended, 0, episode_frames)
        return handle, frames, rewards, game_over, episode_frames, reload, start_frames

    def _push_frames(self, state: EnvState, frames: jax.Array) -> jax.Array:
        """The stack with each row's new frame resized into its newest slot, the older
        slots zeroed on rows that start a new episode."""
        stack = jnp.concatenate([state.stack[:, 1:], self._resize(frames)[:, None]], axis=1)
        return jnp.where(state.ended[:, None, None, None] & self._older_slots(), 0, stack)

    def _apply_rules(
        self,
        state: EnvState,
        rewards: jax.Array,
        game_over: jax.Array,
        episode_frames: jax.Array,
    ) -> _Tally:
        """The rules, each from saber.envs.rules, over all rows at once: the counts of rows
        that start a new episode from zero, then the rollover, the stuck timeout, the frame
        cap and the checkpoint scores."""
        settings = self.saber_settings
        ended = state.ended
        fresh = ended[:, None]
        score = jnp.where(ended, 0, state.score)
        checkpoint_scores = jnp.where(fresh, 0, state.checkpoint_scores)
        steps = jnp.where(ended, 0, state.steps)
        rollovers = jnp.where(ended, 0, state.rollovers)
        last_reward_frame = jnp.where(ended, 0, state.last_reward_frame)

        stepped = ~ended
        rollover = rules.is_rollover(rewards, self._rollover_threshold) & stepped
        rollovers = rollovers + rollover
        corrected = rules.correct_rollover(rewards, settings.rollover_mode)
        rewards = jnp.where(rollover, corrected, rewards)
        stuck = jnp.zeros(self.num_envs, bool)
        capped = jnp.zeros(self.num_envs, bool)
        if settings.max_frames_without_reward is not None:
            stuck = stepped & rules.stuck_timeout(
                reward=rewards,
                game_over=game_over,
                frame=episode_frames,
                last_reward_frame=last_reward_frame,
                max_frames=settings.max_frames_without_reward,
            )
        last_reward_frame = jnp.where(rewards != 0, episode_frames, last_reward_frame)
        if settings.max_episode_frames is not None:
            capped = stepped & rules.frame_cap(
                game_over=game_over, frame=episode_frames, max_frames=settings.max_episode_frames
            )
        score = score + rewards
        steps = steps + stepped
        checkpoints = jnp.asarray(list(self.checkpoint_frames.values()), jnp.int32)
        reached = stepped[:, None] & rules.checkpoint_open(episode_frames[:, None], checkpoints)
        checkpoint_scores = jnp.where(reached, score[:, None], checkpoint_scores)
        return _Tally(
            rewards, score, checkpoint_scores, steps, rollovers, last_reward_frame, stuck, capped
        )

    def _engine_step(
        self, handle: jax.Array, actions: jax.Array, start_frames: jax.Array
    ) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array, jax.Array]:
        """The engine's step (:func:`saber.jax.engine.ffi_step`), its frame counter counted
        from each row's episode start (``start_frames``, ``int32`` (n,)): everything the
        rules read comes through here. It is the one seam below the rules: ``saber check``
        (:mod:`saber.check.probes.tampered`) passes the output through a tamper here to
        provoke a rollover or the frame cap, as it rewrites RAM and counters in the
        emulator under a Gymnasium stack."""
        handle, frames, rewards, game_over, counters = engine.ffi_step(
            handle, actions, self.num_envs
        )
        return handle, frames, rewards, game_over, counters - start_frames

    def _older_slots(self) -> jax.Array:
        """``bool`` (1, stack, 1, 1): every slot of the stack but the newest."""
        stack_size = self.saber_settings.stack_size
        return (jnp.arange(stack_size) < stack_size - 1)[None, :, None, None]

    def _records(
        self,
        ended: jax.Array,
        game_over: jax.Array,
        stuck: jax.Array,
        capped: jax.Array,
        score: jax.Array,
        checkpoint_scores: jax.Array,
        frames: jax.Array,
        steps: jax.Array,
        rollovers: jax.Array,
    ) -> dict[str, jax.Array]:
        """make_vec's ``info["saber"]`` arrays: the record where a row ended, zeros elsewhere."""
        end = rules.end_code(game_over=game_over, stuck=stuck, capped=capped, xp=jnp)
        values = [
            score,
            *(checkpoint_scores[:, i] for i in range(len(self.checkpoint_frames))),
            frames,
            steps,
            end,
            rollovers,
            rules.is_infinite(end, frames),
        ]
        keys = self.record_keys[:-1]  # all but ``seconds``
        record = {
            key: jnp.where(ended, value, jnp.full_like(value, _NO_END if key == "end" else 0))
            for key, value in zip(keys, values, strict=True)
        }
        record["seconds"] = jnp.full(self.num_envs, jnp.nan, jnp.float32)
        return record


def check_seed(seed: int | jax.Array, num_envs: int) -> None:
    """Refuse a Python seed outside ``[0, 2**31 - num_envs)`` (rows take ``seed + i`` in
    ``int32``); a traced one cannot be looked at."""
    if isinstance(seed, (int, np.integer)) and not 0 <= seed < 2**31 - num_envs:
        raise ValueError(
            f"Expect a seed in [0, 2**31 - num_envs) (JAX ints are 32-bit), actually: {seed}"
        )


def checked_actions(actions: Any, num_envs: int) -> jax.Array:
    """``actions`` as ``int32`` (num_envs,), refused in one line unless integers of that
    shape in 0..17 (the range is checked on concrete arrays only)."""
    array = jnp.asarray(actions)
    if array.shape != (num_envs,) or not jnp.issubdtype(array.dtype, jnp.integer):
        raise ValueError(
            f"Expect actions as integers of shape ({num_envs},) in [0, {NUM_ACTIONS - 1}], "
            f"actually: dtype {array.dtype}, shape {array.shape}"
        )
    if not isinstance(array, jax.core.Tracer) and (
        int(array.min()) < 0 or int(array.max()) >= NUM_ACTIONS
    ):
        raise ValueError(
            f"Expect actions in [0, {NUM_ACTIONS - 1}] (all {NUM_ACTIONS} joystick actions), "
            f"actually: {np.asarray(array).tolist()}"
        )
    # Out of range under jit: the engine raises (XlaRuntimeError "Invalid action_id").
    return array.astype(jnp.int32)


def records(info: dict[str, Any]) -> list[dict[str, Any]]:
    """The episode records of one step's ``info`` as make_vec's dicts (one per ended row,
    in row order): ``end`` named, scores ``float``, ``seconds`` NaN."""
    mask = np.asarray(info["_saber"])
    arrays = {key: np.asarray(value) for key, value in info["saber"].items()}
    out = []
    for row in np.flatnonzero(mask):
        record = {key: value[row].item() for key, value in arrays.items()}
        record["end"] = str(rules.END_REASONS[record["end"]])
        for key in record:
            if key == "score" or key.startswith("score_"):
                record[key] = float(record[key])
        record["infinite"] = bool(record["infinite"])
        out.append(record)
    return out
