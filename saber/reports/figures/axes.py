"""The figures' axes: symmetric log scales of normalized scores, and percent ticks."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def log_axis(ax: Axes, low: float, high: float, infinite_x: float | None = None) -> None:
    """Symmetric log x-axis from ``low`` to ``high`` percent, ticks at 0 and every decade.

    symlog, because normalized scores can be 0 or negative: linear within ±1%, log beyond.
    With ``infinite_x``, a tick there labelled ∞ (infinite gameplay).
    """
    ax.set_xscale("symlog", linthresh=1.0, linscale=1.0)
    from matplotlib.ticker import FixedLocator

    decades = [10.0**k for k in range(0, 7)]
    ticks = sorted(t for t in {0.0, *decades, *(-d for d in decades)} if low <= t <= high)
    ax.xaxis.set_minor_locator(FixedLocator(ticks))
    if len(ticks) > 6:  # labels of every decade would run into each other: every other one
        ticks = [t for t in ticks if t == 0 or round(math.log10(abs(t))) % 2 == 0]
    labels = [f"{t:g}%" for t in ticks]
    if infinite_x is not None:
        ticks.append(infinite_x)
        labels.append("∞")
    ax.set_xticks(ticks, labels)
    ax.set_xlim(low, high)


def left_of(scores: Sequence[float]) -> float:
    """Left end of a symlog axis: below 0% and every score, by a little."""
    low = min([0.0, *scores])
    return -0.5 if low > -1 else low * 1.5


def percent_y_ticks(ax: Axes) -> None:
    """Label the y ticks of ``ax`` in percent, with as few digits as each needs."""
    from matplotlib.ticker import FuncFormatter

    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}%"))


def fit_percent_ticks(fig: Figure, ax: Axes, most: int = 4, gap_px: float = 4.0) -> None:
    """Percent ticks on ``ax``'s x axis, as many as fit (up to ``most``) without labels
    touching: a narrow panel of a narrow range ("100%", "100.05%", "100.1%") gets fewer.

    Steps of 1, 2 or 5 (never 2.5, whose labels need one more decimal), and labels with
    the decimals that the tick spacing needs, the same for every tick of the panel.
    """
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    def label(value: float, _: int) -> str:
        locs = ax.xaxis.get_majorticklocs()
        step = min((abs(b - a) for a, b in itertools.pairwise(locs)), default=0.0)
        # 1e-9: a step of 0.1 computed as 0.0999... needs one decimal, not two.
        decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 0
        text = f"{value:.{decimals}f}"
        return f"{text.lstrip('-') if float(text) == 0 else text}%"  # no "-0.0%"

    ax.xaxis.set_major_formatter(FuncFormatter(label))
    for nbins in range(most, 0, -1):
        ax.xaxis.set_major_locator(MaxNLocator(nbins=nbins, steps=[1, 2, 5, 10]))
        fig.draw_without_rendering()
        if not _labels_touch(ax, gap_px):
            return


def _labels_touch(ax: Axes, gap_px: float) -> bool:
    """Whether two shown x tick labels of ``ax`` (drawn) are less than ``gap_px`` apart."""
    low, high = sorted(ax.get_xlim())
    boxes = sorted(
        (
            text.get_window_extent()
            for text, loc in zip(ax.get_xticklabels(), ax.get_xticks(), strict=True)
            if low <= loc <= high and text.get_text()
        ),
        key=lambda box: box.x0,
    )
    return not all(a.x1 + gap_px <= b.x0 for a, b in itertools.pairwise(boxes))
