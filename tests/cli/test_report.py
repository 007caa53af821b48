"""``saber report`` and ``saber training`` through click's test runner: what each call
writes, prints, and exits with."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from saber.cli import main
from saber.errors import ExitCode

EXAMPLE = Path(__file__).parents[1] / "reports" / "data" / "example_scores.csv"


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


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
    assert report["bootstrap"] == {
        "resamples": 50,
        "confidence_pct": 95.0,
        "seed": 0,
        "method": "percentile",
    }
    assert md.read_text().startswith("# SABER report")
    assert csv.read_text().startswith("agent,time_limit,game")
    assert result.stdout == f"wrote {out}\nwrote {md}\nwrote {csv}\n"


def test_report_without_outputs_prints_the_report_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("report", str(EXAMPLE), "--resamples", "20")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("# SABER report")
    assert "| Montezuma's Revenge |" in result.stdout
    assert files(tmp_path) == []


@pytest.mark.parametrize(
    ("flag", "name", "start"),
    [("--json", "r.json", "{"), ("--markdown", "r.md", "# SABER"), ("--csv", "r.csv", "agent,")],
)
def test_each_output_flag_writes_only_what_it_names(tmp_path, flag, name, start):
    result = run("report", str(EXAMPLE), flag, str(tmp_path / name), "--resamples", "20")
    assert result.exit_code == 0, result.output
    assert files(tmp_path) == [name]
    assert (tmp_path / name).read_text().startswith(start)
    assert result.stdout == f"wrote {tmp_path / name}\n"  # not the report as well


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("game,score\npong,twenty\n", "bad.csv:2: score 'twenty' of game pong is not a number"),
        (
            "game,score\nspace_invader,1\n",
            "bad.csv:2: Unknown game 'space_invader'. Did you mean: space_invaders",
        ),
        ("", "bad.csv: the file is empty"),
        (
            "game,episode,score\npong,0,1\npong,-1,2\n",
            "bad.csv:3: episode -1 is negative; episodes count from 0",
        ),
    ],
)
def test_bad_scores_are_refused_with_the_line_and_no_traceback(tmp_path, text, message):
    bad = tmp_path / "bad.csv"
    bad.write_text(text)
    result = run("report", str(bad), "--json", str(tmp_path / "r.json"))
    assert result.exit_code == ExitCode.BAD_INPUT
    assert message in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "r.json").exists()


def test_missing_scores_and_missing_file_are_usage_errors(tmp_path):
    bare = run("report")
    assert bare.exit_code == 2 and "Missing argument 'SCORES...'" in bare.output
    assert "--reference NAME alone" in bare.output
    missing = run("report", str(tmp_path / "nope.csv"), "--json", "x.json")
    assert missing.exit_code == 2 and "does not exist" in missing.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--resamples", "0"], "Invalid value for --resamples: must be >= 1, got 0"),
        (["--bootstrap-seed", "-1"], "Invalid value for --bootstrap-seed: must be >= 0, got -1"),
        (["--plots", "f", "--dpi", "0"], "Invalid value for --dpi: must be >= 1, got 0"),
        (["--plots", "f", "--plot-format", "png,bmp"], "Invalid value for --plot-format: bmp"),
        (["--dpi", "300"], "--dpi needs --plots DIRECTORY"),
        (["--plot-format", "pdf"], "--plot-format needs --plots DIRECTORY"),
    ],
)
def test_bad_options_name_the_flag_and_write_nothing(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    result = run("report", str(EXAMPLE), "--json", "r.json", *args)
    assert result.exit_code == 2
    assert message in result.output
    assert files(tmp_path) == []


def test_the_old_seed_flag_names_the_new_one_and_writes_nothing(tmp_path, monkeypatch):
    """``saber report --seed`` (before 0.4 the bootstrap seed): one line naming
    --bootstrap-seed, exit 2, no file written (docs/cli-and-api.md, one word, one seed)."""
    monkeypatch.chdir(tmp_path)
    result = run("report", str(EXAMPLE), "--json", "r.json", "--seed", "3")
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        "Error: saber report --seed is now --bootstrap-seed (the seed of the bootstrap "
        "intervals); --seed is the episode base seed of saber eval only"
    ]
    assert files(tmp_path) == []


def test_bootstrap_seed_seeds_the_intervals(tmp_path):
    """``--bootstrap-seed S`` gives the report of ``make_report(table, seed=S).to_dict()``."""
    from saber.reports import make_report, to_json
    from saber.scoring import read_scores

    out = tmp_path / "r.json"
    result = run("report", str(EXAMPLE), "--json", str(out), "--resamples", "50",
                 "--bootstrap-seed", "7")  # fmt: skip
    assert result.exit_code == 0, result.output
    table = read_scores(EXAMPLE)
    assert out.read_text() == to_json(make_report(table, seed=7, n_resamples=50).to_dict())
    assert out.read_text() != to_json(make_report(table, seed=8, n_resamples=50).to_dict())


def test_missing_matplotlib_is_found_before_anything_is_written(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    result = run("report", str(EXAMPLE), "--json", str(tmp_path / "r.json"), "--plots", "f")
    assert result.exit_code == ExitCode.BAD_INPUT
    assert 'pip install "saber-ale[plots]"' in result.output
    assert 'pip install ".[plots]"' in result.output
    assert files(tmp_path) == []


@pytest.mark.parametrize("flag", ["--training", "--at"])
def test_training_flags_point_to_the_training_command(tmp_path, flag):
    result = run("report", str(EXAMPLE), flag, "10M", "--json", str(tmp_path / "r.json"))
    assert result.exit_code == 2
    assert f"{flag} moved to its own command: saber training LOG --at" in result.output
    assert files(tmp_path) == []


def test_games_restricts_the_report(tmp_path):
    out = tmp_path / "r.json"
    result = run("report", str(EXAMPLE), "--games", "Pong,venture", "--json", str(out))
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert sorted(report["agents"]["alpha"]["saber"]["per_game"]) == ["pong", "venture"]
    assert sorted(report["agents"]["beta"]["saber"]["per_game"]) == ["pong", "venture"]


def test_games_accepts_the_sets_of_saber_eval_and_warns_about_absent_games(tmp_path):
    (tmp_path / "s.csv").write_text("game,score\nbattle_zone,3000\nqbert,300\nalien,100\n")
    out = tmp_path / "r.json"
    result = run("report", str(tmp_path / "s.csv"), "--games", "atari5", "--json", str(out))
    assert result.exit_code == 0, result.output
    per_game = json.loads(out.read_text())["agents"]["agent"]["saber"]["per_game"]
    assert sorted(per_game) == ["battle_zone", "qbert"]
    assert (
        "warning: --games atari5: no scores for double_dunk, name_this_game, phoenix"
        in result.stderr
    )


@pytest.mark.parametrize(
    ("games", "message"),
    [
        ("pongg", "Invalid value for --games: Unknown game 'pongg'. Did you mean: pong"),
        ("alien", "Invalid value for --games: none of these games has a score in"),
    ],
)
def test_bad_games_are_usage_errors(tmp_path, games, message):
    result = run("report", str(EXAMPLE), "--games", games, "--json", str(tmp_path / "r.json"))
    assert result.exit_code == 2
    assert message in result.output
    assert files(tmp_path) == []


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


def test_plots_are_written_in_each_format(tmp_path):
    pytest.importorskip("matplotlib")
    figures = tmp_path / "figures"
    result = run(
        "report",
        str(EXAMPLE),
        "--plots",
        str(figures),
        "--plot-format",
        "png,svg",
        "--dpi",
        "40",
        "--resamples",
        "20",
    )
    assert result.exit_code == 0, result.output
    names = files(figures)
    for stem in ("classes_saber", "per_game_5min", "profile_saber", "aggregates_saber"):
        assert {f"{stem}.png", f"{stem}.svg"} <= set(names)
    assert "time_limits.png" in names  # two time limits: 5 minutes and SABER
    assert not (tmp_path / "report.json").exists()
    assert result.stdout.count("wrote ") == len(names)
