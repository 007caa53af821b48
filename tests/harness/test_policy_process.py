"""``--policy-process``: one copy of the policy acts for every worker, and the results are
those of one copy per worker (saber.harness.policy_process)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from saber.cli import main
from saber.errors import ExitCode, PolicyError, RepeatedFailureError
from saber.harness import Processes, evaluate
from tests.harness.helpers import (
    AlwaysRaise,
    BrokenAgent,
    FailOnEpisode,
    short_env,
    strip_timing,
)

SHORT = {"env_options": short_env(), "progress": False}
SPEC = "tests.harness.helpers:counted_pixels_and_dice"


def _shared_folders() -> set[Path]:
    """This process's blocks (named after the process that makes them: other test processes
    may have theirs at the same time)."""
    if not Path("/dev/shm").is_dir():
        return set()
    return set(Path("/dev/shm").glob(f"saber-policy-{os.getpid()}-*"))


def test_one_copy_acts_for_every_worker_with_the_same_results(tmp_path, monkeypatch):
    """7 episodes on 2 workers of 2 rows: units join, rows idle, workers rest and come
    back; a policy with state per row and actions from the pixels plays them alike."""
    before = _shared_folders()
    results = {}
    for mode in (False, True):
        builds = tmp_path / f"builds-{mode}"
        monkeypatch.setenv("SABER_TEST_BUILDS", str(builds))
        result = evaluate(
            SPEC, "breakout,pong", 7, out=tmp_path / f"run-{mode}",
            backend=Processes(2, policy_process=mode, envs_per_worker=2), **SHORT,
        )  # fmt: skip
        assert not result.failed
        results[mode] = strip_timing(result.records)
        assert len(builds.read_text().split()) == (1 if mode else 2)  # built where it acts
    assert results[True] == results[False]
    assert _shared_folders() == before  # the shared blocks are removed


def test_a_policy_that_raises_fails_the_units_with_its_message(tmp_path):
    with pytest.raises(RepeatedFailureError, match="RuntimeError: this policy always fails"):
        evaluate(
            AlwaysRaise(), "breakout", 6, out=tmp_path,
            backend=Processes(2, policy_process=True, envs_per_worker=1), **SHORT,
        )  # fmt: skip


@pytest.mark.parametrize("policy", ["tests.harness.helpers:broken_factory", BrokenAgent])
def test_a_policy_that_cannot_be_built_stops_the_run_at_once(tmp_path, policy):
    """As with a copy per worker: a spec and a class alike are refused before the session
    begins (the policy process builds the policy first): no record of a failure."""
    with pytest.raises(PolicyError, match="cannot load the weights"):
        evaluate(
            policy, "breakout", 2, out=tmp_path, backend=Processes(2, policy_process=True),
            **SHORT,
        )  # fmt: skip
    assert not (tmp_path / "episodes.jsonl").exists()


@pytest.mark.parametrize("where", [["--workers", "0"], ["--backend", "dask"]])
def test_the_cli_refuses_it_without_local_workers(tmp_path, where):
    out = CliRunner().invoke(
        main,
        ["eval", "--agent", "random", "--games", "pong", "--episodes", "1", "--out",
         str(tmp_path / "r"), "--policy-process", *where],
    )  # fmt: skip
    assert out.exit_code == ExitCode.USAGE
    assert "--policy-process needs local worker processes" in out.output
    assert "Traceback" not in out.output


def test_the_end_of_the_policy_process_stops_the_run_and_says_so(tmp_path):
    policy = FailOnEpisode("breakout", 1, kill=True)  # the policy process exits mid-episode
    with pytest.raises(PolicyError, match=r"the policy process ended \(--policy-process\)"):
        evaluate(
            policy, "breakout", 4, out=tmp_path,
            backend=Processes(2, policy_process=True, envs_per_worker=1), progress=False,
        )  # fmt: skip


def test_videos_are_refused_in_one_line(tmp_path):
    out = CliRunner().invoke(
        main,
        ["eval", "--agent", "random", "--games", "pong", "--episodes", "1", "--out",
         str(tmp_path / "r"), "--policy-process", "--video", "1"],
    )  # fmt: skip
    assert out.exit_code == ExitCode.BAD_INPUT and "Traceback" not in out.output
    assert "Cannot film episodes (video) with one policy process" in out.output
    assert not (tmp_path / "r" / "episodes.jsonl").exists()
