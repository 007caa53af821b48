"""The report: every statistic of a score table, as one JSON-ready dict.

Renderers (:mod:`saber.reports.tables`, :mod:`saber.reports.plots`) only lay this dict
out; they compute nothing. Its layout (percent everywhere; ``null`` for a value that
does not exist, never NaN or Infinity)::

    saber_compliant, sources, warnings, time_limits, bootstrap{resamples, confidence_pct, seed},
    baseline_sources{random, human, world_record} (citations, as the Markdown prints them)
    agents.<agent>.<time_limit>:
        games, episodes
        world_record{median, median_infinite, mean, iqm, optimality_gap, games, left_out,
                     left_out_reasons, infinite, median_ci, mean_ci, iqm_ci,
                     optimality_gap_ci, profile{thresholds_pct, fraction_above}}
        human{median, median_infinite, mean, iqm, games, left_out, left_out_reasons,
              infinite, left_out_of_mean, classes, median_ci, mean_ci}
        classes{failing, poor, medium, fair, superhuman}
        atari5{estimate, missing, estimates{atari1, atari3, atari5, atari10, ...},
               measured_median_57, predicted{atari5, atari10}, caveat}
        per_game.<ale_id>{score, infinite, episodes, world_record_pct, human_pct,
                          human_average_pct, class}
    comparisons.<time_limit> (two agents or more):
        agents, games, inter_algorithm{per_game.<ale_id>.<agent>, mean.<agent>}
        pairs[{x, y, probability_of_improvement, welch.<ale_id>{t, df, p_value},
               significant{alpha, x_better, y_better}}]

``left_out_reasons`` maps each game of ``left_out`` to why it is not counted: ``"no SABER
baseline"`` (a ROM outside the 61 SABER games, Surround or any other ROM of ale-py: no
SABER random score), ``"no world record"`` or ``"no human score"``. Such games are still
in ``per_game``, with null percentages.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from saber import __version__
from saber.games import BASELINE_SOURCES, get_game
from saber.scoring import (
    CAVEAT,
    CLASS_NAMES,
    ESTIMATE_SUBSETS,
    INFINITE_MEAN_VALUE,
    GameEpisodes,
    Reference,
    ScoreTable,
    atari57_median,
    atari_n_estimate,
    bootstrap_game_means,
    classify,
    has_baseline,
    inter_algorithm_normalize,
    interquartile_mean,
    mean_score,
    median_score,
    missing_games,
    normalize,
    optimality_gap,
    percentile_interval,
    performance_profile,
    predict_game_scores,
    probability_of_improvement,
    summarize,
    welch_t_test,
)

__all__ = ["NO_SABER_BASELINE", "REPORT_FORMAT", "build_report"]

REPORT_FORMAT = "saber-report/1"
SIGNIFICANCE_LEVEL = 0.05  # two-tailed Welch tests, as in the ALE paper
# Thresholds of the score distribution: 0% and 0.1% .. 1000% of the record, 20 per decade.
PROFILE_THRESHOLDS = np.concatenate([[0.0], np.logspace(-1, 3, 81)])


def number(value: float | None) -> float | None:
    """A JSON-safe float: None for None, NaN and infinities."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _interval(low_high: tuple[float, float]) -> list[float | None]:
    return [number(low_high[0]), number(low_high[1])]


def _normalized_episodes(
    episodes: list[GameEpisodes], reference: Reference
) -> tuple[list[NDArray], NDArray]:
    """Normalized episodes of the G' games that have the reference score.

    Returns:
        G' arrays (n_g,) in percent, and their games' infinite flags (G',).
    """
    kept = [e for e in episodes if has_baseline(e.game, reference)]
    scaled = [normalize(e.scores[:, None], [e.game], reference)[:, 0] for e in kept]
    return scaled, np.array([e.infinite for e in kept], dtype=bool)


def _bootstrap(
    episodes: list[GameEpisodes],
    reference: Reference,
    statistics: dict[str, Callable[[NDArray], NDArray]],
    seed: int,
    n_resamples: int,
    level: float,
) -> dict[str, list[float | None]]:
    scaled, infinite = _normalized_episodes(episodes, reference)
    if not scaled:
        return {f"{name}_ci": [None, None] for name in statistics}
    # A fresh generator per section: a section's intervals do not depend on which other
    # agents or time limits share the file.
    means = bootstrap_game_means(scaled, np.random.default_rng(seed), n_resamples, infinite)
    return {
        f"{name}_ci": _interval(percentile_interval(statistic(means), level))
        for name, statistic in statistics.items()
    }


