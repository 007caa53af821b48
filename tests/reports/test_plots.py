"""Every figure renders from a report, at a paper's column widths, in every format; without
matplotlib the error names both install forms."""

from __future__ import annotations

import re
import struct
import sys
from pathlib import Path

import pytest

from saber.reports import make_report
from saber.scoring import read_scores

pytest.importorskip("matplotlib")

EXAMPLE = Path(__file__).parent / "data" / "example_scores.csv"


@pytest.fixture(scope="module")
def report() -> dict:
    return make_report(read_scores(EXAMPLE), n_resamples=20).to_dict()


def png_size(path: Path) -> tuple[int, int]:
    """Width and height in pixels, from the PNG header (IHDR)."""
    return struct.unpack(">II", path.read_bytes()[16:24])


def test_save_plots_writes_every_figure(report, tmp_path):
    from saber.reports.plots import save_plots

    paths = save_plots(report, tmp_path / "figures", dpi=40)
    names = sorted(p.name for p in paths)
    assert names == sorted(
        [
            f"{kind}_{limit}.png"
            for kind in ("classes", "per_game", "profile", "aggregates")
            for limit in ("5min", "saber")
        ]
        + ["improvement_saber.png", "time_limits.png"]  # two agents at the SABER limit only
    )
    for path in paths:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_each_format_at_a_papers_widths(report, tmp_path):
    from saber.reports.figures.style import COLUMN_WIDTH, PAGE_WIDTH
    from saber.reports.plots import save_plots

    save_plots(report, tmp_path, formats=("png", "pdf", "svg"), dpi=100)
    assert png_size(tmp_path / "classes_saber.png")[0] == round(100 * COLUMN_WIDTH)
    assert png_size(tmp_path / "profile_saber.png")[0] == round(100 * COLUMN_WIDTH)
    assert png_size(tmp_path / "aggregates_saber.png")[0] == round(100 * PAGE_WIDTH)
    pdf = (tmp_path / "classes_saber.pdf").read_bytes()
    assert pdf.startswith(b"%PDF")
    box = re.search(rb"/MediaBox \[ *0 0 ([\d.]+) ([\d.]+) *\]", pdf)
    assert box is not None and float(box.group(1)) == pytest.approx(72 * COLUMN_WIDTH)
    svg = (tmp_path / "aggregates_saber.svg").read_text()
    assert f'width="{72 * PAGE_WIDTH:g}pt"' in svg
    assert "Optimality gap" in svg  # text stays text, for editing in a paper


def test_vector_figures_are_reproducible(report, tmp_path):
    from saber.reports.figures.files import save_figure
    from saber.reports.plots import plot_aggregates

    for suffix in ("pdf", "svg"):
        first = save_figure(plot_aggregates(report), tmp_path / f"a.{suffix}").read_bytes()
        assert save_figure(plot_aggregates(report), tmp_path / f"b.{suffix}").read_bytes() == first


def test_no_time_limit_figure_for_a_single_time_limit(tmp_path):
    from saber.reports.figures.intervals import plot_time_limits
    from saber.reports.plots import save_plots

    (tmp_path / "s.csv").write_text("game,score\npong,0\nventure,100\n")
    report = make_report(read_scores(tmp_path / "s.csv"), n_resamples=10).to_dict()
    assert plot_time_limits(report) is None
    names = [p.name for p in save_plots(report, tmp_path / "figures", dpi=40)]
    assert "time_limits.png" not in names and "classes_saber.png" in names


def test_class_counts_are_on_an_integer_axis(report):
    from saber.reports.figures.scores import plot_classes

    ticks = plot_classes(report).axes[0].get_yticks()
    assert len(ticks) > 1 and all(float(t).is_integer() for t in ticks)


