"""The action set (18 actions, each reaching the emulator) and sticky actions (0.25 per frame).

Both are read off a twin emulator restored before each step of the stack, on Boxing;
docs/check.md gives the candidates, the likelihood estimate and its interval.
"""

from __future__ import annotations

from collections import Counter

import ale_py
import numpy as np
from gymnasium.spaces import Discrete

from saber.check.emulator import twin as make_twin
from saber.check.probes.base import NO_EMULATOR, SETTINGS, restart, unknown, verdict
from saber.check.result import RuleResult
from saber.check.subject import Subject
from saber.protocol.settings import NUM_ACTIONS

PROBE_ROM = "boxing"
CONFIDENCE = 0.99  # a pass: SABER's 0.25 in this interval, at most 2 x TOLERANCE wide
FAIL_CONFIDENCE = 0.999  # a fail: 0.25 outside this one (a SABER stack: 1 check in 1,000)
TOLERANCE = 0.06  # the interval must be no wider than 2 x 0.06
STEPS = 700  # informative steps at most: a 99% interval about 0.085 wide at p = 0.25
# The intervals are looked at every LOOK_EVERY informative steps from FIRST_LOOK on, and
# the probe stops at the first look with a verdict (sticky_decision): at p = 0.25 after
# about 300 steps, at p = 0 (no sticky actions) at the first look. Looking several times
# gives more chances to fail a SABER stack by chance than one look would: the fail's
# stricter interval keeps it at 0.1% a look, at most 1.1% over the 11 looks.
FIRST_LOOK = 200
LOOK_EVERY = 50
SETTLE_STEPS = 3
NAMES = [ale_py.Action(index).name for index in range(NUM_ACTIONS)]
# Each emulator action's joystick direction (x right, y down) and whether it fires.
_STICK = {
    index: (("RIGHT" in name) - ("LEFT" in name), ("DOWN" in name) - ("UP" in name))
    for index, name in enumerate(NAMES)
}
_FIRES = {index: "FIRE" in name for index, name in enumerate(NAMES)}


class _Stepper:
    """Steps the stack on Boxing and finds, on the twin, which frames the emulator played."""

    def __init__(self, subject: Subject) -> None:
        self.subject = subject
        self.emulator = subject.emulator
        self.twin = make_twin(PROBE_ROM)
        self.previous = 0  # ALE's last action after a reset is NOOP
        self.steps = 0
        self.frame_skip = 0  # emulator frames per step, from the first step
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
        self.frame_skip = self.frame_skip or frames
        matches = self.twin.sticky_matches(state, self.previous, candidates, frames, ale.getRAM())
        if terminated or truncated or frames == 0:
            self._restart()
            return [], frames
        played = {action if repeats < frames else self.previous for action, repeats in matches}
        if len(played) == 1:
            self.previous = played.pop()
        elif len(candidates) == 1:
            # Held: this action or the one before. A restart would reload the ROM, which
            # reseeds the emulator's sticky draws, and repeated draws bias the estimate: play
            # the action on until it holds (it still might not: p**12 = 6e-8 at p = 0.25).
            for _ in range(SETTLE_STEPS):
                *_, terminated, truncated, _ = self.subject.step(index)
                if terminated or truncated:
                    self._restart()
                    return matches, frames
            self.previous = candidates[0]
        else:  # cannot tell what the emulator holds now: start again from a known state
            self._restart()
        return matches, frames


def probe_actions(subject: Subject, draws: int = STEPS) -> list[RuleResult]:
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
        "each action stepped through the stack on Boxing; the action the emulator "
        "played found by replaying all 18 on a twin emulator (RAM equal)"
        + (f"; index->action where not the identity: {names}" if names else "")
    )
    unresolved = sorted(set(range(size)) - set(mapping))
    if unresolved:
        evidence += f"; indices not resolved: {unresolved}"
    if size == NUM_ACTIONS and len(reached) == len(mapping) and unresolved:
        # Nothing wrong seen, but not every index was seen: no verdict either way.
        return unknown("action_set", evidence, measured)
    ok = size == NUM_ACTIONS and len(reached) == NUM_ACTIONS and not unresolved
    return verdict("action_set", ok, measured, evidence)


def _sticky(stepper: _Stepper, mapping: dict[int, int], steps: int) -> RuleResult:
    if len(set(mapping.values())) < 2:
        return unknown("sticky_actions", "fewer than 2 distinct actions reach the emulator")
    rng = np.random.default_rng(0)
    indices = sorted(mapping)
    # Per step, which repeat counts j (0..F) the emulator's RAM allows: a game that reads
    # the joystick on some frames only leaves several, and their probabilities add up.
    masks: Counter[tuple[bool, ...]] = Counter()
    unmatched = 0
    first = stepper.steps
    while not settled(masks, steps) and stepper.steps - first < 3 * steps:
        # An action other than the one held, so that a repeat shows in the RAM, and of
        # those the one whose joystick differs most from it (see contrast).
        choices = [i for i in indices if mapping[i] != stepper.previous]
        best = max(contrast(stepper.previous, mapping[i]) for i in choices)
        choices = [i for i in choices if contrast(stepper.previous, mapping[i]) == best]
        index = choices[int(rng.integers(len(choices)))]
        matches, frames = stepper.step(index, [mapping[index]])
        if frames != stepper.frame_skip:
            continue
        if not matches:
            unmatched += 1
            continue
        mask = tuple(j in {repeats for _, repeats in matches} for j in range(frames + 1))
        if not all(mask):  # a step that allows every j says nothing of p
            masks[mask] += 1
    if not masks:
        return unknown("sticky_actions", "no step could be matched on the twin emulator")
    exact = sum(count for mask, count in masks.items() if sum(mask) == 1)
    where = (
        f"{sum(masks.values())} steps on Boxing ({exact} with one repeat count possible, "
        f"{unmatched} unmatched), each replayed on a twin emulator for every number of "
        "frames the held action could have stuck"
    )
    return sticky_rule(masks, where)


