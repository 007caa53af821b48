"""A report is a function of the set of episode records and the seed, not of line order.

A resumed run appends records in the order its episodes finish, and ``sort`` reorders a
file; the bootstrap draws episode indices, so without a canonical order the intervals
would change with the order of the lines.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from saber.cli import main
from saber.rundir.reading import episodes_log_checkpoint
from tests.harness.helpers import evaluate_short


@pytest.fixture(scope="module")
def run_directory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real harness run: random play of Breakout (scores 0 to a few points) and Freeway."""
    out = tmp_path_factory.mktemp("run")
    evaluate_short(out, 8, "breakout,freeway")
    return out


def _report_json(directory: Path, destination: Path) -> bytes:
    result = CliRunner().invoke(
        main, ["report", str(directory), "--json", str(destination), "--resamples", "200"]
    )
    assert result.exit_code == 0, result.output
    return destination.read_bytes()


def test_shuffled_lines_give_a_byte_identical_report(run_directory: Path, tmp_path: Path) -> None:
    episodes = run_directory / "episodes.jsonl"
    lines = episodes.read_text(encoding="utf-8").splitlines(keepends=True)
    scores = {line.split('"score": ')[1].split(",")[0] for line in lines if "breakout" in line}
    assert len(scores) > 1  # else any order would resample the same numbers
    before = _report_json(run_directory, tmp_path / "before.json")
    run_file = run_directory / "run.json"
    run = json.loads(run_file.read_text(encoding="utf-8"))
    for seed in range(3):
        random.Random(seed).shuffle(lines)
        episodes.write_text("".join(lines), encoding="utf-8")
        # The run as it would have been written had its episodes finished in this order
        # (run.json records what episodes.jsonl held, and refuses a file rewritten since).
        run["sessions"][-1]["episodes_log"] = episodes_log_checkpoint(episodes)
        run_file.write_text(json.dumps(run), encoding="utf-8")
        assert _report_json(run_directory, tmp_path / f"shuffled-{seed}.json") == before