def test_same_agent_same_colour_and_references_drawn_apart(tmp_path):
    from saber.reports.figures.scores import plot_classes
    from saber.reports.figures.style import agent_styles
    from saber.reports.plots import plot_profile

    (tmp_path / "s.csv").write_text(
        "agent,game,score\nrainbow@saber-paper,pong,20\nmine,pong,21\nmine,venture,0\n"
    )
    report = make_report(read_scores(tmp_path / "s.csv"), n_resamples=10).to_dict()
    styles = agent_styles(report)
    assert not styles["mine"].reference and styles["rainbow@saber-paper"].reference
    assert styles["rainbow@saber-paper"].linestyle != "-"
    assert styles["rainbow@saber-paper"].facecolor == "white"  # hollow
    profile = plot_profile(report)
    lines = {line.get_label(): line for line in profile.axes[0].get_lines()}
    colors = {line.get_color() for line in profile.axes[0].get_lines()}
    assert styles["mine"].color in colors and styles["rainbow@saber-paper"].color in colors
    assert lines  # drawn
    labels = [t.get_text() for t in plot_classes(report).legends[0].get_texts()]
    assert labels == ["mine", "rainbow@saber-paper (reference)"]  # the user's agents first


def test_profile_shows_an_agent_at_or_below_zero(tmp_path):
    from saber.reports.plots import plot_profile

    # pong -21 is below the random score: (-21 + 20.34) / 41.34 = -1.6% of the record
    (tmp_path / "s.csv").write_text("game,score\npong,-21\nventure,0\n")
    report = make_report(read_scores(tmp_path / "s.csv"), n_resamples=10).to_dict()
    ax = plot_profile(report).axes[0]
    assert ax.get_xlim()[0] < -1.6


def test_probability_of_improvement_has_a_row_per_pair(report):
    from saber.reports.plots import plot_improvement

    ax = plot_improvement(report, "saber").axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["alpha"]
    assert ax.get_xlim() == (0.0, 1.0)
    assert plot_improvement(report, "5min") is None  # one agent: no pair


def test_human_per_game_figure(report):
    from saber.reports.plots import plot_per_game

    fig = plot_per_game(report, "saber", reference="human")
    assert "human" in fig.axes[0].get_xlabel()
    assert "Montezuma's Revenge" in [t.get_text() for t in fig.axes[0].get_yticklabels()]


def test_missing_matplotlib_names_both_install_forms(report, monkeypatch):
    from saber.reports.figures.scores import plot_classes
    from saber.reports.plots import PlotsUnavailableError

    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # as if not installed
    with pytest.raises(PlotsUnavailableError, match=r'pip install "saber-ale\[plots\]"') as error:
        plot_classes(report)
    assert 'pip install ".[plots]"' in str(error.value)


def test_figures_of_games_without_a_saber_baseline(tmp_path):
    from saber.reports.plots import save_plots

    (tmp_path / "s.csv").write_text("game,score\nbasic_math,3\nsurround,1\n")
    report = make_report(read_scores(tmp_path / "s.csv"), n_resamples=10).to_dict()
    assert len(save_plots(report, tmp_path / "figures", dpi=40)) == 4


def test_runs_give_bands_and_intervals_and_references_are_drawn_as_such(tmp_path):
    from saber.reports.figures.style import agent_styles
    from saber.reports.plots import plot_improvement, plot_profile
    from saber.scoring import merge_tables, reference_table

    rows = "agent,run,game,episode,score\n" + "".join(
        f"{agent},r{run},{game},{run},{score + 3 * run}\n"
        for agent, score in (("a", 10), ("b", 0))
        for run in range(3)
        for game in ("pong", "venture", "boxing")
    )
    (tmp_path / "s.csv").write_text(rows)
    table = merge_tables([read_scores(tmp_path / "s.csv"), reference_table("saber-paper")])
    report = make_report(table, n_resamples=20).to_dict()
    styles = agent_styles(report)
    assert styles["rainbow@saber-paper"].reference and not styles["a"].reference
    assert plot_profile(report).axes[0].collections  # the bands (fill_between)
    improvement = plot_improvement(report)
    assert [t.get_text() for t in improvement.axes[0].get_yticklabels()] == ["a"]
    assert improvement.axes[0].patches  # the interval of P(a > b): runs
    assert "not shown" in improvement.axes[0].get_xlabel()  # pairs with a mean-only reference


