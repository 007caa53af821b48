"""The rules of an env whose emulator is out of reach but whose RAM is reported: envpool.

A twin emulator follows env 0 by ``info["ram"]``; docs/check.md says how each rule is read
from it, and why the rollover stays unknown.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import ale_py
import numpy as np

from saber.check.emulator import ACTIONS, Twin
from saber.check.emulator import twin as make_twin
from saber.check.probes.actions import NAMES, settled, sticky_rule
from saber.check.probes.base import SETTINGS, unknown, verdict
from saber.check.probes.preprocessing import (
    ALTERNATIVES,
    saber_frame,
    stack_verdict,
    stacked_frames,
)
from saber.check.result import RuleResult
from saber.protocol.settings import NUM_ACTIONS

SEEDS = range(5)
MAX_START_FRAMES = 400  # NOOP frames searched before the first observation (30 no-ops of 4)
MAX_FIRE_FRAMES = 8  # FIRE frames searched after them
MAX_SKIP = 16  # frames per step searched on the first step
ROUNDS = 3  # tries of each index
STEPS = 700  # informative sticky steps, as the twin-emulator probe
MAX_STATES = 32  # branches kept at most (one per RAM)
PLAY_FRAMES = 130_000  # NOOP frames played, at most, for the timeout and the cap
Shots = list[tuple[np.ndarray, np.ndarray]]


class RamFollower:
    """A twin that follows an env by its RAM, branch by branch.

    Args:
        rom_id: the env's game.
    """

    def __init__(self, rom_id: str) -> None:
        # A fresh emulator's own reset (the shared twin has played on since it was made).
        self.reset_state = Twin(rom_id).ale.cloneState()
        self.ale = make_twin(rom_id).ale
        self.states: list[tuple[ale_py.ALEState, int]] = []

    def find_start(self, ram: np.ndarray) -> tuple[int, int] | None:
        """The fewest ``(k, f)``: ``k`` NOOP frames, then ``f`` FIRE frames, after the
        ALE's own reset, that give ``ram``; the follower then starts there. None: none."""
        ale = self.ale
        ale.restoreState(self.reset_state)
        for noops in range(MAX_START_FRAMES + 1):
            after_noops = ale.cloneState()
            for fires in range(MAX_FIRE_FRAMES + 1):
                if np.array_equal(ale.getRAM(), ram):
                    self.states = [(ale.cloneState(), 1 if fires else 0)]
                    return noops, fires
                ale.act(ACTIONS[1])
            ale.restoreState(after_noops)
            ale.act(ACTIONS[0])
        self.states = []
        return None

    def step(
        self, candidates: list[int], frames: int, ram: np.ndarray
    ) -> list[tuple[int, int, float, Shots]]:
        """The branches ``(action, repeats, emulator reward, last two screens)`` of one
        step whose RAM equals ``ram``; the states kept are theirs (empty: lost)."""
        ale = self.ale
        found = []
        # One state per RAM: actions that leave the same RAM (Breakout's UP and NOOP) are
        # the same to the game from there, so the first one played stands for them.
        kept: dict[bytes, tuple[ale_py.ALEState, int]] = {}
        for state, previous in self.states:
            for action in candidates:
                counts = [0] if action == previous else range(frames + 1)
                for repeats in counts:
                    ale.restoreState(state)
                    points = 0.0
                    shots: Shots = []
                    for frame in range(frames):
                        points += ale.act(ACTIONS[previous if frame < repeats else action])
                        if frame >= frames - 2:
                            shots.append((ale.getScreenGrayscale(), ale.getScreenRGB()))
                    if not np.array_equal(ale.getRAM(), ram):
                        continue
                    same = range(frames + 1) if action == previous else [repeats]
                    found += [(action, j, points, shots) for j in same]
                    played = previous if repeats == frames else action
                    kept.setdefault(ale.getRAM().tobytes(), (ale.cloneState(), played))
        self.states = list(kept.values())[:MAX_STATES]
        return found

    def lives(self) -> set[int]:
        found = set()
        for state, _ in self.states:
            self.ale.restoreState(state)
            found.add(int(self.ale.lives()))
        return found


def _ram(info: dict[str, Any]) -> np.ndarray:
    return np.asarray(info["ram"], dtype=np.uint8).reshape(-1)


