"""What a run does before its first episode: a ``module:attr`` agent for local workers is
imported and checked by the first worker, not imported in the main process as well."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from saber.harness import PolicyError, Processes, evaluate

AGENT = """
import numpy as np


def make_policy():
    return lambda observations: np.ones(len(observations), dtype=np.int64)
"""


def test_a_module_spec_is_imported_by_the_workers_not_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "startup_agent_x.py").write_text(AGENT)
    monkeypatch.syspath_prepend(str(tmp_path))  # the workers get this sys.path (spawn)
    result = evaluate(
        "startup_agent_x:make_policy", "breakout", 2, out=tmp_path / "run",
        backend=Processes(1, envs_per_worker=2), progress=False,
    )  # fmt: skip
    assert result.finished == 2
    assert "startup_agent_x" not in sys.modules  # PyTorch, say, is not imported here too
    # A bad attribute is refused before the run directory exists, with the worker's words.
    with pytest.raises(PolicyError, match="module 'startup_agent_x' has no attribute 'nope'"):
        evaluate(
            "startup_agent_x:nope", "breakout", 2, out=tmp_path / "bad",
            backend=Processes(1), progress=False,
        )  # fmt: skip
    assert not (tmp_path / "bad").exists()


def test_workers_that_cannot_start_give_one_clear_error_not_a_broken_pipe(tmp_path: Path) -> None:
    """A script read from standard input cannot be imported again by spawned workers: they
    die at start. The run stops with the message that says why, not a BrokenPipeError."""
    import subprocess

    script = (
        "from saber.harness import Processes, evaluate\n"
        f"evaluate('random', 'pong', 2, out={str(tmp_path / 'run')!r}, backend=Processes(2),"
        " progress=False)\n"
    )
    done = subprocess.run(
        [sys.executable, "-"], input=script, capture_output=True, text=True, timeout=300
    )
    assert done.returncode != 0
    # The workers' own tracebacks (they cannot find "<stdin>") come first; the run's
    # error is the one that says what to do.
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("saber.errors.BackendError: Worker processes keep dying")
    assert "if __name__ == '__main__':" in last
    assert "BrokenPipeError" not in done.stderr
