"""saber.envs.bilinear equals cv2.resize(INTER_LINEAR) bit for bit (numpy namespace)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from saber.envs.bilinear import bilinear_tables, resize_bilinear
from tests.envs.frames import real_frames


def _cv2(frames: np.ndarray, size: int) -> np.ndarray:
    return np.stack([cv2.resize(f, (size, size), interpolation=cv2.INTER_LINEAR) for f in frames])


def test_equals_cv2_on_real_frames_of_several_games() -> None:
    frames = real_frames()
    assert len(np.unique(frames.reshape(len(frames), -1), axis=0)) > 100  # varied screens
    tables = bilinear_tables((210, 160), 84)
    np.testing.assert_array_equal(resize_bilinear(frames, tables, np), _cv2(frames, 84))


@pytest.mark.parametrize("size", [84, 64, 42, 100, 7])
def test_equals_cv2_on_noise_at_several_sizes(size: int) -> None:
    # Noise exercises every rounding case that smooth screens rarely reach.
    frames = np.random.default_rng(size).integers(0, 256, (20, 210, 160), dtype=np.uint8)
    tables = bilinear_tables((210, 160), size)
    np.testing.assert_array_equal(resize_bilinear(frames, tables, np), _cv2(frames, size))


def test_scalar_rounding_by_hand() -> None:
    # A 2 x 2 frame upscaled to 3 x 3: the middle pixel weighs all four equally (1024 each).
    # Rows: 10 * 1024 + 13 * 1024 = 23552 and 20 * 1024 + 21 * 1024 = 41984.
    # scalar: (1024 * 23552 + 1024 * 41984 + 2**21) >> 22 = 16 (65.5M / 4.19M = 15.99 + 0.5)
    # simd:   ((23552 >> 4) * 1024 >> 16) + ((41984 >> 4) * 1024 >> 16) = 23 + 41 -> (64 + 2) >> 2 = 16
    frame = np.array([[[10, 13], [20, 21]]], dtype=np.uint8)
    tables = bilinear_tables((2, 2), 3)
    assert int(tables.a0[1]) == int(tables.a1[1]) == 1024
    assert resize_bilinear(frame, tables, np, "scalar")[0, 1, 1] == 16
    assert resize_bilinear(frame, tables, np, "simd")[0, 1, 1] == 16
    with pytest.raises(ValueError, match="rounding"):
        resize_bilinear(frame, tables, np, "nearest")  # type: ignore[arg-type]
