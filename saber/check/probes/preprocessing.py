"""Preprocessing: frame skip 4, max of the last two frames, grayscale, bilinear 84 x 84, stack 4.

The stack's newest frame is compared pixel for pixel with SABER's pipeline on a twin's
screens of the same Pong frames, and with common alternatives (docs/check.md).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import cv2
import numpy as np

from saber.check.emulator import twin as make_twin
from saber.check.probes.base import NO_EMULATOR, SETTINGS, restart, same, unknown, verdict
from saber.check.result import RuleResult
from saber.check.subject import Subject

PROBE_ROM = "pong"
STEPS = 6  # steps compared where pooling shows (the two last frames differ after resizing)
MAX_STEPS = 300  # Pong's ball appears about 60 steps after the start
Shots = list[tuple[np.ndarray, np.ndarray]]


def _resize(frame: np.ndarray, size: int, interpolation: int) -> np.ndarray:
    return cv2.resize(frame, (size, size), interpolation=interpolation)


def saber_frame(shots: Shots, size: int) -> np.ndarray:
    """SABER's processed frame of one step, from each frame's (grayscale, RGB) screens."""
    pooled = np.maximum(shots[-2][0], shots[-1][0])
    return _resize(pooled, size, cv2.INTER_LINEAR)


def _rgb_pooled_gray(shots: Shots) -> np.ndarray:
    return cv2.cvtColor(np.maximum(shots[-2][1], shots[-1][1]), cv2.COLOR_RGB2GRAY)


# Ways stacks are known to differ; named in the evidence when one matches exactly.
ALTERNATIVES: dict[str, Callable[[Shots, int], np.ndarray]] = {
    "INTER_AREA resize": lambda s, n: _resize(np.maximum(s[-2][0], s[-1][0]), n, cv2.INTER_AREA),
    "last frame only, no max": lambda s, n: _resize(s[-1][0], n, cv2.INTER_LINEAR),
    "last frame only, INTER_AREA": lambda s, n: _resize(s[-1][0], n, cv2.INTER_AREA),
    "max of RGB frames, cv2 grayscale, INTER_AREA": lambda s, n: _resize(
        _rgb_pooled_gray(s), n, cv2.INTER_AREA
    ),
    "max of RGB frames, cv2 grayscale, bilinear": lambda s, n: _resize(
        _rgb_pooled_gray(s), n, cv2.INTER_LINEAR
    ),
}


def stacked_frames(obs: Any) -> np.ndarray | None:
    """An observation as (frames, height, width): a 2-D frame, a stack first or last."""
    array = np.asarray(obs)
    if array.ndim == 2:
        return array[None]
    if array.ndim == 3:
        if array.shape[1] == array.shape[2] != array.shape[0]:
            return array
        if array.shape[0] == array.shape[1] != array.shape[2]:
            return np.moveaxis(array, -1, 0)
    return None


def probe_preprocessing(subject: Subject) -> list[RuleResult]:
    """The ``frame_skip``, ``observation`` and ``frame_stack`` rules."""
    emulator = subject.emulator
    if emulator is None:
        return [
            unknown("frame_skip", NO_EMULATOR),
            unknown("observation", NO_EMULATOR),
            _stack_by_api(subject),
        ]
    restart(subject, PROBE_ROM)
    ale = emulator.ale
    twin = make_twin(PROBE_ROM)
    skips: list[int] = []
    stacks: list[np.ndarray | None] = []
    matches: list[set[str]] = []
    shape = None
    telling = 0  # compared steps where max-pooling changes the frame
    while telling < STEPS and len(skips) < MAX_STEPS:
        state = ale.cloneState()
        before = emulator.frames()
        obs, _, terminated, truncated, _ = subject.step(0)
        skips.append(emulator.frames() - before)
        shots = twin.screens(state, [0] * skips[-1])
        if not same(twin.ale.getRAM(), ale.getRAM()):
            reason = "the step's frames could not be replayed on a twin emulator"
            return [unknown(rule, reason) for rule in ("frame_skip", "observation", "frame_stack")]
        shape = np.asarray(obs).shape
        stack = stacked_frames(obs)
        stacks = [*stacks[-STEPS:], stack]
        if stack is None or len(shots) < 2:
            break
        size = stack.shape[-1]
        expected = saber_frame(shots, size)
        if same(expected, ALTERNATIVES["last frame only, no max"](shots, size)):
            continue  # this step cannot tell pooling from no pooling
        telling += 1
        newest = stack[-1]
        found = {"saber"} if same(newest, expected) else set()
        found |= {name for name, make in ALTERNATIVES.items() if same(newest, make(shots, size))}
        matches.append(found)
        if terminated or truncated:
            break
    skip_rule = verdict(
        "frame_skip",
        set(skips) == {SETTINGS.frame_skip},
        f"{skips[0]} frame{'s' * (skips[0] != 1)} per step"
        if len(set(skips)) == 1
        else f"{skips} frames",
        f"the emulator's frame counter over {len(skips)} NOOP steps on Pong",
    )
    return [skip_rule, _observation(shape, stacks, matches), stack_verdict(shape, stacks)]


def _observation(shape: Any, stacks: list, matches: list[set[str]]) -> RuleResult:
    size = SETTINGS.screen_size
    if not stacks or stacks[-1] is None:
        return verdict("observation", False, f"shape {shape}", "not a stack of square frames")
    frame_size = stacks[-1].shape[-1]
    if not matches:
        return unknown(
            "observation",
            f"no step of {MAX_STEPS} played 2 frames that differ after resizing: pooling "
            "cannot be compared",
        )
    exact = all("saber" in found for found in matches)
    common = set.intersection(*matches) - {"saber"}
    evidence = (
        f"the stack's newest frame against the frames replayed on a twin emulator, "
        f"{len(matches)} NOOP steps on Pong where max-pooling shows: SABER's pipeline matched "
        f"{sum('saber' in f for f in matches)} of {len(matches)} exactly"
    )
    if exact and frame_size == size:
        measured = f"{frame_size}x{frame_size}, equal to SABER's pipeline"
    elif common:
        measured = f"{frame_size}x{frame_size}, as {' or '.join(sorted(common))}"
    else:
        measured = f"{frame_size}x{frame_size}, no known pipeline matches"
    return verdict("observation", exact and frame_size == size, measured, evidence)


def stack_verdict(shape: Any, stacks: list[np.ndarray | None]) -> RuleResult:
    if not stacks or stacks[-1] is None:
        return verdict("frame_stack", False, f"shape {shape}", "not a stack of square frames")
    depth = stacks[-1].shape[0]
    shifts = [
        same(new[:-1], old[1:])
        for old, new in itertools.pairwise(stacks)
        if old is not None and new is not None
    ]
    ok = depth == SETTINGS.stack_size and all(shifts)
    return verdict(
        "frame_stack",
        ok,
        f"{depth} frame{'s' * (depth != 1)}"
        + ("" if all(shifts) else ", not shifted step to step"),
        f"observation shape {shape}; {sum(shifts)} of {len(shifts)} consecutive observations "
        "hold the previous one's frames shifted by one",
    )


def _stack_by_api(subject: Subject) -> RuleResult:
    """The frame stack through the API alone: shape, and the shift between two steps."""
    first, _ = subject.reset(seed=0)
    stacks = [stacked_frames(first)]
    for _ in range(3):
        obs, *_ = subject.step(0)
        stacks.append(stacked_frames(obs))
    return stack_verdict(np.asarray(first).shape, stacks)
