"""The probes, one module per rule or family of rules, and the order the table shows them."""

from __future__ import annotations

from collections.abc import Callable

from saber.check.probes.actions import probe_actions
from saber.check.probes.followed import probe_followed, probe_stuck_clock
from saber.check.probes.limits import probe_frame_cap, probe_stuck_timeout
from saber.check.probes.lives import probe_lives
from saber.check.probes.preprocessing import probe_preprocessing
from saber.check.probes.ram_followed import probe_ram_followed
from saber.check.probes.rewards import probe_rewards
from saber.check.probes.start import probe_start
from saber.check.probes.tampered import probe_frame_cap_tampered, probe_rollover_tampered
from saber.check.result import RuleResult
from saber.check.subject import Subject

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

# Each probe with the rules it reports, in the order they run.
# The start probe comes first: it compares the emulator's RAM after a reset with a freshly
# loaded ROM's, and an emulator that ran another game keeps some of that game's RAM.
FULL: tuple[tuple[Probe, tuple[str, ...]], ...] = (
    (probe_start, ("noop_starts", "fire_start")),
    (probe_actions, ("action_set", "sticky_actions")),
    (probe_lives, ("life_signal",)),
    (probe_stuck_timeout, ("stuck_timeout",)),
    (probe_frame_cap, ("frame_cap",)),
    (probe_rewards, ("raw_rewards", "rollover")),
    (probe_preprocessing, ("frame_skip", "observation", "frame_stack")),
)


def _one_seed(subject: Subject) -> list[RuleResult]:
    """The start probe on one seed: any frame before the first observation fails."""
    return probe_start(subject, range(1))


# What `saber eval` runs before a run: the rules a wrapper above SABER breaks, cheaply
# (no statistical stickiness, no 18,000-frame timeout play, no action replays); the
# rules left out are reported as not probed. The probes share episodes
# (saber.check.subject.ChainedSubject): the rewards probe right after the start's reset,
# so that the score it reads in the record is the episode's own; it ends that episode
# (the record is written at the end), and the frame cap ends the next one.
QUICK: tuple[tuple[Probe, tuple[str, ...]], ...] = (
    (_one_seed, ("noop_starts", "fire_start")),
    (probe_rewards, ("raw_rewards", "rollover")),
    (probe_preprocessing, ("frame_skip", "observation", "frame_stack")),
    (probe_lives, ("life_signal",)),
    (probe_frame_cap, ("frame_cap",)),
)


# An env whose emulators cannot be reached but can be followed (saber's JAX envs,
# saber.check.subject.FunctionalSubject): one followed episode measures most rules; the
# frame cap and the rollover are provoked below the env's rules (probes.tampered).
_FOLLOWED_RULES = (
    "noop_starts",
    "fire_start",
    "action_set",
    "sticky_actions",
    "frame_skip",
    "observation",
    "raw_rewards",
    "frame_stack",
    "life_signal",
)
FOLLOWED: tuple[tuple[Probe, tuple[str, ...]], ...] = (
    (probe_followed, _FOLLOWED_RULES),
    (probe_stuck_clock, ("stuck_timeout",)),
    (probe_frame_cap_tampered, ("frame_cap",)),
    (probe_rollover_tampered, ("rollover",)),
)


def _followed_quick(subject: Subject) -> list[RuleResult]:
    return [r for r in probe_followed(subject, draws=0) if r.rule != "sticky_actions"]


FOLLOWED_QUICK: tuple[tuple[Probe, tuple[str, ...]], ...] = (
    (_followed_quick, tuple(r for r in _FOLLOWED_RULES if r != "sticky_actions")),
    (probe_stuck_clock, ("stuck_timeout",)),
    (probe_frame_cap_tampered, ("frame_cap",)),
    (probe_rollover_tampered, ("rollover",)),
)


# An env whose emulator is out of reach but whose RAM is reported (envpool's
# info["ram"]): env 0 followed by its RAM on a twin; one probe reports every rule. Its
# quick check is the same probe (it plays no statistics the quick check could leave out
# that are cheaper than the follow itself).
RAM_FOLLOWED: tuple[tuple[Probe, tuple[str, ...]], ...] = ((probe_ram_followed, RULES),)
