"""One agent, one meaning: ``saber.evaluate`` and ``saber eval --agent`` resolve every
form alike (saber.harness.agent_forms), and refuse a bad one before anything is stored."""

from __future__ import annotations

import itertools
import textwrap
from pathlib import Path

import numpy as np
import pytest

from saber.errors import PolicyError
from saber.harness import EnvOptions, Inline, Processes, evaluate
from saber.harness.agent_forms import resolve_agent
from saber.harness.policies import PolicyFactory, callable_form
from tests.harness.helpers import Fire, broken_factory, make_noop, plain_policy

SHORT = EnvOptions({"max_episode_frames": 400}, allow_non_saber=True)  # 100 steps of Pong
_names = itertools.count()


def _module(directory: Path, source: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """A module of the user's, in ``directory`` and on ``sys.path``; a new name each time
    (a module imported once stays imported)."""
    name = f"user_agent_{next(_names)}"
    (directory / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    monkeypatch.syspath_prepend(str(directory))
    return name


class _CallsAnything:
    """A policy object whose signature says nothing, as a PyTorch module's ``__call__``."""

    def __call__(self, *args: object, **kwargs: object) -> np.ndarray:
        return np.zeros(len(args[0]), dtype=np.int64)  # type: ignore[arg-type]


def _load(path: str = "model.pt"):  # type: ignore[no-untyped-def]
    return plain_policy


@pytest.mark.parametrize(
    ("agent", "form"),
    [
        (make_noop, "factory"),  # no parameter: called once where the policy acts
        (_load, "factory"),  # a parameter with a default is not the observations
        (Fire, "factory"),  # a class: instantiated without arguments
        (plain_policy, "policy"),  # one required parameter: the observations
        (Fire(), "policy"),  # an instance whose __call__ takes the observations
        (_CallsAnything(), "policy"),  # only *args, **kwargs: it can take observations
        (len, "policy"),  # no signature to read
    ],
    ids=["factory", "factory-with-default", "class", "function", "instance", "variadic", "builtin"],
)
def test_each_callable_is_told_apart_by_its_signature(agent: object, form: str) -> None:
    assert callable_form(agent, "x") == form


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("def agent(a, b):\n    pass\n", "takes (a, b): expect a policy, called with the"),
        ("def agent(*, key):\n    pass\n", "takes (*, key): expect a policy"),
        ("class agent:\n    def __init__(self, weights):\n        pass\n",
         "the class takes (weights) to build; a policy class must build without arguments"),
    ],
    ids=["two-arguments", "keyword", "class-with-arguments"],
)  # fmt: skip
def test_a_callable_of_neither_form_is_refused_alike_as_object_and_spec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, message: str
) -> None:
    import importlib

    name = _module(tmp_path, source, monkeypatch)
    with pytest.raises(PolicyError, match=None) as by_spec:
        resolve_agent(f"{name}:agent", import_module=False)
    with pytest.raises(PolicyError, match=None) as by_object:
        resolve_agent(importlib.import_module(name).agent)
    assert message in str(by_spec.value) and message in str(by_object.value)


def test_a_factory_is_called_by_evaluate_as_by_its_spec(tmp_path: Path) -> None:
    # The bug this fixes: evaluate(make_noop) called make_noop(observations) in the workers.
    inline = Inline(envs_per_worker=1)
    by_object = evaluate(make_noop, "pong", 1, out=tmp_path / "o", backend=inline,
                         env_options=SHORT, progress=False)  # fmt: skip
    by_spec = evaluate("tests.harness.helpers:make_noop", "pong", 1, out=tmp_path / "s",
                       backend=inline, env_options=SHORT, progress=False)  # fmt: skip
    for result in (by_object, by_spec):
        assert not result.failed and not result.failures
        assert result.records[0]["agent"] == "tests.harness.helpers:make_noop"
    assert by_object.records[0]["steps"] == by_spec.records[0]["steps"] == 100
    resolved = resolve_agent(make_noop)
    assert isinstance(resolved.policy, PolicyFactory) and resolved.form == "factory"


@pytest.mark.parametrize(
    "backend",
    [Processes(1, envs_per_worker=1), Processes(2, policy_process=True, envs_per_worker=1)],
    ids=["each-worker", "policy-process"],
)
def test_a_factory_object_is_built_where_the_policy_acts(tmp_path: Path, backend: object) -> None:
    result = evaluate(make_noop, "pong", 2, out=tmp_path, backend=backend,  # type: ignore[arg-type]
                      env_options=SHORT, progress=False)  # fmt: skip
    assert not result.failed and [r["steps"] for r in result.records] == [100, 100]


def test_a_misspelt_attribute_is_refused_before_any_worker_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = _module(tmp_path, "def make_policy():\n    return len\n", monkeypatch)
    said: list[str] = []
    with pytest.raises(PolicyError) as error:
        evaluate(f"{name}:make_polcy", "pong", 1, out=tmp_path / "run",
                 backend=Processes(1), on_message=said.append)  # fmt: skip
    assert str(error.value) == (
        f"Agent spec '{name}:make_polcy': module '{name}' has no attribute 'make_polcy'; "
        "did you mean 'make_policy'?"
    )
    assert said == [] and not (tmp_path / "run").exists()  # no worker line, nothing written


def test_a_spec_whose_source_shows_its_attribute_is_not_imported_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Workers import the module (PyTorch, say): this process reads its source instead.
    import sys

    name = _module(tmp_path, "import numpy\n\ndef make_policy():\n    return len\n", monkeypatch)
    assert resolve_agent(f"{name}:make_policy", import_module=False).form == "module:attr"
    assert name not in sys.modules
    # A name the source does not show (made at run time) is looked for by importing.
    made = _module(tmp_path, "globals()['agent'] = len\n", monkeypatch)
    assert resolve_agent(f"{made}:agent", import_module=False).name == f"{made}:agent"
    assert made in sys.modules


@pytest.mark.parametrize("backend", [Inline(envs_per_worker=1), Processes(1, envs_per_worker=1)],
                         ids=["inline", "processes"])  # fmt: skip
@pytest.mark.parametrize("agent", [broken_factory, "tests.harness.helpers:broken_factory"],
                         ids=["object", "spec"])  # fmt: skip
def test_a_factory_that_fails_leaves_nothing_in_the_run(
    tmp_path: Path, agent: object, backend: object
) -> None:
    with pytest.raises(PolicyError, match="building the policy failed: RuntimeError: cannot load"):
        evaluate(agent, "pong", 1, out=tmp_path / "run", backend=backend,  # type: ignore[arg-type]
                 env_options=SHORT, progress=False)  # fmt: skip
    assert not (tmp_path / "run" / "episodes.jsonl").exists()
    fixed = evaluate("tests.harness.helpers:make_noop", "pong", 1, out=tmp_path / "run",
                     agent=resolve_agent(agent).name, backend=Inline(envs_per_worker=1),
                     env_options=SHORT, progress=False)  # fmt: skip
    assert fixed.summary()["failed"] == 0 and not fixed.failures
