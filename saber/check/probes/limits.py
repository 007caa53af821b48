"""The stuck timeout (5 minutes without reward) and the frame cap (100 hours).

**Stuck timeout, measured by play.** Breakout is loaded under the stack and played with
NOOP: the ball is never launched, so nothing is ever scored and the game never ends.
The probe counts the emulator's frames until the stack truncates (18,000 frames = 4,500
steps, about a second), or gives up 2,000 frames later.

**Frame cap, measured under advanced clocks.** Playing 21.6 million frames would take
hours, so the probe advances every counter it knows in the stack: the ALE's episode frame
counter (rewritten in a saved state: ale-py's own frame cap reads it), saber's core frame
counter, and the step counters of Gymnasium ``TimeLimit`` wrappers (scaled by their steps
per frame, measured on one step). Just after the jump, a point is written into
Breakout's score so that the step scores (a stuck timeout cannot fire on it). If the
stack truncates at once, bisection finds the first frame at which it does. What is
inferred, not measured: that honest play reaches the same counters; a counter the probe
does not know (a wrapper of another kind counting steps) is not advanced.
"""

from __future__ import annotations

from typing import Any

from saber.check.probes.base import NO_EMULATOR, SETTINGS, restart, unknown, verdict
from saber.check.result import RuleResult
from saber.check.subject import Subject

__all__ = ["probe_frame_cap", "probe_stuck_timeout"]

PROBE_ROM = "breakout"
SCORE_LOW_RAM = 0x4D  # Breakout's score, low two BCD digits (the ALE reads RAM 0xCD)
PAST_TIMEOUT = 2_000  # frames played beyond SABER's timeout before giving up


def probe_stuck_timeout(subject: Subject) -> list[RuleResult]:
    """The ``stuck_timeout`` rule."""
    emulator = subject.emulator
    if emulator is None:
        return [unknown("stuck_timeout", NO_EMULATOR)]
    timeout = SETTINGS.max_frames_without_reward
    assert timeout is not None
    restart(subject, PROBE_ROM)
    end = None
    step_frames = 0
    frames = emulator.frames()  # since the game was loaded, the settling step included
    while frames < timeout + PAST_TIMEOUT:
        before = emulator.frames()
        _, reward, terminated, truncated, _ = subject.step(0)
        after = emulator.frames()
        # A vector env that resets itself at the end leaves the new episode's count.
        frames += after - before if after >= before else step_frames
        step_frames = after - before if after >= before else step_frames
        if reward != 0:
            return [unknown("stuck_timeout", "the NOOP policy scored on Breakout")]
        if terminated or truncated:
            end = "truncated" if truncated else "terminated"
            break
    evidence = (
        f"Breakout under the stack, NOOP steps (the ball is never launched: no reward, no "
        f"game over), frames counted by the emulator: {frames:,}"
    )
    if end is None:
        return [verdict("stuck_timeout", False, f"none in {frames:,} frames", evidence)]
    return [
        verdict(
            "stuck_timeout",
            end == "truncated" and frames == timeout,
            f"{end} at {frames:,} frames",
            evidence,
        )
    ]


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
        ale = self.emulator.ale
        low = ale.getRAM()[SCORE_LOW_RAM]
        digits = (low >> 4) * 10 + (low & 0xF)
        new = (digits + 1) % 100
        ale.setRAM(SCORE_LOW_RAM, (new // 10) << 4 | new % 10)
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
    while high - low > skip:
        middle = (low + high) // 2 // skip * skip
        if clock.truncates(middle)[0]:
            high = middle
        else:
            low = middle
    measured = f"truncated at {high + skip:,} frames"
    evidence = f"{how}; {clock.trials} jumps, bisection to one step{inferred}"
    return [verdict("frame_cap", False, measured, evidence)]
