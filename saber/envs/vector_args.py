"""What every SABER vector env does alike (the single-game and the multi-game one, numpy
and saber.jax): its spaces, and the arguments it checks (the actions of a step, a reset's
``reset_mask`` and its seeds), each refused with one line that says what was expected.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import numpy as np
from gymnasium.spaces import Box, Discrete
from gymnasium.vector.utils import batch_space

from saber.protocol.settings import NUM_ACTIONS, SaberSettings

# A vector reset's ``seed``: one int (the k-th row reset gets seed + k), one per row
# reset, or None.
ResetSeed: TypeAlias = int | np.ndarray | list[int] | None


def set_spaces(env: Any, settings: SaberSettings, num_envs: int) -> None:
    """Give ``env`` its spaces: each row's observation (``uint8`` (stack, size, size)) and
    its 18 actions, and both batched over ``num_envs`` rows as make_vec batches them
    (``Box`` (n, 4, 84, 84), ``MultiDiscrete([18] * n)``)."""
    size = settings.screen_size
    env.single_observation_space = Box(0, 255, (settings.stack_size, size, size), dtype=np.uint8)
    env.single_action_space = Discrete(NUM_ACTIONS)
    env.observation_space = batch_space(env.single_observation_space, num_envs)
    env.action_space = batch_space(env.single_action_space, num_envs)


def reset_mask(options: dict[str, Any] | None, num_envs: int) -> np.ndarray | None:
    """``options["reset_mask"]`` (bool, (num_envs,)), checked; None when not given."""
    if not options or "reset_mask" not in options:
        return None
    mask = np.asarray(options["reset_mask"])
    if mask.dtype != np.bool_ or mask.shape != (num_envs,):
        raise ValueError(
            f"Expect `reset_mask` to be a bool array of shape ({num_envs},), "
            f"actually: {mask.dtype} {mask.shape}"
        )
    return mask


def checked_actions(actions: Any, num_envs: int) -> np.ndarray:
    """``actions`` as an integer array of shape (num_envs,) in 0..17, or a one-line error."""
    array = np.asarray(actions)
    if array.shape != (num_envs,) or array.dtype.kind not in "iu":
        raise ValueError(
            f"Expect actions as integers of shape ({num_envs},) in [0, {NUM_ACTIONS - 1}], "
            f"actually: dtype {array.dtype}, shape {array.shape}"
        )
    # Seen as unsigned integers of the same size, negative actions are huge: one
    # comparison and a count (a third of the time of two reductions) catch both ends.
    if np.count_nonzero(array.view(f"u{array.itemsize}") >= NUM_ACTIONS):
        raise ValueError(
            f"Expect actions in [0, {NUM_ACTIONS - 1}] (all {NUM_ACTIONS} joystick actions), "
            f"actually: {array.tolist()}"
        )
    return array


def per_row_seeds(seed: ResetSeed, count: int) -> list[int | None]:
    """A vector reset's ``seed`` as one seed (or None) per row reset: an int gives
    ``seed + i``, as Gymnasium's vector envs do."""
    if seed is None:
        return [None] * count
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        if seed < 0:
            raise ValueError(f"Expect a non-negative seed, actually: {seed}")
        return [int(seed) + i for i in range(count)]
    seeds = np.asarray(seed)
    if seeds.shape != (count,) or seeds.dtype.kind not in "iu" or (seeds < 0).any():
        raise ValueError(
            f"Expect `seed` to be a non-negative int or one per sub-env reset ({count}), "
            f"actually: {seed!r}"
        )
    return seeds.tolist()
