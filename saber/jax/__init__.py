"""SABER environments for JAX: ``saber.jax.make("Pong", num_envs=8)``, jit-compiled.

Emulation runs in ale-py's C++ vector engine, called through its XLA FFI targets (CPU and
GPU), so ``reset`` and ``step`` work inside ``jax.jit`` and ``jax.lax.scan``; the SABER
rules (:mod:`saber.envs.rules`) and OpenCV's bilinear resize (:mod:`saber.envs.bilinear`)
run as ``jax.numpy``. Step for step, the results equal ``gymnasium.make_vec("SABER/<Game>")``
for the same seeds and actions (tested). See ``docs/jax.md``.

Needs the ``jax`` extra: ``pip install "saber-ale[jax]"``.
"""

from __future__ import annotations

try:
    import jax  # noqa: F401
except ImportError as error:  # pragma: no cover - depends on the installation
    raise ImportError(
        'saber.jax needs JAX, which saber does not install by default: pip install "saber-ale[jax]"'
    ) from error

from saber.jax.env import EnvState, SaberJaxEnv, make, records

__all__ = ["EnvState", "SaberJaxEnv", "make", "records"]
