"""The vectorized SABER environment: ``gymnasium.make_vec("SABER/Pong", num_envs=8)``.

Emulation runs in one of :mod:`saber.envs.engines`, the resize, stack and rules here on
the whole batch; it plays exactly the episodes of ``gymnasium.make`` (docs/environments.md).
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

import numpy as np
from gymnasium.error import ResetNeeded
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv

from saber.envs import rules
from saber.envs.emulator import SeedStream, legal_action_count, refuse_pickling
from saber.envs.engines import SequentialEngine, ThreadedEngine
from saber.envs.factory import resolve_rom_id
from saber.envs.framestack import RingFrameStack
from saber.envs.infos import place_rows
from saber.envs.vector_args import (
    ResetSeed,
    checked_actions,
    per_row_seeds,
    reset_mask,
    set_spaces,
)
from saber.envs.wrappers import RAW_REWARD
from saber.protocol.limits import checkpoint_frames as resolve_checkpoints
from saber.protocol.settings import NUM_ACTIONS, SaberSettings

_NO_INDICES = np.zeros(0, dtype=np.intp)  # the rows to reset on a step that resets none
_NO_INDICES.flags.writeable = False
_StepResult = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]
_Prepared = tuple[np.ndarray, np.ndarray, list[int | None]]  # actions, reset rows, ALE seeds


class SaberVectorEnv(VectorEnv):
    """``num_envs`` SABER environments of one game, stepped as a batch.

    Observations ``uint8`` (num_envs, 4, 84, 84); actions integers in 0..17, shape
    (num_envs,). ``info["episode_frame_number"]`` (num_envs,) counts emulator frames; when
    sub-envs end, ``info["saber"]`` holds arrays of the :class:`EpisodeRecord` fields with
    the mask ``info["_saber"]`` (Gymnasium's vector-info convention). With ``clip_rewards``,
    ``info["raw_reward"]`` (float64, (num_envs,)) holds every row's unclipped reward. With
    ``life_signal`` (not SABER), ``info["lives"]`` (int32, (num_envs,)) holds each row's
    ALE lives count after every reset and step.

    Seeding: ``reset(seed=s)`` seeds sub-env ``i`` with ``s + i`` (an array gives one seed
    per sub-env reset); sub-env ``i`` then plays exactly the episodes of
    ``gymnasium.make("SABER/<Game>")`` reset with seed ``s + i`` and then without a seed.
    With ``seed_each_episode = True``, every episode a sub-env starts without a given seed
    (an autoreset too) takes a fresh seed from the sub-env's seed stream, exactly as the
    single env's ``seed_each_episode`` does, so each episode replays from its seed and
    its actions alone; ``episode_seeds`` (int64, (num_envs,)) holds each sub-env's current
    episode seed, -1 where it has none (``saber.training``'s replays use both).

    :meth:`step_async` then :meth:`step_wait` is ``step`` in two halves: between them the
    engine emulates on its own threads while the caller works (saber.envpool's async mode).

    Args:
        game: any spelling of a game.
        num_envs: number of sub-environments.
        num_threads: emulation threads (0: one per core, at most ``num_envs``).
        autoreset_mode: ``NEXT_STEP`` (the step after an end returns the first observation
            of the next episode, reward 0, and ignores the action) or ``DISABLED`` (ended
            sub-envs must be reset with ``options={"reset_mask": ...}`` before stepping;
            that is how per-episode seeds are given).
        render_mode: must be ``None`` (the engine has no colour screens; see
            :class:`saber.training.video.VectorVideoRecorder` for videos).
        checkpoint_frames: ``{name: emulator frame}`` at which the episode records also
            keep the score (default: 5 and 30 minutes), as in :func:`make_env`.
        **overrides: fields of :class:`SaberSettings`.

    Example:
        >>> import gymnasium as gym
        >>> import numpy as np
        >>> envs = gym.make_vec("SABER/Pong", num_envs=2)  # a SaberVectorEnv
        >>> obs, info = envs.reset(seed=0)  # sub-env i seeded with 0 + i
        >>> obs.shape, obs.dtype, info["episode_frame_number"]
        ((2, 4, 84, 84), dtype('uint8'), array([0, 0]))
        >>> obs, rewards, terminated, truncated, info = envs.step(np.array([0, 3]))
        >>> rewards, terminated, truncated, info["episode_frame_number"]
        (array([0., 0.]), array([False, False]), array([False, False]), array([4, 4]))
    """

    metadata: ClassVar[dict[str, Any]] = {"autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        game: str,
        num_envs: int = 1,
        *,
        num_threads: int = 0,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        render_mode: str | None = None,
        checkpoint_frames: dict[str, int] | None = None,
        **overrides: Any,
    ) -> None:
        if not isinstance(num_envs, int) or num_envs <= 0:
            raise ValueError(f"Expect `num_envs` to be positive, actually: {num_envs!r}")
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        if self.autoreset_mode == AutoresetMode.SAME_STEP:
            raise ValueError("SaberVectorEnv supports the NEXT_STEP and DISABLED autoreset modes")
        if render_mode is not None:
            raise ValueError("SaberVectorEnv does not render; use gymnasium.make for rendering")
        self.saber_settings = settings = SaberSettings.from_overrides(**overrides)
        self.rom_id = resolve_rom_id(game)
        self.num_envs = num_envs
        self.metadata = {"autoreset_mode": self.autoreset_mode}
        self.uses_threads = legal_action_count(self.rom_id) == NUM_ACTIONS
        self._engine: ThreadedEngine | SequentialEngine = (
            ThreadedEngine(self.rom_id, num_envs, settings, num_threads)
            if self.uses_threads
            else SequentialEngine(self.rom_id, num_envs, settings)
        )
        set_spaces(self, settings, num_envs)
        size = settings.screen_size

        self._stack = RingFrameStack(num_envs, settings.stack_size, size)
        self._no_rows = np.zeros(num_envs, dtype=bool)  # a rule that is off flags no row
        self._no_rows.flags.writeable = False
        self._seeds = [SeedStream() for _ in range(num_envs)]
        self.seed_each_episode = False
        self.episode_seeds = np.full(num_envs, -1, dtype=np.int64)
        self._started = np.zeros(num_envs, dtype=bool)
        self._all_started = False  # self._started.all(), kept as a Python bool (step reads it)
        self._ended = np.ones(num_envs, dtype=bool)  # ended (or never started): needs a reset
        self._any_ended = True  # self._ended.any(), kept as a Python bool (step reads it)
        self._game_over = np.zeros(num_envs, dtype=bool)
        self._score = np.zeros(num_envs)
        self.checkpoint_frames = resolve_checkpoints(checkpoint_frames)
        self._checkpoint_scores = {name: np.zeros(num_envs) for name in self.checkpoint_frames}
        # A row's agent steps are the batch steps since its episode started: counted once
        # for all rows, not per row and step.
        self._batch_steps = 0
        self._first_batch_step = np.zeros(num_envs, dtype=np.int64)
        self._rollovers = np.zeros(num_envs, dtype=np.int64)
        self._last_reward_frame = np.zeros(num_envs, dtype=np.int64)
        # The first emulator frame at which the stuck timeout or the frame cap could end a
        # row (see _truncation_frames): a step checks one comparison per row against it.
        self._truncation_frame = self._truncation_frames(self._last_reward_frame)
        self._start_time = np.zeros(num_envs)
        self._episode_frames = np.zeros(num_envs, dtype=np.int64)
        # step_async's actions, rows to reset and their ALE seeds, until step_wait.
        self._next_step: _Prepared | None = None

    # ----------------------------------------------------------------- reset
    def reset(
        self, *, seed: ResetSeed = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset all sub-envs, or those of ``options["reset_mask"]`` (bool, (num_envs,))."""
        self._check_open()
        if self._next_step is not None:
            raise RuntimeError("reset() while a step is in flight: call step_wait() first")
        rows = np.arange(self.num_envs)
        mask = reset_mask(options, self.num_envs)
        if mask is not None:
            if not self._started.all() and not mask.all():
                raise ValueError("The first reset must reset every sub-env (no `reset_mask`)")
            rows = np.flatnonzero(mask)
        seeds = per_row_seeds(seed, len(rows))
        if seeds and seeds[0] is not None:
            # Gymnasium's own generator (SABER does not use it), seeded as Gymnasium does.
            self._np_random, self._np_random_seed = seeding.np_random(seeds[0])
        ale_seeds = self._ale_seeds(rows, seeds)
        if len(rows):
            frames = self._engine.reset(rows, ale_seeds)
            self._start_episodes(rows, frames)
        self._started[rows] = True
        self._all_started = bool(self._started.all())
        self._any_ended = np.count_nonzero(self._ended) > 0
        self._episode_frames[rows] = 0
        # Rows not reset keep their frame count, so per-row frame accounting stays right.
        info = {"episode_frame_number": self._episode_frames.copy()}
        if self.saber_settings.life_signal:  # not SABER (SaberSettings.life_signal)
            info["lives"] = self._engine.lives()
        return self._stack.observation(), info

    def _ale_seeds(self, rows: np.ndarray, seeds: list[int | None]) -> list[int | None]:
        """ALE seeds of the episodes starting at ``rows``: ``None`` continues the random stream."""
        ale_seeds: list[int | None] = []
        for row, seed in zip(rows.tolist(), seeds, strict=True):
            if seed is None and self.seed_each_episode:
                seed = self._seeds[row].next_ale_seed()  # the single env's rule, the same draw
            if seed is not None:
                self._seeds[row] = SeedStream(seed)
            self.episode_seeds[row] = -1 if seed is None else seed
            continue_stream = seed is None and self._started[row] and self._game_over[row]
            ale_seeds.append(None if continue_stream else self._seeds[row].next_ale_seed())
        return ale_seeds

    def _start_episodes(self, rows: np.ndarray, frames: np.ndarray) -> None:
        self._stack.start(rows, frames)
        self._reset_statistics(rows)

    def _reset_statistics(self, rows: np.ndarray) -> None:
        self._ended[rows] = False
        self._game_over[rows] = False
        self._score[rows] = 0.0
        for scores in self._checkpoint_scores.values():
            scores[rows] = 0.0
        self._first_batch_step[rows] = self._batch_steps
        self._rollovers[rows] = 0
        self._last_reward_frame[rows] = 0
        self._truncation_frame[rows] = self._truncation_frames(self._last_reward_frame[rows])
        self._start_time[rows] = time.perf_counter()

    # ------------------------------------------------------------------ step
    def step(self, actions: Any) -> _StepResult:
        """Step every sub-env; see the class doc for what happens after an episode ends."""
        return self._finish_step(*self._prepare_step(actions))  # the engine sends in step

    def step_async(self, actions: Any) -> None:
        """:meth:`step`'s first half: starts the engine (see the class doc); then only step_wait."""
        prepared = self._prepare_step(actions)
        self._engine.send(prepared[0])
        self._next_step = prepared

    def step_wait(self) -> _StepResult:
        """:meth:`step`'s second half: waits for the step step_async started, returns it."""
        if self._next_step is None:
            raise RuntimeError("step_wait() without step_async(): start a step first")
        prepared, self._next_step = self._next_step, None
        return self._finish_step(*prepared)

    def _prepare_step(self, actions: Any) -> _Prepared:
        """The checked actions, the rows that autoreset on this step and their ALE seeds."""
        self._check_open()
        if self._next_step is not None:
            raise RuntimeError("a step is in flight (step_async): call step_wait() first")
        actions = self._check_actions(actions)
        if not self._all_started:
            raise ResetNeeded("Cannot call step() before reset(): call env.reset() first.")
        if self._any_ended:
            reset_rows = self._ended.nonzero()[0]
            if self.autoreset_mode == AutoresetMode.DISABLED:
                raise ResetNeeded(
                    f"Sub-envs {reset_rows.tolist()} have ended: reset them with "
                    f"env.reset(options={{'reset_mask': mask}}) before stepping "
                    f"(autoreset is disabled)."
                )
            ale_seeds = self._ale_seeds(reset_rows, [None] * len(reset_rows))
        else:
            reset_rows, ale_seeds = _NO_INDICES, []
        return actions, reset_rows, ale_seeds

    def _finish_step(self, actions: Any, reset_rows: Any, ale_seeds: Any) -> _StepResult:
        """The engine's step (sent by ``step_async``, or sent here), then the SABER rules."""
        frames, rewards, game_over, episode_frames = self._engine.step(
            actions, reset_rows, ale_seeds
        )
        self._batch_steps += 1
        self._stack.push(frames, reset_rows)
        stepped = ~self._ended
        if len(reset_rows):
            self._reset_statistics(reset_rows)
        stuck, capped = self._apply_rules(rewards, game_over, episode_frames, stepped)

        if stuck is capped:  # neither rule fired (both are the shared all-False rows)
            truncated = np.zeros(self.num_envs, dtype=bool)
            ended = game_over.copy()
        else:
            truncated = stuck | capped
            ended = game_over | truncated
        self._ended = ended
        self._any_ended = any_ended = np.count_nonzero(ended) > 0
        self._game_over = game_over
        self._episode_frames = episode_frames
        info: dict[str, Any] = {"episode_frame_number": episode_frames.copy()}
        if any_ended:
            self._add_episode_info(info, ended, game_over, stuck, capped, episode_frames)
        if self.saber_settings.clip_rewards:
            info[RAW_REWARD] = rewards  # both engines return a fresh array each step
            rewards = np.minimum(np.maximum(rewards, -1.0), 1.0)  # np.clip's values, half its time
        if self.saber_settings.life_signal:  # not SABER (SaberSettings.life_signal)
            info["lives"] = self._engine.lives()
        return self._stack.observation(), rewards, game_over.copy(), truncated, info

    def _apply_rules(
        self,
        rewards: np.ndarray,
        game_over: np.ndarray,
        episode_frames: np.ndarray,
        stepped: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The SABER rules of :mod:`saber.envs.rules` over all rows at once: corrects
        rollovers in ``rewards`` (in place), keeps the score, the checkpoint scores and the
        frame of the last reward, and returns the rows the stuck timeout and the frame cap
        end (``self._no_rows`` for a rule that ends none).

        Why the shortcuts: this runs while the engine's threads wait, once per batch step,
        and each numpy call on a few rows costs about a microsecond whatever it computes.
        Most steps score nothing and end nothing, so each rule first asks, in one or two
        calls, whether any row could be concerned, and computes the rule row by row only
        then. Rows reset on this step (not ``stepped``) carry reward 0, frame 0 and no game
        over, so no rule concerns them.
        """
        settings = self.saber_settings
        scored = None
        if np.count_nonzero(rewards):
            # A step with no reward corrects no rollover (the threshold is negative),
            # changes no score and no last-reward frame, and changes no checkpoint score:
            # while a checkpoint is open its score already equals the score.
            rollover = rules.is_rollover(rewards, settings.rollover_threshold) & stepped
            if np.count_nonzero(rollover):
                self._rollovers += rollover
                for row in np.flatnonzero(rollover):
                    rewards[row] = rules.correct_rollover(rewards[row], settings.rollover_mode)
            scored = rewards != 0

        stuck = capped = self._no_rows
        if np.count_nonzero(episode_frames >= self._truncation_frame):
            max_stuck = settings.max_frames_without_reward
            if max_stuck is not None:
                stuck = stepped & rules.stuck_timeout(
                    reward=rewards,
                    game_over=game_over,
                    frame=episode_frames,
                    last_reward_frame=self._last_reward_frame,
                    max_frames=max_stuck,
                )
            cap = settings.max_episode_frames
            if cap is not None:
                capped = stepped & rules.frame_cap(
                    game_over=game_over, frame=episode_frames, max_frames=cap
                )

        if scored is not None:
            np.copyto(self._last_reward_frame, episode_frames, where=scored)
            self._truncation_frame = self._truncation_frames(self._last_reward_frame)
            self._score += rewards
            for name, checkpoint in self.checkpoint_frames.items():
                reached = stepped & rules.checkpoint_open(episode_frames, checkpoint)
                np.copyto(self._checkpoint_scores[name], self._score, where=reached)
        return stuck, capped

    def _truncation_frames(self, last_reward_frame: np.ndarray) -> np.ndarray:
        """The first emulator frame at which the stuck timeout or the frame cap could end
        each row, given the frame of its last reward (``int64``; a huge number when both
        rules are off). Neither rule ends a row before it: the timeout needs ``frame -
        last_reward_frame >= max_frames_without_reward``, the cap ``frame >=
        max_episode_frames``."""
        settings = self.saber_settings
        frames = np.full(last_reward_frame.shape, np.iinfo(np.int64).max, dtype=np.int64)
        if settings.max_frames_without_reward is not None:
            frames = last_reward_frame + settings.max_frames_without_reward
        if settings.max_episode_frames is not None:
            np.minimum(frames, settings.max_episode_frames, out=frames)
        return frames

    def _add_episode_info(
        self,
        info: dict[str, Any],
        ended: np.ndarray,
        game_over: np.ndarray,
        stuck: np.ndarray,
        capped: np.ndarray,
        episode_frames: np.ndarray,
    ) -> None:
        now = time.perf_counter()
        records = {}
        for row in np.flatnonzero(ended).tolist():
            end = rules.end_reason(
                game_over=bool(game_over[row]), stuck=bool(stuck[row]), capped=bool(capped[row])
            )
            records[row] = rules.episode_record(
                score=self._score[row],
                frames=episode_frames[row],
                steps=self._batch_steps - self._first_batch_step[row],
                checkpoint_scores={name: s[row] for name, s in self._checkpoint_scores.items()},
                end=end,
                rollovers=self._rollovers[row],
                seconds=now - self._start_time[row],
            ).to_dict()
        info["saber"] = place_rows(list(records.items()), self.num_envs)
        info["_saber"] = ended.copy()

    @property
    def started(self) -> bool:
        """Every sub-env has been reset since the env was made (a step may come)."""
        return self._all_started

    @property
    def needs_reset(self) -> np.ndarray:
        """The sub-envs that ended (or never started) and are not reset yet (bool, (num_envs,))."""
        return self._ended.copy()

    @property
    def episode_frames(self) -> np.ndarray:
        """Each sub-env's emulator frames this episode, as the last reset or step's
        ``info["episode_frame_number"]`` gave them (int64, (num_envs,))."""
        return self._episode_frames.copy()

    # The seams that ``saber check`` follows and tampers the env through (docs/check.md).
    @property
    def engine(self) -> ThreadedEngine | SequentialEngine | None:
        """The engine that emulates the sub-envs (:mod:`saber.envs.engines`); None once closed."""
        return self._engine

    def switch_game(self, game: str) -> None:
        """Play ``game`` from now on: a new engine of the same kind (threaded or
        sequential) and settings for its ROM; the rules, spaces and wrappers above stay,
        and every sub-env needs a reset first, as after construction."""
        self._check_open()
        threaded = isinstance(self._engine, ThreadedEngine)
        self._engine.close()
        self.rom_id = resolve_rom_id(game)
        settings, rows = self.saber_settings, self.num_envs
        self._engine = (
            ThreadedEngine(self.rom_id, rows, settings, 0)
            if threaded
            else SequentialEngine(self.rom_id, rows, settings)
        )
        self._started[:] = False
        self._all_started = False

    def shift_reward_clock(self, frames: int) -> None:
        """Move every sub-env's frame of its last reward ``frames`` back (the stuck
        timeout then ends an episode ``frames`` emulator frames sooner)."""
        self._last_reward_frame -= frames
        self._truncation_frame = self._truncation_frames(self._last_reward_frame)

    def _check_open(self) -> None:
        if self._engine is None:
            raise RuntimeError(f"{type(self).__name__} is closed: make a new one to play on.")

    def _check_actions(self, actions: Any) -> np.ndarray:
        return checked_actions(actions, self.num_envs)

    def __getstate__(self) -> None:
        refuse_pickling(self)

    def close_extras(self, **kwargs: Any) -> None:
        """Stop the emulator now: ale-py's C++ engine joins its threads when released."""
        engine, self._engine = self._engine, None  # type: ignore[assignment]
        self._next_step = None  # a step in flight: the engine receives it as it closes
        if engine is not None:
            engine.close()
