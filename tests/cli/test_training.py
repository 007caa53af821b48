"""`saber training`: the checkpoint scores of a training log, and what it refuses."""

from __future__ import annotations

import json

from click.testing import CliRunner

from saber.cli import main
from saber.errors import ExitCode


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_training_prints_the_checkpoints(tmp_path):
    log = tmp_path / "training.jsonl"
    episodes = [
        {"game": "pong", "episode": i, "frames": 1000 * (i + 1), "score": i} for i in range(4)
    ]
    log.write_text("".join(json.dumps(e) + "\n" for e in episodes))
    result = run("training", str(log), "--at", "2k,4k", "--json", str(tmp_path / "t.json"))
    assert result.exit_code == 0, result.output
    assert "| pong | 2,000 | 0.5 | 2 (fewer than 100) |" in result.stdout
    assert "| pong | 4,000 | 1.5 | 4 (fewer than 100) |" in result.stdout
    assert json.loads((tmp_path / "t.json").read_text())[0]["at_frames"] == 2000


def test_training_refuses_an_empty_log(tmp_path):
    log = tmp_path / "training.jsonl"
    log.write_text("")
    result = run("training", str(log))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert f"{log}: no episodes in this training log" in result.output
    assert "|" not in result.output  # no empty table


def test_training_names_the_at_flag(tmp_path):
    log = tmp_path / "training.jsonl"
    log.write_text(json.dumps({"game": "pong", "episode": 0, "frames": 10, "score": 1}) + "\n")
    result = run("training", str(log), "--at", "ten")
    assert result.exit_code == 2
    assert "Invalid value for --at:" in result.output and "'ten'" in result.output
