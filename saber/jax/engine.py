"""ale-py's C++ vector engine as two jittable JAX functions (its XLA FFI targets).

:func:`reload_rows` resets the rows of a traced mask one FFI call each inside a
``lax.while_loop``, since ale-py's own ``xla()`` reset picks rows with a value-dependent
shape and cannot be traced (docs/jax.md).
"""

from __future__ import annotations

import ale_py
import jax
import jax.numpy as jnp

SCREEN_SHAPE = (210, 160)  # the engine's frames: the full screen, grayscale, max-pooled
_RESET = "saber_ale_vector_reset"  # own names: no clash with ale-py's own registration
_STEP = "saber_ale_vector_step"
_registered = False


def register_targets() -> None:
    """Register ale-py's FFI handlers with XLA (once per process), for CPU and, when
    ale-py was built with CUDA, GPU."""
    global _registered
    if _registered:
        return
    native = ale_py._ale_py
    jax.ffi.register_ffi_target(_RESET, native.VectorXLAReset(), platform="cpu")
    jax.ffi.register_ffi_target(_STEP, native.VectorXLAStep(), platform="cpu")
    if hasattr(native, "VectorXLAResetGPU"):
        jax.ffi.register_ffi_target(_RESET, native.VectorXLAResetGPU(), platform="CUDA")
        jax.ffi.register_ffi_target(_STEP, native.VectorXLAStepGPU(), platform="CUDA")
    _registered = True


def _rows(num_envs: int, dtype: jnp.dtype) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct((num_envs,), dtype)


def ffi_reset(
    handle: jax.Array, rows: jax.Array, seeds: jax.Array, num_envs: int
) -> tuple[jax.Array, jax.Array]:
    """Reset ``rows`` (int32 (k,)) with ALE ``seeds`` (int32 (k,); -1: no reload).

    Returns:
        The new handle, the frames of every row, ``uint8`` (num_envs, 210, 160), and the
        engine's episode frame counter of every row, ``int32`` (num_envs,): at a reset row,
        the frames of the game's starting actions that ALE plays at every reset (Name This
        Game: about 134; 0 in most games).
    """
    call = jax.ffi.ffi_call(
        _RESET,
        (
            jax.ShapeDtypeStruct((8,), jnp.uint8),
            jax.ShapeDtypeStruct((num_envs, 1, *SCREEN_SHAPE), jnp.uint8),
            *(_rows(num_envs, jnp.int32) for _ in range(4)),  # env ids, lives, frame numbers
        ),
        has_side_effect=True,
    )
    new_handle, obs, _, _, _, episode_frames = call(handle, rows, seeds)
    return new_handle, obs[:, 0], episode_frames


def ffi_step(
    handle: jax.Array, actions: jax.Array, num_envs: int
) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array, jax.Array]:
    """One agent step of every row (the engine first resets rows whose game ended).

    Returns:
        The new handle, frames ``uint8`` (n, 210, 160), rewards ``int32`` (n,) (points),
        game overs ``bool`` (n,), the engine's episode frame counter ``int32`` (n,) (from the
        row's reset, the game's starting actions included: see :func:`ffi_reset`).
    """
    call = jax.ffi.ffi_call(
        _STEP,
        (
            jax.ShapeDtypeStruct((8,), jnp.uint8),
            jax.ShapeDtypeStruct((num_envs, 1, *SCREEN_SHAPE), jnp.uint8),
            _rows(num_envs, jnp.int32),  # rewards
            _rows(num_envs, jnp.bool_),  # terminations (game over)
            _rows(num_envs, jnp.bool_),  # truncations (never: the engine's limit is off)
            *(_rows(num_envs, jnp.int32) for _ in range(4)),  # env ids, lives, frame numbers
        ),
        has_side_effect=True,
    )
    strength = jnp.ones(num_envs, dtype=jnp.float32)  # paddles at full strength, as make_vec
    new_handle, obs, rewards, game_over, _, _, _, _, episode_frames = call(
        handle, actions, strength
    )
    return new_handle, obs[:, 0], rewards, game_over, episode_frames


def reload_rows(
    handle: jax.Array,
    frames: jax.Array,
    start_frames: jax.Array,
    mask: jax.Array,
    seeds: jax.Array,
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Reset the rows of ``mask`` (bool (n,), traced) with ``seeds`` (int32 (n,)), one call each.

    The engine's reset (``EnvVectorizer::reset``) resets the rows given (a seed >= 0 first
    reloads the ROM) and returns every row, the others untouched, so after the loop's last
    call its observations are the current frames of all rows.

    Args:
        start_frames: ``int32`` (n,), the engine's episode frame counter at each row's
            episode start; a reset row's becomes its reset's (the starting actions' frames).

    Returns:
        The new handle, the current frames of all rows (``frames`` when none is reset) and
        ``start_frames`` updated at the reset rows.
    """

    num_envs = mask.shape[0]
    Carry = tuple[jax.Array, jax.Array, jax.Array, jax.Array]

    def remaining(carry: Carry) -> jax.Array:
        return carry[3].any()

    def reset_one(carry: Carry) -> Carry:
        handle, _, start_frames, todo = carry
        row = jnp.argmax(todo).astype(jnp.int32)
        handle, frames, counters = ffi_reset(handle, row[None], seeds[row][None], num_envs)
        return handle, frames, start_frames.at[row].set(counters[row]), todo.at[row].set(False)

    handle, frames, start_frames, _ = jax.lax.while_loop(
        remaining, reset_one, (handle, frames, start_frames, mask)
    )
    return handle, frames, start_frames
