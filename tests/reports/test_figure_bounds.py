"""Every figure saber draws fits its canvas: no caption, label, tick label or legend is cut.

Each figure is drawn (Agg) and every visible text and legend's extent
(``get_window_extent``) is held to the figure's own box, to the pixel. The reports cover
what makes a figure crowded: user agents of one run and of three, long names, the
SABER paper's means, the random and PPO references, Dopamine's not-SABER agents (their ‡
note), three time limits; the training figures a shipped log and a trainer's updates.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from matplotlib.axis import Axis
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text

from saber.reports import make_report
from saber.reports.plots import report_figures
from saber.scoring import merge_tables, read_scores, reference_table

SHIPPED_LOG = Path(__file__).parents[2] / "saber" / "agents" / "data" / "ppo_pong_training.jsonl.gz"
GAMES = ("pong", "breakout", "qbert", "venture", "montezuma_revenge")


def outside(fig) -> list[str]:
    """The texts, axes' tick labels and legends of ``fig`` that reach past its canvas.

    Tick labels count as their axis draws them (``Axis.get_tightbbox``: the ticks in view
    only; matplotlib keeps labels of unused ticks at stale places).
    """
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    box = fig.bbox
    axes = fig.findobj(Axis)
    ticks = {
        id(label)
        for axis in axes
        for tick in axis.majorTicks + axis.minorTicks
        for label in (tick.label1, tick.label2)
    }
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    pieces = [
        (repr(t.get_text()[:70]), t.get_window_extent(renderer))
        for t in texts
        if id(t) not in ticks
    ]
    pieces += [
        (f"the {axis.axis_name} axis", axis.get_tightbbox(renderer))
        for axis in axes
        if axis.get_visible()
    ]
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    pieces += [("a legend", legend.get_window_extent(renderer)) for legend in legends]
    found = []
    for what, ext in pieces:
        if ext is None:
            continue
        if ext.x0 < box.x0 - 1 or ext.y0 < box.y0 - 1 or ext.x1 > box.x1 + 1 or ext.y1 > box.y1 + 1:
            found.append(f"{what} at {tuple(round(v) for v in ext.extents)} in {box.extents}")
    return found


def _rows() -> str:
    rows = "agent,run,game,time_limit,episode,score\n"
    for agent, runs, base in (("my-agent-with-a-long-name", 1, 5), ("dqn", 3, 2)):
        for run in range(runs):
            for game in GAMES:
                for limit in ("5min", "30min", "saber"):
                    for episode in range(4):
                        score = base * (10 if game == "qbert" else 1) + run + episode
                        score += {"5min": 0, "30min": 1, "saber": 2}[limit]
                        rows += f"{agent},r{run},{game},{limit},{episode},{score}\n"
    return rows


@pytest.fixture(scope="module")
def crowded(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("bounds")
    (folder / "s.csv").write_text(_rows())
    references = ("saber-paper", "saber-random", "saber-ppo", "dopamine@10M")
    table = merge_tables([read_scores(folder / "s.csv"), *map(reference_table, references)])
    return report_figures(make_report(table, n_resamples=50))


@pytest.fixture(scope="module")
def five_agents(five_agents_report) -> dict:
    """Short names, so one-column figures, and pairs without an estimate in the caption."""
    return report_figures(five_agents_report)


def test_the_crowded_report_draws_every_kind_of_figure(crowded):
    kinds = {name.rsplit("_", 1)[0] if name != "time_limits" else name for name in crowded}
    assert kinds == {"classes", "per_game", "profile", "aggregates", "improvement", "time_limits"}


NAMES = [
    f"{kind}_{limit}"
    for kind in ("classes", "per_game", "profile", "aggregates", "improvement")
    for limit in ("5min", "30min", "saber")
] + ["time_limits"]


@pytest.mark.parametrize("which", ["crowded", "five_agents"])
@pytest.mark.parametrize("name", NAMES)
def test_every_report_figure_fits_its_canvas(request, which, name):
    figures = request.getfixturevalue(which)
    assert name in figures
    assert outside(figures[name]) == []


def test_a_small_report_fits_too(tmp_path):
    # One agent, one game, one episode: the figures' captions say most here.
    (tmp_path / "s.csv").write_text("game,score\npong,-20\n")
    for name, fig in report_figures(make_report(read_scores(tmp_path / "s.csv"))).items():
        assert outside(fig) == [], name


def test_the_training_figures_fit_their_canvas(tmp_path):
    from saber.reports.training import training_curves
    from saber.reports.training_diagnostics import plot_diagnostics, read_updates
    from saber.reports.training_plots import plot_training_curve

    for reference in (None, "saber-paper", "dopamine"):
        (curve,) = training_curves(SHIPPED_LOG, reference, n_resamples=50)
        assert outside(plot_training_curve(curve, agent="ppo-pong, the shipped agent")) == []
    counts = [0] * 18
    counts[2], counts[5] = 3, 1
    lines = [
        {"update": u, "frames": 1000 * u, "entropy": 2.5 - u / 10, "approx_kl": 0.01,
         "clip_fraction": 0.1, "explained_variance": 0.5, "actions": counts}
        for u in range(1, 6)
    ]  # fmt: skip
    updates = tmp_path / "updates.jsonl"
    updates.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert outside(plot_diagnostics(read_updates(updates), "Pong")) == []