def probe_ram_followed(subject: Any) -> list[RuleResult]:
    """Every rule, by following env 0's RAM (docs/check.md)."""
    rom = subject.rom_id
    follower = RamFollower(rom)
    game = f"{rom} (the env's own game), env 0 followed by its RAM (info['ram']) on a twin"
    results = _start(subject, follower, game)
    play = _RamPlay(subject, follower)
    if play.start is None or play.skip is None:
        why = f"{game}: no start or first step of the twin matches the env's RAM"
        rules = ("action_set", "sticky_actions", "frame_skip", "observation", "raw_rewards")
        found = [unknown(rule, why) for rule in rules]
        return [
            *results,
            *found,
            stack_verdict(play.obs.shape, play.stacks),
            _lives(play.lives_in_info, [], why),
        ]
    n = play.n
    possible = _possible_actions(play)
    masks = _sticky_masks(play, possible)
    where = f"{game}: {play.steps} steps followed" + (
        "" if not play.lost else ", to the episode's end or a step no branch matched"
    )
    results += [
        _action_set(n, possible, where),
        sticky_rule(masks, f"{where}; {sum(masks.values())} informative steps")
        if masks
        else unknown("sticky_actions", f"{where}: no informative step"),
        verdict(
            "frame_skip",
            play.skip == SETTINGS.frame_skip,
            f"{play.skip} frames per step",
            f"{game}: the frames per step that reproduce the env's RAM, then every followed "
            f"step's RAM reproduced with that many ({play.steps} steps)",
        ),
        _observation(play.observed, where),
        _raw(play.rewards, where),
        unknown(
            "rollover",
            f"{game}: the score cannot be written into the env's emulator (out of reach) to "
            "provoke a wrap, and the env keeps no record of the score to read",
        ),
        stack_verdict(np.asarray(play.obs).shape, play.stacks[-8:]),
        _lives(play.lives_in_info, play.life_loss_ends, where),
    ]
    results += _play_out(subject, play.skip, game)
    return results


class _RamPlay:
    """Env 0 of ``subject`` played from its reset (seed 0), each step followed by its RAM,
    and what the steps showed.

    Attributes:
        start: the twin's start (NOOP frames, FIRE frames) matching the env's first RAM,
            or None: none.
        skip: the frames of the first NOOP step (the fewest that reproduce its RAM), or
            None: none.
        lost: following stopped (the episode ended, or no branch matched).
    """

    def __init__(self, subject: Any, follower: RamFollower) -> None:
        self.subject = subject
        self.follower = follower
        self.obs, info = subject.reset(seed=0)
        self.lives_in_info = "lives" in info
        self.start = follower.find_start(_ram(info))
        self.n = int(subject.action_space.n)
        self.stacks = [stacked_frames(self.obs)]
        self.skip = _frame_skip(subject, follower, self.stacks)
        self.observed: list[set[str]] = []  # the pipelines each one-branch step matched
        self.rewards: list[tuple[float, set[float]]] = []  # (reported, the branches')
        self.life_loss_ends: list[int] = []
        self.steps = 0
        self.lost = False

    def step(self, index: int, candidates: list[int]) -> list[tuple[int, int, float, Shots]] | None:
        """One step followed; None when it could not be (lost, or the episode ended)."""
        follower = self.follower
        assert self.skip is not None
        before = follower.lives()
        obs, reward, terminated, truncated, info = self.subject.step(index)
        self.lives_in_info |= "lives" in info
        self.stacks.append(stacked_frames(obs))
        self.steps += 1
        branches = follower.step(candidates, self.skip, _ram(info))
        if not branches:
            self.lost = True
            return None
        self.rewards.append((reward, {points for _, _, points, _ in branches}))
        newest = self.stacks[-1][-1] if self.stacks[-1] is not None else None
        if newest is not None and len(follower.states) == 1:  # one RAM: one screen
            self.observed.append(_pipelines(branches[0][3], newest))
        after = follower.lives()
        if terminated or truncated:
            if len(before) == len(after) == 1 and 0 < min(after) < min(before):
                self.life_loss_ends.append(self.steps)
            self.lost = True  # the env restarts its game itself: following stops
            return None
        return branches


