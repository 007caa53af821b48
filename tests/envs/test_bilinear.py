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


def test_the_two_roundings_by_hand() -> None:
    # 3 x 3 -> 2 x 2: output (0, 0) weighs columns 0, 1 and rows 0, 1 by 1536 and 512.
    frame = np.array([[[58, 8, 13], [56, 175, 230], [104, 145, 150]]], dtype=np.uint8)
    tables = bilinear_tables((3, 3), 2)
    assert tables.a0[0] == tables.b0[0, 0] == 1536 and tables.a1[0] == tables.b1[0, 0] == 512
    # Rows: 58 * 1536 + 8 * 512 = 93184 and 56 * 1536 + 175 * 512 = 175616.
    # scalar: (1536 * 93184 + 512 * 175616 + 2**21) >> 22 = 235143168 >> 22 = 56 (56.06)
    assert resize_bilinear(frame, tables, np, "scalar")[0, 0, 0] == 56
    # simd: (93184 >> 4) * 1536 >> 16 = 136 (136.5), (175616 >> 4) * 512 >> 16 = 85 (85.75),
    # (136 + 85 + 2) >> 2 = 55: what cv2 computes.
    assert resize_bilinear(frame, tables, np, "simd")[0, 0, 0] == 55
    assert cv2.resize(frame[0], (2, 2), interpolation=cv2.INTER_LINEAR)[0, 0] == 55
    with pytest.raises(ValueError, match="rounding"):
        resize_bilinear(frame, tables, np, "nearest")  # type: ignore[arg-type]
