"""Honest runs for the forgery suite: real random play of Breakout through ale-py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

EPISODES = 4


def _evaluate(out: Path, episodes: int, settings: dict | None = None) -> Path:
    from saber.harness import EnvOptions, Inline, evaluate

    options = EnvOptions(settings, allow_non_saber=True) if settings else None
    evaluate("random", "breakout", episodes, out=out, backend=Inline(), progress=False,
             **({"env_options": options} if options else {}))  # fmt: skip
    return out


@pytest.fixture(scope="session")
def honest_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """4 episodes of Breakout under SABER's settings, replays recorded."""
    return _evaluate(tmp_path_factory.mktemp("honest") / "run", EPISODES)


@pytest.fixture(scope="session")
def sticky_off_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """3 episodes of Breakout played without sticky actions: not SABER, and run.json says so."""
    out = tmp_path_factory.mktemp("sticky") / "run"
    return _evaluate(out, 3, {"repeat_action_probability": 0.0})


@pytest.fixture
def run(honest_run: Path, tmp_path: Path) -> Path:
    """A copy of the honest run to forge."""
    return Path(shutil.copytree(honest_run, tmp_path / "run", symlinks=True))
