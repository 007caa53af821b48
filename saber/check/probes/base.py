"""What every probe shares: SABER's value of each rule, and the shapes of a verdict."""

from __future__ import annotations

from typing import Any

import numpy as np

from saber.check.result import RuleResult, Status
from saber.check.subject import Subject
from saber.envs.rules import correct_rollover
from saber.errors import ProbeError
from saber.protocol.settings import NUM_ACTIONS, SaberSettings

_S = SaberSettings()
_ROLLOVER_EXAMPLE = -999_950.0

# SABER's value of each rule, as the table shows it; every number comes from SaberSettings.
SABER: dict[str, str] = {
    "sticky_actions": f"{_S.repeat_action_probability} per emulator frame",
    "action_set": f"Discrete({NUM_ACTIONS}), each a distinct emulator action",
    "life_signal": "no `lives` in info, no end at a life loss",
    "noop_starts": "none: 0 frames before the first observation",
    "fire_start": "none: no action before the first observation",
    "stuck_timeout": f"{_S.max_frames_without_reward:,} frames without reward",
    "frame_cap": f"{_S.max_episode_frames:,} frames",
    "raw_rewards": "score recorded: the emulator's rewards, unclipped (the agent's may be)",
    "rollover": (
        f"score recorded: rewards <= {_S.rollover_threshold:,.0f} corrected "
        f"({_ROLLOVER_EXAMPLE:,.0f} -> {correct_rollover(_ROLLOVER_EXAMPLE, _S.rollover_mode):+,.0f})"
    ),
    "frame_skip": f"{_S.frame_skip} frames per step",
    "observation": (
        f"max of the last 2 frames, grayscale, bilinear {_S.screen_size}x{_S.screen_size}"
    ),
    "frame_stack": f"{_S.stack_size} frames",
}
SETTINGS = _S


def passed(rule: str, measured: str, evidence: str) -> RuleResult:
    return RuleResult(rule, SABER[rule], measured, Status.PASS, evidence)


def fail(rule: str, measured: str, evidence: str) -> RuleResult:
    return RuleResult(rule, SABER[rule], measured, Status.FAIL, evidence)


def unknown(rule: str, reason: str, measured: str | None = None) -> RuleResult:
    return RuleResult(rule, SABER[rule], measured, Status.UNKNOWN, reason)


def verdict(rule: str, ok: bool, measured: str, evidence: str) -> RuleResult:
    return (passed if ok else fail)(rule, measured, evidence)


SETTLE_TRIES = 3


NO_EMULATOR = (
    "the emulator under this env cannot be reached (no ale-py ALEInterface at "
    "env.unwrapped.ale, nor under a SyncVectorEnv's first sub-env)"
)


def restart(subject: Subject, rom_id: str | None, seed: int = 0) -> Any:
    """Reset the stack, then (when ``rom_id``) load that game under it; the first observation.

    A wrapper that watches the lives counter sees the new game's count as a change, and
    one that ends episodes at a life loss ends the next step: the probe settles the stack
    with NOOP steps, resetting it (unseeded, which keeps the loaded game under ale-py's
    ``AtariEnv``) and loading the game again where the reset reloaded the old one.
    """
    obs, _ = subject.reset(seed=seed)
    if rom_id is None:
        return obs
    emulator = subject.emulator
    assert emulator is not None
    if getattr(subject, "reset_skipped", False) and emulator.rom_id == rom_id:
        return obs  # a chained probe left this game loaded, unplayed by any reset wrapper
    emulator.swap_rom(rom_id)
    for _ in range(SETTLE_TRIES):
        obs, _, terminated, truncated, _ = subject.step(0)
        if not (terminated or truncated):
            return obs
        obs, _ = subject.reset()
        if emulator.rom_id != rom_id:
            emulator.swap_rom(rom_id)
    raise ProbeError(f"the stack ends every episode at once with {rom_id} loaded under it")


def same(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.array_equal(a, b))