def test_aggregate_intervals_stay_off_the_axes_and_labels_count_runs(tmp_path):
    from saber.reports.plots import plot_aggregates

    # Agent "a": 3 runs (scores 10, 13, 16 in each game); agent "b": 1 run of 2 episodes.
    rows = "agent,run,game,episode,score\n" + "".join(
        f"a,r{run},{game},0,{10 + 3 * run}\n" for run in range(3) for game in ("pong", "boxing")
    )
    rows += "b,r0,pong,0,-20\nb,r0,pong,1,-19\nb,r0,boxing,0,1\nb,r0,boxing,1,3\n"
    (tmp_path / "s.csv").write_text(rows)
    fig = plot_aggregates(make_report(read_scores(tmp_path / "s.csv"), n_resamples=20).to_dict())
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["a (3 runs)", "b (1 run)"]
    for ax in fig.axes[:4]:
        low, high = ax.get_xlim()
        for bar in ax.patches:  # no interval drawn on the spine or the panel's edge
            assert low < bar.get_x() and bar.get_x() + bar.get_width() < high


def test_profile_of_several_runs_below_zero_is_drawn_whole(tmp_path):
    from saber.reports.plots import plot_profile

    # Two runs of Pong at -21 and -20: (-21 + 20.34) / 41.34 = -1.6% and (-20 + 20.34) /
    # 41.34 = +0.8% of the record. Half the entries are below 0%: the curve must show the
    # drop from 1 to 0.5 below 0%, and the x-range must reach it.
    (tmp_path / "s.csv").write_text("run,game,score\nr0,pong,-21\nr1,pong,-20\n")
    report = make_report(read_scores(tmp_path / "s.csv"), n_resamples=10).to_dict()
    profile = report["agents"]["agent"]["saber"]["world_record"]["profile"]
    fraction = dict(zip(profile["thresholds_pct"], profile["fraction_above"], strict=True))
    assert fraction[-10.0] == 1.0 and fraction[-1.0] == 0.5 and fraction[0.0] == 0.5
    ax = plot_profile(report).axes[0]
    assert ax.get_xlim()[0] < -1.6
    (curve,) = ax.get_lines()[:1]
    xs, ys = curve.get_data()
    visible = [y for x, y in zip(xs, ys, strict=True) if ax.get_xlim()[0] <= x < 0]
    assert 1.0 in visible and 0.5 in visible


def test_aggregate_tick_labels_never_overlap() -> None:
    """The random agent's intervals are narrow ("100%100.25%100.5%" once ran together in
    the optimality-gap panel): each panel shows only as many ticks as fit, each label
    once, none touching its neighbour."""
    import itertools

    from saber.reports.plots import plot_aggregates
    from saber.scoring import reference_table

    fig = plot_aggregates(make_report(reference_table("saber-random"), n_resamples=200).to_dict())
    fig.draw_without_rendering()
    for ax in fig.axes:
        low, high = sorted(ax.get_xlim())
        shown = [
            (text.get_window_extent(), text.get_text())
            for text, loc in zip(ax.get_xticklabels(), ax.get_xticks(), strict=True)
            if low <= loc <= high and text.get_text()
        ]
        assert len(shown) >= 2, ax.get_title()
        labels = [label for _, label in shown]
        assert len(set(labels)) == len(labels), labels  # as many decimals as the step needs
        boxes = sorted((box for box, _ in shown), key=lambda box: box.x0)
        assert all(a.x1 < b.x0 for a, b in itertools.pairwise(boxes)), (ax.get_title(), labels)


def test_the_typed_report_and_its_json_dict_draw_the_same_figures(tmp_path):
    """The figures read the typed report (saber.reports.model.Report); its JSON dict, which
    make_report(...).to_dict() gives, is read as one first: the same SVG bytes from either."""
    from saber.reports import make_report
    from saber.reports.figures.files import figure_bytes
    from saber.reports.plots import report_figures
    from saber.scoring import merge_tables, reference_table

    # A not-SABER reference (Dopamine's DQN): its note under every figure reads the typed
    # report's references too.
    table = merge_tables([read_scores(EXAMPLE), reference_table("dopamine:dqn")])
    typed = make_report(table, n_resamples=20)
    from_typed = report_figures(typed, ["saber"], across_limits=False)
    from_dict = report_figures(typed.to_dict(), ["saber"], across_limits=False)
    assert list(from_typed) == list(from_dict) and "improvement_saber" in from_typed
    for name, fig in from_typed.items():
        assert figure_bytes(fig, "svg") == figure_bytes(from_dict[name], "svg"), name
    assert "‡" in figure_bytes(from_typed["classes_saber"], "svg").decode()
