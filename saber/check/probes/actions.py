"""The action set (18 actions, each reaching the emulator) and sticky actions (0.25 per frame).

Both are read off a twin emulator (sticky actions off) restored to the state saved just
before each step of the stack: the probe replays every candidate, "``j`` frames of the
action the emulator played last, then the ``F - j`` frames of action ``b``", and keeps
those whose RAM equals the stack's emulator after the step. The game under the stack is
Boxing while probing: its RAM tells all 18 joystick actions apart within one frame.

A sticky draw happens on each frame while the previous action still holds: a step whose
match is ``j`` shows ``j`` repeats then (if ``j < F``) one non-repeat. The draws are
independent with probability ``p``; the estimate is repeats / draws, and the verdict uses
the exact (Clopper-Pearson) 99% interval of a binomial proportion (``scipy``).
"""

from __future__ import annotations

import ale_py
import numpy as np
from gymnasium.spaces import Discrete
from scipy.stats import binomtest

from saber.check.emulator import twin as make_twin
from saber.check.probes.base import NO_EMULATOR, SETTINGS, restart, same, unknown, verdict
from saber.check.result import RuleResult
from saber.check.subject import Subject
from saber.envs.protocol import NUM_ACTIONS

__all__ = ["probe_actions"]

PROBE_ROM = "boxing"
CONFIDENCE = 0.99
TOLERANCE = 0.05  # the interval must be no wider than +-0.05 around the estimate
DRAWS = 800  # a 99% interval of about +-0.04 at p = 0.25
NAMES = [ale_py.Action(index).name for index in range(NUM_ACTIONS)]


class _Stepper:
    """Steps the stack on Boxing and finds, on the twin, which frames the emulator played."""

    def __init__(self, subject: Subject) -> None:
        self.subject = subject
        self.emulator = subject.emulator
        self.twin = make_twin(PROBE_ROM)
        self.previous = 0  # ALE's last action after a reset is NOOP
        self.steps = 0
        self._restart()

    def _restart(self) -> None:
        restart(self.subject, PROBE_ROM)
        self.previous = 0

    def step(self, index: int, candidates: list[int]) -> tuple[list[tuple[int, int]], int]:
        """Play stack action ``index``; the ``(ale_action, j)`` matching the emulator, and F."""
        ale = self.emulator.ale
        state = ale.cloneState()
        before = self.emulator.frames()
        _, _, terminated, truncated, _ = self.subject.step(index)
        self.steps += 1
        frames = self.emulator.frames() - before
        ram = ale.getRAM()
        matches = [
            (action, repeats)
            for action in candidates
            for repeats in range(frames + 1)
            if same(
                self.twin.replay(state, [self.previous] * repeats + [action] * (frames - repeats)),
                ram,
            )
        ]
        if terminated or truncated or frames == 0:
            self._restart()
            return [], frames
        played = {action if repeats < frames else self.previous for action, repeats in matches}
        if len(played) == 1:
            self.previous = played.pop()
        else:  # cannot tell what the emulator holds now: start again from a known state
            self._restart()
            return [], frames
        return matches, frames


def probe_actions(subject: Subject, draws: int = DRAWS) -> list[RuleResult]:
    """The ``action_set`` and ``sticky_actions`` rules (``draws=0`` skips stickiness)."""
    space = subject.action_space
    size = space.n if isinstance(space, Discrete) else None
    if subject.emulator is None:
        results = [
            verdict(
                "action_set",
                False,
                str(space),
                "the action space, through the API; " + NO_EMULATOR,
            )
            if size != NUM_ACTIONS
            else unknown(
                "action_set",
                "Discrete(18) through the API, but whether each reaches the emulator "
                "cannot be seen: " + NO_EMULATOR,
                str(space),
            ),
        ]
        return results + ([unknown("sticky_actions", NO_EMULATOR)] if draws else [])
    if size is None:
        return [verdict("action_set", False, str(space), "not a Discrete action space")]
    stepper = _Stepper(subject)
    mapping: dict[int, int] = {}
    for index in list(range(size)) * 4:  # a second try for an index whose step was ambiguous
        if index in mapping:
            continue
        matches, frames = stepper.step(index, list(range(NUM_ACTIONS)))
        actions = {action for action, repeats in matches if repeats < frames}
        if len(actions) == 1:
            mapping[index] = actions.pop()
    results = [_action_verdict(size, mapping)]
    if draws:
        results.append(_sticky(stepper, mapping, draws))
    return results


def _action_verdict(size: int, mapping: dict[int, int]) -> RuleResult:
    reached = sorted(set(mapping.values()))
    names = ", ".join(f"{i}->{NAMES[a]}" for i, a in sorted(mapping.items()) if i != a)
    measured = f"Discrete({size}), {len(reached)} distinct emulator actions"
    evidence = (
        f"each action stepped through the stack on Boxing; the action the emulator "
        f"played found by replaying all 18 on a twin emulator (RAM equal)"
        + (f"; index->action where not the identity: {names}" if names else "")
    )
    unresolved = sorted(set(range(size)) - set(mapping))
    if unresolved:
        evidence += f"; indices not resolved: {unresolved}"
    ok = size == NUM_ACTIONS and len(reached) == NUM_ACTIONS and not unresolved
    return verdict("action_set", ok, measured, evidence)


def _sticky(stepper: _Stepper, mapping: dict[int, int], draws: int) -> RuleResult:
    if len(set(mapping.values())) < 2:
        return unknown("sticky_actions", "fewer than 2 distinct actions reach the emulator")
    rng = np.random.default_rng(0)
    indices = sorted(mapping)
    repeats_seen = non_repeats = 0
    limit = 4 * draws
    while repeats_seen + non_repeats < draws and stepper.steps < limit:
        # An action other than the one held, so that a repeat shows in the RAM.
        choices = [i for i in indices if mapping[i] != stepper.previous]
        index = choices[int(rng.integers(len(choices)))]
        matches, frames = stepper.step(index, [mapping[index]])
        if len(matches) != 1:
            continue
        repeats = matches[0][1]
        repeats_seen += repeats
        non_repeats += int(repeats < frames)
    total = repeats_seen + non_repeats
    if total == 0:
        return unknown("sticky_actions", "no step could be matched on the twin emulator")
    estimate = repeats_seen / total
    low, high = binomtest(repeats_seen, total).proportion_ci(CONFIDENCE, method="exact")
    target = SETTINGS.repeat_action_probability
    ok = low <= target <= high and high - low <= 2 * TOLERANCE
    measured = f"{estimate:.3f} per frame (99% CI {low:.3f}-{high:.3f})"
    evidence = (
        f"{total} per-frame draws in {stepper.steps} steps on Boxing: a repeat of the held "
        f"action {repeats_seen} times, matched frame by frame on a twin emulator; pass when "
        f"the exact binomial 99% interval holds {target} and is at most "
        f"{2 * TOLERANCE:.2f} wide"
    )
    if low <= target <= high and not ok:
        return unknown("sticky_actions", evidence + " (interval too wide)", measured)
    return verdict("sticky_actions", ok, measured, evidence)
