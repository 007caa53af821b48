"""The rules of an env whose emulators cannot be reached, measured by following it.

A follower (:mod:`saber.check.follow`) replays each step on a twin of row 0's emulator;
docs/check.md says how each rule is read from its branches.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from saber.check.follow import Follower
from saber.check.probes.actions import NAMES, settled, sticky_rule
from saber.check.probes.base import SETTINGS, unknown, verdict
from saber.check.probes.preprocessing import saber_frame, stack_verdict, stacked_frames
from saber.check.result import RuleResult
from saber.protocol.settings import NUM_ACTIONS

SEEDS = range(5)
STEPS = 700  # informative sticky steps, as the twin-emulator probe
ROUNDS = 6  # tries of each index
REWARD_STEPS = 400  # steps played on, at most, until a reward outside [-1, 1] shows
STUCK_MARGIN = 400  # frames of the stuck timeout played for real
PAST_TIMEOUT = 2_000  # frames played beyond it before giving up
HOLD_STEPS = 2  # steps an index is held to tell apart actions its first step tied
LIFE_HOLD_STEPS = 150  # steps each action is held, at most, for a life to be lost


def _newest(obs: Any) -> np.ndarray:
    stack = stacked_frames(obs)
    assert stack is not None
    return stack[-1]


def probe_followed(subject: Any, draws: int = STEPS) -> list[RuleResult]:
    """Every rule but the stuck timeout, the frame cap and the rollover (docs/check.md)."""
    game = game_text(subject)
    results = _start(subject, game)
    play = _FollowedPlay(subject)
    mapping = _find_action_set(play)
    rng = np.random.default_rng(0)  # one stream: the sticky steps', then the rewards'
    masks = _sticky_masks(play, mapping, draws, rng)
    _play_to_large_reward(play, mapping, rng)
    _play_to_life_loss(play, mapping)
    if play.lost_at is None:  # the episode goes on: one step through the seam ends it
        play.recorded.extend(_end_by_seam(subject))
    lost_at = play.lost_at
    followed = play.steps_taken - (lost_at is not None and lost_at > 0)
    where = (
        f"{game}, row 0 followed from its seeded reset on a twin emulator, every branch "
        f"of each step replayed: {followed} steps"
    )
    skips = play.skips
    results += [
        _action_set(mapping, where, lost_at),
        _sticky(masks, where, lost_at, draws),
        verdict(
            "frame_skip",
            set(skips) == {SETTINGS.frame_skip} and bool(followed),
            f"{sorted(skips)} frames per step",
            f"the engine's frame counter (info['episode_frame_number']) over "
            f"{sum(skips.values())} steps; {where} of that many frames",
        ),
        _observation(where, followed, lost_at),
        _raw(play.rewards, play.recorded, where, lost_at),
        stack_verdict(play.shape, play.stacks[-8:]),
        _lives(
            play.lives_in_info,
            play.lives_shown,
            play.life_losses,
            play.life_loss_ends,
            where,
            play.counts_lives,
        ),
    ]
    return results


class _FollowedPlay:
    """Row 0 of ``subject`` played from its seeded reset (seed 0), each step followed on a
    twin emulator, and what the steps showed.

    Attributes:
        follower: the twin's branches.
        lost_at: None while following goes on; -1 where the episode ended; else the step
            at which no branch matched the env's frame.
        skip: frames per step, as the engine's counter moved over the last step.
    """

    def __init__(self, subject: Any) -> None:
        self.subject = subject
        obs, info = subject.reset(seed=0)
        self.shape = np.asarray(obs).shape
        self.lives_in_info = "lives" in info
        self.lives_shown: set[str] = {repr(info["lives"])} if self.lives_in_info else set()
        self.follower = Follower(
            subject.rom_id, subject.ale_seed(0), SETTINGS.repeat_action_probability
        )
        self.counts_lives = max(self.follower.lives()) > 0
        self.stacks = [stacked_frames(obs)]
        self.frame_numbers: list[int] = []  # the engine's counter, this episode
        self.skips: Counter[int] = Counter()  # frames per step, as the engine's counter moved
        # (reported, the branches' emulator rewards)
        self.rewards: list[tuple[float, set[float]]] = []
        self.recorded: list[float] = []  # the score of the followed episode, where it ended
        self.life_loss_ends: list[int] = []
        self.life_losses = 0
        self.lost_at: int | None = None
        self.skip = SETTINGS.frame_skip  # until measured: the engine's counter over a step
        self.steps_taken = 0

    def step(self, index: int, candidates: list[int] | None) -> list[Any] | None:
        """One step followed; None when it could not be (lost, or the episode ended)."""
        follower = self.follower
        lives_before = follower.lives()
        obs, reward, terminated, truncated, info = self.subject.step(index)
        self._count_frames(info)
        ended = terminated or truncated
        if not ended:  # a game over stops the ALE's frame repeat early (both engines do)
            self.skips[self.skip] += 1
        self.stacks.append(stacked_frames(obs))
        self.steps_taken += 1
        skip = self.skip
        branches = follower.step(candidates, skip, _newest(obs), reward) if skip >= 2 else []
        if ended:
            self._end(reward, info, branches, lives_before)
            return None
        if not branches:
            self.lost_at = self.steps_taken
            return None
        self.rewards.append((reward, {b.reward for b in branches}))
        if _one_lost(lives_before, follower.lives()):
            self.life_losses += 1
        return branches

    def _count_frames(self, info: dict[str, Any]) -> None:
        """Note the step's ``lives`` and the engine's frame counter; ``skip`` from it."""
        self.lives_in_info |= "lives" in info
        if "lives" in info:
            self.lives_shown.add(repr(info["lives"]))
        frame_numbers = self.frame_numbers
        frame_numbers.append(int(info["episode_frame_number"]))
        if len(frame_numbers) >= 2:
            self.skip = frame_numbers[-1] - frame_numbers[-2]
        elif frame_numbers[0] > 0:
            self.skip = frame_numbers[0] - self.follower.start_frames

    def _end(
        self, reward: float, info: dict[str, Any], branches: list[Any], lives_before: set[int]
    ) -> None:
        """The step ended the episode: its record, and the last step's emulator reward."""
        self.rewards.append((reward, {b.reward for b in branches} if branches else {np.nan}))
        self.recorded.extend(_recorded(info))
        # A life lost on the step that ended the episode, the game not over: an end
        # at a life loss. Where the last step cannot be followed, nothing is claimed.
        lives_after = self.follower.lives() if branches else set()
        if _one_lost(lives_before, lives_after):
            self.life_losses += 1
            if min(lives_after) > 0:
                self.life_loss_ends.append(self.steps_taken)
        # The engine restarts an ended game itself at the next step, without a seeded
        # reload: the follower cannot reproduce that start, so following stops here.
        self.lost_at = -1


