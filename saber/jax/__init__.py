"""SABER environments for JAX: ``saber.jax.make("Pong", num_envs=8)``, jit-compiled.

ale-py's C++ vector engine through its XLA FFI targets, the SABER rules and the resize in
``jax.numpy``; step for step the results of ``gymnasium.make_vec``. Needs the ``jax`` extra;
docs/jax.md describes it.
"""

from __future__ import annotations

import re

try:
    import jax
except ImportError as error:  # pragma: no cover - depends on the installation
    raise ImportError(
        'saber.jax needs JAX, which saber does not install by default: pip install "saber-ale[jax]"'
    ) from error

# ale-py 0.12.1's XLA handlers declare FFI API version 0.3, which JAX 0.9.1 is the first
# to accept: 0.4.38 has no `jax.ffi`, and 0.8.3 and 0.9.0 reject the handlers' API
# version at the first call (CI runs the floor: .ci/run).
JAX_FLOOR = (0, 9, 1)


def _release(version: str) -> tuple[int, ...]:
    """``"0.10.2"`` -> ``(0, 10, 2)``; a pre-release or local tail is left out."""
    numbers = []
    for part in version.split(".")[:3]:
        digits = re.match(r"\d+", part)
        if digits is None:
            break
        numbers.append(int(digits.group()))
        if digits.end() < len(part):  # "0rc1": the release ends here
            break
    return tuple(numbers)


if _release(jax.__version__) < JAX_FLOOR:
    raise ImportError(
        f"saber.jax needs JAX >= {'.'.join(map(str, JAX_FLOOR))} (ale-py 0.12.1's XLA "
        f"handlers use its FFI API), actually: jax {jax.__version__}. Upgrade: "
        'pip install -U "saber-ale[jax]" (on a GPU, pip install -U "jax[cuda12]").'
    )

# After the version check: with an older JAX, that ImportError is what the user sees.
from saber.jax.env import EnvState, SaberJaxEnv, records  # noqa: E402
from saber.jax.factory import make  # noqa: E402

__all__ = ["EnvState", "SaberJaxEnv", "make", "records"]
