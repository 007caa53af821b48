"""Shared by the RL-library client tests: a short saber.evaluate of a trained policy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import saber
from saber.harness import EvaluationResult, Inline

EVAL_FRAMES = 2_000  # cap of evaluation episodes in these tests (SABER: 100 hours)


def evaluate_briefly(
    policy: Any, game: str, out: Path, agent: str, envs_per_worker: int = 2
) -> EvaluationResult:
    """Two episodes capped at ``EVAL_FRAMES``, in this process; checks they both ran.

    The cap is not SABER, hence ``allow_non_saber``; the trained model stays in this
    process (``backend=Inline()``).
    """
    result = saber.evaluate(
        policy,
        game,
        episodes=2,
        out=out,
        backend=Inline(),
        envs_per_worker=envs_per_worker,
        agent=agent,
        env_options={"max_episode_frames": EVAL_FRAMES},
        allow_non_saber=True,
    )
    assert result.non_saber and not result.failed and result.new_episodes == 2
    assert [record["episode"] for record in result.records] == [0, 1]
    return result
