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

from saber.harness.backends import BackendError, Dask, Inline, Processes, RunsOn
from saber.harness.evaluate import DEFAULT_ENVS_PER_WORKER, EvaluationResult, evaluate
from saber.harness.options import EnvOptions, Recording
from saber.harness.policies import (
    ConstantPolicy,
    EpsilonConstantPolicy,
    PerEpisodeGenerators,
    Policy,
    PolicyError,
    RandomPolicy,
    load_policy,
)
from saber.harness.store import RunMismatchError, StoreWriteError
from saber.harness.work import episode_seed

__all__ = [
    "DEFAULT_ENVS_PER_WORKER",
    "BackendError",
    "ConstantPolicy",
    "Dask",
    "EnvOptions",
    "EpsilonConstantPolicy",
    "EvaluationResult",
    "Inline",
    "PerEpisodeGenerators",
    "Policy",
    "PolicyError",
    "Processes",
    "RandomPolicy",
    "Recording",
    "RunMismatchError",
    "RunsOn",
    "StoreWriteError",
    "episode_seed",
    "evaluate",
    "load_policy",
]
