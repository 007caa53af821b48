"""The comparisons read as agents x agents matrices, each note said once per report.

Every number is worked out by hand from the rows below (pairs of episodes, or of runs).
"""

from __future__ import annotations

import html

import pytest

from saber.reports import make_report, to_markdown
from saber.reports.comparisons import NONE, UNIT_NOTES, comparison_blocks, comparison_notes
from saber.reports.html import to_html
from saber.reports.latex import to_latex
from saber.scoring import merge_tables, read_scores, reference_table


def _report(tmp_path, text: str, *references: str, n_resamples: int = 200):
    (tmp_path / "s.csv").write_text(text)
    tables = [read_scores(tmp_path / "s.csv"), *(reference_table(r) for r in references)]
    return make_report(merge_tables(tables), n_resamples=n_resamples)


# "mine": one run, episodes 1, 2, 3 on Pong; "theirs": three runs of one episode each,
# scores 0, 2, 4. Over episodes (mine has a single run): pairs (mine, theirs) where mine is
# higher: 1 > 0; 2 > 0, 2 = 2 (a half); 3 > 0, 3 > 2: 4.5 of 9 = 0.5.
ONE_AGAINST_THREE = (
    "agent,run,game,episode,score\n"
    "mine,a,pong,0,1\nmine,a,pong,1,2\nmine,a,pong,2,3\n"
    "theirs,s0,pong,0,0\ntheirs,s1,pong,0,2\ntheirs,s2,pong,0,4\n"
)


def test_one_run_against_three_compares_episodes_and_says_so(tmp_path):
    report = _report(tmp_path, ONE_AGAINST_THREE)
    pair = report.comparisons["saber"].pair("mine", "theirs")
    assert pair.unit == "episodes"
    assert pair.probability_of_improvement == pytest.approx(4.5 / 9)
    low, high = pair.probability_of_improvement_ci
    assert low < 0.5 < high  # a real interval: each side's episodes resampled
    text = to_markdown(report)
    assert "P(row > column), over runs" not in text and UNIT_NOTES["runs"] not in text
    assert UNIT_NOTES["episodes"] in text
    assert "P(row > column), over episodes, 95% interval" in text


def test_the_matrix_holds_both_directions(tmp_path, cells):
    report = _report(tmp_path, ONE_AGAINST_THREE)
    (block,) = comparison_blocks(report)
    rows = {row[0]: row[1:] for row in block.improvement.rows}
    pair = report.comparisons["saber"].pairs[0]
    low, high = pair.probability_of_improvement_ci
    assert rows["mine"] == ["", f"0.50 [{low:.2f}, {high:.2f}]"]
    assert rows["theirs"] == [f"0.50 [{1 - high:.2f}, {1 - low:.2f}]", ""]
    reverse = report.comparisons["saber"].pair("theirs", "mine")
    assert reverse.probability_of_improvement == pytest.approx(0.5)
    assert reverse.probability_of_improvement_ci == (
        pytest.approx(1 - high),
        pytest.approx(1 - low),
    )


def test_runs_against_runs_compare_runs(tmp_path, cells):
    # x's runs 1, 3 and y's 2, 2 on Pong (one episode each): pairs with x higher: 3 > 2
    # twice, 1 < 2 twice: 2 of 4 = 0.5; on Venture x 10, 30 against 0, 0: 1.0. Mean 0.75.
    rows = "agent,run,game,score\n"
    rows += "x,0,pong,1\nx,1,pong,3\ny,0,pong,2\ny,1,pong,2\n"
    rows += "x,0,venture,10\nx,1,venture,30\ny,0,venture,0\ny,1,venture,0\n"
    report = _report(tmp_path, rows)
    pair = report.comparisons["saber"].pair("x", "y")
    assert pair.unit == "runs" and pair.probability_of_improvement == pytest.approx(0.75)
    text = to_markdown(report)
    assert "P(row > column), over runs, 95% interval" in text
    assert UNIT_NOTES["runs"] in text and UNIT_NOTES["episodes"] not in text


def test_a_pair_without_spread_is_a_dash_explained_once(tmp_path, cells):
    # z has one score per game (a single run of one episode): no spread to compare.
    rows = "agent,game,episode,score\nx,pong,0,0\nx,pong,1,2\ny,pong,0,5\ny,pong,1,6\nz,pong,0,1\n"
    report = _report(tmp_path, rows)
    text = to_markdown(report)
    matrix = [r for r in cells(text) if r[0] == "z"][-1]  # after the summary's rows
    assert matrix == ["z", NONE, NONE, ""]
    why = "z: one score per game (a single run of one episode): no spread to compare"
    assert text.count(why) == 1
    assert "[0.00, 0.00]" not in text and "0.000 [" not in text


def test_published_means_leave_the_matrix_with_one_note(tmp_path, cells):
    rows = "agent,run,game,episode,score\n" + "".join(
        f"{agent},{run},{game},{episode},{base + run + episode}\n"
        for agent, base in (("dqn", 10), ("ppo", 0))
        for run in range(2)
        for game in ("pong", "venture")
        for episode in range(2)
    )
    report = _report(tmp_path, rows, "saber-paper")
    text = to_markdown(report)
    header = next(r for r in cells(text) if r[0].startswith("P(row > column)"))
    assert header[1:] == ["dqn", "ppo"]  # the paper's agents are not in the matrix
    notes = comparison_notes(report)
    published = [n for n in notes if "published per-game means only" in n]
    assert published == [
        "rainbow-iqn@saber-paper, rainbow@saber-paper: published per-game means only, with "
        "neither runs nor episodes: not in the matrices (the probability of improvement and "
        "the t-tests need scores per run or per episode)."
    ]
    # Said once in the whole report, though the paper's agents are at three time limits.
    assert text.count("published per-game means only, with neither") == 1
    assert "no comparison:" not in text


def test_welch_matrix_counts_the_games_where_the_row_is_higher(tmp_path, cells):
    # Pong: x 0, 2 against y 10, 12: t = -10 / sqrt(2/2 + 2/2) ... p < 0.05, y higher.
    # Venture: one episode of x: no test.
    rows = "agent,game,episode,score\n"
    rows += "x,pong,0,0\nx,pong,1,2\ny,pong,0,10\ny,pong,1,12\nx,venture,0,5\ny,venture,0,0\n"
    report = _report(tmp_path, rows)
    (block,) = comparison_blocks(report)
    assert block.welch.rows == [["x", "", "0 of 1"], ["y", "1 of 1", ""]]
    assert "Not t-tested (one score on a side: Venture)." in to_markdown(report)


def test_html_and_latex_show_the_same_matrix(tmp_path):
    report = _report(tmp_path, ONE_AGAINST_THREE)
    pair = report.comparisons["saber"].pairs[0]
    low, high = pair.probability_of_improvement_ci
    cell = f"0.50 [{low:.2f}, {high:.2f}]"
    page = to_html(report, figures=False)
    section = page.split('<section id="comparisons">')[1].split("</section>")[0]
    assert "<table>" in section and f'<span class="nb">[{low:.2f}, {high:.2f}]</span>' in section
    assert section.count(html.escape(UNIT_NOTES["episodes"])) == 1
    latex = to_latex(report)
    assert r"\label{tab:saber-comparisons-saber}" in latex
    assert f"0.50 {{[}}{low:.2f}, {high:.2f}{{]}}" in latex
    assert cell in to_markdown(report)
