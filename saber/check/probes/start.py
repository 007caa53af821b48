"""Episode start: the game's own start state, no no-op starts, no automatic FIRE.

After each seeded reset the probe reads the emulator's own episode frame counter (the
frames played since the ALE reset the game, before the agent's first observation) and
replays that many NOOP frames on a twin emulator from the game's start state: equal RAM
means only no-ops were played, a difference means some other action (FIRE) was.
"""

from __future__ import annotations

from saber.check.emulator import twin as make_twin
from saber.check.probes.base import NO_EMULATOR, same, unknown, verdict
from saber.check.result import RuleResult
from saber.check.subject import Subject

__all__ = ["probe_start"]

SEEDS = range(5)


def probe_start(subject: Subject, seeds: range = SEEDS) -> list[RuleResult]:
    """The ``noop_starts`` and ``fire_start`` rules, over seeded resets (5 by default)."""
    emulator = subject.emulator
    if emulator is None:
        return [unknown("noop_starts", NO_EMULATOR), unknown("fire_start", NO_EMULATOR)]
    rom = emulator.rom_id
    if rom is None:
        reason = "the ROM under the stack is not one ale-py ships"
        return [unknown("noop_starts", reason), unknown("fire_start", reason)]
    twin = make_twin(rom)
    start = twin.start
    frames: list[int] = []
    only_noops: list[bool] = []
    for seed in seeds:
        subject.reset(seed=seed)
        played = emulator.frames() - twin.start_frames
        frames.append(played)
        # Nothing played beyond the ALE's own reset: nothing added (that reset may itself
        # differ from the twin's: Double Dunk's plays its mode selection with sticky draws).
        only_noops.append(
            played <= 0 or same(twin.replay(start, [0] * played), emulator.ale.getRAM())
        )
    seeds_text = (
        f"seeds {seeds.start}-{seeds.stop - 1}" if len(seeds) > 1 else f"seed {seeds.start}"
    )
    counted = (
        f"emulator frames played before the first observation ({seeds_text}, the ALE's "
        f"episode counter, less the {twin.start_frames} its own reset plays for this game): "
        f"{frames}"
    )
    varies = len(set(frames)) > 1
    noop_measured = f"{min(frames)}-{max(frames)} frames" if varies else f"{frames[0]} frames"
    noops = any(count > 0 and noop for count, noop in zip(frames, only_noops, strict=True))
    noop_rule = verdict(
        "noop_starts",
        not varies and not noops,
        noop_measured,
        counted
        + ("; a random number of them per seed" if varies else "")
        + ("; NOOP frames replayed on a twin emulator reproduce the start" if noops else ""),
    )
    other = [seed for seed, noop in zip(seeds, only_noops, strict=True) if not noop]
    fire_rule = verdict(
        "fire_start",
        not other,
        "actions other than NOOP at the start" if other else "none",
        counted
        + (
            f"; with seeds {other} the start is not reproduced by NOOPs alone on a twin "
            "emulator: another action (FIRE) was played"
            if other
            else "; no frame beyond the ALE's own reset, or only NOOP frames (a twin replays them)"
        ),
    )
    return [noop_rule, fire_rule]
