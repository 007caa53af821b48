"""Raw rewards and the rollover correction, through the stack's own rewards.

Asterix keeps its score in 6 BCD digits at RAM 0xDE-0xE0. The probe loads Asterix under
the stack, writes 999,900 into the score (the ALE reads the jump as a reward of
+999,900) and plays random actions until the score wraps past 1,000,000: the emulator then
reports the gain minus 1,000,000 (a real rollover, made by the game's own code). Every
step's true gain is read from the score in RAM; the stack must report each gain as is
(raw: no clipping) and the wrapped one corrected (``r + 10**ceil(log10(-r))``).
"""

from __future__ import annotations

import numpy as np
from gymnasium.spaces import Discrete

from saber.check.probes.base import NO_EMULATOR, restart, unknown, verdict
from saber.check.result import RuleResult
from saber.check.subject import Subject

__all__ = ["probe_rewards"]

PROBE_ROM = "asterix"
SCORE_RAM = (0xDE - 0x80, 0xDF - 0x80, 0xE0 - 0x80)  # BCD, most significant first
START_SCORE = (0x99, 0x99, 0x00)  # 999,900
WRAP = 1_000_000
MAX_STEPS = 3_000


def _score(ram: np.ndarray) -> int:
    value = 0
    for address in SCORE_RAM:
        byte = int(ram[address])
        value = value * 100 + (byte >> 4) * 10 + (byte & 0xF)
    return value


def probe_rewards(subject: Subject) -> list[RuleResult]:
    """The ``raw_rewards`` and ``rollover`` rules."""
    emulator = subject.emulator
    if emulator is None:
        return [unknown("raw_rewards", NO_EMULATOR), unknown("rollover", NO_EMULATOR)]
    space = subject.action_space
    actions = space.n if isinstance(space, Discrete) else 1
    restart(subject, PROBE_ROM)
    ale = emulator.ale
    before = _score(ale.getRAM())  # the first step's gain is the jump written here
    for address, value in zip(SCORE_RAM, START_SCORE, strict=True):
        ale.setRAM(address, value)
    rng = np.random.default_rng(0)
    mismatches: list[tuple[int, float]] = []
    checked = 0
    rollover: tuple[int, float] | None = None
    ended = False
    for _ in range(MAX_STEPS):
        _, reward, terminated, truncated, _ = subject.step(int(rng.integers(actions)))
        after = _score(ale.getRAM())
        if after < before:
            rollover = (after - before + WRAP, reward)
            break
        if after != before:
            checked += 1
            if reward != after - before:
                mismatches.append((after - before, reward))
        before = after
        if terminated or truncated:
            ended = True
            break
    where = "Asterix under the stack, score set to 999,900 through RAM, random actions"
    if checked == 0:
        raw = unknown("raw_rewards", where + ": no step scored")
    else:
        gain, got = mismatches[0] if mismatches else (0, 0.0)
        raw = verdict(
            "raw_rewards",
            not mismatches,
            f"{got:+,g} reported for a gain of {gain:+,}" if mismatches else "raw",
            f"{where}: {checked} scoring steps, {len(mismatches)} reported otherwise than "
            "the score's gain in RAM",
        )
    if rollover is None:
        why = "the episode ended" if ended else f"{MAX_STEPS:,} steps passed"
        return [raw, unknown("rollover", f"{where}: {why} before the score wrapped")]
    gain, got = rollover
    emulator_reward = gain - WRAP
    return [
        raw,
        verdict(
            "rollover",
            got == gain,
            f"{got:+,g} reported",
            f"{where}: the score wrapped; the emulator's reward {emulator_reward:+,}, the "
            f"true gain {gain:+,}",
        ),
    ]
