"""Raw rewards and the rollover correction, in the score the stack records.

A jump and a rollover are written into Asterix's score in RAM and the episode ended
through its frame counters; the recorded score must be the sum of the true gains
(docs/check.md, docs/protocol.md).
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

from saber.check.probes.base import NO_EMULATOR, SETTINGS, restart, unknown, verdict
from saber.check.result import RuleResult
from saber.check.subject import Subject

PROBE_ROM = "asterix"
SCORE_RAM = (0xDE - 0x80, 0xDF - 0x80, 0xE0 - 0x80)  # BCD, most significant first
JUMP = 999_950  # written into the score: the next step reports it as one raw reward
WRAP = 1_000_000  # a 6-digit score wraps here: the ALE reports ``gain - WRAP``
# The gain the written wrap stands for: 999,950 + 100 -> 000,050. A score left at 000,000
# would make the uncorrected sum (+999,950 - 999,950) equal a clipped one (+1 - 1).
WRAP_GAIN = 100
RULES = ("raw_rewards", "rollover")
END_STEPS = 3  # NOOP steps after the counters jump to SABER's cap, for the stack to end
WHERE = (
    "Asterix under the stack: 999,950 written into its score (the next step reports "
    "+999,950), then the wrap a +100 gain makes (000,050: the ALE reports -999,900), then "
    "the episode ended through its frame counters"
)


def _score(ram: np.ndarray) -> int:
    value = 0
    for address in SCORE_RAM:
        byte = int(ram[address])
        value = value * 100 + (byte >> 4) * 10 + (byte & 0xF)
    return value


def _write_score(ale: Any, value: int) -> None:
    digits = f"{value:06d}"
    for index, address in enumerate(SCORE_RAM):
        pair = digits[2 * index : 2 * index + 2]
        ale.setRAM(address, int(pair[0]) << 4 | int(pair[1]))


def _points(value: float) -> str:
    """Points as text, signed, whole numbers in full (``+1,000,000``, ``-0.5``)."""
    return f"{value:+,.0f}" if float(value).is_integer() else f"{value:+,g}"


def recorded_scores(info: dict[str, Any]) -> dict[str, float]:
    """The episode scores a stack recorded in a step's info, by where they were found."""
    found = {}
    saber = info.get("saber")
    if isinstance(saber, dict) and "score" in saber:
        found['info["saber"]["score"]'] = float(saber["score"])
    episode = info.get("episode")
    if isinstance(episode, dict) and "r" in episode:
        found['info["episode"]["r"]'] = float(episode["r"])
    return found


class _Play:
    """The probe's steps: what the stack reported, against the score's gain in RAM."""

    def __init__(self, subject: Subject) -> None:
        self.subject = subject
        self.ale = subject.emulator.ale
        self.score = _score(self.ale.getRAM())
        self.true_total = self.score  # gains since the game was loaded (its score was 0)
        self.steps: list[tuple[str, int, float]] = []  # (what, true gain, reported)
        self.ended = False
        self.info: dict[str, Any] = {}

    def step(self, what: str, action: int = 0) -> None:
        emulator = self.subject.emulator
        frames = emulator.frames()
        _, reward, terminated, truncated, info = self.subject.step(action)
        after = _score(self.ale.getRAM())
        gain = after - self.score + (WRAP if after < self.score else 0)
        if (terminated or truncated) and emulator.frames() < frames:
            # A vector env that resets itself at the end (SB3's VecEnv): the RAM is the
            # new episode's, so this last NOOP step's gain cannot be read; none is counted.
            gain = 0
        self.score = after
        self.true_total += gain
        self.steps.append((what, gain, reward))
        self.ended = terminated or truncated
        self.info = info


