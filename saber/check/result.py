"""The typed result of ``saber check``: one :class:`RuleResult` per SABER rule.

Stdlib and saber.errors only, so that reading or printing a result never starts an emulator.

>>> rule = RuleResult("frame_skip", "4 frames", "4 frames", Status.PASS, "emulator counter")
>>> CheckResult("SABER/Pong", (rule,)).passed
True
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from saber.errors import ExitCode


class Status(str, enum.Enum):
    """The verdict on one rule. Unknown is never a pass, and neither is not probed.

    ``UNKNOWN``: probed, but the probe could not measure the rule (with the reason);
    ``NOT_PROBED``: left out of this check (``--quick``), nothing was measured.
    """

    PASS = "pass"
    FAIL = "fail"
    UNKNOWN = "unknown"
    NOT_PROBED = "not_probed"


@dataclass(frozen=True)
class RuleResult:
    """One rule of the protocol, measured on a stack.

    Attributes:
        rule: the rule's key (``"sticky_actions"``, ``"frame_cap"``, ...).
        saber: SABER's value, as text with its unit.
        measured: what the probe measured, as text with its unit; None when nothing was.
        status: pass, fail, unknown or not probed.
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
        rules: one result per rule, in the order of :data:`saber.check.probes.RULES`
            (every rule of the protocol: those a quick check leaves out as not probed).
        seconds: wall time of the probe, in seconds.

    Example:
        >>> rule = RuleResult("frame_skip", "4 frames", "4 frames", Status.PASS, "emulator counter")
        >>> CheckResult("x", (RuleResult("frame_skip", "4", None, Status.UNKNOWN, "no emulator"),)).passed
        False

        A rule left out (``--quick``) is reported as not probed: the env is then never called
        SABER, even when every rule probed passed.

        >>> left_out = RuleResult("sticky_actions", "0.25", None, Status.NOT_PROBED, "--quick")
        >>> quick = CheckResult("SABER/Pong", (rule, left_out))
        >>> quick.passed, quick.probed_passed, int(quick.exit_code), quick.not_probed()
        (False, True, 4, ['sticky_actions'])
    """

    target: str
    rules: tuple[RuleResult, ...]
    seconds: float = 0.0
    game: str | None = field(default=None)

    @property
    def passed(self) -> bool:
        """True only when every rule passed: the env is SABER (an unknown rule, or one not
        probed, is not a pass)."""
        return bool(self.rules) and all(rule.status is Status.PASS for rule in self.rules)

    @property
    def probed_passed(self) -> bool:
        """True when every rule that was probed passed (the rules ``--quick`` leaves out
        aside): what ``saber eval``'s quick gate asks; never a claim that the env is SABER."""
        probed = [rule for rule in self.rules if rule.status is not Status.NOT_PROBED]
        return bool(probed) and all(rule.status is Status.PASS for rule in probed)

    @property
    def exit_code(self) -> ExitCode:
        """``saber check``'s exit status: ``OK`` (0) when every rule passed, ``FAILED`` (1)
        when any failed, ``UNFINISHED`` (4) when none failed but some are unknown or were
        not probed (:class:`saber.errors.ExitCode`)."""
        if self.passed:
            return ExitCode.OK
        if any(rule.status is Status.FAIL for rule in self.rules):
            return ExitCode.FAILED
        return ExitCode.UNFINISHED

    def failures(self) -> list[str]:
        """The keys of the rules that failed."""
        return [rule.rule for rule in self.rules if rule.status is Status.FAIL]

    def not_probed(self) -> list[str]:
        """The keys of the rules left out of this check (``--quick``)."""
        return [rule.rule for rule in self.rules if rule.status is Status.NOT_PROBED]

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
            "not_probed": self.not_probed(),
            "seconds": round(self.seconds, 3),
            "rules": [rule.to_dict() for rule in self.rules],
        }
