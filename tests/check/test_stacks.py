"""saber check on real stacks: SABER passes every rule; each popular setup is caught where
it differs, with the value it really has (known answers: 27,000 steps x 4 = 108,000)."""

from __future__ import annotations

import gymnasium as gym
import pytest

from saber.check import CheckResult, Status, check
from saber.check.probes import RULES
from saber.check.probes.limits import probe_frame_cap
from saber.check.subject import subject_of
from tests.check import stacks


def measured(result: CheckResult, rule: str) -> str | None:
    return next(r.measured for r in result.rules if r.rule == rule)


def statuses(result: CheckResult) -> dict[str, str]:
    return {rule.rule: rule.status.value for rule in result.rules}


@pytest.fixture(scope="module")
def saber_pong() -> CheckResult:
    return check(lambda: gym.make("SABER/Pong"), target="SABER/Pong")


def test_saber_pong_passes_every_rule(saber_pong: CheckResult) -> None:
    assert [rule.rule for rule in saber_pong.rules] == list(RULES)
    assert statuses(saber_pong) == dict.fromkeys(RULES, "pass")
    assert saber_pong.passed and saber_pong.exit_code == 0
    assert measured(saber_pong, "stuck_timeout") == "truncated at 18,000 frames"
    assert measured(saber_pong, "frame_cap") == "truncated at 21,600,000 frames"
    assert measured(saber_pong, "rollover") == "+50 reported"


def test_ale_v5_defaults_fail_where_they_differ() -> None:
    result = check(lambda: gym.make("ALE/Pong-v5"))
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
    assert measured(result, "action_set") == "Discrete(6), 6 distinct emulator actions"
    assert measured(result, "frame_cap") == "truncated at 108,000 frames"
    assert measured(result, "stuck_timeout") == "none in 20,000 frames"
    assert measured(result, "rollover") == "-999,950 reported"
    assert result.exit_code == 1


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


def test_a_users_reward_clipper_above_saber_is_caught() -> None:
    result = check(stacks.saber_with_clipping, quick=True)
    assert result.failures() == ["raw_rewards", "rollover"]
    assert measured(result, "raw_rewards") == "+1 reported for a gain of +999,900"


def test_a_sync_vector_env_of_saber_envs_passes_the_quick_probe() -> None:
    result = check(stacks.sync_vector_saber, quick=True)
    assert result.passed, statuses(result)


def test_a_threaded_vector_env_reports_unknown_not_pass() -> None:
    """ale-py's threaded engine hides its emulators: unknown, with the reason."""
    result = check(lambda: gym.make_vec("SABER/Pong", num_envs=2), quick=True)
    states = statuses(result)
    assert states.pop("frame_stack") == "pass"  # seen through the API
    assert set(states.values()) == {"unknown"}
    assert not result.passed and result.exit_code == 2
    assert all("cannot be reached" in r.evidence for r in result.rules if r.rule != "frame_stack")


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
    assert result.passed, statuses(result)
    evidence = next(r.evidence for r in result.rules if r.rule == "noop_starts")
    assert "frames its own reset plays" in evidence and evidence.endswith("[0]")
