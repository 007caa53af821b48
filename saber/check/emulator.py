"""Reaching the emulator under a stack, and a twin emulator to replay what it did.

A twin is a second ALE of the same ROM with sticky actions off: restored to a state saved
from the stack's emulator, it finds which frames (so which action) the stack played.
"""

from __future__ import annotations

import functools
import hashlib
import re
import struct
from collections.abc import Sequence
from typing import Any

import ale_py
import gymnasium as gym
import numpy as np
from ale_py import roms

from saber.errors import ProbeError

ACTIONS = tuple(ale_py.Action(index) for index in range(18))
# ale-py 0.12 serializes an ALEState as int32 left paddle, right paddle, frame number,
# episode frame number, ...: the episode counter (what ALE's frame cap reads) is at byte 12.
_EPISODE_FRAME_OFFSET = 12
_MD5 = re.compile(rb"[0-9a-f]{32}")


@functools.cache
def _rom_of_md5() -> dict[str, str]:
    """ROM id of each ROM file ale-py ships, by the MD5 the ALE writes into its states."""
    found = {}
    for rom_id in roms.get_all_rom_ids():
        path = roms.get_rom_path(rom_id)
        if path is not None:
            found[hashlib.md5(path.read_bytes()).hexdigest()] = rom_id
    return found


class Emulator:
    """The ALE interface under a stack, with what the probe needs of it.

    Args:
        env: the stack (a ``gymnasium.Env``) whose ``unwrapped`` holds ``ale``.
        ale: that ALE interface.
    """

    def __init__(self, env: gym.Env, ale: ale_py.ALEInterface) -> None:
        self.env = env
        self.ale = ale

    @property
    def rom_id(self) -> str | None:
        """The ROM running now, from the MD5 the ALE records in its state (None if unknown)."""
        match = _MD5.search(self.ale.cloneState().serialize())
        return _rom_of_md5().get(match.group().decode()) if match else None

    def swap_rom(self, rom_id: str) -> None:
        """Load another game under the stack and start it (the ALE keeps its settings:
        sticky actions, frame cap). Probes use games whose RAM they know.

        Raises:
            ProbeError: the game's screen has another size than the stack's game (a few
                ROMs are 250 lines high): the stack's buffers could not take it.
        """
        dims = self.ale.getScreenDims()
        previous = self.rom_id
        self.ale.loadROM(roms.get_rom_path(rom_id))
        if self.ale.getScreenDims() != dims:
            if previous is not None:
                self.ale.loadROM(roms.get_rom_path(previous))
            raise ProbeError(
                f"{rom_id} cannot run under this stack: its screen is not "
                f"{dims[0]} x {dims[1]} like the stack's game"
            )
        self.ale.reset_game()

    def frames(self) -> int:
        """Emulator frames since the emulator's last reset (ALE's episode counter)."""
        return int(self.ale.getEpisodeFrameNumber())

    def set_frame_clocks(
        self, frame: int, steps_per_frame: Sequence[tuple[Any, float]]
    ) -> list[str]:
        """Advance every frame and step counter of the stack that the probe knows to ``frame``.

        The ALE's own episode counter (read by its frame cap) is set by rewriting a saved
        state; saber's core keeps its own count; Gymnasium ``TimeLimit`` wrappers count
        steps, set to ``frame`` times their measured steps per frame.

        Returns:
            The names of the counters advanced, for the evidence.

        Raises:
            RuntimeError: the saved state's layout is not the one this code knows.
        """
        state = bytearray(self.ale.cloneState().serialize())
        (current,) = struct.unpack_from("<i", state, _EPISODE_FRAME_OFFSET)
        if current != self.ale.getEpisodeFrameNumber():
            raise RuntimeError("the ALE state layout is not ale-py 0.12's")
        struct.pack_into("<i", state, _EPISODE_FRAME_OFFSET, frame)
        self.ale.restoreState(ale_py.ALEState(bytes(state)))
        advanced = ["the ALE episode frame counter"]
        repeater = getattr(self.env.unwrapped, "_repeater", None)
        if repeater is not None and hasattr(repeater, "episode_frame"):
            repeater.episode_frame = frame  # saber's core counts its frames itself
            advanced.append("saber's core frame counter")
        for wrapper, rate in steps_per_frame:
            wrapper._elapsed_steps = round(frame * rate)
            advanced.append(
                f"{type(wrapper).__name__}(max_episode_steps={wrapper._max_episode_steps})"
            )
        return advanced