def _possible_actions(play: _RamPlay) -> dict[int, set[int]]:
    """The emulator actions each index may play: those that matched every time it was
    stepped (actions that leave the same RAM stay together: Breakout's UP and NOOP)."""
    possible = {index: set(range(NUM_ACTIONS)) for index in range(play.n)}
    for _ in range(ROUNDS):
        for index in range(play.n):
            if len(possible[index]) == 1 or play.lost:
                continue
            branches = play.step(index, sorted(possible[index]))
            matched = {action for action, *_ in branches or []}
            possible[index] = (possible[index] & matched) or possible[index]
    return possible


def _sticky_masks(play: _RamPlay, possible: dict[int, set[int]]) -> Counter[tuple[bool, ...]]:
    """The repeat counts each informative step allows (as the twin-emulator probe): an
    index that cannot play the action held is stepped, so that a repeat shows."""
    assert play.skip is not None
    follower = play.follower
    masks: Counter[tuple[bool, ...]] = Counter()
    rng = np.random.default_rng(0)
    taken = 0
    while not play.lost and not settled(masks, STEPS) and taken < 3 * STEPS:
        held = {previous for _, previous in follower.states}
        choices = [i for i in range(play.n) if not possible[i] & held]
        if not choices:
            break
        index = choices[int(rng.integers(len(choices)))]
        single = len(follower.states) == 1
        branches = play.step(index, sorted(possible[index]))
        taken += 1
        if branches is None or not single:
            continue
        mask = tuple(j in {b[1] for b in branches} for j in range(play.skip + 1))
        if not all(mask):
            masks[mask] += 1
    return masks


def _start(subject: Any, follower: RamFollower, game: str) -> list[RuleResult]:
    found = []
    for seed in SEEDS:
        _, info = subject.reset(seed=seed)
        found.append(follower.find_start(_ram(info)))
    text = (
        f"{game}, {len(SEEDS)} resets: the fewest (NOOP frames, FIRE frames) after the ALE's "
        f"own reset that give the env's first RAM: {found}"
    )
    if any(start is None for start in found):
        why = (
            text + f" (None: none within {MAX_START_FRAMES} NOOP and {MAX_FIRE_FRAMES} FIRE frames)"
        )
        starts = [s for s in found if s is not None]
        if any(sum(s) for s in starts):  # frames before the first observation all the same
            return [
                verdict("noop_starts", False, f"up to {max(s[0] for s in starts)} frames", why),
                unknown("fire_start", why),
            ]
        return [unknown("noop_starts", why), unknown("fire_start", why)]
    noops = [s[0] for s in found]
    fires = [s[1] for s in found]
    return [
        verdict("noop_starts", not any(noops), f"{min(noops)}-{max(noops)} frames", text),
        verdict(
            "fire_start",
            not any(fires),
            "FIRE at the start" if any(fires) else "none",
            text,
        ),
    ]


def _frame_skip(subject: Any, follower: RamFollower, stacks: list) -> int | None:
    """The frames of the first NOOP step (the fewest that reproduce its RAM), or None."""
    states = list(follower.states)
    obs, *_, info = subject.step(0)
    stacks.append(stacked_frames(obs))
    ram = _ram(info)
    for frames in range(1, MAX_SKIP + 1):
        follower.states = list(states)
        if follower.step([0], frames, ram):
            return frames
    return None


def _pipelines(shots: Shots, newest: np.ndarray) -> set[str]:
    size = newest.shape[-1]
    found = {"saber"} if np.array_equal(saber_frame(shots, size), newest) else set()
    return found | {
        name for name, make in ALTERNATIVES.items() if np.array_equal(make(shots, size), newest)
    }


def _action_set(n: int, possible: dict[int, set[int]], where: str) -> RuleResult:
    told = {index: actions for index, actions in possible.items() if len(actions) == 1}
    names = ", ".join(f"{i}->{NAMES[min(a)]}" for i, a in sorted(told.items()))
    evidence = (
        f"{where}; each index stepped with the emulator actions it may play as candidates "
        f"(all {NUM_ACTIONS} at first); told apart: {names or 'none'}"
    )
    measured = f"Discrete({n})"
    if n != NUM_ACTIONS:
        return verdict("action_set", False, measured, evidence)
    reached = {min(a) for a in told.values()}
    if len(reached) < len(told):
        return verdict("action_set", False, measured + ", two indices play one action", evidence)
    if len(told) < n:
        return unknown(
            "action_set", evidence + f"; {n - len(told)} indices not told apart", measured
        )
    return verdict("action_set", True, measured + f", {n} distinct emulator actions", evidence)


