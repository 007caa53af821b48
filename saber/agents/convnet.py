"""A convolutional actor in numpy: its policy file and its inference, no PyTorch or JAX.

docs/trained-agent.md ("The policy file") gives the network, the file's arrays and how
inference runs.
"""

from __future__ import annotations

import json
import zipfile
import zlib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from saber.agents.generators import PerEpisodeGenerators
from saber.errors import PolicyFileError, shown
from saber.protocol.settings import NUM_ACTIONS
from saber.rundir.durable import writing_atomically

FORMAT = "saber/conv-actor/1"
# A file with int8 weights (write_policy_file(dtype=np.int8)): a saber that reads only
# FORMAT refuses it in one line, where it would read the int8 values as weights.
QUANTIZED_FORMAT = "saber/conv-actor/2"
# int8 in a quantized file: the dense hidden layer, 94% of the parameters of the shipped
# networks; int8 convolutions would move the policy several times more for a few percent
# fewer bytes (docs/trained-agent.md, "The policy file").
QUANTIZED_LAYERS = ("fc",)
# (layer, kernel size, stride); the dense layers have no kernel.
CONVOLUTIONS = (("conv1", 8, 4), ("conv2", 4, 2), ("conv3", 3, 1))
LAYERS = ("conv1", "conv2", "conv3", "fc", "policy")
OBSERVATION_SHAPE = (4, 84, 84)  # SABER's stacked frames


def write_policy_file(
    path: str | Path,
    layers: dict[str, np.ndarray],
    provenance: dict[str, Any],
    dtype: type[np.floating] = np.float32,
) -> Path:
    """Write ``layers`` (``"conv1.weight"``: array, ...) and ``provenance``.

    ``dtype``: how the weights are stored, read back as float32 by inference: float32;
    float16 (half the bytes); or int8 (about a quarter of float32's bytes: the weights of
    :data:`QUANTIZED_LAYERS` in int8, each output unit's row with its own float32 scale,
    the largest magnitude to 127; everything else float16). Written aside, fsynced and
    renamed (:func:`saber.rundir.durable.writing_atomically`): whole or absent.
    """
    if dtype not in (np.float32, np.float16, np.int8):
        raise ValueError(f"Expect dtype float32, float16 or int8, actually: {dtype}")
    path = Path(path)
    stored = np.float16 if dtype is np.int8 else dtype
    arrays = {name: np.asarray(layers[name], dtype=stored) for name in _array_names()}
    if dtype is np.int8:
        for layer in QUANTIZED_LAYERS:
            name = f"{layer}.weight"
            arrays[name], arrays[f"{name}_scale"] = _quantized(np.asarray(layers[name]))
    with writing_atomically(path) as temporary, temporary.open("wb") as handle:
        np.savez_compressed(
            handle,
            **arrays,
            format=np.array(QUANTIZED_FORMAT if dtype is np.int8 else FORMAT),
            provenance=np.array(json.dumps(provenance, sort_keys=True)),
        )
    return path