def _find_action_set(play: _FollowedPlay) -> dict[int, int]:
    """``{index: emulator action}`` of the indices told apart: each index with every
    emulator action as a candidate, then held for a few steps, each branch keeping the
    action it took, until the frames tell one."""
    follower = play.follower
    mapping: dict[int, int] = {}
    order = np.random.default_rng(1)
    for _ in range(ROUNDS):  # in a new order each round: the game moves on between tries
        for index in order.permutation(NUM_ACTIONS).tolist():
            if index in mapping or play.lost_at is not None:
                continue
            follower.untag()
            if play.step(index, list(range(NUM_ACTIONS))) is None:
                continue
            for _ in range(HOLD_STEPS):
                if len(follower.tags()) == 1 or play.step(index, None) is None:
                    break
            tags = follower.tags()
            if len(tags) == 1 and None not in tags:
                mapping[index] = tags.pop()
    return mapping


def _sticky_masks(
    play: _FollowedPlay, mapping: dict[int, int], draws: int, rng: np.random.Generator
) -> Counter[tuple[bool, ...]]:
    """The repeat counts each informative step allows (as the twin-emulator probe): an
    action other than the one held is played, so that a repeat shows."""
    follower = play.follower
    masks: Counter[tuple[bool, ...]] = Counter()
    taken = 0
    while draws and play.lost_at is None and not settled(masks, draws) and taken < 3 * draws:
        held = {previous for _, previous, _ in follower.states}
        # Several states held: any action (the step is not counted).
        choices = [i for i in mapping if mapping[i] not in held] or sorted(mapping)
        if not choices:
            break
        index = choices[int(rng.integers(len(choices)))]
        single = len(follower.states) == 1
        branches = play.step(index, [mapping[index]])
        taken += 1
        if branches is None or not single:
            continue
        mask = tuple(j in {b.repeats for b in branches} for j in range(play.skip + 1))
        if not all(mask):
            masks[mask] += 1
    return masks


