"""Frame-level emulation shared by the single and the vector SABER environments.

:class:`FrameRepeater` runs one agent step (the action repeat, rewards summed, the max of
the last two grayscale frames) exactly as ale-py's vector engine does; :class:`SeedStream`
turns a seed into the ALE seeds of an env's episodes, the same for both env kinds
(docs/protocol.md, docs/environments.md).
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import ale_py
import numpy as np
from ale_py import roms

from saber.protocol.settings import NUM_ACTIONS

ALL_ACTIONS = tuple(ale_py.Action(index) for index in range(NUM_ACTIONS))
_MAX_ALE_SEED = 2**31  # ALE reads random_seed as a non-negative int32


class SeedStream:
    """The ALE seeds of one environment's episodes, derived from one Gymnasium seed.

    A seeded reset takes the first ALE seed; each later reset that must reload the ROM
    (see :meth:`FrameRepeater.reset`) takes the next one.
    """

    def __init__(self, seed: int | None = None) -> None:
        self._rng = np.random.default_rng(seed)

    def next_ale_seed(self) -> int:
        """A seed for ``ALEInterface.setInt("random_seed", ...)``, in [0, 2**31)."""
        return int(self._rng.integers(0, _MAX_ALE_SEED))


@functools.cache
def rom_path(ale_id: str) -> Path:
    """Path of the ROM of a game, from ale-py (or ``ALE_ROMS_DIR`` when it is set)."""
    path = roms.get_rom_path(ale_id)
    if path is None:
        raise FileNotFoundError(
            f"ale-py {ale_py.__version__} has no ROM {ale_id!r}"
            + (
                f" in ALE_ROMS_DIR={os.environ['ALE_ROMS_DIR']}"
                if "ALE_ROMS_DIR" in os.environ
                else ""
            )
            + "; see roms_license.md for where the ROMs come from."
        )
    return Path(path)


@functools.cache
def rom_sha256(ale_id: str) -> str:
    """SHA-256 (hex) of the ROM file ale-py plays for a game: what a replay names, so that
    a replay played on another ROM dump is told apart."""
    return hashlib.sha256(rom_path(ale_id).read_bytes()).hexdigest()


@functools.cache
def legal_action_count(ale_id: str) -> int:
    """How many actions ale-py calls legal for a game (18 for all but a few, e.g. Skiing)."""
    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    ale.loadROM(rom_path(ale_id))
    return len(ale.getLegalActionSet())


class FrameRepeater:
    """One agent step of ``frame_skip`` emulator frames, with max-pooled grayscale screens.

    Args:
        ale: an ALE interface with the ROM loaded and ``frame_skip`` left at 1.
        rom: path of the ROM, to reload it on seeded resets.
        frame_skip: emulator frames per agent step.

    Attributes:
        pooled: the current observation frame, ``uint8`` of shape (210, 160) for most games;
            updated in place by :meth:`reset` and :meth:`step`.
        episode_frame: emulator frames since the start of the episode.
        game_over: the game ended (not a truncation: only the game decides this).
        frame_hook: called with the ALE interface after every emulator frame, or None
            (a replay films every frame with it: :mod:`saber.replay`).
    """

    def __init__(self, ale: ale_py.ALEInterface, rom: Path, frame_skip: int) -> None:
        self.ale = ale
        self.rom = rom
        self.frame_skip = frame_skip
        height, width = ale.getScreenDims()
        self.pooled = np.zeros((height, width), dtype=np.uint8)
        self._second_last = np.zeros((height, width), dtype=np.uint8)
        self.episode_frame = 0
        self.game_over = False
        self.frame_hook: Callable[[ale_py.ALEInterface], None] | None = None

    def reset(self, ale_seed: int | None) -> np.ndarray:
        """Start an episode; with ``ale_seed``, first reload the ROM seeded with it.

        Without a seed the emulator's random stream (sticky actions) carries on from the
        previous episode, as in ale-py. Reloading costs about 0.08 s of CPU in ale-py 0.12
        (its colour-averaging palette is rebuilt), so callers reload only when they must.

        Returns:
            :attr:`pooled`, the first frame, ``uint8`` (210, 160).
        """
        if ale_seed is not None:
            self.ale.setInt("random_seed", ale_seed)
            self.ale.loadROM(self.rom)
        self.ale.reset_game()
        self.ale.getScreenGrayscale(self.pooled)
        self._second_last.fill(0)
        self.episode_frame = 0
        self.game_over = False
        return self.pooled

    def step(self, action: int) -> int:
        """Play ``action`` (an index in 0..17, already checked) for ``frame_skip`` frames.

        Returns:
            The sum of the raw rewards of the frames played (points).
        """
        ale = self.ale
        act = ale.act
        ale_action = ALL_ACTIONS[action]
        skip = self.frame_skip
        reward = 0
        hook = self.frame_hook
        for frame in range(1, skip + 1):
            reward += act(ale_action)
            if hook is not None:
                hook(ale)
            if ale.game_over():
                self.game_over = True
                self.episode_frame += frame
                break
            if frame == skip - 1:
                ale.getScreenGrayscale(self._second_last)
            elif frame == skip:
                ale.getScreenGrayscale(self.pooled)
        else:
            self.episode_frame += skip
        np.maximum(self.pooled, self._second_last, out=self.pooled)
        return reward


def refuse_pickling(env: object) -> None:
    """Raise the ``TypeError`` of pickling an env that holds a running emulator, with the way out."""
    raise TypeError(
        f"Cannot pickle {type(env).__name__}: it holds a running emulator. Pickle a factory "
        f"instead, e.g. functools.partial(gymnasium.make, 'saber:SABER/Pong') or env.spec "
        f"(gymnasium.make(spec) rebuilds the same env); AsyncVectorEnv and saber's "
        f"harness workers do exactly that."
    )


def new_ale(repeat_action_probability: float) -> ale_py.ALEInterface:
    """An ALE interface configured as SABER needs it (before any ROM is loaded)."""
    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    ale.setFloat("repeat_action_probability", float(repeat_action_probability))
    return ale