def probe_rewards(subject: Subject) -> list[RuleResult]:
    """The ``raw_rewards`` and ``rollover`` rules (docs/check.md)."""
    emulator = subject.emulator
    if emulator is None:
        return [unknown("raw_rewards", NO_EMULATOR), unknown("rollover", NO_EMULATOR)]
    restart(subject, PROBE_ROM)
    play = _Play(subject)
    ale = play.ale
    counters = subject.step_counters
    before_steps = [wrapper._elapsed_steps for wrapper in counters]
    before_frames = emulator.frames()
    _write_score(ale, JUMP)
    play.step("jump")
    skip = emulator.frames() - before_frames
    if play.ended:
        return [unknown(rule, f"{WHERE}: the episode ended at the jump") for rule in RULES]
    _write_score(ale, (play.score + WRAP_GAIN) % WRAP)
    wrapped = play.score + WRAP_GAIN >= WRAP
    play.step("wrap")
    if not wrapped or play.steps[-1][1] < WRAP_GAIN:
        return [unknown(rule, f"{WHERE}: the written score did not wrap") for rule in RULES]
    if not play.ended and skip > 0:
        cap = SETTINGS.max_episode_frames
        assert cap is not None
        rates = [
            (wrapper, (wrapper._elapsed_steps - count) / (2 * skip))
            for wrapper, count in zip(counters, before_steps, strict=True)
        ]
        # An unknown state layout leaves the counters: the episode may still end by itself.
        with contextlib.suppress(RuntimeError):
            emulator.set_frame_clocks(cap, rates)
        for _ in range(END_STEPS):
            play.step("end")
            if play.ended:
                break
    return _verdicts(play)


def _verdicts(play: _Play) -> list[RuleResult]:
    jump_gain, jump_reported = play.steps[0][1], play.steps[0][2]
    wrap_gain, wrap_reported = play.steps[1][1], play.steps[1][2]
    records = recorded_scores(play.info) if play.ended else {}
    reported = (
        f"rewards reported: {_points(jump_reported)} for the jump's gain {jump_gain:+,}, "
        f"{_points(wrap_reported)} for the wrap's gain {wrap_gain:+,}"
    )
    if records:
        expected = play.true_total
        raw_ok: list[str] = []
        raw_bad: list[str] = []
        wrap_bad: list[str] = []
        for where, score in records.items():
            # The record, read as the raw sum with the wrap counted some other way.
            counted_wrap = score - (expected - wrap_gain)
            if score == expected:
                raw_ok.append(where)
            elif counted_wrap in (wrap_gain - WRAP, 0.0):  # left as is, or dropped
                raw_ok.append(where)
                wrap_bad.append(f"{where} counts the wrap as {_points(counted_wrap)}")
            else:
                raw_bad.append(f"{where} = {_points(score)}")
        evidence = (
            f"{WHERE}; the score recorded against the sum of the score's gains in RAM since "
            f"the game was loaded, {expected:+,} (the wrap counted +{wrap_gain}); records "
            f"found: {', '.join(f'{k} = {_points(v)}' for k, v in records.items())}; {reported} "
            "(what the agent sees may be clipped or scaled)"
        )
        if raw_bad:
            measured = f"recorded {'; '.join(raw_bad)} for a raw score of {expected:+,}"
            return [
                verdict("raw_rewards", False, measured, evidence),
                unknown("rollover", evidence + ": the score recorded is not raw", measured),
            ]
        raw = verdict("raw_rewards", True, "raw in " + ", ".join(raw_ok), evidence)
        if wrap_bad:
            return [raw, verdict("rollover", False, "; ".join(wrap_bad), evidence)]
        return [raw, verdict("rollover", True, f"+{wrap_gain} recorded for the wrap", evidence)]
    # No record: the score is the sum of the rewards the stack reports.
    why = (
        "the episode ended without a record of its score"
        if play.ended
        else "the episode did not end (no record of its score could be read)"
    )
    evidence = (
        f"{WHERE}; {why}: the score is the sum of the rewards reported, each against the "
        f"score's gain in RAM; {reported}"
    )
    raw_steps = [(gain, got) for what, gain, got in play.steps if what != "wrap"]
    wrong = [(gain, got) for gain, got in raw_steps if got != gain]
    if wrong:
        gain, got = wrong[0]
        measured = f"{_points(got)} reported for a gain of {gain:+,}"
        raw = verdict("raw_rewards", False, measured, evidence)
    else:
        raw = verdict("raw_rewards", True, "raw (rewards reported)", evidence)
    rollover = verdict(
        "rollover",
        wrap_reported == wrap_gain,
        f"{_points(wrap_reported)} reported",
        evidence + f"; the emulator's reward {wrap_gain - WRAP:+,}, the true gain {wrap_gain:+,}",
    )
    if not play.ended and (wrong or wrap_reported != wrap_gain):
        # Rewards transformed, and the episode's end, where a record would show, not reached.
        reason = (
            evidence
            + ": the rewards reported are not the score; whether the stack records a raw score could not be seen"
        )
        return [
            unknown("raw_rewards", reason, raw.measured),
            unknown("rollover", reason, rollover.measured),
        ]
    return [raw, rollover]
