"""The Markdown report explains itself: titles, sources, why a cell is empty, no -0.0%."""

from __future__ import annotations

import pytest

from saber.games import BASELINE_SOURCES
from saber.reports import make_report, to_markdown
from saber.scoring import read_scores


def markdown(tmp_path, text: str) -> str:
    (tmp_path / "s.csv").write_text(text)
    return to_markdown(make_report(read_scores(tmp_path / "s.csv"), n_resamples=20).to_dict())


def test_never_minus_zero(tmp_path, cells):
    # pong -20.35: (-20.35 + 20.34) / 41.34 = -0.02% of the record; 1e-9 below random elsewhere
    text = markdown(tmp_path, "game,score\npong,-20.35\nfreeway,-0.000001\n")
    assert "-0.0" not in text
    assert ["Pong", "-20.3", "14.6", "21.0", "-20.4 (0.0%)"] in cells(text)


def test_game_titles_as_people_write_them(tmp_path, cells):
    text = markdown(tmp_path, "game,score\nms_pacman,1000\nspace_invaders,500\nqbert,300\n")
    titles = [row[0] for row in cells(text)[8:]]  # after the two summary tables
    assert titles == ["Ms. Pac-Man", "Q*bert", "Space Invaders"]


def test_sources_of_the_reference_columns_are_cited(tmp_path):
    text = markdown(tmp_path, "game,score\npong,0\n")
    for source in BASELINE_SOURCES.values():
        assert f"- {source}." in text
    assert "Mnih et al. 2015" in text and "arXiv:1908.04683" in text
    assert "Human-normalized median" in text and "Human median" not in text
    report = make_report(read_scores(tmp_path / "s.csv"), n_resamples=10).to_dict()
    assert report["baseline_sources"] == BASELINE_SOURCES  # the same words in the JSON


def test_an_empty_atari5_cell_says_which_game_it_needs(tmp_path, cells):
    text = markdown(
        tmp_path, "game,score\nbattle_zone,30000\nname_this_game,8000\nphoenix,7000\nqbert,13000\n"
    )
    assert cells(text)[5][-1] == "needs Double Dunk"  # the second summary table
    assert "Atari-5 estimate empty (agent, SABER (unlimited)): needs Double Dunk." in text


def test_one_score_per_game_gives_no_interval_and_says_so(tmp_path, cells):
    text = markdown(tmp_path, "game,score\npong,0\nventure,100\n")
    summary = cells(text)[2]
    # (20.34 / 41.34 + 100 / 38900) / 2 = 24.7%, median and mean alike; the IQM of two
    # entries trims nothing (it would be the mean), so it is left out and the notes say why.
    assert summary[3:6] == ["24.7% †", "–", "24.7% †"]
    assert "IQM not shown (agent, SABER (unlimited)): fewer than 4 (run, game) entries" in text
    assert "† No interval (agent, SABER (unlimited)): one score per game and a single run" in text
    assert "[" not in "".join(summary)  # no zero-width interval shown as measured


@pytest.mark.parametrize("game", ["elevator_action", "basic_math"])
def test_a_percent_cell_without_a_record_says_why(tmp_path, game, cells):
    text = markdown(tmp_path, f"game,score\n{game},10\n")
    why = "no record" if game == "elevator_action" else "no SABER baseline"
    assert cells(text)[-1][-1] == f"10.0 ({why})"


def test_each_summary_row_says_what_its_intervals_resampled(tmp_path, cells):
    # "dqn": runs s0, s1 with every game and s2 without Venture (incomplete, left out);
    # "ppo": one run of two episodes per game; "paper": one score per game.
    text = markdown(
        tmp_path,
        "agent,run,game,episode,score\n"
        "dqn,s0,pong,0,10\ndqn,s0,venture,0,100\ndqn,s1,pong,0,12\ndqn,s1,venture,0,50\n"
        "dqn,s2,pong,0,15\n"
        "ppo,a,pong,0,1\nppo,a,pong,1,2\nppo,a,venture,0,0\nppo,a,venture,1,10\n"
        "paper,x,pong,0,20\n",
    )
    rows = {row[0]: row for row in cells(text)[2:5]}
    header = cells(text)[0]
    assert header[-3:] == ["Infinite", "Runs", "CI over"]
    assert rows["dqn"][-2:] == ["2 (+1 incomplete)", "runs"]
    assert rows["ppo"][-2:] == ["1", "episodes"]
    assert rows["paper"][-2:] == ["1", "– †"]
    assert "(column CI over)" in text