NO_SABER_BASELINE = "no SABER baseline"
_MISSING_SCORE = {"world_record": "no world record", "human": "no human score"}


def _left_out_reason(game: str, reference: Reference) -> str:
    return _MISSING_SCORE[reference] if get_game(game).in_saber else NO_SABER_BASELINE


def _aggregates(
    normalized: dict[str, float], infinite_mean_value: float | None, reference: Reference
) -> dict[str, Any]:
    summary = summarize(normalized, infinite_mean_value)
    return {
        "median": number(summary.median),
        "median_infinite": math.isinf(summary.median),
        "mean": number(summary.mean),
        "iqm": number(summary.iqm),
        "optimality_gap": number(summary.optimality_gap),
        "games": len(summary.games),
        "left_out": list(summary.left_out),
        "left_out_reasons": {g: _left_out_reason(g, reference) for g in summary.left_out},
        "infinite": list(summary.infinite),
        "left_out_of_mean": list(summary.left_out_of_mean),
        "classes": summary.classes,
    }


def _for_aggregation(normalized: NDArray, infinite: NDArray) -> NDArray:
    # An infinite game counts as +inf in aggregates even when its recorded score is finite
    # (the harness keeps the score reached at the 100-hour cap); NaN stays NaN.
    return np.where(infinite & ~np.isnan(normalized), np.inf, normalized)


def _section(
    episodes: dict[str, GameEpisodes], seed: int, n_resamples: int, level: float
) -> dict[str, Any]:
    """Everything about one agent at one time limit."""
    rows = list(episodes.values())
    games = [e.game for e in rows]
    means = np.array([e.mean for e in rows])  # (G,)
    infinite = np.array([e.infinite for e in rows])  # (G,)
    pct = {ref: normalize(means, games, ref) for ref in ("world_record", "human", "human_average")}

    world_record = _aggregates(
        dict(zip(games, _for_aggregation(pct["world_record"], infinite), strict=True)),
        INFINITE_MEAN_VALUE,
        "world_record",
    )
    classes = world_record.pop("classes")
    world_record.pop("left_out_of_mean")
    counted = _for_aggregation(pct["world_record"], infinite)
    counted = counted[~np.isnan(counted)]
    world_record["profile"] = {
        "thresholds_pct": [float(t) for t in PROFILE_THRESHOLDS],
        # null everywhere when no game has the reference score (no distribution at all).
        "fraction_above": [float(f) for f in performance_profile(counted, PROFILE_THRESHOLDS)]
        if counted.size
        else [None] * len(PROFILE_THRESHOLDS),
    }
    world_record.update(
        _bootstrap(
            rows,
            "world_record",
            {
                "median": median_score,
                "mean": mean_score,
                "iqm": interquartile_mean,
                "optimality_gap": optimality_gap,
            },
            seed,
            n_resamples,
            level,
        )
    )
    # SABER defines the 200% rule for world-record scores only: an infinite game is left
    # out of the human-normalized mean (and listed), and is +inf in the median and classes.
    human = _aggregates(
        dict(zip(games, _for_aggregation(pct["human"], infinite), strict=True)), None, "human"
    )
    human.pop("optimality_gap")
    human.update(
        _bootstrap(
            rows,
            "human",
            {"median": median_score, "mean": lambda m: mean_score(m, None)},
            seed,
            n_resamples,
            level,
        )
    )

    per_game = {}
    for g, game in enumerate(games):
        wr = _for_aggregation(pct["world_record"][g : g + 1], infinite[g : g + 1])[0]
        per_game[game] = {
            "score": number(means[g]),
            "infinite": bool(infinite[g]),
            "episodes": int(rows[g].scores.size),
            "world_record_pct": number(pct["world_record"][g]),
            "human_pct": number(pct["human"][g]),
            "human_average_pct": number(pct["human_average"][g]),
            "class": None if np.isnan(wr) else CLASS_NAMES[int(classify(wr))],
        }
    return {
        "games": len(games),
        "episodes": int(sum(e.scores.size for e in rows)),
        "world_record": world_record,
        "human": human,
        "classes": classes,
        "atari5": _atari5(dict(zip(games, pct["human_average"], strict=True))),
        "per_game": per_game,
    }


