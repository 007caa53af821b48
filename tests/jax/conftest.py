"""Shared by the saber.jax tests (marker ``jax``, deselected by default).

Whoever selects them (``-m jax``, as CI's jax stage does) wants them run, so a missing
JAX is a failure with the install command, never a skip.
"""

from __future__ import annotations

import importlib.util

import pytest


@pytest.fixture(autouse=True)
def jax_installed() -> None:
    """Fail, with the install command, where JAX is missing."""
    if importlib.util.find_spec("jax") is None:
        pytest.fail('-m jax needs JAX: pip install ".[test,jax]"')
