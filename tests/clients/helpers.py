"""Shared by the RL-library client tests: a short saber.evaluate of a trained policy."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import saber
from saber.harness import EnvOptions, EvaluationResult, Inline

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
        backend=Inline(envs_per_worker=envs_per_worker),
        agent=agent,
        env_options=EnvOptions({"max_episode_frames": EVAL_FRAMES}, allow_non_saber=True),
    )
    assert result.non_saber and not result.failed and result.new_episodes == 2
    assert [record["episode"] for record in result.records] == [0, 1]
    return result


RL_LIBRARIES = Path(__file__).parents[2] / "docs" / "rl-libraries.md"


def documented_change(first_line: str) -> str:
    """The new side of the ```diff block of docs/rl-libraries.md whose first line is
    ``first_line``: its context and ``+`` lines, without their one-character prefix."""
    blocks = re.findall(r"```diff\n(.*?)```", RL_LIBRARIES.read_text(), flags=re.DOTALL)
    [block] = [b for b in blocks if b.splitlines()[0] == first_line]
    kept = [line[1:] for line in block.splitlines() if line[:1] in ("+", " ", "")]
    return "".join(line + "\n" for line in kept)
