"""The ALE seeds of SABER's seed stream inside jitted code, by a host callback.

:func:`ale_seeds` asks the host (``jax.pure_callback``) for each row's next seeds of
:class:`saber.envs.emulator.SeedStream`; a cache keeps each row's stream where it stopped.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from saber.envs.emulator import SeedStream

_CACHE_SIZE = 4096  # streams kept (one per row of the envs in use): a few MB at most
_streams: dict[int, tuple[SeedStream, int, int]] = {}  # seed -> (stream, taken, last seed)


def _nth_ale_seed(seed: int, position: int) -> int:
    """The ``position``-th (0-based) ALE seed of the stream of Gymnasium seed ``seed``."""
    stream, taken, last = _streams.get(seed, (None, 0, 0))
    if stream is None or taken > position + 1:  # not cached, or asked for an earlier one
        stream, taken = SeedStream(seed), 0
    while taken <= position:
        last, taken = stream.next_ale_seed(), taken + 1
    if len(_streams) >= _CACHE_SIZE and seed not in _streams:
        _streams.pop(next(iter(_streams)))
    _streams[seed] = (stream, taken, last)
    return last


def _host_seeds(seeds: np.ndarray, positions: np.ndarray, mask: np.ndarray) -> np.ndarray:
    # Outside jit, JAX hands the callback jax Arrays, and indexing one dispatches a JAX
    # operation from inside the callback, which can deadlock with the caller's own next
    # operation (JAX's callback docs: a callback must not call back into JAX). It hung
    # CI's jax stage in env.reset, at random. Everything below is numpy.
    seeds, positions, mask = np.asarray(seeds), np.asarray(positions), np.asarray(mask)
    out = np.full(seeds.shape, -1, dtype=np.int32)
    for row in np.flatnonzero(mask):
        out[row] = _nth_ale_seed(int(seeds[row]), int(positions[row]))
    return out


def ale_seeds(seeds: jax.Array, positions: jax.Array, mask: jax.Array) -> jax.Array:
    """ALE seeds ``int32`` (n,): for each row of ``mask``, seed number ``positions[row]``
    (0: the seeded reset's) of the stream of Gymnasium seed ``seeds[row]``; -1 elsewhere."""
    shape = jax.ShapeDtypeStruct(seeds.shape, jnp.int32)
    return jax.pure_callback(_host_seeds, shape, seeds, positions, mask)
