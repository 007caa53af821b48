"""The evaluation harness: ``evaluate(policy, games, episodes=100)`` and its parts.

Example (illustration, not run as a doctest)::

    from saber.harness import Processes, evaluate
    result = evaluate("random", "pong,breakout", episodes=10, out="runs/random",
                      backend=Processes(workers=4))  # EnvOptions, Recording: the others
    result.mean_scores()

See :mod:`saber.harness.evaluate` for what happens on failures and interruptions. The
tools for training loops (recorders, videos, the SB3 callback) are :mod:`saber.training`.
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