def _play_to_large_reward(
    play: _FollowedPlay, mapping: dict[int, int], rng: np.random.Generator
) -> None:
    """Raw rewards: play on until a reward outside [-1, 1] shows (clipping would hide it)."""
    extra = 0
    while mapping and play.lost_at is None and extra < REWARD_STEPS:
        if any(abs(r) > 1 for _, options in play.rewards for r in options):
            break
        index = sorted(mapping)[int(rng.integers(len(mapping)))]
        play.step(index, [mapping[index]])
        extra += 1


def _play_to_life_loss(play: _FollowedPlay, mapping: dict[int, int]) -> None:
    """Life losses: where none was seen yet and the game counts lives, each action is held
    for a while in turn (NOOP last: in many games doing nothing never loses a life)."""
    holds = [i for i in sorted(mapping) if mapping[i] != 0] + [i for i in mapping if not mapping[i]]
    for index in holds if play.counts_lives and play.lost_at is None else []:
        for _ in range(LIFE_HOLD_STEPS):
            if play.life_losses or play.lost_at is not None:
                break
            play.step(index, [mapping[index]])


def game_text(subject: Any) -> str:
    """The followed game, for the evidence: the env's own, or the one loaded under it."""
    return getattr(subject, "game_text", None) or f"{subject.rom_id} (the env's own game)"


def _one_lost(before: set[int], after: set[int]) -> bool:
    """A life was lost on the step: every state held agreed on the lives counter before
    and after, and it went down (a set of counters, one per state held)."""
    return len(before) == len(after) == 1 and min(after) < min(before)


def _start(subject: Any, game: str) -> list[RuleResult]:
    played: list[int] = []
    equal: list[bool] = []
    for seed in SEEDS:
        obs, _ = subject.reset(seed=seed)
        follower = Follower(
            subject.rom_id, subject.ale_seed(seed), SETTINGS.repeat_action_probability
        )
        stack = stacked_frames(obs)
        size = stack.shape[-1]
        shots = [(follower.start_screen, None)] * 2  # the max of a frame with itself
        expected = saber_frame(shots, size)
        equal.append(bool(np.array_equal(stack[-1], expected)) and not stack[:-1].any())
        frames = []
        for _ in range(2):
            *_, info = subject.step(0)
            frames.append(int(info["episode_frame_number"]))
        played.append(frames[0] - (frames[1] - frames[0]) - follower.start_frames)
    text = (
        f"{game}, seeds {SEEDS.start}-{SEEDS.stop - 1}: frames before the first observation "
        f"(the engine's counter after one step, less a step's frames and what the ALE's own "
        f"reset plays): {played}; the first observation equal to SABER's frame of the ALE's "
        f"own reset with row 0's ALE seed (SABER's seed stream) and empty older slots: {equal}"
    )
    noop = verdict("noop_starts", set(played) == {0}, f"{min(played)}-{max(played)} frames", text)
    if all(equal) and set(played) == {0}:
        fire = verdict("fire_start", True, "none", text)
    elif set(played) != {0}:
        fire = unknown("fire_start", text + "; frames were played before the first observation")
    else:
        fire = unknown(
            "fire_start",
            text + "; the start differs from the ALE's own reset (another seeding, or an action)",
        )
    return [noop, fire]


