"""Vector-env ``info`` dicts put together from parts: the one helper that the vector env
(its episode records, row by row), the multi-game env (each game's rows) and
``saber.envpool`` (each group's envs) share, so that their infos agree key by key and
dtype by dtype.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np


def place_rows(parts: Sequence[tuple[Any, Mapping[str, Any]]], rows: int) -> dict[str, np.ndarray]:
    """One dict of ``(rows, ...)`` arrays from ``parts``, each ``(index, values)``: the
    rows ``index`` selects (an int, a slice, an index array) get ``values[key]``.

    The keys and dtypes are those of the first part; a row no part gives holds 0 (``""``
    for text, kept as ``object``). ``parts`` must not be empty.

    Example:
        >>> info = place_rows([(0, {"score": 3.0, "end": "game_over"})], 2)
        >>> info["score"].tolist(), info["end"].tolist()
        ([3.0, 0.0], ['game_over', ''])
    """
    placed: dict[str, np.ndarray] = {}
    for key, value in parts[0][1].items():
        array = np.asarray(value)
        if array.dtype.kind in "OU":
            placed[key] = np.full(rows, "", dtype=object)
        else:
            shape = array.shape[1:] if not isinstance(parts[0][0], int) else array.shape
            placed[key] = np.zeros((rows, *shape), dtype=array.dtype)
    for index, values in parts:
        for key, value in values.items():
            placed[key][index] = value
    return placed
