"""The Q-network of the JAX examples (the Nature DQN torso with LayerNorm, as PQN uses it),
in plain JAX, and its parameter files (docs/jax.md).

>>> import jax
>>> params = init_params(jax.random.PRNGKey(0))
>>> q = q_values(params, np.zeros((2, 4, 84, 84), dtype=np.uint8))
>>> q.shape, q.dtype, sum(int(np.prod(a.shape)) for a in jax.tree_util.tree_leaves(params))
((2, 18), dtype('float32'), 1694706)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from saber.errors import SaberError
from saber.protocol.settings import NUM_ACTIONS
from saber.rundir.durable import writing_atomically

# Names the architecture in parameter files, so a file of another network is refused.
ARCHITECTURE = "nature-cnn-layernorm-v1"
# (name, output channels, kernel side, stride) of the convolutions, input 4 x 84 x 84.
_CONVOLUTIONS = (("conv1", 32, 8, 4), ("conv2", 64, 4, 2), ("conv3", 64, 3, 1))
_HIDDEN = 512  # units of the dense layer
_FLAT = 7 * 7 * 64  # conv3's output: 84 -> 20 -> 9 -> 7 pixels a side
_LAYER_NORM_EPSILON = 1e-6  # flax.linen.LayerNorm's default, which purejaxql uses


def _layer(key: jax.Array, shape: tuple[int, ...], normalized: bool) -> dict[str, jax.Array]:
    # He-normal weights (truncated normal, variance 2 / fan_in, fan_in read from the
    # shape: all axes but the last) suit ReLU layers.
    layer = {
        "w": jax.nn.initializers.he_normal()(key, shape, jnp.float32),
        "b": jnp.zeros(shape[-1], jnp.float32),
    }
    if normalized:
        layer["scale"] = jnp.ones(shape[-1], jnp.float32)
        layer["offset"] = jnp.zeros(shape[-1], jnp.float32)
    return layer


def init_params(key: jax.Array, num_actions: int = NUM_ACTIONS) -> dict[str, dict[str, Any]]:
    """Fresh parameters: ``{layer: {"w", "b"[, "scale", "offset"]}}`` (float32).

    Args:
        key: a ``jax.random`` key.
        num_actions: outputs (SABER: all 18 actions).
    """
    keys = jax.random.split(key, len(_CONVOLUTIONS) + 2)
    params: dict[str, dict[str, Any]] = {}
    channels = 4  # the frame stack
    for index, (name, out, side, _) in enumerate(_CONVOLUTIONS):
        # HWIO kernels: what lax.conv_general_dilated takes with NHWC images.
        shape = (side, side, channels, out)
        params[name] = _layer(keys[index], shape, normalized=True)
        channels = out
    params["dense"] = _layer(keys[-2], (_FLAT, _HIDDEN), normalized=True)
    params["head"] = _layer(keys[-1], (_HIDDEN, num_actions), normalized=False)
    return params


def _normalize(x: jax.Array, layer: Mapping[str, jax.Array]) -> jax.Array:
    # Over the features (channels) of each pixel, as flax's LayerNorm on NHWC.
    mean = x.mean(axis=-1, keepdims=True)
    variance = jnp.square(x - mean).mean(axis=-1, keepdims=True)
    x = (x - mean) * jax.lax.rsqrt(variance + _LAYER_NORM_EPSILON)
    return x * layer["scale"] + layer["offset"]


def q_values(params: Mapping[str, Mapping[str, jax.Array]], observations: Any) -> jax.Array:
    """Q-values ``float32 (n, num_actions)`` of observations ``uint8 (n, 4, 84, 84)``."""
    # Channels last: the layout XLA's CPU and GPU convolutions are fastest with.
    x = jnp.transpose(jnp.asarray(observations), (0, 2, 3, 1)).astype(jnp.float32) / 255.0
    for name, _, _, stride in _CONVOLUTIONS:
        layer = params[name]
        x = jax.lax.conv_general_dilated(
            x, layer["w"], (stride, stride), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC")
        )
        x = jax.nn.relu(_normalize(x + layer["b"], layer))
    x = x.reshape(x.shape[0], -1)
    x = jax.nn.relu(_normalize(x @ params["dense"]["w"] + params["dense"]["b"], params["dense"]))
    return x @ params["head"]["w"] + params["head"]["b"]


def save_params(path: str | Path, params: Mapping[str, Mapping[str, Any]], **metadata: Any) -> Path:
    """Write parameters to an ``.npz`` file (replaced atomically), with JSON ``metadata``.

    Args:
        path: the file (``.npz``).
        params: from :func:`init_params` or a training.
        **metadata: JSON-ready facts kept beside the weights (game, frames, seed...).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {
        f"{layer}/{name}": np.asarray(value)
        for layer, values in params.items()
        for name, value in values.items()
    }
    header = {"architecture": ARCHITECTURE, **metadata}
    # Atomic: a training killed while saving leaves the previous parameters whole. A file
    # object: np.savez would append ".npz" to a name that lacks it.
    with writing_atomically(path) as temporary, temporary.open("wb") as handle:
        np.savez(handle, __header__=np.array(json.dumps(header)), **arrays)
    return path


def load_params(path: str | Path) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, Any]]:
    """Parameters and metadata from :func:`save_params`' file.

    Raises:
        SaberError: no such file, or not a parameter file of this network.
    """
    path = Path(path)
    if not path.is_file():
        raise SaberError(f"{path}: no such parameter file (examples/pqn_jax.py writes params.npz)")
    try:
        with np.load(path, allow_pickle=False) as data:
            header = json.loads(str(data["__header__"]))
            arrays = {key: data[key] for key in data.files if key != "__header__"}
    except (OSError, ValueError, KeyError) as error:
        raise SaberError(f"{path}: not a saber.jax parameter file ({error})") from None
    if header.get("architecture") != ARCHITECTURE:
        raise SaberError(
            f"{path}: parameters of {header.get('architecture')!r}, expected {ARCHITECTURE!r}"
        )
    params: dict[str, dict[str, np.ndarray]] = {}
    for key, value in arrays.items():
        layer, _, name = key.partition("/")
        params.setdefault(layer, {})[name] = value
    return params, header
