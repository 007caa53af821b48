"""Several training runs per agent: the (runs x games) matrix, incomplete runs, bad input.

``RUNS`` below, world-record-normalized (random 0 in Venture and Montezuma's Revenge;
Air Raid: 11,814.625 is 50%)::

    run   air_raid   montezuma_revenge   venture
    s1       50%            1%             10%
    s2       inf            3%             20%
    s3        -              -             30%      (incomplete: left out of aggregates)

Per-game means over s1, s2: inf, 2, 15 -> median 15. Mean with inf at 200%: (50 + 1 + 10
+ 200 + 3 + 20) / 6 = 284 / 6. IQM of the 6 entries cuts one at each end: (3 + 10 + 20 +
50) / 4 = 20.75. Optimality gap: 100 - (50 + 1 + 10 + 100 + 3 + 20) / 6 = 100 - 184 / 6.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from saber.cli import main
from saber.errors import ExitCode, ScoreFileError
from saber.reports import make_report
from saber.scoring import read_scores

RUNS = """run,game,episode,score
s1,venture,0,3890
s1,montezuma_revenge,0,0
s1,montezuma_revenge,1,24384
s1,air_raid,0,11814.625
s2,venture,0,7780
s2,montezuma_revenge,0,36576
s2,air_raid,0,inf
s3,venture,0,11670
"""


@pytest.fixture(scope="module")
def section(tmp_path_factory):
    path = tmp_path_factory.mktemp("runs") / "runs.csv"
    path.write_text(RUNS)
    report = make_report(read_scores(path), n_resamples=200)
    return report, report.agents["agent"]["saber"]


def test_runs_and_the_unit_resampled(section):
    report, s = section
    assert s.runs == ["s1", "s2"]
    assert s.runs_incomplete == {"s3": ["air_raid", "montezuma_revenge"]}
    assert s.resampled == "runs" and s.interval_note is None
    assert any("run 's3'" in w and "left out of the aggregates" in w for w in report.warnings)


def test_aggregates_follow_rliable_on_the_matrix_with_saber_rules(section):
    _, s = section
    wr = s.world_record
    assert wr.median == pytest.approx(15.0)
    assert wr.mean == pytest.approx(284 / 6)
    assert wr.iqm == pytest.approx(20.75)
    assert wr.optimality_gap == pytest.approx(100 - 184 / 6)
    assert wr.infinite == ["air_raid"]
    for name in ("median", "mean", "iqm", "optimality_gap"):
        low, high = getattr(wr, f"{name}_ci")
        assert low <= getattr(wr, name) <= high, name


def test_classes_of_the_mean_over_runs_and_per_run(section):
    _, s = section
    assert s.classes == {"failing": 0, "poor": 1, "medium": 1, "fair": 0, "superhuman": 1}
    assert s.classes_per_run == {
        "s1": {"failing": 0, "poor": 1, "medium": 1, "fair": 1, "superhuman": 0},
        "s2": {"failing": 0, "poor": 1, "medium": 1, "fair": 0, "superhuman": 1},
    }


def test_per_game_rows_keep_every_run(section):
    _, s = section
    venture = s.per_game["venture"]
    assert venture.run_scores == {"s1": 3890.0, "s2": 7780.0, "s3": 11670.0}
    assert venture.runs == 3 and venture.episodes == 3
    assert venture.score == pytest.approx(5835.0)  # the mean over the counted runs s1, s2
    assert venture.world_record_pct == pytest.approx(15.0)
    assert s.per_game["air_raid"].infinite and s.per_game["air_raid"].class_ == "superhuman"


def test_json_says_what_was_resampled(section):
    report, _ = section
    document = report.to_dict()
    assert document["schema_version"] == 2
    section = document["agents"]["agent"]["saber"]
    assert section["resampled"] == "runs" and section["runs"] == ["s1", "s2"]
    assert set(section["world_record"]) >= {"median_ci", "mean_ci", "iqm_ci", "optimality_gap_ci"}
    profile = section["world_record"]["profile"]
    # -1000% .. -0.1%, 0%, 0.1% .. 1000%: 81 + 1 + 81 thresholds, 20 per decade.
    assert len(profile["thresholds_pct"]) == len(profile["fraction_above_low"]) == 163
    assert profile["thresholds_pct"][0] == pytest.approx(-1000.0)
    assert profile["thresholds_pct"][81] == 0.0
    assert profile["thresholds_pct"][82] == pytest.approx(0.1)
    # Every one of the 6 entries (50, 1, 10, inf, 3, 20) is above 0% and above -1000%;
    # 3 of them (50, inf, 20) are above 10%.
    assert profile["fraction_above"][0] == profile["fraction_above"][81] == 1.0
    assert profile["fraction_above"][profile["thresholds_pct"].index(10.0)] == 0.5
    assert "class" in section["per_game"]["venture"]
    json.dumps(document, allow_nan=False)


def test_human_iqm_leaves_infinite_games_out_like_the_human_mean(tmp_path):
    # 200% is SABER's world-record rule; a human-normalized infinite game has no value in
    # a mean, so it is left out of the human mean and IQM (and listed), not counted 200%.
    (tmp_path / "s.csv").write_text(
        "game,score\nventure,1187.5\nmontezuma_revenge,0\nasterix,inf\n"
    )
    human = (
        make_report(read_scores(tmp_path / "s.csv"), n_resamples=10).agents["agent"]["saber"].human
    )
    assert human.left_out_of_mean == ["asterix"]
    assert human.mean == pytest.approx(50.0) and human.iqm == pytest.approx(50.0)
    assert human.median == pytest.approx(100.0)  # 0, 100, inf


def test_one_run_resamples_episodes_and_one_score_per_game_gives_no_interval(tmp_path):
    (tmp_path / "e.csv").write_text("game,episode,score\nventure,0,0\nventure,1,3890\n")
    s = make_report(read_scores(tmp_path / "e.csv"), n_resamples=50).agents["agent"]["saber"]
    assert s.resampled == "episodes" and s.runs == ["default"]
    (tmp_path / "m.csv").write_text("game,score\nventure,3890\npong,0\n")
    s = make_report(read_scores(tmp_path / "m.csv"), n_resamples=50).agents["agent"]["saber"]
    assert s.resampled is None and s.interval_note.startswith("one score per game")
    assert s.world_record.median_ci == (None, None)


def test_pairs_with_runs_compare_runs(tmp_path):
    rows = ["agent,run,game,score"]
    for run, (a, b) in enumerate([(10, 5), (20, 6), (30, 7)]):
        rows += [f"x,{run},venture,{a * 100}", f"y,{run},venture,{b * 100}"]
        rows += [f"x,{run},pong,{a - 20}", f"y,{run},pong,{b - 20}"]
    (tmp_path / "p.csv").write_text("\n".join(rows) + "\n")
    (pair,) = (
        make_report(read_scores(tmp_path / "p.csv"), n_resamples=100).comparisons["saber"].pairs
    )
    assert pair.unit == "runs" and pair.probability_of_improvement == pytest.approx(1.0)
    assert pair.probability_of_improvement_ci == (pytest.approx(1.0), pytest.approx(1.0))
    assert pair.welch["venture"].t > 0


# --- harness directories ---------------------------------------------------------------


def write_run(directory: Path, games: list[str], run: str | None, scores: dict[str, float]) -> Path:
    directory.mkdir(parents=True)
    info = {"agent": "dqn", "games": games} | ({"run": run} if run else {})
    (directory / "run.json").write_text(json.dumps(info))
    lines = [
        json.dumps(
            {"game": g, "episode": 0, "agent": "dqn", "score": s, "score_5min": s, "score_30min": s}
            | {"infinite": False}
        )
        for g, s in scores.items()
    ]
    (directory / "episodes.jsonl").write_text("\n".join(lines) + "\n")
    return directory


def test_result_directories_of_one_agent_are_its_runs(tmp_path):
    a = write_run(tmp_path / "a", ["pong", "venture"], "seed0", {"pong": 0.0, "venture": 100.0})
    b = write_run(tmp_path / "seed1", ["pong", "venture"], None, {"pong": 5.0, "venture": 300.0})
    table = read_scores(a, b)
    assert table.runs("dqn", "saber") == ["seed0", "seed1"]  # run.json's, else the directory's
    s = make_report(table, n_resamples=20).agents["dqn"]["saber"]
    assert s.resampled == "runs" and s.per_game["venture"].run_scores == {
        "seed0": 100.0,
        "seed1": 300.0,
    }


def test_a_record_names_its_own_run(tmp_path):
    a = write_run(tmp_path / "a", ["pong"], "from-run-json", {"pong": 1.0})
    record = json.loads((a / "episodes.jsonl").read_text())
    (a / "episodes.jsonl").write_text(json.dumps(record | {"run": "from-record"}) + "\n")
    assert read_scores(a).runs("dqn", "saber") == ["from-record"]


def test_a_run_directory_of_another_game_set_is_refused(tmp_path):
    a = write_run(tmp_path / "a", ["pong", "venture"], "s0", {"pong": 0.0, "venture": 1.0})
    b = write_run(tmp_path / "b", ["pong", "breakout"], "s1", {"pong": 0.0, "breakout": 1.0})
    with pytest.raises(
        ScoreFileError,
        match=r"b/run.json: run 's1' of agent 'dqn' was evaluated on another game set",
    ):
        read_scores(a, b)


def test_one_run_evaluated_into_a_directory_per_game_is_one_run(tmp_path):
    # Atari agents are trained one per game, and often evaluated one job per game: the
    # directories of one run name are that run, and the report is the one of a directory
    # per run that holds every game.
    split = [
        write_run(tmp_path / "split" / name, [game], run, {game: score})
        for name, game, run, score in (("pong-0", "pong", "seed0", 0.0),
                                       ("venture-0", "venture", "seed0", 100.0),
                                       ("pong-1", "pong", "seed1", 5.0),
                                       ("venture-1", "venture", "seed1", 300.0))
    ]  # fmt: skip
    whole = [
        write_run(tmp_path / "whole" / "a", ["pong", "venture"], "seed0", {"pong": 0.0, "venture": 100.0}),
        write_run(tmp_path / "whole" / "b", ["pong", "venture"], "seed1", {"pong": 5.0, "venture": 300.0}),
    ]  # fmt: skip
    table = read_scores(*split)
    assert table.runs("dqn", "saber") == ["seed0", "seed1"]
    report = make_report(table, n_resamples=50)
    s = report.agents["dqn"]["saber"]
    assert s.resampled == "runs"
    assert s.per_game["venture"].run_scores == {"seed0": 100.0, "seed1": 300.0}
    assert s.per_game["pong"].run_scores == {"seed0": 0.0, "seed1": 5.0}
    assert (
        report.to_dict()["agents"]
        == make_report(read_scores(*whole), n_resamples=50).to_dict()["agents"]
    )


def test_a_run_split_over_directories_that_misses_a_game_is_refused_saying_how(tmp_path):
    pong = write_run(tmp_path / "pong-0", ["pong"], "seed0", {"pong": 0.0})
    venture = write_run(tmp_path / "venture-0", ["venture"], "seed0", {"venture": 1.0})
    other = write_run(tmp_path / "pong-1", ["pong"], "seed1", {"pong": 5.0})
    out = tmp_path / "r.json"
    args = ["report", str(pong), str(venture), str(other), "--json", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == ExitCode.BAD_INPUT
    line = result.output.strip()
    assert "\n" not in line and "Traceback" not in line and not out.exists()
    assert (
        f"{other}/run.json: run 'seed1' of agent 'dqn' was evaluated on another game set "
        f"than run 'seed0' ({pong}/run.json + {venture}/run.json); they differ in venture." in line
    )
    assert line.endswith("needs the same run name in each: saber eval --run NAME")


def test_the_same_run_twice_is_a_duplicate(tmp_path):
    a = write_run(tmp_path / "a", ["pong"], "s0", {"pong": 0.0})
    b = write_run(tmp_path / "b", ["pong"], "s0", {"pong": 1.0})
    with pytest.raises(ScoreFileError, match=r"run 's0', episode 0 .*saber eval --run NAME"):
        read_scores(a, b)


# --- bad CSV input: one line naming file and row, nothing written -------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("run,game,score\n,pong,1\n", "s.csv:2: empty run for game pong"),
        (
            "run,game,episode,score\na,pong,0,1\nb,pong,0,2\na,pong,0,3\n",
            "s.csv:4: game pong given twice for agent 'agent' at time limit saber, run 'a', "
            "episode 0 (first at ",
        ),
        ("game,episode,score\npong,-1,1\n", "s.csv:2: episode -1 is negative"),
    ],
)
def test_bad_run_input_fails_with_the_line_and_writes_nothing(tmp_path, text, message):
    (tmp_path / "s.csv").write_text(text)
    out = tmp_path / "r.json"
    result = CliRunner().invoke(main, ["report", str(tmp_path / "s.csv"), "--json", str(out)])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert message in result.output and "Traceback" not in result.output
    assert not out.exists()


def test_markdown_says_what_was_resampled_and_why_a_comparison_is_missing(tmp_path):
    from saber.reports import to_markdown
    from saber.scoring import merge_tables, reference_table

    (tmp_path / "s.csv").write_text(RUNS)
    table = merge_tables([read_scores(tmp_path / "s.csv"), reference_table("saber-paper")])
    text = to_markdown(make_report(table, n_resamples=30).to_dict())
    assert "resampling runs: over runs within each game" in text
    assert "† No interval (rainbow@saber-paper, every time limit;" in text
    assert "published per-game means only (one number per game, no runs or episodes)" in text
    assert (
        "- rainbow-iqn@saber-paper, rainbow@saber-paper: published per-game means only, with "
        "neither runs nor episodes: not in the matrices" in text
    )