def step_counters(env: gym.Env) -> list[Any]:
    """Gymnasium ``TimeLimit`` wrappers in the chain (they count steps, not frames)."""
    found = []
    while isinstance(env, gym.Wrapper):
        if isinstance(env, gym.wrappers.TimeLimit):
            found.append(env)
        env = env.env
    return found


def reach(env: Any) -> Emulator | None:
    """The emulator under ``env`` (a Gymnasium env or a ``SyncVectorEnv``'s first sub-env),
    or None when the stack hides it (ale-py's threaded vector engine, JAX, a remote env)."""
    if isinstance(env, gym.vector.VectorEnv):
        subs = getattr(env.unwrapped, "envs", None)
        if not subs:
            return None
        env = subs[0]
    ale = getattr(getattr(env, "unwrapped", None), "ale", None)
    if isinstance(ale, ale_py.ALEInterface):
        return Emulator(env, ale)
    return None


def twin(rom_id: str) -> Twin:
    """The twin of a ROM, made once per process: loading a ROM costs about 0.1 s, and a
    twin is only ever used from a restored state, so one serves every probe."""
    return _twin(rom_id)


@functools.cache
def _twin(rom_id: str) -> Twin:
    return Twin(rom_id)


class Twin:
    """A second emulator of one ROM, sticky actions off, to replay frames exactly.

    Args:
        rom_id: the ROM to load.
    """

    def __init__(self, rom_id: str) -> None:
        ale = ale_py.ALEInterface()
        ale.setLoggerMode(ale_py.LoggerMode.Error)
        ale.setFloat("repeat_action_probability", 0.0)
        ale.setInt("max_num_frames_per_episode", 0)
        ale.loadROM(roms.get_rom_path(rom_id))
        ale.reset_game()
        self.ale = ale

    def replay(self, state: ale_py.ALEState, actions: Sequence[int]) -> np.ndarray:
        """RAM ``uint8`` (128,) after playing ``actions`` (one per frame) from ``state``."""
        ale = self.ale
        ale.restoreState(state)
        for action in actions:
            ale.act(ACTIONS[action])
        return ale.getRAM()

    def sticky_matches(
        self,
        state: ale_py.ALEState,
        previous: int,
        candidates: Sequence[int],
        frames: int,
        ram: np.ndarray,
    ) -> list[tuple[int, int]]:
        """Every ``(action, j)`` whose replay from ``state``, "``j`` frames of ``previous``,
        then ``frames - j`` of ``action``" (``j`` in 0..frames), ends with RAM ``ram``.

        The same as replaying each pair, with fewer frames: the states after ``k`` frames
        of ``previous`` are played once and shared by every candidate (``frames``
        frames plus ``frames * (frames + 1) / 2`` per candidate, instead of
        ``frames * (frames + 1)``), and a candidate equal to ``previous`` plays the
        same frames for every ``j`` (one replay, all ``j`` or none).
        """
        ale = self.ale
        ale.restoreState(state)
        prefixes = [state]
        for _ in range(frames):
            ale.act(ACTIONS[previous])
            prefixes.append(ale.cloneState())
        held = bool(np.array_equal(ale.getRAM(), ram))  # all frames of `previous`
        found = []
        for action in candidates:
            if action == previous:
                found += [(action, j) for j in range(frames + 1)] if held else []
                continue
            for j in range(frames):
                ale.restoreState(prefixes[j])
                for _ in range(frames - j):
                    ale.act(ACTIONS[action])
                if np.array_equal(ale.getRAM(), ram):
                    found.append((action, j))
            if held:
                found.append((action, frames))
        return found

    def screens(
        self, state: ale_py.ALEState, actions: Sequence[int]
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """(grayscale (210, 160), RGB (210, 160, 3)) screens of each frame of the replay."""
        ale = self.ale
        ale.restoreState(state)
        shots = []
        for action in actions:
            ale.act(ACTIONS[action])
            shots.append((ale.getScreenGrayscale(), ale.getScreenRGB()))
        return shots
