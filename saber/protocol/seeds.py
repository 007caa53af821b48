"""The seed of every episode of a run, derived from the run's base seed.

Every episode is a (game, index) pair with its own seed, so what an episode plays depends
on nothing else: not on the number of workers, not on the work unit or the batch row it
lands in, not on which episodes finish first. The seed of episode ``index`` of ``game``::

    SeedSequence([base_seed, zlib.crc32(game.encode()), index]).generate_state(1)[0] % 2**31

(:data:`SEED_SCHEME` names this rule in ``run.json``; changing it changes every result.)
It lives in the ground layer because the readers of a run directory check it too: a
record whose seed is not its episode's does not belong to the run.

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
