"""Real screens for resize tests: max-pooled grayscale frames of several games."""

from __future__ import annotations

import functools

import numpy as np

from saber.envs.emulator import FrameRepeater, new_ale, rom_path

GAMES = ("breakout", "pong", "space_invaders", "seaquest", "ms_pacman", "montezuma_revenge")


@functools.cache
def real_frames(steps: int = 300, every: int = 10) -> np.ndarray:
    """``uint8`` (frames, 210, 160): every ``every``-th step of random play in each game."""
    rng = np.random.default_rng(0)
    frames = []
    for game in GAMES:
        ale = new_ale(0.25)
        rom = rom_path(game)
        ale.loadROM(rom)
        repeater = FrameRepeater(ale, rom, frame_skip=4)
        frames.append(repeater.reset(ale_seed=1).copy())
        for step in range(steps):
            repeater.step(int(rng.integers(18)))
            if repeater.game_over:
                repeater.reset(None)
            if step % every == 0:
                frames.append(repeater.pooled.copy())
    return np.stack(frames)
