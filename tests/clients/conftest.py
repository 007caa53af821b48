"""Shared by the client tests: sb3-marked tests fail (never skip) without their libraries."""

from __future__ import annotations

import importlib.util

import pytest


@pytest.fixture
def sb3_installed() -> None:
    """Fail, with the install command, where torch or stable-baselines3 is missing.

    sb3-marked tests are deselected by default; whoever selects them (``-m sb3``, as CI's
    second stage does) wants them run, so a missing library is a failure, not a skip.
    """
    missing = [
        name for name in ("torch", "stable_baselines3") if importlib.util.find_spec(name) is None
    ]
    if missing:
        pytest.fail(
            f"-m sb3 needs {' and '.join(missing)}: pip install torch==<a CPU or CUDA build> "
            f'then pip install ".[test,sb3]"'
        )