def _quantized(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 rows and one float32 scale per row (output unit): ``weight ~ rows * scale``."""
    rows = weight.reshape(len(weight), -1).astype(np.float32)
    scale = np.abs(rows).max(axis=1) / np.float32(127.0)
    scale[scale == 0] = 1.0  # a row of zeros stays zeros
    quantized = np.clip(np.rint(rows / scale[:, None]), -127, 127).astype(np.int8)
    return quantized.reshape(weight.shape), scale


def _array_names() -> list[str]:
    return [f"{layer}.{kind}" for layer in LAYERS for kind in ("weight", "bias")]


@dataclass(frozen=True)
class ConvActor:
    """The network's float32 arrays, checked, ready for :meth:`logits`.

    Attributes:
        layers: ``{"conv1.weight": ..., ...}`` in PyTorch's layouts.
        provenance: where the weights came from (free-form JSON data).
    """

    layers: dict[str, np.ndarray]
    provenance: dict[str, Any]

    @property
    def num_actions(self) -> int:
        return int(self.layers["policy.bias"].shape[0])

    def logits(self, observations: np.ndarray) -> np.ndarray:
        """Action logits, float32 (n, actions), of ``uint8`` observations (n, 4, 84, 84)."""
        x = np.ascontiguousarray(np.asarray(observations).transpose(0, 2, 3, 1))  # NHWC
        for index, (name, size, stride) in enumerate(CONVOLUTIONS):
            weight = self._matrices[name]
            # The [0, 1] scaling of the uint8 input is folded into the first weights.
            x = _conv_relu(
                x if index else x.astype(np.float32),
                weight,
                self.layers[f"{name}.bias"],
                size,
                stride,
            )
        hidden = x.reshape(len(x), -1) @ self._matrices["fc"] + self.layers["fc.bias"]
        np.maximum(hidden, 0.0, out=hidden)
        return hidden @ self._matrices["policy"] + self.layers["policy.bias"]

    @cached_property
    def _matrices(self) -> dict[str, np.ndarray]:
        return _matrices(self.layers)


def _matrices(layers: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Each layer as the right-hand matrix of one product over channels-last windows."""
    matrices = {}
    for index, (name, _size, _stride) in enumerate(CONVOLUTIONS):
        weight = layers[f"{name}.weight"]  # (out, in, kh, kw)
        if index == 0:
            weight = weight / np.float32(255.0)
        # Windows come as (in, kh, kw) per output pixel: match that order.
        matrices[name] = np.ascontiguousarray(weight.reshape(len(weight), -1).T)
    channels = layers["conv3.weight"].shape[0]
    fc = layers["fc.weight"]  # (hidden, C*H*W) in PyTorch's (C, H, W) order
    side = _output_sides()[-1]
    fc = fc.reshape(len(fc), channels, side, side).transpose(0, 2, 3, 1).reshape(len(fc), -1)
    matrices["fc"] = np.ascontiguousarray(fc.T)
    matrices["policy"] = np.ascontiguousarray(layers["policy.weight"].T)
    return matrices


def _conv_relu(
    x: np.ndarray, matrix: np.ndarray, bias: np.ndarray, size: int, stride: int
) -> np.ndarray:
    """ReLU(convolution) of NHWC ``x`` (no padding): (n, h', w', out)."""
    windows = sliding_window_view(x, (size, size), axis=(1, 2))[:, ::stride, ::stride]
    n, height, width = windows.shape[:3]
    columns = windows.reshape(n * height * width, -1)  # (in, kh, kw) per row: one copy
    out = columns @ matrix
    out += bias
    np.maximum(out, 0.0, out=out)
    return out.reshape(n, height, width, -1)


def read_policy_file(path: str | Path) -> ConvActor:
    """The network in ``path``, checked; :class:`PolicyFileError` names what is wrong."""
    path = Path(path)
    where = shown(path)
    try:
        with np.load(path, allow_pickle=False) as archive:
            contents = {name: archive[name] for name in archive.files}
    except FileNotFoundError:
        raise PolicyFileError(f"{where}: no such policy file") from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as error:
        raise PolicyFileError(
            f"{where}: not a readable policy file (a numpy .npz): {type(error).__name__}: {error}"
        ) from None
    found = str(contents.get("format", "none"))
    if found not in (FORMAT, QUANTIZED_FORMAT):
        raise PolicyFileError(
            f"{where}: expect a {FORMAT} policy file, actually format {found!r} (this saber "
            f"reads {FORMAT} and {QUANTIZED_FORMAT})"
        )
    missing = [name for name in _array_names() if name not in contents]
    if missing:
        raise PolicyFileError(f"{where}: missing arrays {', '.join(missing)}")
    not_numbers = [name for name in _array_names() if contents[name].dtype.kind not in "biuf"]
    if not_numbers:
        name = not_numbers[0]
        raise PolicyFileError(
            f"{where}: {name} holds {contents[name].dtype} values, not numbers; write the "
            "file with write_policy_file"
        )
    layers = {name: contents[name].astype(np.float32, copy=False) for name in _array_names()}
    if found == QUANTIZED_FORMAT:
        for layer in QUANTIZED_LAYERS:
            name = f"{layer}.weight"
            layers[name] = _dequantized(where, name, contents)
    _check_shapes(where, layers)
    try:
        provenance = json.loads(str(contents.get("provenance", "{}")))
    except (ValueError, RecursionError) as error:  # ValueError: JSONDecodeError, huge ints
        raise PolicyFileError(f"{where}: its provenance is not JSON: {error}") from None
    return ConvActor(layers, provenance)


def _dequantized(where: str, name: str, contents: dict[str, np.ndarray]) -> np.ndarray:
    """The float32 weights of an int8 layer: its rows times their scales, both checked."""
    weight, scale = contents[name], contents.get(f"{name}_scale")
    if weight.dtype != np.int8 or weight.ndim < 2:
        raise PolicyFileError(
            f"{where}: {name} holds {weight.dtype} values {weight.shape}; a {QUANTIZED_FORMAT} "
            "file holds it as int8 rows; write the file with write_policy_file"
        )
    if scale is None or scale.dtype != np.float32 or scale.shape != weight.shape[:1]:
        found = "none" if scale is None else f"{scale.dtype} {scale.shape}"
        raise PolicyFileError(
            f"{where}: {name}_scale is {found}; expect float32 ({len(weight)},), one scale a "
            "row; write the file with write_policy_file"
        )
    if not np.all(np.isfinite(scale) & (scale > 0)):
        raise PolicyFileError(f"{where}: {name}_scale holds values that are not positive numbers")
    rows = weight.reshape(len(weight), -1).astype(np.float32) * scale[:, None]
    return rows.reshape(weight.shape)


def _output_sides() -> list[int]:
    """Pixels per side after each convolution: 84 -> 20 -> 9 -> 7."""
    sides, side = [], OBSERVATION_SHAPE[1]
    for _name, size, stride in CONVOLUTIONS:
        side = (side - size) // stride + 1
        sides.append(side)
    return sides


def _check_shapes(where: str, layers: dict[str, np.ndarray]) -> None:
    """The layers chain from (4, 84, 84) to 18 logits; raise naming the first that does not."""
    channels = OBSERVATION_SHAPE[0]
    for name, size, _stride in CONVOLUTIONS:
        weight, bias = layers[f"{name}.weight"], layers[f"{name}.bias"]
        if (
            weight.ndim != 4
            or weight.shape[1:] != (channels, size, size)
            or bias.shape != weight.shape[:1]
        ):
            raise PolicyFileError(
                f"{where}: {name} has weights {weight.shape} and bias {bias.shape}; expect "
                f"(out, {channels}, {size}, {size}) and (out,)"
            )
        channels = weight.shape[0]
    side = _output_sides()[-1]
    inputs = channels * side * side
    for name in ("fc", "policy"):
        weight, bias = layers[f"{name}.weight"], layers[f"{name}.bias"]
        if weight.ndim != 2 or weight.shape[1] != inputs or bias.shape != weight.shape[:1]:
            raise PolicyFileError(
                f"{where}: {name} has weights {weight.shape} and bias {bias.shape}; expect "
                f"(out, {inputs}) and (out,)"
            )
        inputs = weight.shape[0]
    if inputs != NUM_ACTIONS:
        raise PolicyFileError(f"{where}: {inputs} logits; SABER plays all {NUM_ACTIONS} actions")
    for name, array in layers.items():
        if not np.all(np.isfinite(array)):
            raise PolicyFileError(f"{where}: {name} holds NaN or infinite values")


class ConvActorPolicy(PerEpisodeGenerators):
    """A harness policy: actions sampled from the actor's softmax, one generator per episode.

    Sampling (not the most likely action) is how the policy was trained and how its
    training curve was scored; the episode's seed fixes the draws, so a score is the same
    on any number of workers. ``greedy=True`` plays the most likely action instead.

    Picklable by path: each worker process reads the file itself.

    Args:
        path: a policy file (:func:`write_policy_file`).
        greedy: play the arg-max action instead of sampling.
    """

    stream = 0xC0A7  # mixed into each episode seed (see PerEpisodeGenerators)

    def __init__(self, path: str | Path, greedy: bool = False) -> None:
        super().__init__()
        self.path = Path(path)
        self.greedy = bool(greedy)
        self.actor = read_policy_file(self.path)

    def __getstate__(self) -> dict[str, Any]:
        return {"path": str(self.path), "greedy": self.greedy}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"], state["greedy"])  # type: ignore[misc]

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        logits = self.actor.logits(observations)
        if self.greedy:
            return logits.argmax(axis=1).astype(np.int64)
        shifted = np.exp(logits - logits.max(axis=1, keepdims=True), dtype=np.float64)
        cumulative = np.cumsum(shifted, axis=1)
        actions = np.empty(len(logits), dtype=np.int64)
        for row in range(len(logits)):
            draw = self.generator(row).random() * cumulative[row, -1]
            actions[row] = min(
                int(np.searchsorted(cumulative[row], draw, side="right")), NUM_ACTIONS - 1
            )
        return actions

    def __repr__(self) -> str:
        return f"ConvActorPolicy({str(self.path)!r}, greedy={self.greedy})"
