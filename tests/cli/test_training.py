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


def _updates(tmp_path, lines):
    log = tmp_path / "run" / "training.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text(
        "".join(
            json.dumps({"game": "qbert", "episode": i, "frames": 500 * (i + 1), "score": 25 * i})
            + "\n"
            for i in range(4)
        )
    )
    (log.parent / "updates.jsonl").write_text("".join(line + "\n" for line in lines))
    return log


def test_training_plots_draw_the_updates_diagnostics_beside_the_log(tmp_path):
    from saber.reports.training_diagnostics import read_updates

    counts = [0] * 18
    counts[2], counts[5] = 3, 1  # UP 3 times, DOWN once
    lines = [
        json.dumps(
            {"update": 1, "frames": 1000, "entropy": 2.5, "approx_kl": 0.01, "actions": counts}
        ),
        json.dumps(
            {"update": 2, "frames": 2000, "entropy": 2.0, "approx_kl": None, "actions": counts}
        ),
    ]
    log = _updates(tmp_path, lines)
    diagnostics = read_updates(log.parent / "updates.jsonl")
    assert diagnostics.frames.tolist() == [1000, 2000]
    assert diagnostics.series["entropy"].tolist() == [2.5, 2.0]
    assert (
        diagnostics.series["approx_kl"][0] == 0.01
        and str(diagnostics.series["approx_kl"][1]) == "nan"
    )
    assert diagnostics.actions[0, 2] == 0.75 and diagnostics.actions[0, 5] == 0.25

    result = run("training", str(log), "--at", "1k", "--plots", str(tmp_path / "figs"))
    assert result.exit_code == 0, result.output
    assert f"wrote {tmp_path / 'figs' / 'training_diagnostics.png'}" in result.output
    assert (tmp_path / "figs" / "training_diagnostics.png").stat().st_size > 10_000


def test_training_plots_refuse_a_damaged_updates_line_in_one_line(tmp_path):
    log = _updates(tmp_path, [json.dumps({"update": 1, "frames": 10}), "{not json", ""])
    result = run("training", str(log), "--at", "1k", "--plots", str(tmp_path / "figs"))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert f"{log.parent / 'updates.jsonl'}:2: not an update's line" in result.output
    assert result.output.count("\n") == 1 and not (tmp_path / "figs").exists()
    log = _updates(tmp_path / "b", [json.dumps({"update": 1, "frames": 10, "actions": [1, 2]})])
    result = run("training", str(log), "--at", "1k", "--plots", str(tmp_path / "figs"))
    assert "'actions' must be 18 counts" in result.output
