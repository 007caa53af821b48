"""The verdict: unknown is never a pass; the exit code says which way it went."""

from __future__ import annotations

import pytest

from saber.check import CheckResult, RuleResult, Status
from saber.check.gate import require_saber, require_saber_env
from saber.check.table import format_table, markdown_comparison
from saber.errors import ProtocolError
from tests.check import stacks


def rule(name: str, status: Status) -> RuleResult:
    return RuleResult(name, "4 frames per step", "x", status, "why")


@pytest.mark.parametrize(
    ("states", "passed", "code"),
    [
        ((Status.PASS, Status.PASS), True, 0),
        ((Status.PASS, Status.UNKNOWN), False, 2),
        ((Status.UNKNOWN, Status.FAIL), False, 1),
        ((), False, 2),
    ],
)
def test_only_all_pass_passes(states: tuple[Status, ...], passed: bool, code: int) -> None:
    result = CheckResult("env", tuple(rule(f"r{i}", s) for i, s in enumerate(states)))
    assert result.passed is passed and result.exit_code == code


def test_table_and_json_carry_every_field() -> None:
    result = CheckResult("env", (rule("frame_skip", Status.FAIL),), 0.5)
    assert result.to_dict()["rules"] == [
        {
            "rule": "frame_skip",
            "saber": "4 frames per step",
            "measured": "x",
            "status": "fail",
            "evidence": "why",
        }
    ]
    assert "frame_skip  FAIL" in format_table(result)
    table = markdown_comparison([("A", result), ("B", result)])
    assert table.splitlines()[2] == "| `frame_skip` | 4 frames per step | **fail**: x | **fail**: x |"


def test_the_eval_gate_refuses_a_clipper_above_saber_and_accepts_saber() -> None:
    with pytest.raises(ProtocolError, match=r"raw_rewards +FAIL[\s\S]*--allow-non-saber"):
        require_saber(stacks.saber_with_clipping, "clipped")
    require_saber_env("pong", {"clip_rewards": True})  # the harness scores info["saber"]
