"""``saber training`` on what saber writes: the shipped ppo-pong log (gzipped and not),
checkpoints the log did not reach (in every output), and files that are not training logs
(a real evaluation's, a score table, binary data), each refused in one line."""

from __future__ import annotations

import csv
import gzip
import io
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from saber.cli import main
from saber.errors import ExitCode, TrainingLogError
from saber.protocol.training import TRAINING_CHECKPOINTS
from saber.reports.training import compare_training, training_csv, training_curves
from saber.reports.training_log import read_training_log, training_scores

SHIPPED_LOG = Path(__file__).parents[2] / "saber" / "agents" / "data" / "ppo_pong_training.jsonl.gz"
LOG_END = 20_955_860  # frames of the shipped log's last line (episode 1617)
# Known answer, summed by hand from the log: the 100 episodes that ended last at or before
# 10M frames are 1050..1149, their scores sum to -528.
AT_10M = (-5.28, 100, 1050, 1149)


@pytest.fixture(params=["gzipped", "gunzipped"])
def shipped_log(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """The shipped ppo-pong training log as it ships (.jsonl.gz) and gunzipped (.jsonl)."""
    if request.param == "gzipped":
        return SHIPPED_LOG
    plain = tmp_path / "training.jsonl"
    with gzip.open(SHIPPED_LOG, "rb") as source, plain.open("wb") as target:
        shutil.copyfileobj(source, target)
    return plain


def _one_error_line(result) -> str:
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    return lines[0]


def test_the_shipped_log_scores_10m_and_reaches_no_later_checkpoint(shipped_log: Path) -> None:
    scores = training_scores(shipped_log, TRAINING_CHECKPOINTS)
    at_10m, *later = scores
    assert (at_10m.mean, at_10m.episodes, at_10m.first_episode, at_10m.last_episode) == (
        pytest.approx(AT_10M[0], abs=1e-12),
        *AT_10M[1:],
    )
    assert at_10m.reached and at_10m.log_frames == LOG_END
    # The training ended at 20,955,860 frames: 50M, 100M and 200M have no score (before
    # the fix: 3.7 each, "100 episodes", the last 100 episodes of the log repeated).
    assert [(s.at_frames, s.reached, s.mean, s.episodes) for s in later] == [
        (50_000_000, False, None, 0),
        (100_000_000, False, None, 0),
        (200_000_000, False, None, 0),
    ]


def test_every_output_shows_not_reached(shipped_log: Path, tmp_path: Path, cells) -> None:
    json_out, csv_out = tmp_path / "t.json", tmp_path / "t.csv"
    args = ["training", str(shipped_log), "--json", str(json_out), "--csv", str(csv_out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    rows = cells(result.output)
    assert rows[2] == ["pong", "10,000,000", "-5.3", "100"]
    assert rows[3:] == [["pong", f"{c:,}", "not reached", "-"] for c in TRAINING_CHECKPOINTS[1:]]
    assert "pong: last episode at 20,955,860 frames" in result.output
    written = json.loads(json_out.read_text())
    assert [(r["at_frames"], r["reached"], r["mean"]) for r in written] == [
        (10_000_000, True, pytest.approx(-5.28)),
        (50_000_000, False, None),
        (100_000_000, False, None),
        (200_000_000, False, None),
    ]
    table = list(csv.DictReader(io.StringIO(csv_out.read_text())))
    assert [(r["frames"], r["reached"], r["mean_score"]) for r in table] == [
        ("10000000", "true", "-5.28"),
        ("50000000", "false", ""),
        ("100000000", "false", ""),
        ("200000000", "false", ""),
    ]
    assert {r["log_frames"] for r in table} == {str(LOG_END)}
    # The CSV is a file the command names: not replaced without --force, like --json.
    again = _one_error_line(
        CliRunner().invoke(main, ["training", str(shipped_log), "--csv", str(csv_out)])
    )
    assert (
        again
        == f"Error: {csv_out} exists already; pass --force to replace it, or choose another name"
    )


def test_the_reference_comparison_shows_not_reached_beside_the_paper(
    shipped_log: Path, cells
) -> None:
    result = CliRunner().invoke(main, ["training", str(shipped_log), "--reference", "saber-paper"])
    assert result.exit_code == 0, result.output
    rows = cells(result.output)
    # Table 6/7 of the SABER paper: Rainbow-IQN on Pong at 10M, 50M (6.76, 19.77).
    assert rows[2] == ["pong", "10,000,000", "-5.3", "100", "6.8"]
    assert rows[3] == ["pong", "50,000,000", "not reached", "-", "19.8"]
    compared = compare_training(training_scores(shipped_log), "saber-paper")
    assert [row.reached for row in compared] == [True, False, False, False]
    assert [row.mean for row in compared][1:] == [None, None, None]
    table = list(csv.DictReader(io.StringIO(training_csv(compared))))
    assert table[1]["mean_score"] == "" and table[1]["rainbow-iqn@saber-paper"] == "19.77"


def test_the_figure_marks_no_score_where_the_log_did_not_reach(shipped_log: Path) -> None:
    pytest.importorskip("matplotlib")
    from saber.reports.training_plots import plot_training_curve

    (curve,) = training_curves(shipped_log)
    assert [(s.at_frames, s.reached) for s in curve.checkpoints] == [
        (10_000_000, True),
        (50_000_000, False),
        (100_000_000, False),
        (200_000_000, False),
    ]
    assert curve.frames.max() == LOG_END
    figure = plot_training_curve(curve)
    (axes,) = figure.axes
    marked = [line.get_xdata()[0] for line in axes.lines if line.get_marker() not in ("None", "")]
    assert marked == [10_000_000]  # one filled marker: the checkpoint reached
    caption = figure.get_supxlabel().replace("\n", " ")
    assert "50M, 100M, 200M not reached (the log ends at 20,955,860 frames)" in caption


def test_a_checkpoint_is_reached_at_the_log_s_last_frames(tmp_path: Path) -> None:
    """Reached: the log's last ``frames`` >= the checkpoint; an episode that ends after a
    checkpoint does not count toward it."""
    log = tmp_path / "t.jsonl"
    ends_and_scores = [(1_000, 1.0), (2_000, 3.0), (3_500, 10.0)]
    log.write_text(
        "".join(
            json.dumps({"game": "pong", "episode": i, "frames": f, "score": s}) + "\n"
            for i, (f, s) in enumerate(ends_and_scores)
        )
    )
    scores = training_scores(log, [999, 3_000, 3_500, 3_501])
    assert [(s.at_frames, s.reached, s.mean, s.episodes) for s in scores] == [
        (999, True, None, 0),  # reached, but no episode had ended yet: n/a
        (3_000, True, 2.0, 2),  # the episode ending at 3,500 does not count
        (3_500, True, pytest.approx(14 / 3), 3),
        (3_501, False, None, 0),
    ]
    # A caller that knows the training went on to 4,000 frames (a recorder's total_frames).
    known = training_scores(log, [3_501, 4_000, 4_001], trained_frames=4_000)
    assert [(s.reached, s.mean, s.log_frames) for s in known] == [
        (True, pytest.approx(14 / 3), 3_500),
        (True, pytest.approx(14 / 3), 3_500),
        (False, None, 3_500),
    ]


@pytest.fixture(scope="module")
def evaluation(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real saber eval run directory (two Breakout episodes of constant:1)."""
    out = tmp_path_factory.mktemp("eval") / "run"
    args = ["eval", "--agent", "constant:1", "--games", "breakout", "--episodes", "2",
            "--workers", "0", "--out", str(out)]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return out


def _what(evaluation: Path, tmp_path: Path, kind: str) -> tuple[Path, str]:
    """A file (or directory) that is not a training log, and what the error must say."""
    episodes = evaluation / "episodes.jsonl"
    if kind == "episodes.jsonl":
        return episodes, f"{episodes}:1: an evaluation's episode record"
    if kind == "episodes.jsonl.gz":
        packed = tmp_path / "episodes.jsonl.gz"
        packed.write_bytes(gzip.compress(episodes.read_bytes()))
        return packed, f"{packed}:1: an evaluation's episode record"
    if kind == "run directory":
        return evaluation, f"{evaluation}: an evaluation's run directory (saber eval)"
    if kind == "run.json":
        return evaluation / "run.json", "an evaluation's run.json"
    if kind == "report.json":
        return evaluation / "report.json", "a report (saber report --json), not a training log"
    if kind == "score CSV":
        table = tmp_path / "scores.csv"
        table.write_text("agent,game,score\nmine,pong,3\n")
        return table, f"{table}: a score table (CSV with game, score), not a training log"
    if kind == "random bytes":
        noise = tmp_path / "noise.bin"
        noise.write_bytes(bytes(range(256)) * 4)
        return noise, f"{noise}: not UTF-8 text (byte 0x80 at line 2), so not a training log"
    assert kind == "damaged gzip"
    damaged = tmp_path / "training.jsonl.gz"
    damaged.write_bytes(gzip.compress(SHIPPED_LOG.read_bytes())[:100])
    return damaged, f"{damaged}: a damaged gzip file"


KINDS = [
    "episodes.jsonl",
    "episodes.jsonl.gz",
    "run directory",
    "run.json",
    "report.json",
    "score CSV",
    "random bytes",
    "damaged gzip",
]


@pytest.mark.parametrize("kind", KINDS)
def test_what_is_not_a_training_log_is_named_in_one_line(
    evaluation: Path, tmp_path: Path, kind: str
) -> None:
    path, says = _what(evaluation, tmp_path, kind)
    line = _one_error_line(CliRunner().invoke(main, ["training", str(path)]))
    assert line.startswith("Error: ") and says in line, line
    assert "saber report" in line or "saber training reads" in line  # which command reads it
    with pytest.raises(TrainingLogError, match=r"not a training log|damaged gzip"):
        read_training_log(path)


def test_saber_report_names_a_training_log_and_the_command_that_reads_it(
    shipped_log: Path, tmp_path: Path
) -> None:
    log = shipped_log
    if log.suffix == ".gz":  # saber report reads .jsonl files as evaluations
        log = tmp_path / "training.jsonl"
        log.write_bytes(gzip.decompress(SHIPPED_LOG.read_bytes()))
    line = _one_error_line(CliRunner().invoke(main, ["report", str(log)]))
    assert line == (
        f"Error: {log}:1: a training log's line (a saber.training recorder's), not an "
        f"evaluation's episode; saber training {log} reads it"
    )
