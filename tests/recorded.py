"""Run directories played once per session and shared by the tests that only read them
or copy them (``saber replay``, ``saber export``, ``saber repair``, the dataset readers,
the run directory's integrity)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness.helpers import evaluate_short


@pytest.fixture(scope="session")
def recorded_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Random play of 2 Breakout episodes (a 400-frame stuck timeout), replays recorded."""
    out = tmp_path_factory.mktemp("dataset") / "run"
    evaluate_short(out, 2, run="seed-0")
    return out


@pytest.fixture(scope="session")
def clean_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run: random play of 3 Breakout episodes (a 400-frame stuck timeout)."""
    out = tmp_path_factory.mktemp("clean") / "run"
    evaluate_short(out, 3)
    return out
