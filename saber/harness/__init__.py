"""The evaluation harness: ``evaluate(policy, games, episodes=100)`` and its parts.

docs/harness.md describes a run, its backends, failures and resume; the tools for
training loops are :mod:`saber.training`.
"""

from __future__ import annotations

from saber.errors import BackendError, PolicyError, RunMismatchError
from saber.harness.backends import Backend, Dask, Inline, Processes
from saber.harness.evaluate import evaluate
from saber.harness.options import EnvOptions, Recording
from saber.harness.policies import (
    ConstantPolicy,
    EpsilonConstantPolicy,
    Policy,
    RandomPolicy,
    load_policy,
)
from saber.harness.result import EvaluationResult

__all__ = [
    "Backend",
    "BackendError",
    "ConstantPolicy",
    "Dask",
    "EnvOptions",
    "EpsilonConstantPolicy",
    "EvaluationResult",
    "Inline",
    "Policy",
    "PolicyError",
    "Processes",
    "RandomPolicy",
    "Recording",
    "RunMismatchError",
    "evaluate",
    "load_policy",
]