def contrast(held: int, action: int) -> tuple[int, bool]:
    """How well a step of ``action`` after ``held`` (emulator actions) tells repeat counts
    apart on Boxing, as a sort key: the squared distance between their joystick
    directions, then not firing.

    Each frame the held action sticks moves the boxer the other way, so opposite
    directions leave a distinct RAM for each repeat count, where a punch freezes the
    boxer and actions that move alike leave several counts possible (measured on Boxing
    at 0.25 per frame: random pairs of Pong's 6 actions told the count on 45% of 16-frame
    steps, opposite directions on 89-97%). The choice depends on the past only, so the
    likelihood is the same; steps that tell more make the intervals settle sooner.
    """
    (x0, y0), (x1, y1) = _STICK[held], _STICK[action]
    return (x1 - x0) ** 2 + (y1 - y0) ** 2, not _FIRES[action]


def sticky_decision(masks: Counter[tuple[bool, ...]]) -> tuple[bool | None, str]:
    """The verdict the steps so far give: True (pass: SABER's probability in the 99%
    interval, which is at most ``2 * TOLERANCE`` wide), False (fail: outside the 99.9%
    interval), or None (neither yet); and the measurement as text."""
    estimate, low, high = repeat_probability(masks)
    _, fail_low, fail_high = repeat_probability(masks, FAIL_CONFIDENCE)
    target = SETTINGS.repeat_action_probability
    measured = f"{estimate:.3f} per frame (99% CI {low:.3f}-{high:.3f})"
    if not fail_low <= target <= fail_high:
        return False, measured + f", {FAIL_CONFIDENCE:.1%} CI {fail_low:.3f}-{fail_high:.3f}"
    if low <= target <= high and high - low <= 2 * TOLERANCE:
        return True, measured
    return None, measured + f", {FAIL_CONFIDENCE:.1%} CI {fail_low:.3f}-{fail_high:.3f}"


def sticky_rule(masks: Counter[tuple[bool, ...]], where: str) -> RuleResult:
    """The ``sticky_actions`` verdict of the steps' masks (see :func:`sticky_decision`)."""
    decided, measured = sticky_decision(masks)
    target = SETTINGS.repeat_action_probability
    evidence = (
        f"{where}; maximum likelihood of the per-frame repeat probability, likelihood-"
        f"ratio intervals; pass when the {CONFIDENCE:.0%} one holds {target} and is at "
        f"most {2 * TOLERANCE:.2f} wide, fail when the {FAIL_CONFIDENCE:.1%} one does not "
        f"hold it; looked at from {FIRST_LOOK} informative steps, every {LOOK_EVERY}, up "
        f"to {STEPS}"
    )
    if decided is None:
        return unknown("sticky_actions", evidence + ": neither", measured)
    return verdict("sticky_actions", decided, measured, evidence)


def settled(masks: Counter[tuple[bool, ...]], steps: int = STEPS) -> bool:
    """Enough informative steps: ``steps`` of them, or, at a look (``FIRST_LOOK`` steps,
    then every ``LOOK_EVERY``), a verdict (:func:`sticky_decision`)."""
    count = sum(masks.values())
    if count >= steps:
        return True
    if count < FIRST_LOOK or (count - FIRST_LOOK) % LOOK_EVERY:
        return False
    return sticky_decision(masks)[0] is not None


def repeat_probability(
    masks: Counter[tuple[bool, ...]], confidence: float = CONFIDENCE
) -> tuple[float, float, float]:
    """Maximum-likelihood per-frame repeat probability and its likelihood-ratio interval.

    A step of ``F`` frames repeats the held action ``j`` frames with probability
    ``p**j * (1 - p)`` (``j < F``) or ``p**F``; a step whose RAM allows the set ``M`` of
    repeat counts has likelihood ``sum(P(j) for j in M)``. The interval holds the ``p``
    whose log-likelihood is within ``chi2(1).ppf(confidence) / 2`` of the maximum.

    75 steps without a repeat and 25 with one: 25 repeats in 125 draws, p = 0.2:

    >>> j0, j1 = (True, False, False, False, False), (False, True, False, False, False)
    >>> [round(value, 3) for value in repeat_probability(Counter({j0: 75, j1: 25}))]
    [0.2, 0.119, 0.301]
    """
    from scipy.stats import chi2  # here: the quick probe (saber eval) needs no scipy

    grid = np.linspace(0.0, 1.0, 4001)
    loglik = np.zeros_like(grid)
    with np.errstate(divide="ignore"):
        for mask, count in masks.items():
            frames = len(mask) - 1
            probability = np.zeros_like(grid)
            for repeats, allowed in enumerate(mask):
                if allowed:
                    stay = grid**repeats
                    probability += stay if repeats == frames else stay * (1 - grid)
            loglik += count * np.log(probability)
    best = int(np.argmax(loglik))
    inside = grid[loglik >= loglik[best] - chi2.ppf(confidence, 1) / 2]
    return float(grid[best]), float(inside.min()), float(inside.max())
