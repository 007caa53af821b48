"""Shared by the client tests: marked tests fail (never skip) without their libraries.

Library-marked tests (sb3, torchrl, rllib) are deselected by default; whoever selects
them (``-m sb3``, as CI's stages do) wants them run, so a missing library is a failure
with the install command, not a skip.
"""

from __future__ import annotations

import importlib.util

import pytest


def _require(modules: tuple[str, ...], extra: str) -> None:
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if missing:
        pytest.fail(
            f"-m {extra} needs {' and '.join(missing)}: pip install torch==<a CPU or CUDA "
            f'build> then pip install ".[test,{extra}]"'
        )


@pytest.fixture
def sb3_installed() -> None:
    """Fail, with the install command, where torch or stable-baselines3 is missing."""
    _require(("torch", "stable_baselines3", "tensorboard"), "sb3")


@pytest.fixture
def zoo_installed() -> None:
    """Fail, with the install command, where RL Zoo or SB3-Contrib is missing."""
    _require(("torch", "stable_baselines3", "rl_zoo3", "sb3_contrib", "requests"), "zoo")


@pytest.fixture
def torchrl_installed() -> None:
    """Fail, with the install command, where torch or TorchRL is missing."""
    _require(("torch", "torchrl", "tensordict"), "torchrl")


@pytest.fixture
def rllib_installed() -> None:
    """Fail, with the install command, where torch or Ray RLlib is missing."""
    _require(("torch", "ray"), "rllib")
