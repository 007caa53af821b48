"""OpenCV's ``uint8`` bilinear resize (``cv2.INTER_LINEAR``) as integer array operations.

One definition for ``numpy`` and ``jax.numpy`` (the namespace ``xp``), rounding as OpenCV's
x86-64 wheels do by default; docs/jax.md gives the arithmetic and its two roundings.

>>> frame = np.zeros((1, 210, 160), dtype=np.uint8)
>>> resize_bilinear(frame, bilinear_tables((210, 160), 84), np).shape
(1, 84, 84)
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal

import numpy as np

_COEF_BITS = 11  # OpenCV's INTER_RESIZE_COEF_BITS: weights sum to 2048
Rounding = Literal["simd", "scalar"]


@dataclass(frozen=True)
class BilinearTables:
    """Source indices and weights of each output column (``x*``, ``a*``) and row (``y*``, ``b*``)."""

    x0: np.ndarray
    x1: np.ndarray
    a0: np.ndarray
    a1: np.ndarray
    y0: np.ndarray
    y1: np.ndarray
    b0: np.ndarray
    b1: np.ndarray


def _axis(source: int, size: int) -> tuple[np.ndarray, ...]:
    """OpenCV's ``resize`` coefficients along one axis (``source`` -> ``size`` pixels)."""
    scale = source / size  # double, as OpenCV's scale_x
    fx = ((np.arange(size) + 0.5) * scale - 0.5).astype(np.float32)  # float, as OpenCV's fx
    sx = np.floor(fx).astype(np.int32)
    fx = fx - sx.astype(np.float32)
    # Borders: OpenCV clamps the first pixel and weights the last one alone.
    fx[sx < 0] = 0
    sx[sx < 0] = 0
    last = sx >= source - 1
    fx[last] = 0
    sx[last] = source - 1
    scale_coef = np.float32(1 << _COEF_BITS)
    # saturate_cast<short>(float) rounds half to even, as np.rint does.
    w0 = np.rint((np.float32(1) - fx) * scale_coef).astype(np.int32)
    w1 = np.rint(fx * scale_coef).astype(np.int32)
    return sx, np.minimum(sx + 1, source - 1), w0, w1


def bilinear_tables(shape: tuple[int, int], size: int) -> BilinearTables:
    """The tables that resize frames of ``shape`` (height, width) to ``size`` x ``size``."""
    x0, x1, a0, a1 = _axis(shape[1], size)
    y0, y1, b0, b1 = _axis(shape[0], size)
    return BilinearTables(x0, x1, a0, a1, y0, y1, b0[:, None], b1[:, None])


def resize_bilinear(
    frames: Any, tables: BilinearTables, xp: ModuleType, rounding: Rounding = "simd"
) -> Any:
    """Resize ``uint8`` frames (n, H, W) to ``uint8`` (n, size, size), as ``cv2.INTER_LINEAR``.

    Args:
        frames: ``uint8`` array of ``xp``, shape (n, H, W) with (H, W) the tables' shape.
        tables: from :func:`bilinear_tables`.
        xp: ``numpy`` or ``jax.numpy``.
        rounding: OpenCV's ``"simd"`` (default; what its x86-64 wheels compute) or
            ``"scalar"`` rounding of the vertical pass (docs/jax.md).
    """
    pixels = frames.astype(xp.int32)
    # Horizontal pass, exact: values up to 255 * 2048 (< 2**19).
    rows = pixels[:, :, tables.x0] * tables.a0 + pixels[:, :, tables.x1] * tables.a1
    r0, r1 = rows[:, tables.y0], rows[:, tables.y1]
    if rounding == "simd":
        out = (((r0 >> 4) * tables.b0) >> 16) + (((r1 >> 4) * tables.b1) >> 16)
        out = (out + 2) >> 2
    elif rounding == "scalar":
        out = (r0 * tables.b0 + r1 * tables.b1 + (1 << (2 * _COEF_BITS - 1))) >> (2 * _COEF_BITS)
    else:
        raise ValueError(f"Expect rounding 'simd' or 'scalar', actually: {rounding!r}")
    # Both roundings stay in [0, 255]: the weights sum to 2048 on each axis.
    return out.astype(xp.uint8)
