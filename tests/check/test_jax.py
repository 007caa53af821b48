"""saber check on saber's JAX envs (issue 18): needs the jax extra; run with -m jax.

Their emulators run in ale-py's C++ engine behind XLA; the probe follows row 0 on a twin
emulator (saber.check.follow). Seaquest: its frames tell the 18 actions apart, and it
scores 20 points a shot (so clipping shows).
"""

from __future__ import annotations

import pytest

from saber.check import Status, check
from saber.check.subject import FunctionalSubject, subject_of

pytestmark = pytest.mark.jax

# Measured by following the env (quick: no stickiness statistics).
FOLLOWED = {"noop_starts", "fire_start", "action_set", "frame_skip", "observation"}
FOLLOWED |= {"raw_rewards", "frame_stack", "stuck_timeout"}
# Out of the follower's reach (no RAM, no frame counter to advance): unknown, never pass.
OUT_OF_REACH = {"frame_cap", "rollover"}


def test_jax_envs_pass_every_rule_the_follower_measures() -> None:
    from saber.jax import make

    env = make("Seaquest", num_envs=2)
    assert isinstance(subject_of(env), FunctionalSubject)
    result = check(env, quick=True)
    states = {rule.rule: rule.status for rule in result.rules}
    assert {rule for rule, status in states.items() if status is Status.PASS} >= FOLLOWED
    assert Status.FAIL not in states.values()
    for rule in OUT_OF_REACH:
        assert states[rule] is Status.UNKNOWN
    assert result.exit_code == 2  # unknown is never a pass


def test_follower_catches_clipped_rewards_in_a_jax_env() -> None:
    """The same env with clip_rewards=True: Seaquest's 20-point shots reported as 1."""
    from saber.jax import make

    result = check(make("Seaquest", num_envs=1, clip_rewards=True), quick=True)
    states = {rule.rule: rule for rule in result.rules}
    assert states["raw_rewards"].status is Status.FAIL, states["raw_rewards"]
    assert "+1 reported for [20.0]" in states["raw_rewards"].measured
    assert states["observation"].status is Status.PASS


def test_stuck_clock_catches_a_shorter_timeout_in_a_jax_env() -> None:
    from saber.check.probes.followed import probe_stuck_clock
    from saber.jax import make

    (rule,) = probe_stuck_clock(
        FunctionalSubject(make("Seaquest", num_envs=1, max_frames_without_reward=9_000))
    )
    assert rule.status is Status.FAIL
    assert rule.measured == "truncated within 17,604 frames"
