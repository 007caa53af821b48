"""saber check on real stacks: SABER passes every rule; each popular setup is caught where
it differs, with the value it really has (known answers: 27,000 steps x 4 = 108,000)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import pytest

from saber.check import CheckResult, Status, check
from saber.check.probes import RULES
from saber.check.probes.actions import probe_actions
from saber.check.probes.limits import probe_frame_cap, probe_stuck_timeout
from saber.check.probes.rewards import probe_rewards
from saber.check.subject import subject_of
from saber.errors import ExitCode
from tests.check import stacks


def measured(result: CheckResult, rule: str) -> str | None:
    return next(r.measured for r in result.rules if r.rule == rule)


def statuses(result: CheckResult) -> dict[str, str]:
    return {rule.rule: rule.status.value for rule in result.rules}


@pytest.fixture
def saber_breakout(setup_check: Callable[[str], CheckResult]) -> CheckResult:
    """SABER/Breakout checked (the probes of a few rules play other games: Pong, Boxing)."""
    return setup_check("SABER")


def test_saber_passes_every_rule(saber_breakout: CheckResult) -> None:
    assert [rule.rule for rule in saber_breakout.rules] == list(RULES)
    assert statuses(saber_breakout) == dict.fromkeys(RULES, "pass")
    assert saber_breakout.passed and saber_breakout.exit_code == 0
    assert measured(saber_breakout, "stuck_timeout") == (
        "truncated 18,000 frames after a reward (at frame 408); "
        "truncated at 18,000 frames from the start"
    )
    assert measured(saber_breakout, "frame_cap") == "truncated at 21,600,000 frames"
    assert measured(saber_breakout, "raw_rewards") == 'raw in info["saber"]["score"]'
    assert measured(saber_breakout, "rollover") == "+100 recorded for the wrap"


def test_most_sticky_steps_tell_the_repeat_count(saber_breakout: CheckResult) -> None:
    """The sticky steps pick actions whose joysticks differ most (probes.actions.contrast):
    on Boxing most steps leave one repeat count possible (random picks: about 60% at 4
    frames a step), so the interval settles at an early look."""
    evidence = next(r.evidence for r in saber_breakout.rules if r.rule == "sticky_actions")
    found = re.search(r"(\d+) steps on Boxing \((\d+) with one repeat count possible", evidence)
    assert found, evidence
    steps, exact = map(int, found.groups())
    assert exact >= 0.8 * steps and steps <= 400, evidence


def test_ale_v5_defaults_fail_where_they_differ(
    setup_check: Callable[[str], CheckResult],
) -> None:
    result = setup_check("ale-py v5")  # ALE/Breakout-v5
    assert statuses(result) == {
        "sticky_actions": "pass",  # v5 has SABER's 0.25
        "action_set": "fail",
        "life_signal": "fail",  # `lives` in info
        "noop_starts": "pass",
        "fire_start": "pass",
        "stuck_timeout": "fail",
        "frame_cap": "fail",
        "raw_rewards": "pass",
        "rollover": "fail",
        "frame_skip": "pass",
        "observation": "fail",  # 210 x 160 RGB
        "frame_stack": "fail",
    }
    assert measured(result, "action_set") == "Discrete(4), 4 distinct emulator actions"
    assert measured(result, "frame_cap") == "truncated at 108,000 frames"
    assert (
        measured(result, "stuck_timeout") == "none in 20,000 frames after a reward (at frame 408)"
    )
    assert measured(result, "rollover") == "-999,900 reported"  # no record: the rewards
    assert result.exit_code is ExitCode.FAILED


def test_gymnasium_preprocessing_is_caught_on_life_loss_noops_and_resize() -> None:
    result = check(stacks.gymnasium_preprocessing)
    states = statuses(result)
    for rule in ("life_signal", "noop_starts", "observation", "frame_stack", "frame_cap"):
        assert states[rule] == "fail", rule
    assert "episode ended at a life loss" in measured(result, "life_signal")
    assert "INTER_AREA" in measured(result, "observation")
    assert measured(result, "frame_stack") == "1 frame"
    assert states["fire_start"] == "pass" and states["raw_rewards"] == "pass"


def test_a_users_time_limit_above_saber_is_caught_with_its_value() -> None:
    [rule] = probe_frame_cap(subject_of(stacks.saber_with_time_limit()))
    assert rule.status is Status.FAIL
    assert rule.measured == "truncated at 108,000 frames"  # 27,000 steps x 4 frames
    assert "TimeLimit(max_episode_steps=27000)" in rule.evidence
    assert "inferred, not measured" in rule.evidence


@pytest.mark.parametrize(
    "factory",
    [stacks.saber_clipped_by_option, stacks.saber_with_clipping, stacks.saber_with_normalizer],
)
def test_rewards_the_agent_sees_may_be_clipped_or_normalized(factory: Any) -> None:
    """The protocol's decision: the agent's rewards are a training choice; the score
    recorded (info["saber"]) stays raw, rollovers corrected: SABER."""
    [raw, rollover] = probe_rewards(subject_of(factory()))
    assert (raw.status, raw.measured) == (Status.PASS, 'raw in info["saber"]["score"]'), raw
    assert (rollover.status, rollover.measured) == (Status.PASS, "+100 recorded for the wrap")
    assert "+1,000,050" in raw.evidence  # 999,950 and the wrap's +100, as recorded
    result = check(factory, quick=True)
    assert result.probed_passed, statuses(result)


def test_a_score_recorded_clipped_or_unrecorded_is_caught() -> None:
    """SB3's AtariWrapper clips and records nothing: the clipped rewards are the score.
    A record kept above a clipper holds the clipped score."""
    clipped = gym.wrappers.RecordEpisodeStatistics(
        gym.wrappers.ClipReward(gym.make("ALE/Pong-v5"), -1.0, 1.0)
    )
    [raw, rollover] = probe_rewards(subject_of(clipped))
    assert (raw.status, raw.measured) == (
        Status.FAIL,
        'recorded info["episode"]["r"] = +0 for a raw score of +1,000,050',
    )
    assert rollover.status is Status.UNKNOWN  # how a clipped score counts a wrap: not told
    [raw, rollover] = probe_rewards(subject_of(gym.make("ALE/Pong-v5")))
    assert (raw.status, raw.measured) == (Status.PASS, "raw (rewards reported)")
    assert (rollover.status, rollover.measured) == (Status.FAIL, "-999,900 reported")


@pytest.mark.parametrize(
    ("factory", "rule", "failed"),
    [
        (stacks.saber_with_six_actions, "action_set", "Discrete(6), 6 distinct emulator actions"),
        (stacks.saber_without_sticky_actions, "sticky_actions", "0.000 per frame"),
        (stacks.saber_without_timeout, "stuck_timeout", "none in 20,000 frames after a reward"),
    ],
)
def test_quick_never_claims_a_rule_it_left_out(factory: Any, rule: str, failed: str) -> None:
    """Each rule --quick leaves out, broken: the quick check does not say SABER (exit 4,
    the rule named as not probed); the full probe of that rule fails it."""
    quick = check(factory, quick=True)
    assert quick.exit_code is ExitCode.UNFINISHED and not quick.passed and quick.probed_passed
    assert rule in quick.not_probed()
    probe = probe_stuck_timeout if rule == "stuck_timeout" else probe_actions
    found = {r.rule: r for r in probe(subject_of(factory()))}[rule]
    assert found.status is Status.FAIL and found.measured.startswith(failed), found


@pytest.mark.parametrize(
    ("factory", "expected"),
    [
        # A fixed 4,500-step (18,000-frame) cap counted from the episode's start.
        (stacks.saber_with_fixed_cap, "truncated 17,592 frames after a reward (at frame 408)"),
        # A timeout whose clock stops at the first reward.
        (
            stacks.saber_timeout_until_first_reward,
            "none in 20,000 frames after a reward (at frame 408)",
        ),
    ],
)
def test_the_stuck_timeout_is_measured_after_a_reward(factory: Any, expected: str) -> None:
    """18,000 frames without reward at any point: a cap from the start, or a clock that
    stops at the first reward, truncates wrong after a reward (404 frames in)."""
    [rule] = probe_stuck_timeout(subject_of(factory()))
    assert (rule.status, rule.measured) == (Status.FAIL, expected), rule


def test_a_sync_vector_env_of_saber_envs_passes_the_quick_probe() -> None:
    result = check(stacks.sync_vector_saber, quick=True)
    assert result.probed_passed, statuses(result)


def test_an_async_vector_env_reports_unknown_not_pass() -> None:
    """An AsyncVectorEnv hides its emulators in other processes: unknown, with the reason.
    (ale-py's threaded engine, gymnasium.make_vec("SABER/Pong"), is followed instead:
    tests/check/test_vector.py.)"""
    result = check(
        lambda: gym.make_vec("SABER/Pong", num_envs=2, vectorization_mode="async"), quick=True
    )
    states = statuses(result)
    assert states.pop("frame_stack") == "pass"  # seen through the API
    assert set(states.values()) == {"unknown", "not_probed"}
    assert not result.passed and result.exit_code is ExitCode.UNFINISHED
    assert all(
        "cannot be reached" in r.evidence
        for r in result.rules
        if r.rule != "frame_stack" and r.status is Status.UNKNOWN
    )


@pytest.mark.sb3
def test_sb3_atari_wrapper_is_caught_on_lives_fire_clipping_noops_and_resize() -> None:
    result = check(stacks.sb3_atari_wrapper)
    states = statuses(result)
    for rule in ("life_signal", "fire_start", "raw_rewards", "noop_starts", "observation"):
        assert states[rule] == "fail", rule
    assert measured(result, "sticky_actions").startswith("0.000")  # NoFrameskip-v4: none
    assert "INTER_AREA" in measured(result, "observation")


@pytest.mark.parametrize("game", ["Berzerk", "DoubleDunk"])
def test_a_game_whose_ale_reset_plays_frames_starts_clean(game: str) -> None:
    """The ALE's own reset of Berzerk plays 20 frames, Double Dunk's a mode selection with
    sticky draws: part of the game's start, not no-ops or FIRE."""
    result = check(lambda: gym.make(f"SABER/{game}"), quick=True)
    assert result.probed_passed, statuses(result)
    evidence = next(r.evidence for r in result.rules if r.rule == "noop_starts")
    assert "frames its own reset plays" in evidence and evidence.endswith("[0]")
