"""Agent specs and the policy protocol."""

from __future__ import annotations

import numpy as np
import pytest

from saber.errors import PolicyError
from saber.harness.policies import (
    ConstantPolicy,
    EpsilonConstantPolicy,
    RandomPolicy,
    check_actions,
    load_policy,
)
from tests.harness import helpers

OBS = np.zeros((3, 4, 84, 84), dtype=np.uint8)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [("noop", [0, 0, 0]), ("constant:3", [3, 3, 3]), ("constant:17", [17, 17, 17])],
)
def test_constant_specs(spec: str, expected: list[int]) -> None:
    assert load_policy(spec)(OBS).tolist() == expected


def test_epsilon_constant_spec() -> None:
    policy = load_policy("epsilon-constant:2:0.5")
    assert isinstance(policy, EpsilonConstantPolicy) and policy.epsilon == 0.5
    assert load_policy("epsilon-constant:2").epsilon == 0.05
    policy.start_episodes(np.arange(3), np.array([1, 2, 3]))
    actions = np.concatenate([policy(OBS) for _ in range(200)])
    assert 0.4 < np.mean(actions == 2) < 0.7  # 0.5 + 0.5/18


def test_random_policy_follows_episode_seeds_not_rows() -> None:
    first, second = RandomPolicy(), RandomPolicy()
    first.start_episodes(np.array([0, 1, 2]), np.array([10, 11, 12]))
    second.start_episodes(np.array([0, 1, 2]), np.array([12, 10, 11]))  # same episodes, other rows
    a = np.stack([first(OBS) for _ in range(50)])
    b = np.stack([second(OBS) for _ in range(50)])
    assert np.array_equal(a[:, 0], b[:, 1]) and np.array_equal(a[:, 2], b[:, 0])
    assert a.min() >= 0 and a.max() <= 17 and len(np.unique(a)) > 10


def test_a_factory_spec_is_called_and_gives_its_policy() -> None:
    policy = load_policy("tests.harness.helpers:make_noop")
    assert policy is not helpers.make_noop
    assert policy(OBS).tolist() == [0, 0, 0]


def test_a_function_spec_is_the_policy_itself() -> None:
    assert load_policy("tests.harness.helpers:plain_policy") is helpers.plain_policy


def test_a_class_spec_is_instantiated() -> None:
    """A class is a factory with no required parameters: its instance is the policy (here
    one that answers with one action too many, which the harness refuses when it plays)."""
    policy = load_policy("tests.harness.helpers:WrongShape")
    assert type(policy) is helpers.WrongShape
    assert len(policy(OBS)) == len(OBS) + 1


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("randon", "Unknown agent spec 'randon'"),
        ("constant:18", "Expect an action in 0..17, actually: 18"),
        ("constant:x", "expect an action index 0..17, actually: 'x'"),
        ("epsilon-constant:1:lots", "expect epsilon as a number"),
        ("epsilon-constant:1:2", "Expect epsilon in [0, 1]"),
        ("no_such_module_xyz:policy", "no module named 'no_such_module_xyz': run from the"),
        ("tests.harness.helpers:missing", "has no attribute 'missing'"),
        ("tests.harness.helpers:NOT_CALLABLE", "is an int, not a policy"),
        (
            "tests.harness.helpers:broken_factory",
            "building the policy failed: RuntimeError: cannot load the weights",
        ),
    ],
)
def test_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(PolicyError, match=None) as error:
        load_policy(spec)
    assert message in str(error.value)


@pytest.mark.parametrize(
    ("actions", "message"),
    [
        (np.zeros(2, dtype=int), "shape (2,)"),
        (np.zeros((3, 1), dtype=int), "shape (3, 1)"),
        (np.array([0.5, 1, 2]), "dtype float64"),
        (np.array([0, 18, -1]), "out-of-range actions [-1, 18]"),
        (None, "shape ()"),
    ],
)
def test_check_actions_errors(actions: object, message: str) -> None:
    with pytest.raises(PolicyError) as error:
        check_actions(actions, 3)
    assert "Expect the policy to return 3 integer actions (shape (3,)) in 0..17" in str(error.value)
    assert message in str(error.value)


def test_check_actions_says_one_action_in_the_singular() -> None:
    with pytest.raises(PolicyError, match=r"return 1 integer action \(shape \(1,\)\) in 0\.\.17"):
        check_actions([1, 2], 1)


def test_check_actions_accepts_lists_and_whole_floats() -> None:
    assert check_actions([1, 2, 3], 3).dtype == np.int64
    assert check_actions(np.array([1.0, 2.0, 3.0]), 3).tolist() == [1, 2, 3]
    assert repr(ConstantPolicy(4)) == "ConstantPolicy(4)"


_READS = """
import sys
from saber.agents.convnet import write_policy_file
from saber.harness.agent_forms import resolve_agent
from saber.harness.policies import policy_of
from tests.agents.test_convnet import random_layers

path = write_policy_file(sys.argv[1], random_layers(), {"seed": 0})
reads = []
sys.addaudithook(lambda event, args: reads.append(1) if event == "open" and str(args[0]) == str(path) else None)
spec = f"conv-actor:{path}"
resolve_agent(spec)  # the main process's check
policy_of(resolve_agent(spec).policy)  # and the build, as Inline() does
print(len(reads))
write_policy_file(path, random_layers(seed=1), {"seed": 1})  # written again: read again
policy_of(resolve_agent(spec).policy)
print(len(reads))
"""


def test_a_policy_file_is_read_once_per_process(tmp_path) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _READS, str(tmp_path / "policy.npz")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "2"]
