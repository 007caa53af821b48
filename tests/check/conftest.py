"""saber check of the named setups (scripts/docs/atari_setups.py), each run once per session:
test_setups judges their verdicts, test_stacks the values they measured (a check costs
8-10 s of emulation, and both read the same result)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from saber.check import CheckResult, check
from tests.script_modules import load_script

ROOT = Path(__file__).resolve().parents[2]


SETUPS = load_script("atari_setups", ROOT / "scripts" / "docs" / "atari_setups.py")


@pytest.fixture(scope="session")
def setup_check() -> Callable[[str], CheckResult]:
    """``setup_check(name)``: the result of ``check(SETUPS.SETUPS[name], target=name)``."""
    results: dict[str, CheckResult] = {}

    def result(name: str) -> CheckResult:
        if name not in results:
            results[name] = check(SETUPS.SETUPS[name], target=name)
        return results[name]

    return result
