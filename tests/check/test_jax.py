"""saber check on saber's JAX envs: needs the jax extra; run with -m jax.

Their emulators run in ale-py's C++ engine behind XLA; the probe follows row 0 on a twin
emulator (saber.check.follow), and provokes the frame cap and a rollover below the env's
rules (saber.check.probes.tampered). Seaquest: its frames tell the 18 actions apart, and it
scores 20 points a shot (so clipping shows).
"""

from __future__ import annotations

import re

import pytest

from saber.check import Status, check
from saber.check.subject import FunctionalSubject, subject_of

pytestmark = pytest.mark.jax


def test_jax_envs_pass_every_rule() -> None:
    """The whole check (sticky statistics included) of a saber.jax env: exit 0."""
    from saber.jax import make

    env = make("Seaquest", num_envs=2)
    assert isinstance(subject_of(env), FunctionalSubject)
    result = check(env)
    rules = {rule.rule: rule for rule in result.rules}
    assert result.passed and result.exit_code == 0, result
    assert len(rules) == 12
    # Each rule by the route the module docs promise: followed, or provoked below the rules.
    assert re.search(r"life losses seen by the follower: [1-9]", rules["life_signal"].evidence)
    assert rules["frame_cap"].measured == "truncated at 21,600,000 frames (end: time_cap)"
    assert "not truncated at 21,599,999" in rules["frame_cap"].evidence
    assert rules["rollover"].measured.endswith("wrapped rewards recorded as their gains")
    assert rules["raw_rewards"].measured.startswith("raw: ")
    assert rules["stuck_timeout"].measured == "truncated at 18,000 frames"


def test_clipped_rewards_with_a_raw_record_are_saber_in_a_jax_env() -> None:
    """The same env with clip_rewards=True: Seaquest's 20-point shots reach the agent as
    1, and the score recorded in info["saber"] stays raw (docs/protocol.md): SABER."""
    from saber.jax import make

    result = check(make("Seaquest", num_envs=1, clip_rewards=True), quick=True)
    states = {rule.rule: rule for rule in result.rules}
    assert result.probed_passed, result
    assert states["raw_rewards"].measured.startswith("raw: "), states["raw_rewards"]
    assert "20.0" in states["raw_rewards"].evidence  # a reward outside [-1, 1] was in it
    assert re.search(r"\b[1-9]\d* steps reported otherwise", states["raw_rewards"].evidence)
    assert states["observation"].status is Status.PASS
    assert states["rollover"].measured.endswith("wrapped rewards recorded as their gains")
    assert result.not_probed() == ["sticky_actions"]


@pytest.mark.parametrize(
    ("overrides", "rule", "measured"),
    [
        ({"max_episode_frames": 108_000}, "frame_cap", "truncated at 108,000 frames"),
        # Two 20-point shots wrapped: each left as 20 - 1,000,000, or dropped.
        (
            {"rollover_mode": "off"},
            "rollover",
            "recorded -1,999,960 with 2 wrapped rewards, +40 without",
        ),
        (
            {"rollover_mode": "ignore"},
            "rollover",
            "recorded +0 with 2 wrapped rewards, +40 without",
        ),
    ],
)
def test_provoked_rules_catch_a_shorter_cap_and_uncorrected_rollovers(
    overrides: dict, rule: str, measured: str
) -> None:
    """The frame cap and the rollover, provoked under the env's rules through its engine
    seam: a 30-minute cap found by bisection; a rollover kept or dropped, not corrected."""
    from saber.check.probes.tampered import probe_frame_cap_tampered, probe_rollover_tampered
    from saber.jax import make

    env = make("Seaquest", num_envs=1, **overrides)
    probe = probe_frame_cap_tampered if rule == "frame_cap" else probe_rollover_tampered
    (result,) = probe(FunctionalSubject(env))
    assert (result.status, result.measured) == (Status.FAIL, measured), result
    assert "_engine_step" not in vars(env)  # the seam is the env's own again


def test_stuck_clock_catches_a_shorter_timeout_in_a_jax_env() -> None:
    from saber.check.probes.followed import probe_stuck_clock
    from saber.jax import make

    (rule,) = probe_stuck_clock(
        FunctionalSubject(make("Seaquest", num_envs=1, max_frames_without_reward=9_000))
    )
    assert rule.status is Status.FAIL
    assert rule.measured == "truncated within 17,604 frames"


# ------------------------------------------------------------ many games, one saber.jax env
def test_a_many_games_jax_env_is_followed_through_its_first_games_env() -> None:
    """Row 0 is the first game's: that game's env is switched to Seaquest (as a
    SaberVectorEnv is) and followed on a twin; the probe moves its clock and reaches its
    engine seam under the many-games env's own step (a seam on another game's env would
    leave row 0's frame counter where it is, and the cap would not be found)."""
    from saber.check.probes.followed import probe_stuck_clock
    from saber.check.probes.tampered import probe_frame_cap_tampered
    from saber.jax import make

    env = make(["Pong", "Breakout"], num_envs=2)
    subject = subject_of(env)
    assert isinstance(subject, FunctionalSubject) and subject.followable
    assert [game.rom_id for game in env.envs] == ["seaquest", "breakout"]
    assert subject.rom_id == "seaquest" and "the env played pong" in subject.game_text
    (stuck,) = probe_stuck_clock(subject)
    assert (stuck.status, stuck.measured) == (Status.PASS, "truncated at 18,000 frames"), stuck
    assert stuck.evidence.startswith("seaquest (loaded as the first game of saber.jax's")
    (cap,) = probe_frame_cap_tampered(subject)
    assert cap.status is Status.PASS, cap
    assert cap.measured == "truncated at 21,600,000 frames (end: time_cap)"
    assert "_engine_step" not in vars(env.envs[0])  # the seam is the env's own again
    subject.close()


@pytest.mark.slow
def test_a_many_games_jax_env_passes_every_rule() -> None:
    """saber check saber.jax:make --game SABER/Atari5 (one row per game): exit 0."""
    from click.testing import CliRunner

    from saber.cli import main as saber_cli

    result = CliRunner().invoke(saber_cli, ["check", "saber.jax:make", "--game", "SABER/Atari5"])
    assert result.exit_code == 0, result.output
    assert "saber.jax:make: SABER (12 pass, 0 fail, 0 unknown;" in result.output
    assert "the env played battle_zone" in result.output
