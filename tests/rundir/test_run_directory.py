"""The run directory's typed records: a directory written by saber 0.4 reads and resumes.

``data/run-0.4`` was written by ``saber eval`` of saber 0.4.0 (commit 1a843af, the last of
0.4.0): random play of Breakout, 2 episodes, a 400-frame stuck timeout (not SABER), with
replays.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from saber.errors import RepeatedFailureError
from saber.harness import Inline, evaluate
from saber.rundir import (
    EpisodeLine,
    FailedAttempt,
    RunFile,
    read_episode_lines,
    read_run_file,
)
from saber.scoring import read_scores
from tests.harness.helpers import AlwaysRaise, evaluate_short, read_records

OLD_RUN = Path(__file__).parent / "data" / "run-0.4"


@pytest.fixture
def old_run(tmp_path: Path) -> Path:
    return Path(shutil.copytree(OLD_RUN, tmp_path / "run"))


def test_records_of_saber_0_4_round_trip_to_the_same_json(old_run: Path) -> None:
    on_disk = json.loads((old_run / "run.json").read_text())
    run = read_run_file(old_run)
    assert run.to_dict() == on_disk and list(run.to_dict()) == list(on_disk)
    assert run.non_saber and run.versions["saber"] == "0.4.0"
    assert run.sessions[0].status == "finished" and run.run_id is not None
    for _, line in read_episode_lines(old_run / "episodes.jsonl").lines:
        assert EpisodeLine.from_dict(line).to_dict() == line


def test_a_failed_attempt_keeps_the_keys_of_saber_0_4() -> None:
    attempt = FailedAttempt("pong", 3, 7, "random", "boom", "episode", 0, run="s1")
    assert list(attempt.to_dict()) == [
        "game", "episode", "seed", "agent", "run", "error", "kind", "attempt",
    ]  # fmt: skip


def test_a_run_of_saber_0_4_reads_and_resumes(old_run: Path) -> None:
    old_lines = read_records(old_run)
    old_session = json.loads((old_run / "run.json").read_text())["sessions"][0]
    assert len(read_scores(old_run).records) == 2 * 3  # 2 episodes x 3 time limits
    result = evaluate_short(old_run, 3)
    assert result.new_episodes == 1 and result.finished == 3
    assert read_records(old_run)[:2] == old_lines  # appended to, never rewritten
    run = json.loads((old_run / "run.json").read_text())
    assert run["sessions"][0] == old_session  # history as written
    new = run["sessions"][1]
    assert new["status"] == "finished"
    assert new["counts"] == {"episodes_finished": 1, "attempts_failed": 0}
    assert new["summary"]["finished"] == 3 and run["episodes"] == 3
    assert RunFile.from_dict(run).to_dict() == run


def test_a_session_stopped_by_an_error_says_failed(tmp_path: Path) -> None:
    with pytest.raises(RepeatedFailureError):
        evaluate(
            AlwaysRaise(),
            "breakout",
            4,
            out=tmp_path,
            backend=Inline(envs_per_worker=1),
            progress=False,
        )
    (session,) = json.loads((tmp_path / "run.json").read_text())["sessions"]
    assert session["status"] == "failed" and session["counts"]["attempts_failed"] >= 3