def _lost(lost_at: int | None) -> str:
    if lost_at is None:
        return ""
    if lost_at < 0:
        return "; following stopped where the episode ended"
    return f"; at step {lost_at} no branch matched the env's frame"


def _action_set(mapping: dict[int, int], where: str, lost_at: int | None) -> RuleResult:
    reached = sorted(set(mapping.values()))
    names = ", ".join(f"{i}->{NAMES[a]}" for i, a in sorted(mapping.items()) if i != a)
    unresolved = sorted(set(range(NUM_ACTIONS)) - set(mapping))
    evidence = (
        f"{where}; each index stepped with all {NUM_ACTIONS} emulator actions as candidates"
        + (f"; index->action where not the identity: {names}" if names else "")
        + (f"; indices not told apart by the frames: {unresolved}" if unresolved else "")
        + _lost(lost_at)
    )
    measured = f"Discrete({NUM_ACTIONS}), {len(reached)} distinct emulator actions"
    if unresolved and not names and (lost_at is None or lost_at < 0):
        return unknown("action_set", evidence, measured)
    return verdict("action_set", len(reached) == NUM_ACTIONS, measured, evidence)


def _sticky(masks: Counter, where: str, lost_at: int | None, draws: int) -> RuleResult:
    if not masks:
        return unknown("sticky_actions", f"{where}: no informative step{_lost(lost_at)}")
    return sticky_rule(
        masks,
        f"{where}; {sum(masks.values())} informative steps (one state held before the "
        f"step){_lost(lost_at)}",
    )


def _observation(where: str, followed: int, lost_at: int | None) -> RuleResult:
    ok = followed > 0 and (lost_at is None or lost_at < 0)
    return verdict(
        "observation",
        ok,
        "equal to SABER's pipeline" if ok else "no SABER branch matches",
        f"{where}: each step's newest frame equal to the max of the branch's last 2 ALE "
        f"grayscale frames, bilinear-resized{_lost(lost_at)}",
    )


def _recorded(info: dict[str, Any]) -> list[float]:
    record = info.get("saber")
    return [float(record["score"])] if isinstance(record, dict) and "score" in record else []


def _end_by_seam(subject: Any) -> list[float]:
    """End the followed episode with one NOOP step whose engine output has the episode
    frame counter at SABER's cap and no reward; the score the env records then (empty:
    no seam, or no record)."""
    cap = SETTINGS.max_episode_frames
    assert cap is not None

    def end(handle: Any, frames: Any, rewards: Any, game_over: Any, episode: Any) -> tuple:
        return handle, frames, rewards * 0, game_over, episode - episode + cap

    with subject.tampered(end) as reached:
        *_, info = subject.step(0)
    return _recorded(info) if reached else []


