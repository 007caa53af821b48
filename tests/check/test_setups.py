"""saber check on the named real-world setups gives, rule by rule, the verdicts their
code calls for: ``EXPECTED`` in scripts/docs/atari_setups.py, the table docs/atari-setups.md
holds. Setups that need an extra carry its marker (sb3: SB3's and CleanRL's; envpool)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable

import pytest

from saber.check import CheckResult
from tests.check.conftest import ROOT, SETUPS

MARKS = {"stable-baselines3": pytest.mark.sb3, "envpool": pytest.mark.envpool}


def test_the_page_holds_the_expected_table() -> None:
    page = (ROOT / "docs" / "atari-setups.md").read_text(encoding="utf-8")
    assert SETUPS.expected_table() in page
    assert set(SETUPS.EXPECTED) == set(SETUPS.SETUPS)
    for verdicts in SETUPS.EXPECTED.values():
        assert list(verdicts) == list(SETUPS.EXPECTED["SABER"])  # every rule, in order


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=[MARKS[SETUPS.NEEDS[name]]] if name in SETUPS.NEEDS else [])
        for name in SETUPS.SETUPS
    ],
)
def test_saber_check_gives_the_expected_verdicts(
    name: str, setup_check: Callable[[str], CheckResult]
) -> None:
    need = SETUPS.NEEDS.get(name)
    if need and importlib.util.find_spec(need.replace("-", "_")) is None:
        pytest.fail(f"-m {MARKS[need].name} needs {need}: pip install {need}")
    result = setup_check(name)
    measured = {rule.rule: rule.status.value for rule in result.rules}
    expected = {rule: status for rule, (status, _) in SETUPS.EXPECTED[name].items()}
    wrong = {
        rule: (expected[rule], measured[rule], next(r for r in result.rules if r.rule == rule))
        for rule in expected
        if measured[rule] != expected[rule]
    }
    assert not wrong, wrong
    assert result.exit_code == (0 if name == "SABER" else 1)
