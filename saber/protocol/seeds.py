"""The seed of every episode of a run, derived from the run's base seed (:func:`episode_seed`).

Episode ``index`` of ``game`` gets ``SeedSequence([base_seed, zlib.crc32(game.encode()),
index]).generate_state(1)[0] % 2**31`` (:data:`SEED_SCHEME` names the rule in ``run.json``),
so what it plays depends on nothing else; the readers of a run directory check it too.

>>> episode_seed(0, "pong", 0) == episode_seed(0, "pong", 0) != episode_seed(0, "pong", 1)
True
"""

from __future__ import annotations

import zlib

import numpy as np

SEED_SCHEME = "SeedSequence([base_seed, crc32(game), episode]) % 2**31, v1"
_MAX_SEED = 2**31  # the vector env takes non-negative int32 seeds


def episode_seed(base_seed: int, game: str, episode: int) -> int:
    """The seed of episode ``episode`` (0-based) of ``game`` (ale id), in [0, 2**31)."""
    if base_seed < 0 or episode < 0:
        raise ValueError(
            f"Expect a non-negative base seed and episode, actually: {base_seed}, {episode}"
        )
    sequence = np.random.SeedSequence([base_seed, zlib.crc32(game.encode()), episode])
    return int(sequence.generate_state(1)[0]) % _MAX_SEED
