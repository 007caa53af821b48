"""``saber report`` through click's test runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from saber.cli import main

EXAMPLE = Path(__file__).parent / "data" / "example_scores.csv"


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_report_writes_json_markdown_and_csv(tmp_path):
    out = tmp_path / "report.json"
    md, csv = tmp_path / "report.md", tmp_path / "games.csv"
    result = run(
        "report",
        str(EXAMPLE),
        "--json",
        str(out),
        "--markdown",
        str(md),
        "--csv",
        str(csv),
        "--resamples",
        "50",
    )
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["agents"]["alpha"]["saber"]["world_record"]["median"] == 30.0
    assert report["bootstrap"] == {"resamples": 50, "confidence_pct": 95.0, "seed": 0}
    assert md.read_text().startswith("# SABER report")
    assert csv.read_text().startswith("agent,time_limit,game")
    assert f"wrote {out}" in result.output


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("game,score\npong,twenty\n", "bad.csv:2: score 'twenty' of game pong is not a number"),
        (
            "game,score\nspace_invader,1\n",
            "bad.csv:2: Unknown game 'space_invader'. Did you mean: space_invaders",
        ),
        ("", "bad.csv: the file is empty"),
    ],
)
def test_bad_scores_exit_1_with_the_line_and_no_traceback(tmp_path, text, message):
    bad = tmp_path / "bad.csv"
    bad.write_text(text)
    result = run("report", str(bad), "--json", str(tmp_path / "r.json"))
    assert result.exit_code == 1
    assert message in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "r.json").exists()


def test_missing_json_option_and_missing_file_are_usage_errors(tmp_path):
    assert run("report", str(EXAMPLE)).exit_code == 2
    assert run("report", str(tmp_path / "nope.csv"), "--json", "x.json").exit_code == 2


def test_harness_warnings_go_to_stderr(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    ok = {"game": "pong", "episode": 0, "agent": "x", "score": 1.0, "score_5min": 0.0}
    ok |= {"score_30min": 1.0, "infinite": False}
    failed = {"game": "pong", "episode": 1, "agent": "x", "error": "emulator died"}
    (run_dir / "episodes.jsonl").write_text(json.dumps(ok) + "\n" + json.dumps(failed) + "\n")
    result = run("report", str(run_dir), "--json", str(tmp_path / "r.json"), "--resamples", "10")
    assert result.exit_code == 0, result.output
    assert "warning:" in result.stderr and "emulator died" in result.stderr
    assert json.loads((tmp_path / "r.json").read_text())["time_limits"] == [
        "5min",
        "30min",
        "saber",
    ]


def test_version():
    result = run("--version")
    assert result.exit_code == 0 and "version" in result.output
