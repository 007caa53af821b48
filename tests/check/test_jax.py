"""saber check on saber's JAX envs (issue 18): needs the jax extra; run with -m jax."""

from __future__ import annotations

import pytest

from saber.check import Status, check
from saber.check.subject import FunctionalSubject, subject_of

pytestmark = pytest.mark.jax


def test_jax_envs_fail_no_rule_and_say_what_cannot_be_reached() -> None:
    """saber.jax runs ale-py's C++ engine through XLA: its emulators are out of reach, so
    only what its API shows is measured (the frame stack); the rest is unknown, never pass."""
    from saber.jax import make

    env = make("Pong", num_envs=2)
    assert isinstance(subject_of(env), FunctionalSubject)
    result = check(env, quick=True)
    states = {rule.rule: rule.status for rule in result.rules}
    assert states.pop("frame_stack") is Status.PASS
    assert set(states.values()) == {Status.UNKNOWN}
    assert result.exit_code == 2
