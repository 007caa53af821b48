"""The two engines under :class:`saber.envs.vector.SaberVectorEnv`: ale-py's C++ vector
engine (threads) and the single env's emulation code row by row (games whose legal actions
are not all 18); docs/environments.md describes the vector env.
"""

from __future__ import annotations

import ale_py
import numpy as np

from saber.envs.emulator import FrameRepeater, new_ale, rom_path
from saber.protocol.settings import NUM_ACTIONS, SaberSettings

_NO_SEED = -1  # ale-py's vector engine: reset without reloading the ROM
_INT32_MAX = 2**31 - 1


def new_vector_engine(
    rom_id: str, num_envs: int, settings: SaberSettings, num_threads: int = 0, batch_size: int = 0
) -> ale_py.ALEVectorInterface:
    """ale-py's C++ vector engine configured as SABER needs it: frame repeat with max-pooled
    210 x 160 grayscale frames and sticky actions, nothing else (no resize, no no-op or
    FIRE starts, no life signal, no clipping, no cap). ``benchmarks/env_throughput.py``
    times its vector tight loop on this very engine."""
    return ale_py.ALEVectorInterface(
        rom_path=rom_path(rom_id),
        num_envs=num_envs,
        frame_skip=settings.frame_skip,
        stack_num=1,
        img_height=210,
        img_width=160,
        grayscale=True,
        maxpool=True,
        noop_max=0,
        use_fire_reset=False,
        episodic_life=False,
        life_loss_info=False,
        reward_clipping=False,
        max_episode_steps=_INT32_MAX,  # frames; the Python side applies SABER's limits
        repeat_action_probability=settings.repeat_action_probability,
        full_action_space=True,
        batch_size=batch_size,  # 0 = num_envs, sync: SABER's; async (> 0): benchmarks only
        num_threads=num_threads,
        thread_affinity_offset=-1,
        autoreset_mode="NextStep",
    )


