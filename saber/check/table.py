"""A :class:`CheckResult` as text a person reads at a glance (:func:`format_table`), and as Markdown."""

from __future__ import annotations

from collections.abc import Sequence

from saber.check.result import CheckResult, Status

_MARK = {
    Status.PASS: "pass",
    Status.FAIL: "FAIL",
    Status.UNKNOWN: "unknown",
    Status.NOT_PROBED: "not probed",
}


def summary(result: CheckResult) -> str:
    """One line: the verdict and the counts.

    "SABER" only when every rule of the protocol was probed and passed; "not SABER" when
    one failed; otherwise "not shown to be SABER", naming the rules a quick check left out.

    >>> from saber.check.result import RuleResult
    >>> rules = (
    ...     RuleResult("frame_skip", "4", "4", Status.PASS, "counted"),
    ...     RuleResult("stuck_timeout", "18,000", None, Status.NOT_PROBED, "--quick"),
    ... )
    >>> print(summary(CheckResult("SABER/Pong", rules, 0.5)))
    SABER/Pong: not shown to be SABER: every rule probed passes; not probed: stuck_timeout (run without --quick) (1 pass, 0 fail, 0 unknown, 1 not probed; 0.5 s)
    """
    counts = {status: 0 for status in Status}
    for rule in result.rules:
        counts[rule.status] += 1
    if result.passed:
        verdict = "SABER"
    elif counts[Status.FAIL]:
        verdict = "not SABER"
    else:
        verdict = "not shown to be SABER"
        if not counts[Status.UNKNOWN]:
            verdict += (
                f": every rule probed passes; not probed: {', '.join(result.not_probed())} "
                "(run without --quick)"
            )
    left_out = f", {counts[Status.NOT_PROBED]} not probed" if counts[Status.NOT_PROBED] else ""
    return (
        f"{result.target}: {verdict} ({counts[Status.PASS]} pass, {counts[Status.FAIL]} fail, "
        f"{counts[Status.UNKNOWN]} unknown{left_out}; {result.seconds:.1f} s)"
    )


def format_table(result: CheckResult) -> str:
    """The verdict, a table of rules (status, SABER's value, the measured one), the evidence.

    Example:
        >>> from saber.check.result import CheckResult, RuleResult, Status
        >>> rule = RuleResult("frame_skip", "4 frames per step", "4 frames per step", Status.PASS, "counted")
        >>> print(format_table(CheckResult("SABER/Pong", (rule,), 1.25)))
        SABER/Pong: SABER (1 pass, 0 fail, 0 unknown; 1.2 s)
        rule        status  SABER              measured
        ----------  ------  -----------------  -----------------
        frame_skip  pass    4 frames per step  4 frames per step
        <BLANKLINE>
        evidence:
          frame_skip: counted
    """
    rows = [("rule", "status", "SABER", "measured")]
    rows += [
        (rule.rule, _MARK[rule.status], rule.saber, rule.measured or "-") for rule in result.rules
    ]
    widths = [max(len(row[column]) for row in rows) for column in range(4)]
    lines = [summary(result)]
    for index, row in enumerate(rows):
        lines.append(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )
        if index == 0:
            lines.append("  ".join("-" * width for width in widths))
    lines += ["", "evidence:"]
    lines += [f"  {rule.rule}: {rule.evidence}" for rule in result.rules]
    return "\n".join(lines)


def markdown_comparison(results: Sequence[tuple[str, CheckResult]]) -> str:
    """A Markdown table, one column per setup: each rule's measured value and verdict."""
    names = [name for name, _ in results]
    rules = results[0][1].rules
    lines = [
        "| rule | SABER value | " + " | ".join(names) + " |",
        "|---|---|" + "---|" * len(names),
    ]
    for index, rule in enumerate(rules):
        cells = []
        for _, result in results:
            measured = result.rules[index]
            mark = {**_MARK, Status.FAIL: "**fail**"}
            cells.append(f"{mark[measured.status]}: {measured.measured or '-'}".replace("|", "/"))
        lines.append(f"| `{rule.rule}` | {rule.saber} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
