"""The vector env's batch resize and ring-buffer stack against the single env's frame by frame."""

from __future__ import annotations

import numpy as np
import pytest

from saber.envs.core import resize_bilinear
from saber.envs.emulator import new_ale, rom_path
from saber.envs.framestack import RingFrameStack, batch_resize_is_exact, resize_bilinear_batch


def screens(game: str, count: int) -> np.ndarray:
    """``count`` grayscale screens ``uint8`` (count, 210, 160) of a game under random play."""
    ale = new_ale(0.25)
    ale.setInt("random_seed", 0)
    ale.loadROM(rom_path(game))
    actions = ale.getLegalActionSet()
    rng = np.random.default_rng(0)
    frames = []
    for _ in range(count):
        for _ in range(int(rng.integers(1, 40))):
            ale.act(actions[int(rng.integers(len(actions)))])
            if ale.game_over():
                ale.reset_game()
        frames.append(ale.getScreenGrayscale())
    return np.stack(frames)


def one_by_one(frames: np.ndarray, size: int) -> np.ndarray:
    out = np.empty((len(frames), size, size), dtype=np.uint8)
    for frame, target in zip(frames, out, strict=True):
        resize_bilinear(frame, size, target)
    return out


@pytest.mark.parametrize("game", ["pong", "breakout", "space_invaders", "montezuma_revenge"])
@pytest.mark.parametrize("count", [2, 8, 33])
def test_batch_resize_is_the_single_env_resize_bit_for_bit(game: str, count: int) -> None:
    frames = screens(game, count)
    out = np.empty((count, 84, 84), dtype=np.uint8)
    resize_bilinear_batch(frames, 84, out)
    np.testing.assert_array_equal(out, one_by_one(frames, 84))


def test_batch_resize_falls_back_to_one_call_per_frame_where_stacking_is_not_exact() -> None:
    # 60 -> 84 rows is an upscale: the first row reads above its frame (OpenCV clamps it).
    assert not batch_resize_is_exact(60, 84)
    frames = np.random.default_rng(0).integers(0, 256, (5, 60, 70), dtype=np.uint8)
    out = np.empty((5, 84, 84), dtype=np.uint8)
    resize_bilinear_batch(frames, 84, out)
    np.testing.assert_array_equal(out, one_by_one(frames, 84))


def test_ring_stack_gives_the_shifted_zero_padded_stack() -> None:
    """Against the obvious stack: shift left, newest last, zeros before an episode's start."""
    rng = np.random.default_rng(1)
    rows, depth = 3, 4
    ring = RingFrameStack(rows, depth, 84)
    expected = np.zeros((rows, depth, 84, 84), dtype=np.uint8)
    first = rng.integers(0, 256, (rows, 210, 160), dtype=np.uint8)
    ring.start(np.arange(rows), first)
    expected[:, -1] = one_by_one(first, 84)
    np.testing.assert_array_equal(ring.observation(), expected)
    for step in range(11):
        frames = rng.integers(0, 256, (rows, 210, 160), dtype=np.uint8)
        starting = np.array([step % rows]) if step % 3 == 2 else np.array([], dtype=int)
        ring.push(frames, starting)
        expected[:, :-1] = expected[:, 1:]
        expected[starting] = 0
        expected[:, -1] = one_by_one(frames, 84)
        if step == 6:  # a reset of one row between steps keeps the others' stacks
            frame = rng.integers(0, 256, (1, 210, 160), dtype=np.uint8)
            ring.start(np.array([1]), frame)
            expected[1] = 0
            expected[1, -1] = one_by_one(frame, 84)[0]
        observation = ring.observation()
        np.testing.assert_array_equal(observation, expected)
        observation[:] = 7  # the caller's copy: writing to it changes nothing in the stack
        np.testing.assert_array_equal(ring.observation(), expected)
