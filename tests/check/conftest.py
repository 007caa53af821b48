"""saber check of the named setups (scripts/atari_setups.py), each run once per session:
test_setups judges their verdicts, test_stacks the values they measured (a check costs
8-10 s of emulation, and both read the same result)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from saber.check import CheckResult, check

ROOT = Path(__file__).resolve().parents[2]


def load_setups() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "atari_setups", ROOT / "scripts" / "atari_setups.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("atari_setups", module)
    spec.loader.exec_module(module)
    return module


SETUPS = load_setups()


@pytest.fixture(scope="session")
def setup_check() -> Callable[[str], CheckResult]:
    """``setup_check(name)``: the result of ``check(SETUPS.SETUPS[name], target=name)``."""
    results: dict[str, CheckResult] = {}

    def result(name: str) -> CheckResult:
        if name not in results:
            results[name] = check(SETUPS.SETUPS[name], target=name)
        return results[name]

    return result
