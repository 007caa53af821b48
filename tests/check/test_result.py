"""The verdict: unknown is never a pass; the exit code says which way it went."""

from __future__ import annotations

import pytest

from saber.check import CheckResult, RuleResult, Status
from saber.check.gate import require_saber, require_saber_env
from saber.check.table import format_table, markdown_comparison
from saber.errors import ExitCode, ProtocolError
from tests.check import stacks


def rule(name: str, status: Status) -> RuleResult:
    return RuleResult(name, "4 frames per step", "x", status, "why")


@pytest.mark.parametrize(
    ("states", "passed", "code"),
    [
        ((Status.PASS, Status.PASS), True, ExitCode.OK),
        ((Status.PASS, Status.UNKNOWN), False, ExitCode.UNFINISHED),
        ((Status.UNKNOWN, Status.FAIL), False, ExitCode.FAILED),
        ((Status.PASS, Status.NOT_PROBED), False, ExitCode.UNFINISHED),
        ((Status.FAIL, Status.NOT_PROBED), False, ExitCode.FAILED),
        ((), False, ExitCode.UNFINISHED),
    ],
)
def test_only_all_pass_passes(states: tuple[Status, ...], passed: bool, code: ExitCode) -> None:
    result = CheckResult("env", tuple(rule(f"r{i}", s) for i, s in enumerate(states)))
    assert result.passed is passed and result.exit_code is code


def test_a_rule_not_probed_is_never_a_pass_and_is_named() -> None:
    result = CheckResult("env", (rule("a", Status.PASS), rule("b", Status.NOT_PROBED)))
    assert result.probed_passed and not result.passed and result.not_probed() == ["b"]
    assert "env: not shown to be SABER: every rule probed passes; not probed: b" in (
        format_table(result)
    )
    assert "b     not probed" in format_table(result)
    assert result.to_dict()["not_probed"] == ["b"]
    unknown = CheckResult("env", (rule("a", Status.UNKNOWN), rule("b", Status.NOT_PROBED)))
    assert not unknown.probed_passed and unknown.exit_code is ExitCode.UNFINISHED


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
    assert (
        table.splitlines()[2] == "| `frame_skip` | 4 frames per step | **fail**: x | **fail**: x |"
    )


def test_the_eval_gate_refuses_a_time_limit_above_saber_and_accepts_clipping() -> None:
    with pytest.raises(ProtocolError, match=r"frame_cap +FAIL[\s\S]*--allow-non-saber"):
        require_saber(stacks.saber_with_time_limit, "time limit")
    # The agent's rewards clipped, the score recorded raw: SABER (docs/protocol.md).
    assert require_saber(stacks.saber_with_clipping, "clipped").probed_passed
    require_saber_env({"clip_rewards": True})


def test_repeat_probability_is_the_binomial_likelihood_when_each_step_is_exact() -> None:
    """Steps with one possible repeat count are Bernoulli draws: MLE = repeats / draws, and
    the interval's ends are where the binomial log-likelihood drops by chi2(1, 0.99) / 2."""
    from collections import Counter

    import numpy as np
    from scipy.optimize import brentq
    from scipy.stats import chi2

    from saber.check.probes.actions import repeat_probability

    exact = {j: tuple(i == j for i in range(5)) for j in range(5)}
    masks = Counter({exact[0]: 300, exact[1]: 80, exact[2]: 15, exact[4]: 1})
    repeats = 80 + 2 * 15 + 4  # j repeats per step
    draws = repeats + 300 + 80 + 15  # plus one non-repeat per step with j < 4
    estimate, low, high = repeat_probability(masks)
    assert estimate == pytest.approx(repeats / draws, abs=2.5e-4)  # the grid's step

    def drop(p: float) -> float:
        def loglik(q: float) -> float:
            return repeats * np.log(q) + (draws - repeats) * np.log(1 - q)

        return loglik(repeats / draws) - loglik(p) - chi2.ppf(0.99, 1) / 2

    assert low == pytest.approx(brentq(drop, 1e-6, repeats / draws), abs=2.5e-4)
    assert high == pytest.approx(brentq(drop, repeats / draws, 1 - 1e-6), abs=2.5e-4)
    # A step whose RAM allows j = 0 or 1 has probability 1 - p**2: it is counted so.
    low_only = repeat_probability(Counter({(True, True, False, False, False): 100}))
    assert low_only[0] == 0.0
