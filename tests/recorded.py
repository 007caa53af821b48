"""A run directory with replays, played once per session and shared by the tests that
only read it (``saber replay``, ``saber export``, the dataset readers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from saber.harness import Inline, evaluate
from tests.harness.helpers import short_env


@pytest.fixture(scope="session")
def recorded_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Random play of 2 Breakout episodes (a 400-frame stuck timeout), replays recorded."""
    out = tmp_path_factory.mktemp("dataset") / "run"
    evaluate("random", "breakout", 2, out=out, backend=Inline(), env_options=short_env(), progress=False, run="seed-0")  # fmt: skip
    return out