def _observation(observed: list[set[str]], where: str) -> RuleResult:
    if not observed:
        return unknown("observation", f"{where}: no step with one branch to compare")
    exact = all("saber" in found for found in observed)
    common = set.intersection(*observed) - {"saber"}
    evidence = (
        f"{where}: the env's newest frame against the followed branch's last 2 screens, "
        f"{len(observed)} steps: SABER's pipeline matched {sum('saber' in f for f in observed)}"
    )
    if exact:
        return verdict("observation", True, "equal to SABER's pipeline", evidence)
    measured = f"as {' or '.join(sorted(common))}" if common else "no known pipeline matches"
    return verdict("observation", False, measured, evidence)


def _raw(rewards: list[tuple[float, set[float]]], where: str) -> RuleResult:
    differ = [(got, options) for got, options in rewards if got not in options]
    seen = sorted({r for _, options in rewards for r in options})
    evidence = (
        f"{where}: no record of the score (info['saber'], info['episode']), so the rewards "
        f"reported are the score: each against the followed branch's emulator reward; "
        f"emulator rewards seen: {seen}"
    )
    if differ:
        got, options = differ[0]
        measured = f"{got:+g} reported for an emulator reward {min(options):+g}"
        return verdict("raw_rewards", False, measured, evidence + f"; {len(differ)} steps differ")
    if not any(abs(r) > 1 for r in seen):
        return unknown("raw_rewards", evidence + ": none outside [-1, 1], clipping cannot be told")
    return verdict("raw_rewards", True, "raw (rewards reported)", evidence)


def _lives(in_info: bool, ends: list[int], where: str) -> RuleResult:
    problems = (["`lives` in info"] if in_info else []) + (
        [f"episode ended at a life loss (steps {ends})"] if ends else []
    )
    if problems:
        return verdict("life_signal", False, "; ".join(problems), where)
    return unknown("life_signal", f"no `lives` in info, but no life loss was seen: {where}")


def _play_out(subject: Any, skip: int, game: str) -> list[RuleResult]:
    """NOOP from a reset until the env truncates: the stuck timeout and the frame cap."""
    timeout, cap = SETTINGS.max_frames_without_reward, SETTINGS.max_episode_frames
    assert timeout is not None and cap is not None
    subject.reset(seed=0)
    frame = last_reward = 0
    end = None
    while frame < PLAY_FRAMES:
        _, reward, terminated, truncated, _ = subject.step(0)
        frame += skip
        if reward:
            last_reward = frame
        if terminated or truncated:
            end = "truncated" if truncated and not terminated else "terminated"
            break
    evidence = (
        f"{game}: NOOP steps from a reset until the env ended the episode, frames counted as "
        f"steps times the {skip} frames per step measured; "
        + (f"last reward at frame {last_reward:,}" if last_reward else "no reward")
    )
    if end == "terminated":
        why = evidence + f"; the game ended at frame {frame:,} before any truncation"
        return [unknown("stuck_timeout", why), unknown("frame_cap", why)]
    since = frame - last_reward
    if end is None:
        stuck = verdict(
            "stuck_timeout", False, f"none in {since:,} frames without reward", evidence
        )
        return [
            stuck,
            unknown(
                "frame_cap",
                evidence + f"; none in {frame:,} frames: SABER's cap cannot be played out",
            ),
        ]
    if since == timeout:
        stuck = verdict(
            "stuck_timeout", True, f"truncated {since:,} frames without reward", evidence
        )
        return [
            stuck,
            unknown(
                "frame_cap",
                evidence
                + "; the stuck timeout ended the episode first: SABER's cap cannot be played out",
            ),
        ]
    if since < timeout:
        stuck = verdict(
            "stuck_timeout", False, f"truncated {since:,} frames without reward", evidence
        )
    else:
        stuck = verdict(
            "stuck_timeout", False, f"none in {timeout:,} frames without reward", evidence
        )
    return [stuck, verdict("frame_cap", frame == cap, f"truncated at {frame:,} frames", evidence)]
