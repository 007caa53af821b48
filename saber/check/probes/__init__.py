"""The probes, one module per rule or family of rules, and the order the table shows them."""

from __future__ import annotations

from collections.abc import Callable

from saber.check.probes.actions import probe_actions
from saber.check.probes.limits import probe_frame_cap, probe_stuck_timeout
from saber.check.probes.lives import probe_lives
from saber.check.probes.preprocessing import probe_preprocessing
from saber.check.probes.rewards import probe_rewards
from saber.check.probes.start import probe_start
from saber.check.result import RuleResult
from saber.check.subject import Subject

__all__ = ["FULL", "QUICK", "RULES"]

Probe = Callable[[Subject], list[RuleResult]]

RULES = (
    "sticky_actions",
    "action_set",
    "life_signal",
    "noop_starts",
    "fire_start",
    "stuck_timeout",
    "frame_cap",
    "raw_rewards",
    "rollover",
    "frame_skip",
    "observation",
    "frame_stack",
)

FULL: tuple[Probe, ...] = (
    probe_actions,
    probe_lives,
    probe_start,
    probe_stuck_timeout,
    probe_frame_cap,
    probe_rewards,
    probe_preprocessing,
)


def _actions_without_stickiness(subject: Subject) -> list[RuleResult]:
    return probe_actions(subject, draws=0)


# What `saber eval` runs before a run: the rules a wrapper above SABER breaks, cheaply
# (no statistical stickiness, no 18,000-frame timeout play, no cap bisection needed).
QUICK: tuple[Probe, ...] = (
    probe_lives,
    probe_start,
    probe_frame_cap,
    probe_rewards,
    probe_preprocessing,
)
