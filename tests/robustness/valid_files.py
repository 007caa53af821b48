"""Small valid files of saber's formats, for the fuzz tests to damage."""

from __future__ import annotations

import numpy as np


def small_policy_layers(seed: int | None = None) -> dict[str, np.ndarray]:
    """The arrays of a valid conv-actor policy 2 channels wide: random with a ``seed``,
    else zeros (a few kB instead of the shipped agent's MB)."""
    shapes = {
        "conv1": ((2, 4, 8, 8), (2,)),
        "conv2": ((2, 2, 4, 4), (2,)),
        "conv3": ((2, 2, 3, 3), (2,)),
        "fc": ((4, 2 * 7 * 7), (4,)),
        "policy": ((18, 4), (18,)),
    }
    rng = np.random.default_rng(seed)
    return {
        f"{name}.{kind}": rng.standard_normal(shape) if seed is not None else np.zeros(shape)
        for name, pair in shapes.items()
        for kind, shape in zip(("weight", "bias"), pair, strict=True)
    }
