"""``saber eval``'s stdout is the report, whatever the policy prints, wherever it runs.

A real agent module in the working directory prints at import, when built and at every
act, and writes to file descriptor 1 directly (as C code does); ``saber eval`` runs it in
this process, in a worker process and in the policy process.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).parents[2]

AGENT = '''
import os

import numpy as np

print("printed at import")


class Policy:
    """FIRE on every row: a Breakout episode ends after 122 steps."""

    def __init__(self):
        print("printed when built")

    def __call__(self, observations):
        print("printed in act", flush=True)
        os.write(1, b"written to fd 1 in act\\n")
        return np.ones(len(observations), dtype=np.int64)
'''


@pytest.mark.parametrize(
    "where",
    [["--workers", "0"], ["--workers", "1"], ["--workers", "1", "--policy-process"]],
    ids=["this-process", "worker", "policy-process"],
)
def test_stdout_carries_only_the_report(tmp_path: Path, where: list[str]) -> None:
    (tmp_path / "printing_agent.py").write_text(AGENT)
    out = tmp_path / "run"
    command = [sys.executable, "-m", "saber.cli", "eval", "--agent", "printing_agent:Policy",
               "--games", "breakout", "--episodes", "1", "--out", str(out), *where]  # fmt: skip
    result = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == (out / "report.md").read_text() + "\n"
    for said in ("printed at import", "printed when built", "printed in act", "written to fd 1"):
        assert said in result.stderr, said
