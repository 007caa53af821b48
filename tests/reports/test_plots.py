"""Every figure renders from a report; without matplotlib the error names the extra."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from saber.reports import build_report
from saber.scoring import read_scores

pytest.importorskip("matplotlib")

EXAMPLE = Path(__file__).parent / "data" / "example_scores.csv"


@pytest.fixture(scope="module")
def report() -> dict:
    return build_report(read_scores(EXAMPLE), n_resamples=20)


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
        + ["time_limits.png"]
    )
    for path in paths:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_human_per_game_figure(report):
    from saber.reports.plots import plot_per_game

    fig = plot_per_game(report, "saber", reference="human")
    assert "human" in fig.axes[0].get_xlabel()


def test_missing_matplotlib_names_the_extra(report, monkeypatch):
    from saber.reports.plots import PlotsUnavailableError, plot_classes

    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # as if not installed
    with pytest.raises(PlotsUnavailableError, match=r'pip install "saber-ale\[plots\]"'):
        plot_classes(report)


def test_figures_of_games_without_a_saber_baseline(tmp_path):
    from saber.reports.plots import save_plots

    (tmp_path / "s.csv").write_text("game,score\nbasic_math,3\nsurround,1\n")
    report = build_report(read_scores(tmp_path / "s.csv"), n_resamples=10)
    assert len(save_plots(report, tmp_path / "figures", dpi=40)) == 5
