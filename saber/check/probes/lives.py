"""No life signal: no ``lives`` in ``info``, and no episode end at a life loss.

The life loss is provoked under the stack by lowering Breakout's lives counter in RAM
(docs/check.md).
"""

from __future__ import annotations

from saber.check.probes.base import NO_EMULATOR, restart, unknown, verdict
from saber.check.result import RuleResult
from saber.check.subject import Subject

PROBE_ROM = "breakout"
LIVES_RAM = 0xB9 - 0x80  # Breakout's lives counter, as ALEInterface.setRAM indexes RAM
STEPS_AFTER = 4


def probe_lives(subject: Subject) -> list[RuleResult]:
    """The ``life_signal`` rule."""
    _, info = subject.reset(seed=0)
    keys = {"reset"} if "lives" in info else set()
    emulator = subject.emulator
    if emulator is None:
        if keys:
            return [verdict("life_signal", False, "`lives` in info", "reset info, through the API")]
        return [unknown("life_signal", "no `lives` in the reset info; " + NO_EMULATOR)]
    restart(subject, PROBE_ROM)
    ale = emulator.ale
    *_, info = subject.step(0)
    keys |= {"step"} if "lives" in info else set()
    before = ale.lives()
    ale.setRAM(LIVES_RAM, before - 1)
    ended_at_loss = False
    for _ in range(STEPS_AFTER):
        _, _, terminated, truncated, info = subject.step(0)
        keys |= {"step"} if "lives" in info else set()
        if (terminated or truncated) and not ale.game_over():
            ended_at_loss = True
            break
    if ale.lives() != before - 1:
        return [unknown("life_signal", f"the lives counter did not read {before - 1}")]
    problems = []
    if keys:
        problems.append(f"`lives` in the {' and '.join(sorted(keys))} info")
    if ended_at_loss:
        problems.append("episode ended at a life loss")
    evidence = (
        f"Breakout under the stack, lives lowered {before}->{before - 1} through RAM "
        f"0xB9 (the ALE's lives() read {ale.lives()}); the game not over"
    )
    return [verdict("life_signal", not problems, "; ".join(problems) or "none", evidence)]
