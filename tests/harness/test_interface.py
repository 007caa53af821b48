"""The harness is one line over one interface: every backend implements ``Backend``,
every executor ``Executor``, and ``evaluate()`` chooses nothing by the type of either."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import saber.harness.evaluate
from saber.harness.backends import Backend, Dask, Inline, Processes
from saber.harness.dask_executor import DaskExecutor
from saber.harness.executor_base import Executor
from saber.harness.local_executors import InlineExecutor, LocalExecutor

_BACKENDS = ("Backend", "Inline", "Processes", "Dask", "_Options")
_EXECUTORS = ("Executor", "InlineExecutor", "LocalExecutor", "DaskExecutor")


def _members(protocol: type) -> set[str]:
    names = set(vars(protocol)) | set(getattr(protocol, "__annotations__", {}))
    return {name for name in names if not name.startswith("_")}


def test_evaluate_chooses_nothing_by_the_type_of_a_backend_or_an_executor() -> None:
    tree = ast.parse(Path(inspect.getfile(saber.harness.evaluate)).read_text())
    typed = [
        ast.unparse(call)
        for call in ast.walk(tree)
        if isinstance(call, ast.Call)
        and ast.unparse(call.func) in ("isinstance", "issubclass", "type")
        and any(
            isinstance(node, ast.Name) and node.id in _BACKENDS + _EXECUTORS
            for node in ast.walk(call)
        )
    ]
    assert typed == []


@pytest.mark.parametrize("backend", [Inline, Processes, Dask], ids=lambda kind: kind.__name__)
def test_every_backend_implements_the_protocol(backend: type) -> None:
    assert _members(Backend) <= set(dir(backend))
    assert {"parallelism", "start", "check_recording", "workers_line"} <= _members(Backend)


@pytest.mark.parametrize(
    "executor", [InlineExecutor, LocalExecutor, DaskExecutor], ids=lambda kind: kind.__name__
)
def test_every_executor_implements_the_protocol(executor: type) -> None:
    assert _members(Executor) == {"check_policy", "submit", "events", "close"}
    assert _members(Executor) <= set(dir(executor))
