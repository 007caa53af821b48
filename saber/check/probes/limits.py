"""The stuck timeout (5 minutes without reward) and the frame cap (100 hours).

The timeout is played out on Breakout with NOOP, after a reward and from a start; the cap
is probed under advanced frame counters. docs/check.md gives both, and what is inferred.
"""

from __future__ import annotations

from typing import Any

from saber.check.probes.base import NO_EMULATOR, SETTINGS, restart, unknown, verdict
from saber.check.result import RuleResult
from saber.check.subject import Subject

PROBE_ROM = "breakout"
SCORE_LOW_RAM = 0x4D  # Breakout's score, low two BCD digits (the ALE reads RAM 0xCD)
PAST_TIMEOUT = 2_000  # frames played beyond SABER's timeout before giving up
LEAD_STEPS = 100  # NOOP steps before the written point: it lands 400 frames into the episode
# Caps in common use, tried before bisection (each check costs a restart, about 0.1 s):
# 30 and 5 minutes of play, and Gymnasium's v4/v5 step limits at 4 frames per step.
COMMON_CAPS = (108_000, 18_000, 400_000, 432_000)


def _score_point(subject: Subject) -> None:
    """Add one point to Breakout's score in RAM: the next step's frame reports +1."""
    ale = subject.emulator.ale
    low = ale.getRAM()[SCORE_LOW_RAM]
    digits = (low >> 4) * 10 + (low & 0xF)
    new = (digits + 1) % 100
    ale.setRAM(SCORE_LOW_RAM, (new // 10) << 4 | new % 10)


def _hold(subject: Subject, limit: int) -> tuple[str | None, int, str | None]:
    """NOOP steps until the stack ends the episode or ``limit`` frames passed.

    Returns:
        (how it ended: "truncated", "terminated" or None; frames played, counted by the
        emulator; a reason the measurement is void, or None).
    """
    emulator = subject.emulator
    frames = 0
    step_frames = 0
    while frames < limit:
        before = emulator.frames()
        _, reward, terminated, truncated, _ = subject.step(0)
        after = emulator.frames()
        # A vector env that resets itself at the end leaves the new episode's count.
        step_frames = after - before if after >= before else step_frames
        frames += step_frames
        if reward != 0:
            return None, frames, "the NOOP policy scored on Breakout"
        if terminated or truncated:
            return ("truncated" if truncated else "terminated"), frames, None
    return None, frames, None


def _after_reward(subject: Subject, limit: int) -> tuple[str | None, int, int, str | None]:
    """Phase 1: ``LEAD_STEPS`` NOOP steps, a point written, then NOOP until the end.

    Returns:
        (how it ended, frames after the rewarded step, the emulator's episode frame at
        the reward, a reason the measurement is void).
    """
    emulator = subject.emulator
    restart(subject, PROBE_ROM)
    for _ in range(LEAD_STEPS):
        _, reward, terminated, truncated, _ = subject.step(0)
        if reward != 0 or terminated or truncated:
            return None, 0, 0, "the NOOP steps before the written point scored or ended"
    _score_point(subject)
    _, reward, terminated, truncated, _ = subject.step(0)
    at = emulator.frames()
    if reward == 0:
        return None, 0, at, "the point written into Breakout's score gave no reward"
    if terminated or truncated:
        return ("truncated" if truncated else "terminated"), 0, at, None
    end, frames, void = _hold(subject, limit)
    return end, frames, at, void


def probe_stuck_timeout(subject: Subject) -> list[RuleResult]:
    """The ``stuck_timeout`` rule: after a reward, then from the start (docs/check.md)."""
    if subject.emulator is None:
        return [unknown("stuck_timeout", NO_EMULATOR)]
    timeout = SETTINGS.max_frames_without_reward
    assert timeout is not None
    limit = timeout + PAST_TIMEOUT
    how = (
        f"Breakout under the stack, NOOP steps (the ball is never launched: no reward, no "
        f"game over), frames counted by the emulator; after a reward: {LEAD_STEPS} NOOP "
        "steps, a point written into the score (+1 on the next step), then NOOP steps; "
        "not probed: a negative reward restarting the clock (Breakout has none)"
    )
    end, frames, at, void = _after_reward(subject, limit)
    if void is not None:
        return [unknown("stuck_timeout", f"{how}: {void}")]
    after = _end_said(end, f"{frames:,} frames after a reward (at frame {at:,})")
    if end != "truncated" or frames != timeout:
        return [verdict("stuck_timeout", False, after, how + "; from the start: not probed")]
    restart(subject, PROBE_ROM)
    start_frames = subject.emulator.frames()  # the settling step, since the game loaded
    end, frames, void = _hold(subject, limit - start_frames)
    frames += start_frames
    if void is not None:
        return [unknown("stuck_timeout", f"{how}: {void}")]
    start = _end_said(end, f"{frames:,} frames from the start", at=True)
    ok = end == "truncated" and frames == timeout
    return [verdict("stuck_timeout", ok, f"{after}; {start}", how)]


def _end_said(end: str | None, span: str, at: bool = False) -> str:
    """How play over ``span`` ended: ``"truncated <span>"`` (``"truncated at <span>"``
    with ``at``), or ``"none in <span>"`` where the env did not end it."""
    if not end:
        return f"none in {span}"
    return f"{end} at {span}" if at else f"{end} {span}"


class _Clock:
    """Trials of "the stack's counters at frame ``c``: does the next step truncate?"."""

    def __init__(self, subject: Subject) -> None:
        self.subject = subject
        self.emulator = subject.emulator
        self.alive = False
        self.trials = 0
        self.rates: list[tuple[Any, float]] = []
        self.frame_skip = 0
        self.advanced: list[str] = []

    def _start(self) -> None:
        restart(self.subject, PROBE_ROM)
        before = [wrapper._elapsed_steps for wrapper in self.subject.step_counters]
        frames = self.emulator.frames()
        self.subject.step(0)
        self.frame_skip = self.emulator.frames() - frames
        self.rates = [
            (wrapper, (wrapper._elapsed_steps - count) / self.frame_skip)
            for wrapper, count in zip(self.subject.step_counters, before, strict=True)
        ]
        self.alive = True

    def truncates(self, frame: int, steps: int = 1) -> tuple[bool, float]:
        """Jump to ``frame``, score a point, play ``steps`` NOOP steps: truncated? (and the
        reward of the first step)."""
        if not self.alive:
            self._start()
        self.trials += 1
        self.advanced = self.emulator.set_frame_clocks(frame, self.rates)
        _score_point(self.subject)
        first_reward = 0.0
        for step in range(steps):
            _, reward, terminated, truncated, _ = self.subject.step(0)
            if step == 0:
                first_reward = reward
            if terminated or truncated:
                self.alive = False
                return True, first_reward
        return False, first_reward


def probe_frame_cap(subject: Subject) -> list[RuleResult]:
    """The ``frame_cap`` rule."""
    if subject.emulator is None:
        return [unknown("frame_cap", NO_EMULATOR)]
    cap = SETTINGS.max_episode_frames
    assert cap is not None
    clock = _Clock(subject)
    clock._start()
    skip = clock.frame_skip
    if skip <= 0:
        return [unknown("frame_cap", "a step played no emulator frame")]
    start = (cap - 2 * skip) // skip * skip
    early, reward = clock.truncates(start)
    if reward == 0 and not early:
        return [unknown("frame_cap", "the point written into Breakout's score gave no reward")]
    late = False
    if not early:
        late, _ = clock.truncates(start + skip) if clock.alive else (True, 0.0)
    how = (
        f"counters advanced: {', '.join(clock.advanced)}; a point scored on the first step "
        f"after each jump (Breakout under the stack)"
    )
    inferred = (
        "; inferred, not measured: that honest play reaches these counters (a step-counting "
        "wrapper other than TimeLimit is not advanced)"
    )
    if not early and late:
        measured = f"truncated at {start + 2 * skip:,} frames"
        return [verdict("frame_cap", start + 2 * skip == cap, measured, how + inferred)]
    if not early:
        measured = f"none by {start + 2 * skip:,} frames"
        return [verdict("frame_cap", False, measured, how + inferred)]
    low, high = 0, start  # the step from `low` does not truncate; from `high` it does
    if clock.truncates(low)[0]:
        return [verdict("frame_cap", False, f"truncated at {skip} frames", how)]
    # A common cap first: truncating from cap - skip and not from cap - 2 * skip pins it.
    for cap_tried in COMMON_CAPS:
        edge = (cap_tried - skip) // skip * skip
        if not low < edge - skip < edge < high:
            continue
        if not clock.truncates(edge)[0]:
            low = edge
        elif clock.truncates(edge - skip)[0]:
            high = edge - skip
        else:
            low, high = edge - skip, edge
            break
    while high - low > skip:
        middle = (low + high) // 2 // skip * skip
        if clock.truncates(middle)[0]:
            high = middle
        else:
            low = middle
    measured = f"truncated at {high + skip:,} frames"
    evidence = (
        f"{how}; {clock.trials} jumps (common caps first, then bisection) to one step{inferred}"
    )
    return [verdict("frame_cap", False, measured, evidence)]
