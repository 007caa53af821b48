"""The report of a small hand-made score file, every number computed by hand.

``data/example_scores.csv`` (not from a paper), agent alpha at the SABER limit:

| game              | episodes      | mean      | % of record                 | class      |
|-------------------|---------------|-----------|-----------------------------|------------|
| montezuma_revenge | 0, 24384      | 12192     | 12192 / 1219200 = 1%        | poor       |
| venture           | 3890, 3890    | 3890      | 3890 / 38900 = 10%          | medium     |
| tennis            | 0             | 0         | no record: left out         |            |
| air_raid          | 11814.625     | 11814.625 | 11235.375 / 22470.75 = 50%  | fair       |
| elevator_action   | 5000          | 5000      | no record: left out         |            |
| battle_zone       | inf, 40000    | infinite  | 200% in the mean            | superhuman |
| pong              | 20, 22        | 21        | 41.34 / 41.34 = 100%        | superhuman |
| freeway           | 0.01          | 0.01      | 0%                          | failing    |

Sorted: 0, 1, 10, 50, 100, inf -> median (10 + 50) / 2 = 30; mean (0 + 1 + 10 + 50 + 100
+ 200) / 6; IQM cuts one game per end: (1 + 10 + 50 + 100) / 4 = 40.25; optimality gap
(100 + 99 + 90 + 50 + 0 + 0) / 6 = 56.5.
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path

import pytest

from saber.reports import make_report, to_csv, to_json, to_markdown
from saber.scoring import read_scores

DATA = Path(__file__).parent / "data"
EXAMPLE = DATA / "example_scores.csv"


@pytest.fixture(scope="module")
def report() -> dict:
    return make_report(read_scores(EXAMPLE), n_resamples=300).to_dict()


def test_world_record_aggregates(report):
    wr = report["agents"]["alpha"]["saber"]["world_record"]
    assert wr["median"] == pytest.approx(30.0)
    assert wr["mean"] == pytest.approx(361 / 6)
    assert wr["iqm"] == pytest.approx(40.25)
    assert wr["optimality_gap"] == pytest.approx(56.5)
    assert wr["games"] == 6
    assert wr["left_out"] == ["elevator_action", "tennis"]
    assert wr["infinite"] == ["battle_zone"]
    assert wr["median_infinite"] is False


def test_classes(report):
    assert report["agents"]["alpha"]["saber"]["classes"] == {
        "failing": 1,
        "poor": 1,
        "medium": 1,
        "fair": 1,
        "superhuman": 2,
    }


def test_human_aggregates_leave_infinite_out_of_the_mean(report):
    human = report["agents"]["alpha"]["saber"]["human"]
    montezuma = 100 * 12192 / 4753.3
    venture = 100 * 3890 / 1187.5
    tennis = 100 * 23.92 / 15.62  # random -23.92, human -8.3
    pong = 100 * 41.34 / 34.94  # random -20.34, human 14.6
    assert human["median"] == pytest.approx((tennis + montezuma) / 2)
    assert human["mean"] == pytest.approx((montezuma + venture + tennis + pong + 0.0) / 5)
    assert human["games"] == 6
    assert human["left_out"] == ["air_raid", "elevator_action"]
    assert human["left_out_of_mean"] == ["battle_zone"]
    assert human["classes"]["superhuman"] == 5 and human["classes"]["failing"] == 1


def test_per_game_entries(report):
    per_game = report["agents"]["alpha"]["saber"]["per_game"]
    assert per_game["pong"] == {
        "score": 21.0,
        "infinite": False,
        "episodes": 2,
        "runs": 1,
        "run_scores": {"default": 21.0},
        "world_record_pct": 100.0,
        "human_pct": pytest.approx(100 * 41.34 / 34.94),
        "human_average_pct": pytest.approx(100 * (21 + 20.71) / (14.6 + 20.71)),
        "class": "superhuman",
    }
    assert per_game["battle_zone"]["infinite"] is True
    assert per_game["battle_zone"]["score"] is None
    assert per_game["battle_zone"]["class"] == "superhuman"
    assert per_game["tennis"]["world_record_pct"] is None and per_game["tennis"]["class"] is None


def test_five_minute_limit_is_its_own_section(report):
    five = report["agents"]["alpha"]["5min"]
    assert five["games"] == 1
    # pong 0.33: (0.33 + 20.34) / 41.34 = 50% up to rounding, so fair, not medium
    assert five["world_record"]["median"] == pytest.approx(50.0)
    assert five["classes"]["fair"] == 1
    assert report["time_limits"] == ["5min", "saber"]
    assert "5min" not in report["agents"]["beta"]


def test_second_agent(report):
    beta = report["agents"]["beta"]["saber"]["world_record"]
    # pong 20: 40.34 / 41.34; venture 194.5: 0.5%
    assert beta["median"] == pytest.approx((100 * 40.34 / 41.34 + 0.5) / 2)
    assert beta["games"] == 2


def test_comparisons(report):
    assert list(report["comparisons"]) == ["saber"]
    comparison = report["comparisons"]["saber"]
    assert comparison["games"] == ["pong", "venture"]
    (pair,) = comparison["pairs"]
    assert (pair["x"], pair["y"]) == ("alpha", "beta")
    # pong: 3 of 4 episode pairs won; venture: all won
    assert pair["probability_of_improvement"] == pytest.approx(0.875)
    assert pair["welch"]["pong"]["p_value"] == pytest.approx(
        1 - (1 / math.sqrt(2)) / math.sqrt(2.5)
    )
    assert pair["welch"]["venture"]["t"] == pytest.approx(19.0)
    assert pair["significant"] == {"alpha": 0.05, "x_better": 1, "y_better": 0}
    assert comparison["inter_algorithm"]["mean"] == {"alpha": 100.0, "beta": 0.0}


def test_intervals_are_reproducible_and_contain_the_estimate(report):
    wr = report["agents"]["alpha"]["saber"]["world_record"]
    assert wr["median_ci"] == [pytest.approx(30.0), pytest.approx(30.0)]
    assert wr["mean_ci"][0] <= wr["mean"] <= wr["mean_ci"][1]
    again = make_report(read_scores(EXAMPLE), n_resamples=300).to_dict()
    assert again["agents"] == report["agents"]
    other = make_report(read_scores(EXAMPLE), seed=1, n_resamples=300).to_dict()
    assert other["agents"]["alpha"]["saber"]["world_record"]["mean_ci"] != wr["mean_ci"]


def test_json_has_no_nan_or_infinity(report):
    text = to_json(report)
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text)["saber_compliant"] is True


def test_atari5_estimate_in_the_report(tmp_path):
    from saber.games import get_game

    games = ("battle_zone", "double_dunk", "name_this_game", "phoenix", "qbert")
    rows = "".join(f"{g},{get_game(g).atari57_human}\n" for g in games)
    (tmp_path / "a5.csv").write_text("game,score\n" + rows)
    atari5 = make_report(read_scores(tmp_path / "a5.csv"), n_resamples=10).to_dict()["agents"][
        "agent"
    ]["saber"]["atari5"]
    assert atari5["estimate"] == pytest.approx(10 ** (0.9653 * math.log10(101)) - 1)
    assert atari5["missing"] == []
    assert atari5["estimates"]["atari10"] is None
    assert atari5["predicted"]["atari5"]["amidar"] is not None
    assert atari5["predicted"]["atari10"] is None
    assert "without sticky actions" in atari5["caveat"]


def test_atari5_estimate_is_null_when_a_game_is_missing(report):
    atari5 = report["agents"]["alpha"]["saber"]["atari5"]
    assert atari5["estimate"] is None
    assert atari5["missing"][0] == "battle_zone"  # given only as inf


def test_markdown_layout(report, cells):
    text = to_markdown(report)
    rows = cells(text)
    assert rows[2][:4] == ["alpha", "5 minutes", "1", "50.0% †"]  # one episode: no interval
    assert rows[3][:4] == ["alpha", "SABER (unlimited)", "6", "30.0% [30.0%, 30.0%]"]
    assert rows[3][5].startswith("60.2% [")
    assert ["Venture", "0.0", "1,188", "38,900", "3,890 (10.0%)", "194 (0.5%)"] in rows
    assert ["Battle Zone", "3,000", "37,188", "801,000", "∞", "not run"] in rows
    assert (
        "No world record, left out of the world-record aggregates: Elevator Action, Tennis." in text
    )
    # P(alpha > beta) over episodes: 0.875 (test_comparisons), both ways in the matrix.
    matrix: dict[str, list[str]] = {}
    for row in rows:  # the first matrix of the two is P(row > column)'s
        if row[0] in ("alpha", "beta") and "" in row[1:]:
            matrix.setdefault(row[0], row[1:])
    assert matrix["alpha"][0] == "" and matrix["alpha"][1].startswith("0.88 [")
    assert matrix["beta"][0].startswith("0.12 [") and matrix["beta"][1] == ""
    assert "not SABER-compliant" not in text


def test_csv_has_one_row_per_agent_time_limit_and_game(report):
    lines = to_csv(report).splitlines()
    assert lines[0].startswith("agent,time_limit,game,episodes,score,infinite,world_record_pct")
    assert len(lines) == 1 + 1 + 8 + 2
    assert "alpha,saber,venture,2,3890.0,False,10.0," in to_csv(report)


def test_non_compliant_runs_are_marked(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    record = {"game": "pong", "episode": 0, "agent": "x", "score": 1.0, "score_5min": 0.0}
    record |= {"score_30min": 1.0, "infinite": False}
    (run / "episodes.jsonl").write_text(json.dumps(record) + "\n")
    (run / "run.json").write_text('{"non_saber": true}')
    report = make_report(read_scores(run), n_resamples=10).to_dict()
    assert report["saber_compliant"] is False
    assert "**Warning: not SABER-compliant.**" in to_markdown(report)


def test_agents_without_a_common_game(tmp_path):
    (tmp_path / "s.csv").write_text("agent,game,score\nx,pong,1\ny,venture,2\n")
    comparison = make_report(read_scores(tmp_path / "s.csv"), n_resamples=10).to_dict()[
        "comparisons"
    ]
    assert comparison["saber"]["games"] == []
    assert comparison["saber"]["pairs"][0]["probability_of_improvement"] is None
    assert comparison["saber"]["inter_algorithm"]["mean"] == {"x": None, "y": None}


def test_a_median_among_infinite_games_is_flagged_not_nan(tmp_path, cells):
    (tmp_path / "s.csv").write_text("game,score\nventure,3890\nbattle_zone,inf\nasterix,inf\n")
    report = make_report(read_scores(tmp_path / "s.csv"), n_resamples=20).to_dict()
    wr = report["agents"]["agent"]["saber"]["world_record"]
    assert wr["median"] is None and wr["median_infinite"] is True
    assert wr["mean"] == pytest.approx((10 + 200 + 200) / 3)
    assert wr["median_ci"] == [None, None]
    assert cells(to_markdown(report))[2][:4] == ["agent", "SABER (unlimited)", "3", "∞ †"]
    assert "Infinity" not in to_json(report)


def test_games_without_a_saber_baseline_are_left_out_like_surround(tmp_path, cells):
    (tmp_path / "s.csv").write_text("game,score\npong,21\nsurround,1\nbasic_math,3\ntennis,0\n")
    report = make_report(read_scores(tmp_path / "s.csv"), n_resamples=10).to_dict()
    section = report["agents"]["agent"]["saber"]
    assert section["world_record"]["games"] == 1
    assert section["world_record"]["left_out_reasons"] == {
        "surround": "no SABER baseline",
        "basic_math": "no SABER baseline",
        "tennis": "no world record",
    }
    assert section["human"]["left_out_reasons"] == {
        "surround": "no SABER baseline",
        "basic_math": "no SABER baseline",
    }
    assert section["per_game"]["basic_math"]["world_record_pct"] is None
    text = to_markdown(report)
    assert (
        "- No SABER baseline (not one of the 61 SABER games), left out of the world-record and "
        "human-normalized aggregates: Basic Math, Surround.\n"
        "- No world record, left out of the world-record aggregates: Tennis.\n" in text
    )
    assert ["Basic Math", "–", "–", "–", "3.0 (no SABER baseline)"] in cells(text)
    json.loads(to_json(report))


def test_a_report_without_any_saber_baseline_is_valid_json(tmp_path):
    # Nothing counts: every aggregate is null, never NaN (which JSON has not).
    (tmp_path / "s.csv").write_text("game,score,episode\nsurround,1,0\nbasic_math,3,0\n")
    report = make_report(read_scores(tmp_path / "s.csv"), n_resamples=10).to_dict()
    wr = report["agents"]["agent"]["saber"]["world_record"]
    assert wr["games"] == 0 and wr["median"] is None and wr["median_ci"] == [None, None]
    assert set(wr["profile"]["fraction_above"]) == {None}
    assert json.loads(to_json(report))["agents"]["agent"]["saber"]["world_record"]["mean"] is None
    assert (
        "left out of the world-record and human-normalized aggregates: Basic Math, Surround."
        in to_markdown(report)
    )


def test_an_agent_trained_outside_saber_is_marked_in_every_rendering(tmp_path):
    """The label read_scores gives a shipped agent whose provenance names deviations
    (ScoreTable.trained_outside_saber) is printed beside it, and survives the JSON."""
    from saber.reports.html import to_html
    from saber.reports.latex import to_latex

    (tmp_path / "s.csv").write_text("agent,game,score\nx,pong,1\ny,pong,2\n")
    table = read_scores(tmp_path / "s.csv")
    assert table.trained_outside_saber == {}  # neither is a shipped agent
    label = "not SABER: trained with a life lost ends the learner's episode"
    table.trained_outside_saber["x"] = label
    report = make_report(table, n_resamples=10)
    assert report.deviations_by_agent() == {"x": label}
    assert type(report).from_dict(json.loads(to_json(report))) == report
    markdown = to_markdown(report)
    assert f"‡ x: {label}." in markdown and "| x ‡ " in markdown and "y ‡" not in markdown
    assert r"x$^\ddagger$" in to_latex(report)
    assert f"‡ x: {label}." in html.unescape(to_html(report))


def test_shipped_agents_trained_under_saber_carry_no_label(tmp_path):
    (tmp_path / "s.csv").write_text("agent,game,score\nppo-breakout,breakout,10\n")
    assert read_scores(tmp_path / "s.csv").trained_outside_saber == {}