def _raw(
    rewards: list[tuple[float, set[float]]],
    recorded: list[float],
    where: str,
    lost_at: int | None,
) -> RuleResult:
    emulator = [options for _, options in rewards]
    large = any(abs(r) > 1 for options in emulator for r in options)
    differ = sum(got not in options for got, options in rewards)
    seen = sorted({r for options in emulator for r in options if not np.isnan(r)})
    evidence = (
        f"{where}: the score recorded (info['saber']['score']) against the sum of the "
        f"matching branches' emulator rewards; emulator rewards seen: {seen}; "
        f"{differ} steps reported otherwise to the agent (what the agent sees may be "
        "clipped)" + _lost(lost_at if lost_at is None or lost_at > 0 else None)
    )
    if not recorded:
        return unknown("raw_rewards", evidence + ": no record of the score could be read")
    # A step's emulator reward: the branches' one, or, where they differ, the reported
    # one if a branch has it (the follower then keeps only the branches that have it).
    values = [
        got if got in options else (min(options) if len(options) == 1 else np.nan)
        for got, options in rewards
    ]
    if any(np.isnan(value) for value in values):
        return unknown(
            "raw_rewards", evidence + ": a step's emulator reward is not known (branches differ)"
        )
    expected = sum(values)
    score = recorded[0]
    measured = f"recorded {score:+,.0f} for a raw score of {expected:+,.0f}"
    if score != expected:
        return verdict("raw_rewards", False, measured, evidence)
    if not large:
        return unknown(
            "raw_rewards", evidence + ": none outside [-1, 1], clipping cannot be told", measured
        )
    return verdict("raw_rewards", True, f"raw: {score:+,.0f} recorded", evidence)


def _lives(
    in_info: bool, shown: set[str], losses: int, ends: list[int], where: str, counted: bool
) -> RuleResult:
    # A `lives` key whose value never moved while lives were lost tells the agent nothing
    # (saber.envpool's, always 0, kept for envpool's scripts: docs/protocol.md): no signal.
    silent = in_info and losses > 0 and len(shown) == 1
    problems = (["`lives` in info"] if in_info and not silent else []) + (
        [f"episode ended at a life loss (steps {ends})"] if ends else []
    )
    evidence = f"{where}; life losses seen by the follower: {losses}"
    if silent:
        evidence += f"; `lives` in info, always {next(iter(shown))}: it told none of them"
    if not counted:  # the behaviour is SABER's whatever a wrapper would do at a life loss
        evidence += "; the game counts no lives (the ALE's lives() is 0): none can be lost"
    if problems or losses or not counted:
        return verdict("life_signal", not problems, "; ".join(problems) or "none", evidence)
    return unknown("life_signal", f"no `lives` in info, but no life was lost: {evidence}")


def probe_stuck_clock(subject: Any) -> list[RuleResult]:
    """The ``stuck_timeout`` rule under an advanced clock: playing 18,000 frames of a game
    whose NOOP never scores is not possible on every game, so the env's own clock of
    frames since the last reward is moved back by all but ``STUCK_MARGIN`` frames, and
    NOOP steps are played until the env truncates."""
    timeout = SETTINGS.max_frames_without_reward
    assert timeout is not None
    subject.reset(seed=0)
    advanced = timeout - STUCK_MARGIN
    if not subject.advance_reward_clock(advanced):
        return [unknown("stuck_timeout", "the env's state has no clock of frames since a reward")]
    frame = 0
    end = None
    while frame < STUCK_MARGIN + PAST_TIMEOUT:
        _, reward, terminated, truncated, info = subject.step(0)
        frame = int(info["episode_frame_number"])
        if reward != 0:
            return [unknown("stuck_timeout", f"NOOP scored on {subject.rom_id}")]
        if terminated or truncated:
            end = "truncated" if truncated else "terminated"
            break
    evidence = (
        f"{game_text(subject)}, NOOP from a seeded reset, no reward; the env's clock of "
        f"frames since the last reward ({subject.reward_clock}) moved "
        f"back {advanced:,} frames, then {frame:,} frames played (the engine's counter); "
        "inferred, not measured: that play without reward moves that clock the same way"
    )
    if end is None:
        return [verdict("stuck_timeout", False, f"none in {advanced + frame:,} frames", evidence)]
    steps = frame // SETTINGS.frame_skip
    at_once = steps <= 1  # the clock was past the env's timeout before any play
    return [
        verdict(
            "stuck_timeout",
            end == "truncated" and advanced + frame == timeout and not at_once,
            f"{end} {'within' if at_once else 'at'} {advanced + frame:,} frames",
            evidence,
        )
    ]