class ThreadedEngine:
    """ale-py's C++ vector engine; returns max-pooled 210 x 160 grayscale frames."""

    def __init__(
        self, rom_id: str, num_envs: int, settings: SaberSettings, num_threads: int
    ) -> None:
        self.ale = new_vector_engine(rom_id, num_envs, settings, num_threads)
        legal = [action.value for action in self.ale.get_action_set()]
        if legal != list(range(NUM_ACTIONS)):  # the engine indexes this list with our actions
            raise RuntimeError(f"ale-py's legal actions for {rom_id} are {legal}, not 0..17")
        self.num_envs = num_envs
        self._strength = np.ones(num_envs, dtype=np.float32)
        self._in_flight = False  # a step sent and not yet received
        # The engine's frame counter at each row's episode start. ALE plays a game's
        # starting actions at every reset (Double Dunk: about 20 frames, Name This Game:
        # about 130, varying with sticky actions) and the engine counts them; the single
        # env counts from 0 at the reset, and so do SABER's limits and records here.
        self._start_frames = np.zeros(num_envs, dtype=np.int64)
        self._lives = np.zeros(num_envs, dtype=np.int32)  # the engine's, at the last result

    def lives(self) -> np.ndarray:
        """Each row's ALE lives count after the last reset or step (a fresh int32 array)."""
        return self._lives.copy()

    def close(self) -> None:
        """Stop the engine's threads: ale-py has no stop call, its destructor joins them,
        and this drops the only reference to it (so CPython runs it here, not at GC)."""
        if self._in_flight:  # a step in flight is received first: no thread is mid-batch
            self.ale.recv()
        ale, self.ale = self.ale, None  # type: ignore[assignment]
        del ale

    def send(self, actions: np.ndarray) -> None:
        """Start a step on the engine's threads; :meth:`step` then receives it, unsent."""
        self.ale.send(actions.astype(np.int32), self._strength)
        self._in_flight = True

    def reset(self, rows: np.ndarray, ale_seeds: list[int | None]) -> np.ndarray:
        seeds = np.array([_NO_SEED if s is None else s for s in ale_seeds], dtype=np.int32)
        obs, info = self.ale.reset(rows.astype(np.int32), seeds)
        # With batch_size == num_envs the engine writes each result at its env id
        # (ale-py 0.12 result_staging.hpp, "ordered mode"): rows come back in order.
        self._start_frames[rows] = info["episode_frame_number"][rows]
        self._lives[rows] = info["lives"][rows]
        return obs[rows, 0]

    def step(
        self, actions: np.ndarray, reset_rows: np.ndarray, ale_seeds: list[int | None]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        # The engine itself resets sub-envs whose game ended at the previous step (without
        # reloading: the single env's rule after a game over). Sub-envs that we truncated
        # are stepped once more, then reset here with a reload, which erases that step.
        if not self._in_flight:  # not started by send(): sent here
            self.send(actions)
        self._in_flight = False
        obs, rewards, game_over, _, info = self.ale.recv()  # in env order (see reset)
        frames = obs[:, 0]
        rewards = rewards.astype(np.float64)
        episode_frames = info["episode_frame_number"].astype(np.int64)
        self._lives[:] = info["lives"]  # before self.reset, which sets the reloaded rows'
        if len(reset_rows):
            # Rows the engine reset itself start their episode at this step's counter;
            # rows reloaded here, at their reset's (self.reset, which comes after).
            self._start_frames[reset_rows] = episode_frames[reset_rows]
            reload = [i for i, seed in enumerate(ale_seeds) if seed is not None]
            if reload:
                frames = frames.copy()
                frames[reset_rows[reload]] = self.reset(
                    reset_rows[reload], [ale_seeds[i] for i in reload]
                )
            rewards[reset_rows] = 0.0
            game_over[reset_rows] = False
        episode_frames -= self._start_frames
        episode_frames[reset_rows] = 0  # reloaded rows were stepped once more: no frame counts
        return frames, rewards, game_over, episode_frames


class SequentialEngine:
    """The single env's emulation code for each sub-env in turn (all 18 actions reach the game)."""

    def __init__(self, rom_id: str, num_envs: int, settings: SaberSettings) -> None:
        rom = rom_path(rom_id)
        self.repeaters = []
        for _ in range(num_envs):
            ale = new_ale(settings.repeat_action_probability)
            ale.loadROM(rom)
            self.repeaters.append(FrameRepeater(ale, rom, settings.frame_skip))
        height, width = self.repeaters[0].pooled.shape
        self._frames = np.zeros((num_envs, height, width), dtype=np.uint8)
        self._sent: np.ndarray | None = None  # send()'s actions, until step()

    def lives(self) -> np.ndarray:
        """Each row's ALE lives count now (a fresh int32 array)."""
        return np.fromiter((r.ale.lives() for r in self.repeaters), np.int32, len(self.repeaters))

    def close(self) -> None:
        """Release the emulators."""
        self.repeaters.clear()

    def send(self, actions: np.ndarray) -> None:
        """A copy of ``actions`` for :meth:`step` (the caller may reuse its array)."""
        self._sent = actions.copy()

    def reset(self, rows: np.ndarray, ale_seeds: list[int | None]) -> np.ndarray:
        return np.stack(
            [self.repeaters[row].reset(seed) for row, seed in zip(rows, ale_seeds, strict=True)]
        )

    def step(
        self, actions: np.ndarray, reset_rows: np.ndarray, ale_seeds: list[int | None]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        if self._sent is not None:  # the actions send() was given
            actions, self._sent = self._sent, None
        seeds = dict(zip(reset_rows.tolist(), ale_seeds, strict=True))
        count = len(self.repeaters)
        rewards = np.zeros(count, dtype=np.float64)
        game_over = np.zeros(count, dtype=bool)
        episode_frames = np.zeros(count, dtype=np.int64)
        for row, repeater in enumerate(self.repeaters):
            if row in seeds:
                repeater.reset(seeds[row])
            else:
                rewards[row] = repeater.step(int(actions[row]))
                game_over[row] = repeater.game_over
                episode_frames[row] = repeater.episode_frame
            self._frames[row] = repeater.pooled
        return self._frames, rewards, game_over, episode_frames
