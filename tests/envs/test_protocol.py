"""The protocol's settings: defaults, validation with clear messages, compliance."""

from __future__ import annotations

import gymnasium as gym
import pytest

from saber.envs import saber_settings
from saber.envs.rules import correct_rollover
from saber.errors import ProtocolError
from saber.protocol.settings import SaberSettings


def test_defaults_are_the_protocol() -> None:
    settings = SaberSettings()
    assert settings.repeat_action_probability == 0.25
    assert settings.frame_skip == 4
    assert settings.max_episode_frames == 100 * 3600 * 60 == 21_600_000
    assert settings.max_frames_without_reward == 5 * 60 * 60 == 18_000
    assert settings.rollover_threshold == -100_000
    assert settings.rollover_mode == "correct"
    assert (settings.screen_size, settings.stack_size, settings.clip_rewards) == (84, 4, False)
    assert settings.is_compliant and settings.deviations() == {}


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            {"repeat_action_probability": 1.5},
            "Expect `repeat_action_probability` in [0, 1], actually: 1.5",
        ),
        (
            {"repeat_action_probability": -0.1},
            "Expect `repeat_action_probability` in [0, 1], actually: -0.1",
        ),
        ({"frame_skip": 0}, "Expect `frame_skip` to be a positive integer, actually: 0"),
        (
            {"max_frames_without_reward": -5},
            "Expect `max_frames_without_reward` to be a positive integer, actually: -5",
        ),
        (
            {"max_episode_frames": -1},
            "Expect `max_episode_frames` to be a positive integer, actually: -1",
        ),
        (
            {"rollover_threshold": 10},
            "Expect `rollover_threshold` to be a finite negative number of points, actually: 10",
        ),
        (
            {"rollover_mode": "fix"},
            "Expect `rollover_mode` to be one of correct, ignore, off, actually: 'fix'",
        ),
        ({"sticky": 0.1}, "Unknown SABER setting(s): sticky."),
    ],
)
def test_invalid_settings_fail_at_construction_with_a_clear_message(
    overrides: dict, message: str
) -> None:
    with pytest.raises(ProtocolError) as error:
        gym.make("SABER/Pong", **overrides)
    assert str(error.value).startswith(message)


def test_overrides_are_recorded_in_the_spec_and_break_compliance() -> None:
    env = gym.make("SABER/Pong", repeat_action_probability=0.0, clip_rewards=True)
    assert env.spec.kwargs["repeat_action_probability"] == 0.0
    settings = saber_settings(env)
    assert not settings.is_compliant
    assert settings.deviations() == {"repeat_action_probability": (0.25, 0.0)}
    assert saber_settings(gym.make("SABER/Pong", clip_rewards=True)).is_compliant


def test_spec_records_the_whole_wrapper_stack() -> None:
    env = gym.make("SABER/Pong")
    names = [wrapper.name for wrapper in env.spec.additional_wrappers]
    assert names == [  # the core (SaberAtariEnv) is the env, not a wrapper
        "RolloverCorrection",
        "NoRewardTimeout",
        "FrameLimit",
        "SaberEpisodeStatistics",
    ]
    assert gym.make(env.spec).spec == env.spec


def test_rollover_formula_restores_the_true_gain() -> None:
    assert correct_rollover(-999_950.0, "correct") == 50.0
    assert correct_rollover(-100_000.0, "correct") == 0.0
    assert correct_rollover(-9_999_000.0, "correct") == 1_000.0
    assert correct_rollover(-999_950.0, "ignore") == 0.0
