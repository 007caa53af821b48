"""The typed result of ``saber check``: one :class:`RuleResult` per SABER rule.

Stdlib only, so that reading or printing a result never starts an emulator.

>>> rule = RuleResult("frame_skip", "4 frames", "4 frames", Status.PASS, "emulator counter")
>>> CheckResult("SABER/Pong", (rule,)).passed
True
>>> CheckResult("x", (RuleResult("frame_skip", "4", None, Status.UNKNOWN, "no emulator"),)).passed
False
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CheckResult", "RuleResult", "Status"]


class Status(str, enum.Enum):
    """The verdict on one rule. Unknown is never a pass."""

    PASS = "pass"
    FAIL = "fail"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class RuleResult:
    """One rule of the protocol, measured on a stack.

    Attributes:
        rule: the rule's key (``"sticky_actions"``, ``"frame_cap"``, ...).
        saber: SABER's value, as text with its unit.
        measured: what the probe measured, as text with its unit; None when nothing was.
        status: pass, fail or unknown.
        evidence: how it was measured, what was inferred rather than measured, or why
            the rule could not be measured.
    """

    rule: str
    saber: str
    measured: str | None
    status: Status
    evidence: str

    def to_dict(self) -> dict[str, Any]:
        """The rule as a JSON-ready dict."""
        return {
            "rule": self.rule,
            "saber": self.saber,
            "measured": self.measured,
            "status": self.status.value,
            "evidence": self.evidence,
        }


@dataclass(frozen=True)
class CheckResult:
    """Every rule probed on one target.

    Attributes:
        target: what was checked (an env id, ``module:factory``, or a description).
        rules: one result per rule, in the order of :data:`saber.check.probes.RULES`.
        seconds: wall time of the probe, in seconds.
    """

    target: str
    rules: tuple[RuleResult, ...]
    seconds: float = 0.0
    game: str | None = field(default=None)

    @property
    def passed(self) -> bool:
        """True only when every rule passed (an unknown rule is not a pass)."""
        return bool(self.rules) and all(rule.status is Status.PASS for rule in self.rules)

    @property
    def exit_code(self) -> int:
        """0 when every rule passed, 1 when any failed, 2 when none failed but some are unknown."""
        if self.passed:
            return 0
        return 1 if any(rule.status is Status.FAIL for rule in self.rules) else 2

    def failures(self) -> list[str]:
        """The keys of the rules that failed."""
        return [rule.rule for rule in self.rules if rule.status is Status.FAIL]

    def status_of(self, rule: str) -> Status:
        """The status of one rule, by key (``KeyError`` for a rule that was not probed)."""
        for result in self.rules:
            if result.rule == rule:
                return result.status
        raise KeyError(f"No rule {rule!r} in this result; probed: {[r.rule for r in self.rules]}")

    def to_dict(self) -> dict[str, Any]:
        """The result as a JSON-ready dict (what ``saber check --json`` prints)."""
        return {
            "target": self.target,
            "game": self.game,
            "passed": self.passed,
            "seconds": round(self.seconds, 3),
            "rules": [rule.to_dict() for rule in self.rules],
        }