def _atari5(human_average: dict[str, float]) -> dict[str, Any]:
    # Atari-N regressions take the numbers they were fitted on: finite scores (an
    # infinite game with a recorded score uses it; one given only as "inf" is missing).
    z = {g: s for g, s in human_average.items() if math.isfinite(s)}
    predicted = {}
    for model in ("atari5", "atari10"):
        scores = predict_game_scores(z, model)
        predicted[model] = None if scores is None else {g: number(s) for g, s in scores.items()}
    return {
        "estimate": number(atari_n_estimate(z, "atari5")),
        "missing": missing_games(z, "atari5"),
        "estimates": {s: number(atari_n_estimate(z, s)) for s in ESTIMATE_SUBSETS},
        "measured_median_57": number(atari57_median(z)),
        "predicted": predicted,
        "caveat": CAVEAT,
    }


def _comparison(table: ScoreTable, time_limit: str) -> dict[str, Any] | None:
    agents = [a for a in table.agents() if table.episodes(a, time_limit)]
    if len(agents) < 2:
        return None
    episodes = {a: table.episodes(a, time_limit) for a in agents}
    common = sorted(set.intersection(*(set(e) for e in episodes.values())))
    means = np.array([[episodes[a][g].mean for g in common] for a in agents])  # (A, G)
    infinite = np.array([[episodes[a][g].infinite for g in common] for a in agents])
    scaled = inter_algorithm_normalize(np.where(infinite, np.inf, means)) if common else means
    inter = {
        "per_game": {
            g: {a: number(scaled[i, j]) for i, a in enumerate(agents)} for j, g in enumerate(common)
        },
        "mean": {
            a: number(np.nanmean(scaled[i])) if np.isfinite(scaled[i]).any() else None
            for i, a in enumerate(agents)
        },
    }
    pairs = []
    for i, x in enumerate(agents):
        for y in agents[i + 1 :]:
            pairs.append(_pair(x, y, episodes[x], episodes[y], common))
    return {"agents": agents, "games": common, "inter_algorithm": inter, "pairs": pairs}


def _pair(
    x: str, y: str, ex: dict[str, GameEpisodes], ey: dict[str, GameEpisodes], games: list[str]
) -> dict[str, Any]:
    welch: dict[str, dict[str, float | None] | None] = {}
    better = {"x_better": 0, "y_better": 0}
    for g in games:
        finite = not (ex[g].infinite or ey[g].infinite)
        if not finite or ex[g].scores.size < 2 or ey[g].scores.size < 2:
            welch[g] = None  # no variance to test, or infinite gameplay
            continue
        result = welch_t_test(ex[g].scores, ey[g].scores)
        welch[g] = {
            "t": number(result.t),
            "df": number(result.df),
            "p_value": number(result.p_value),
        }
        if result.p_value < SIGNIFICANCE_LEVEL:
            better["x_better" if result.t > 0 else "y_better"] += 1
    poi = (
        probability_of_improvement(
            [_with_infinite(ex[g]) for g in games], [_with_infinite(ey[g]) for g in games]
        )
        if games
        else None  # no game in common
    )
    return {
        "x": x,
        "y": y,
        "probability_of_improvement": number(poi),
        "welch": welch,
        "significant": {"alpha": SIGNIFICANCE_LEVEL, **better},
    }


def _with_infinite(episodes: GameEpisodes) -> NDArray:
    # Infinite gameplay beats any finite episode, so the whole game counts as infinite.
    return np.full(episodes.scores.shape, np.inf) if episodes.infinite else episodes.scores


def build_report(
    table: ScoreTable, seed: int = 0, n_resamples: int = 2000, level: float = 0.95
) -> dict[str, Any]:
    """Compute every statistic of a score table (layout in the module docstring).

    Args:
        table: the scores, e.g. from :func:`saber.scoring.read_scores`.
        seed: seed of the bootstrap generators (``numpy.random.default_rng(seed)``).
        n_resamples: bootstrap resamples per interval.
        level: coverage of the intervals (0.95 for 95%).

    Returns:
        A dict of str, numbers, lists, bools and None, ready for ``json.dump``.
    """
    time_limits = table.time_limits()
    agents: dict[str, dict[str, Any]] = {}
    for agent in table.agents():
        agents[agent] = {}
        for time_limit in time_limits:
            episodes = table.episodes(agent, time_limit)
            if episodes:
                agents[agent][time_limit] = _section(episodes, seed, n_resamples, level)
    comparisons = {t: c for t in time_limits if (c := _comparison(table, t)) is not None}
    return {
        "format": REPORT_FORMAT,
        "saber_version": __version__,
        "saber_compliant": table.saber_compliant,
        "sources": list(table.sources),
        "warnings": list(table.warnings),
        "time_limits": time_limits,
        "bootstrap": {"resamples": n_resamples, "confidence_pct": 100 * level, "seed": seed},
        "baseline_sources": dict(BASELINE_SOURCES),
        "agents": agents,
        "comparisons": comparisons,
    }
