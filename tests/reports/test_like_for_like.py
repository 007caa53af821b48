"""Like for like: references over the user's games, identical time limits once, and
statistics that mean nothing for the input left out with the reason."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from saber.cli import main
from saber.reports import make_report, to_markdown
from saber.scoring import merge_tables, read_scores, reference_table


def _with_paper(tmp_path, rows: str):
    (tmp_path / "s.csv").write_text(rows)
    return merge_tables([read_scores(tmp_path / "s.csv"), reference_table("saber-paper")])


def test_a_one_game_run_beside_the_paper_gets_the_papers_score_on_that_game(tmp_path):
    report = make_report(_with_paper(tmp_path, "game,episode,score\npong,0,20\npong,1,21\n"))
    rainbow = report.agents["rainbow@saber-paper"]
    # The user's game only, at every limit: at 5 and 30 minutes, which the CSV lacks (no
    # time_limit column: saber), too, so that no reference asked for is dropped whole.
    assert list(rainbow) == ["5min", "30min", "saber"]
    assert all(list(s.per_game) == ["pong"] for s in rainbow.values())
    section = rainbow["saber"]
    assert section.world_record.games == 1
    # The paper's one-game median is its Pong score, normalized: not its 58-game median.
    assert section.world_record.median == pytest.approx(section.per_game["pong"].world_record_pct)
    assert section.world_record.median > 90  # Rainbow plays Pong near the record
    done = report.like_for_like
    assert done.references_restricted
    assert done.reference_games == {"5min": ["pong"], "30min": ["pong"], "saber": ["pong"]}
    assert len(done.references_left_out["rainbow@saber-paper"]) == 60
    (note,) = done.notes
    assert note.startswith(
        "References (rainbow@saber-paper, rainbow-iqn@saber-paper) are aggregated over the "
        "games your agents have (Pong), not over the 61 games they were published with"
    )
    assert note.endswith("report them alone: saber report --reference saber-paper.")
    assert note in to_markdown(report.to_dict())


def test_references_alone_are_not_restricted():
    report = make_report(reference_table("saber-paper"), n_resamples=10)
    assert report.like_for_like.notes == [] and not report.like_for_like.references_restricted
    assert report.agents["rainbow@saber-paper"]["saber"].world_record.games == 58


def test_agents_with_different_games_are_flagged_with_the_games_to_choose(tmp_path):
    rows = "agent,game,score\na,pong,0\na,venture,10\na,boxing,5\nb,pong,3\nb,venture,2\n"
    (tmp_path / "s.csv").write_text(rows)
    report = make_report(read_scores(tmp_path / "s.csv"), n_resamples=10)
    assert report.like_for_like.differing == {"saber": {"a": 3, "b": 2}}
    assert report.like_for_like.common_games == {"saber": ["pong", "venture"]}
    (note,) = report.like_for_like.notes
    assert note == (
        "Not like for like at SABER (unlimited): the agents' aggregates cover different games "
        "(a 3, b 2); to compare them on the games they all have, choose those: "
        "--games pong,venture."
    )
    # The games it names make the table like for like.
    out = CliRunner().invoke(
        main, ["report", str(tmp_path / "s.csv"), "--games", "pong,venture", "--resamples", "10"]
    )
    assert out.exit_code == 0, out.output
    assert "Not like for like" not in out.output


def test_identical_time_limits_are_printed_once_with_a_note(tmp_path, cells):
    # Every episode ends within 5 minutes: the three limits hold the same scores.
    rows = "game,time_limit,episode,score\n" + "".join(
        f"pong,{limit},{e},{s}\n" for limit in ("5min", "30min", "saber") for e, s in enumerate((-21, -19))
    )  # fmt: skip
    (tmp_path / "s.csv").write_text(rows)
    document = make_report(read_scores(tmp_path / "s.csv"), n_resamples=50).to_dict()
    assert document["time_limit_groups"] == [["5min", "30min", "saber"]]
    text = to_markdown(document)
    assert text.count("## Per-game scores") == 1
    assert "## Per-game scores, 5 minutes = 30 minutes = SABER (unlimited)" in text
    assert (
        "- 5 minutes, 30 minutes and SABER (unlimited): every score, and so every table, is "
        "the same at these time limits (no episode scored after 5 minutes): printed once."
    ) in text
    summary = [row for row in cells(text) if row[0] == "agent"]
    assert len(summary) == 2  # one row in each summary table, not three
    assert summary[0][1] == "5 minutes = 30 minutes = SABER (unlimited)"
    # The JSON keeps every section: nothing disappears from the record.
    assert set(document["agents"]["agent"]) == {"5min", "30min", "saber"}


def test_different_time_limits_stay_apart(tmp_path):
    rows = "game,time_limit,score\npong,5min,-21\npong,30min,-10\npong,saber,-10\n"
    (tmp_path / "s.csv").write_text(rows)
    document = make_report(read_scores(tmp_path / "s.csv"), n_resamples=10).to_dict()
    assert document["time_limit_groups"] == [["5min"], ["30min", "saber"]]
    text = to_markdown(document)
    assert "## Per-game scores, 5 minutes\n" in text
    assert "## Per-game scores, 30 minutes = SABER (unlimited)\n" in text


def test_iqm_of_fewer_than_four_entries_is_left_out_with_the_reason(tmp_path):
    # 1 run x 3 games: trim_mean(x, 0.25) trims int(0.75) = 0 entries, so the "IQM" is the
    # mean: not shown. 2 runs x 2 games: 4 entries, one trimmed from each end: shown.
    (tmp_path / "three.csv").write_text("game,score\npong,0\nventure,100\nboxing,5\n")
    three = make_report(read_scores(tmp_path / "three.csv"), n_resamples=10).agents["agent"]
    assert {b: set(s) for b, s in three["saber"].omitted.items()} == {
        "world_record": {"iqm"},
        "human": {"iqm"},
    }
    wr = three["saber"].world_record
    assert wr.iqm == pytest.approx(wr.mean)  # the value stays in the JSON
    (tmp_path / "four.csv").write_text(
        "run,game,score\nr0,pong,0\nr0,venture,100\nr1,pong,-5\nr1,venture,300\n"
    )
    four = make_report(read_scores(tmp_path / "four.csv"), n_resamples=10).agents["agent"]
    assert four["saber"].omitted == {}


def test_one_game_in_common_leaves_the_inter_algorithm_mean_out(tmp_path):
    rows = "agent,game,episode,score\nx,pong,0,0\nx,pong,1,2\ny,pong,0,5\ny,pong,1,6\n"
    (tmp_path / "s.csv").write_text(rows)
    document = make_report(read_scores(tmp_path / "s.csv"), n_resamples=10).to_dict()
    comparison = document["comparisons"]["saber"]
    assert comparison["inter_algorithm"]["mean"] == {"x": 0.0, "y": 100.0}  # what it was
    assert "mean" in comparison["omitted"]["inter_algorithm"]
    text = to_markdown(document)
    assert "Mean inter-algorithm score (each game" not in text
    assert (
        "- Mean inter-algorithm score not shown (SABER (unlimited)): one game in common: "
        "scaled to the agents' min..max, each agent scores 0% or 100%"
    ) in text
    # P(X > Y) over episodes still means something with one game: it stays. Every episode
    # of x (0, 2) is below every one of y (5, 6): every resample gives 0, no interval.
    assert "| x " in text and "0.00 †" in text and "1.00 †" in text
    assert "[0.00, 0.00]" not in text and "Every resample gave the same P" in text


def test_the_aggregates_figure_leaves_the_same_iqm_out(tmp_path):
    pytest.importorskip("matplotlib")
    from saber.reports.plots import plot_aggregates

    (tmp_path / "s.csv").write_text("game,episode,score\npong,0,-21\npong,1,-19\n")
    fig = plot_aggregates(make_report(read_scores(tmp_path / "s.csv"), n_resamples=10).to_dict())
    median, iqm = fig.axes[0], fig.axes[1]
    assert median.patches and not iqm.patches  # the median's interval bar; no IQM drawn
    assert [t.get_text() for t in iqm.texts] == ["–"]
    assert "IQM not shown: fewer than 4 (run, game) entries" in fig.get_supxlabel()
