"""``saber training LOG --reference dopamine`` and the training-curve figure (``--plots``)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from saber.cli import main
from saber.reports import make_report, to_csv, to_markdown
from saber.reports.training import compare_training, training_curves
from saber.reports.training_log import CheckpointScore
from saber.scoring import dopamine, reference_table

# pong.json, "Rainbow", iteration 9 of runs 1..5 (see tests/scoring/test_dopamine.py).
PONG_RAINBOW_10M_MEAN = 15.19977315


@pytest.fixture
def log(tmp_path):
    # 150 Pong episodes ending every 100,000 frames, scores 0..149.
    lines = [
        json.dumps({"game": "pong", "episode": i, "frames": (i + 1) * 100_000, "score": float(i)})
        for i in range(150)
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_training_table_has_the_five_run_mean_and_the_label(log, tmp_path):
    out = tmp_path / "t.json"
    args = ["training", str(log), "--at", "10M,10.5M,200M", "--reference", "dopamine:rainbow"]
    result = CliRunner().invoke(main, [*args, "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "| pong | 10,000,000 | 49.5 | 100 | 15.2 [" in result.output
    assert "| pong | 10,500,000 | 54.5 | 100 | not published |" in result.output
    assert "rainbow@dopamine ‡" in result.output
    assert dopamine.deviation_label() in result.output
    assert "200,000,000 frames: iteration 198 (frames 198M-199M)" in result.output
    cell = json.loads(out.read_text())[0]["references"]["rainbow@dopamine"]
    assert cell["score"] == pytest.approx(PONG_RAINBOW_10M_MEAN, abs=1e-8)
    assert cell["low"] < cell["score"] < cell["high"] and cell["runs"] == 5
    assert cell["iteration"] == 9


def test_all_six_agents_and_a_game_without_dopamine_data():
    score = CheckpointScore("defender", 10_000_000, 1.0, 100, 0, 99)
    rows = compare_training([score], "dopamine")
    assert sorted(rows[0].references) == sorted(f"{a}@dopamine" for a in dopamine.AGENTS)
    assert set(rows[0].references.values()) == {None}


def test_training_curves_have_every_iteration(log):
    (curve,) = training_curves(log, "dopamine:rainbow", n_resamples=100)
    (reference,) = curve.references
    assert reference.frames.size == 199 and reference.frames[9] == 10_000_000
    assert reference.mean[9] == pytest.approx(PONG_RAINBOW_10M_MEAN, abs=1e-8)
    assert (reference.low <= reference.mean).all() and (reference.mean <= reference.high).all()
    assert reference.deviations == dopamine.deviation_label()
    assert curve.mean[-1] == pytest.approx(99.5)  # the last 100 of 150 episodes: 50..149
    # The log ends at 15M: 10M is marked, the later checkpoints are there, not reached.
    assert [(s.at_frames, s.reached) for s in curve.checkpoints] == [
        (10_000_000, True),
        (50_000_000, False),
        (100_000_000, False),
        (200_000_000, False),
    ]
    assert [s.mean for s in curve.checkpoints[1:]] == [None, None, None]


def test_plots_writes_one_figure_per_game(log, tmp_path):
    pytest.importorskip("matplotlib")
    args = ["training", str(log), "--reference", "dopamine", "--plots", str(tmp_path / "f")]
    result = CliRunner().invoke(main, [*args, "--dpi", "50", "--plot-format", "png,svg"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "f" / "training_pong.png").stat().st_size > 0
    svg = (tmp_path / "f" / "training_pong.svg").read_text()
    assert "not SABER" in svg and "rainbow@dopamine (reference ‡)" in svg


def test_report_tables_label_dopamine_as_not_saber():
    report = make_report(reference_table("dopamine:dqn@10M"), n_resamples=20).to_dict()
    markdown = to_markdown(report)
    assert "| dqn@dopamine-10M ‡ |" in markdown.replace("  ", "")
    assert f"‡ dqn@dopamine-10M: {dopamine.deviation_label()}." in markdown
    assert "Castro et al. (2018)" in markdown
    assert dopamine.deviation_label() in to_csv(report).splitlines()[1]
    assert report["references"][0]["deviations"] == dopamine.deviation_label()
