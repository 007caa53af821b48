"""Episode start: the game's own start state, no no-op starts, no automatic FIRE.

The frames played before the first observation are replayed as NOOP on a fresh emulator:
equal RAM means only no-ops were played (docs/check.md).
"""

from __future__ import annotations

import ale_py
from ale_py import roms

from saber.check.probes.base import NO_EMULATOR, same, unknown, verdict
from saber.check.result import RuleResult
from saber.check.subject import Subject

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
    frames: list[int] = []
    own: list[int] = []
    only_noops: list[bool] = []
    for seed in seeds:
        subject.reset(seed=seed)
        # The ALE's own reset may play frames (Berzerk: 20), with sticky draws (Double
        # Dunk's mode selection): a fresh emulator with the same settings and seed
        # reproduces it; what the stack played is beyond that.
        reference = _same_emulator(emulator.ale, rom)
        own.append(int(reference.getEpisodeFrameNumber()))
        played = emulator.frames() - own[-1]
        frames.append(played)
        if played > 0:
            for _ in range(played):
                reference.act(ale_py.Action.NOOP)
        only_noops.append(played <= 0 or same(reference.getRAM(), emulator.ale.getRAM()))
    seeds_text = (
        f"seeds {seeds.start}-{seeds.stop - 1}" if len(seeds) > 1 else f"seed {seeds.start}"
    )
    counted = (
        f"emulator frames played before the first observation ({seeds_text}, the ALE's "
        f"episode counter, less the {sorted(set(own))} frames its own reset plays, as a fresh "
        f"emulator with the same settings and seed shows): {frames}"
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
            f"; with seeds {other} the start is not reproduced by NOOPs alone on a fresh "
            "emulator with the same settings and seed: another action (FIRE) was played"
            if other
            else "; no frame beyond the ALE's own reset, or only NOOPs (replayed on a fresh "
            "emulator with the same settings and seed)"
        ),
    )
    return [noop_rule, fire_rule]


def _same_emulator(ale: ale_py.ALEInterface, rom_id: str) -> ale_py.ALEInterface:
    """A fresh emulator of ``rom_id`` with ``ale``'s seed and sticky probability, reset."""
    fresh = ale_py.ALEInterface()
    fresh.setLoggerMode(ale_py.LoggerMode.Error)
    fresh.setInt("random_seed", ale.getInt("random_seed"))
    fresh.setFloat("repeat_action_probability", ale.getFloat("repeat_action_probability"))
    fresh.loadROM(roms.get_rom_path(rom_id))
    fresh.reset_game()
    return fresh
