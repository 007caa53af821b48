"""The vector env's observation path: one bilinear resize per batch, a ring-buffer frame stack.

The same pixels as the single env's resize; each step writes one slot of the stack and the
observation is one ordered copy, since this runs while the engine's threads wait.
"""

from __future__ import annotations

import functools
import math

import cv2
import numpy as np

from saber.envs.core import resize_bilinear


@functools.cache
def batch_resize_is_exact(height: int, size: int) -> bool:
    """Whether frames of ``height`` rows, stacked on top of each other and resized in one
    bilinear call, give exactly the per-frame resize to ``size`` rows.

    OpenCV's bilinear resize computes each destination row from two source rows at
    ``(row + 0.5) * height / size - 0.5``; the stacked image has the same scale, so each
    of its destination rows reads the same two rows of its own frame, unless a row of a
    single frame reads past the frame's edge (then OpenCV clamps to the edge, and the
    stack would read the next frame instead). True for 210 -> 84, the Atari case.

    >>> batch_resize_is_exact(210, 84), batch_resize_is_exact(84, 84), batch_resize_is_exact(60, 84)
    (True, True, False)
    """
    if height == size:  # OpenCV copies the rows: nothing to interpolate
        return True
    scale = height / size
    rows = [math.floor((row + 0.5) * scale - 0.5) for row in (0, size - 1)]
    return rows[0] >= 0 and rows[1] + 1 <= height - 1


def resize_bilinear_batch(frames: np.ndarray, size: int, out: np.ndarray) -> None:
    """Resize ``frames`` ``uint8`` (n, H, W) into ``out`` ``uint8`` (n, size, size), bilinear.

    One OpenCV call on the frames stacked as one (n * H, W) image when that is exact (see
    :func:`batch_resize_is_exact`): it saves the n - 1 other calls, and OpenCV spreads a
    large batch over its own threads (``cv2.setNumThreads``) without the GIL. Otherwise
    (or when either array is not C-contiguous) one call per frame.

    >>> frames = np.random.default_rng(0).integers(0, 256, (3, 210, 160), dtype=np.uint8)
    >>> out = np.empty((3, 84, 84), dtype=np.uint8)
    >>> resize_bilinear_batch(frames, 84, out)
    >>> one = np.empty((84, 84), dtype=np.uint8)
    >>> resize_bilinear(frames[2], 84, one)
    >>> bool((out[2] == one).all())
    True
    """
    count, height, width = frames.shape
    contiguous = frames.flags.c_contiguous and out.flags.c_contiguous
    if count > 1 and contiguous and batch_resize_is_exact(height, size):
        cv2.resize(
            frames.reshape(count * height, width),
            (size, count * size),
            dst=out.reshape(count * size, size),
            interpolation=cv2.INTER_LINEAR,
        )
        return
    for frame, target in zip(frames, out, strict=True):
        resize_bilinear(frame, size, target)


class RingFrameStack:
    """The ``stack_size`` most recent frames of ``rows`` environments, oldest first on read.

    All rows advance together (a vector step writes every row), so one slot index serves
    them all: :meth:`push` resizes the new frames into the next slot, and
    :meth:`observation` copies the slots out in order, ``uint8`` (rows, stack_size, size,
    size). A row whose episode starts is zeroed, then gets its first frame in the newest
    slot: the zero-padded stack of the single env.

    Args:
        rows: number of environments.
        stack_size: frames per observation.
        size: side of a resized frame (pixels).
    """

    def __init__(self, rows: int, stack_size: int, size: int) -> None:
        self.size = size
        self._slots = np.zeros((rows, stack_size, size, size), dtype=np.uint8)
        self._resized = np.zeros((rows, size, size), dtype=np.uint8)
        # _orders[newest]: the slots from oldest to newest when slot `newest` holds the newest.
        self._orders = [
            np.roll(np.arange(stack_size), -(newest + 1)) for newest in range(stack_size)
        ]
        self._newest = stack_size - 1

    def push(self, frames: np.ndarray, starting: np.ndarray | None = None) -> None:
        """Add one frame to every row: ``frames`` ``uint8`` (rows, H, W), unresized.

        ``starting``: indices of rows whose episode starts with this frame (their older
        slots are zeroed).
        """
        self._newest = (self._newest + 1) % len(self._orders)
        if starting is not None and len(starting):
            self._slots[starting] = 0
        resize_bilinear_batch(frames, self.size, self._resized)
        self._slots[:, self._newest] = self._resized

    def start(self, rows: np.ndarray, frames: np.ndarray) -> None:
        """Start the episodes of ``rows`` (indices) with ``frames`` ``uint8`` (len(rows), H, W):
        their stack becomes zeros and the frame, the other rows keep theirs."""
        resized = self._resized[: len(rows)]
        resize_bilinear_batch(frames, self.size, resized)
        self._slots[rows] = 0
        self._slots[rows, self._newest] = resized

    def observation(self) -> np.ndarray:
        """A new array ``uint8`` (rows, stack_size, size, size), oldest frame first."""
        return self._slots[:, self._orders[self._newest]]
