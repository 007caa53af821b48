"""Collection rules for the whole checkout (tests/ and the doctests of saber/).

``saber/jax`` needs the ``jax`` extra: its modules, doctests included, are marked ``jax``
(deselected by default, run by CI's jax stage with ``-m jax``) and are not even imported
where JAX is not installed, so the default suite runs without the extra.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_JAX_PACKAGE = Path(__file__).resolve().parent / "saber" / "jax"

collect_ignore_glob = [] if importlib.util.find_spec("jax") else ["saber/jax/*"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _JAX_PACKAGE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.jax)
