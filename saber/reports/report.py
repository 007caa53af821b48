"""The report: every statistic of a score table, as typed objects (:mod:`saber.reports.model`).

:func:`make_report` builds it; docs/reports.md gives its JSON layout key by key, how runs
are used and how infinite gameplay is counted.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from saber.games import BASELINE_SOURCES
from saber.reports.aggregates import (
    Resampler,
    block_aggregates,
    finite,
    finite_interval,
)
from saber.reports.like_for_like import (
    differing_game_sets,
    restrict_references,
    time_limit_groups,
)
from saber.reports.model import (
    NO_INTERVAL,
    SCHEMA_VERSION,
    Aggregates,
    Atari5,
    Bootstrap,
    Comparison,
    GameScore,
    InterAlgorithm,
    Pair,
    ReferenceUsed,
    Report,
    Resampled,
    Section,
    Welch,
)
from saber.scoring import (
    Reference,
    ScoreTable,
    atari_n_estimate,
    bootstrap_runs,
    normalize,
    probability_of_improvement,
    welch_t_test,
)
from saber.scoring.atari5 import (
    CAVEAT,
    ESTIMATE_SUBSETS,
    atari57_median,
    missing_games,
    predict_game_scores,
)
from saber.scoring.references import list_references
from saber.scoring.rules import CLASS_NAMES, class_counts, classify, game_mean
from saber.scoring.scoretable import GameEpisodes
from saber.scoring.stats import (
    improvement_over_episodes,
    inter_algorithm_normalize,
    pairwise_improvement,
    percentile_interval,
)
from saber.version import __version__

REPORT_FORMAT = "saber-report/2"
SIGNIFICANCE_LEVEL = 0.05  # two-tailed Welch tests, as in the ALE paper
MEAN_ONLY_NOTE = (
    "published per-game means only (one number per game, no runs or episodes): "
    "no interval can be computed"
)
ONE_SCORE_NOTE = "one score per game and a single run: nothing to resample, so no interval"
NO_COMPLETE_RUN_NOTE = "no run has every game: no aggregate over all games"
# scipy's trim_mean(x, 0.25) cuts int(0.25 n) entries from each end: none below 4.
IQM_LEAST_ENTRIES = 4
IQM_OMITTED = (
    "fewer than 4 (run, game) entries, so the interquartile mean trims nothing and is the mean"
)
INTER_ALGORITHM_OMITTED = (
    "one game in common: scaled to the agents' min..max, each agent scores 0% or 100%, "
    "which only says who scored higher on that game"
)


RunEpisodes = dict[str, dict[str, GameEpisodes]]  # run -> game -> its episodes


def _run_matrix(runs: RunEpisodes, counted: list[str], games: list[str]) -> NDArray:
    """Raw (R, G) matrix of each counted run's mean per game; ``+inf`` for infinite games."""
    return np.array(
        [[game_mean(runs[r][g].scores, runs[r][g].infinite) for g in games] for r in counted]
    ).reshape(len(counted), len(games))


def _resampling(
    runs: RunEpisodes, counted: list[str], games: list[str], mean_only: bool
) -> tuple[Resampled | None, str | None]:
    """What the section's intervals resample (``resampled``), or why it has none."""
    if mean_only:
        return None, MEAN_ONLY_NOTE
    if len(counted) >= 2:
        return "runs", None
    if len(counted) == 1:
        one_each = all(runs[counted[0]][g].scores.size == 1 for g in games)
        return (None, ONE_SCORE_NOTE) if one_each else ("episodes", None)
    return None, NO_COMPLETE_RUN_NOTE


def _episode_scores(
    runs: RunEpisodes,
    counted: list[str],
    games: list[str],
    reference: Reference,
    unit: Resampled | None,
) -> list[NDArray]:
    """Per game, the single run's episodes normalized (an infinite game stays infinite),
    which the intervals resample when ``unit`` is ``"episodes"``; else empty arrays."""
    if unit != "episodes":
        return [np.empty(0)] * len(games)
    run = runs[counted[0]]
    return [
        np.full(run[g].scores.shape, np.inf)
        if run[g].infinite
        else normalize(run[g].scores[:, None], [g], reference)[:, 0]
        for g in games
    ]


def _per_game(runs: RunEpisodes, shown: list[str], games: list[str]) -> dict[str, GameScore]:
    """Per game, the mean over the runs ``shown`` that have it (the counted runs, or every
    run when none has every game); ``run_scores`` and ``episodes`` over every run."""
    per_game = {}
    for game in games:
        with_game = [r for r in shown if game in runs[r]]
        run_means = {r: runs[r][game].mean for r in runs if game in runs[r]}
        raw = float(np.mean([run_means[r] for r in with_game]))
        infinite = any(runs[r][game].infinite for r in with_game)
        normalized = {
            ref: normalize(np.array([raw]), [game], ref)[0]
            for ref in ("world_record", "human", "human_average")
        }
        wr = np.inf if infinite else normalized["world_record"]
        per_game[game] = GameScore(
            score=finite(raw),
            infinite=infinite,
            episodes=int(sum(runs[r][game].scores.size for r in runs if game in runs[r])),
            runs=len(run_means),
            run_scores={r: finite(m) for r, m in run_means.items()},
            world_record_pct=finite(normalized["world_record"]),
            human_pct=finite(normalized["human"]),
            human_average_pct=finite(normalized["human_average"]),
            class_=None if np.isnan(wr) else CLASS_NAMES[int(classify(wr))],
        )
    return per_game


def _omitted(blocks: dict[str, Aggregates], runs: int) -> dict[str, dict[str, str]]:
    """The statistics the renderings leave out, by block (``Section.omitted``)."""
    omitted = {}
    for ref, block in blocks.items():
        entries = runs * (block.games - len(block.left_out_of_mean))
        if block.iqm is not None and entries < IQM_LEAST_ENTRIES:
            omitted[ref] = {"iqm": IQM_OMITTED}
    return omitted


def _section(
    table: ScoreTable, agent: str, time_limit: str, seed: int, n_resamples: int, level: float
) -> Section:
    """Everything about one agent at one time limit."""
    runs = table.run_episodes(agent, time_limit)
    games = sorted({g for by_game in runs.values() for g in by_game})
    incomplete = {
        r: sorted(set(games) - set(by_game))
        for r, by_game in runs.items()
        if set(by_game) != set(games)
    }
    counted = [r for r in runs if r not in incomplete]
    mean_only = agent in table.mean_only
    unit, note = _resampling(runs, counted, games, mean_only)
    matrix = _run_matrix(runs, counted, games)  # (R, G) raw
    resampler = Resampler(unit, seed, n_resamples)
    blocks = {
        ref: block_aggregates(
            games,
            normalize(matrix, games, ref),
            _episode_scores(runs, counted, games, ref, unit),
            ref,
            resampler,
            level,
        )
        for ref in ("world_record", "human")
    }
    per_game = _per_game(runs, counted or list(runs), games)
    wr_rows = normalize(matrix, games, "world_record")
    with_record = ~np.isnan(wr_rows).any(axis=0) if wr_rows.size else np.zeros(len(games), bool)
    human_average = {g: per_game[g].human_average_pct for g in games}
    return Section(
        games=len(games),
        episodes=int(sum(e.scores.size for e in table.episodes(agent, time_limit).values())),
        runs=counted,
        runs_incomplete=incomplete,
        resampled=unit,
        interval_note=note,
        reference=table.references.get(agent),
        mean_only=mean_only,
        world_record=blocks["world_record"],
        human=blocks["human"],
        classes=dict(blocks["world_record"].classes),
        classes_per_run={r: class_counts(wr_rows[i, with_record]) for i, r in enumerate(counted)},
        atari5=_atari5({g: s for g, s in human_average.items() if s is not None}),
        per_game=per_game,
        omitted=_omitted(blocks, len(counted)),
    )


def _atari5(human_average: dict[str, float]) -> Atari5:
    # Atari-N regressions take the numbers they were fitted on: finite scores (an
    # infinite game with a recorded score uses it; one given only as "inf" is missing).
    z = {g: s for g, s in human_average.items() if np.isfinite(s)}
    predicted: dict[str, dict[str, float | None] | None] = {}
    for model in ("atari5", "atari10"):
        scores = predict_game_scores(z, model)
        predicted[model] = None if scores is None else {g: finite(s) for g, s in scores.items()}
    return Atari5(
        estimate=finite(atari_n_estimate(z, "atari5")),
        missing=missing_games(z, "atari5"),
        estimates={s: finite(atari_n_estimate(z, s)) for s in ESTIMATE_SUBSETS},
        measured_median_57=finite(atari57_median(z)),
        predicted=predicted,
        caveat=CAVEAT,
    )


def _comparison(
    table: ScoreTable,
    sections: dict[str, Section],
    time_limit: str,
    seed: int,
    n_resamples: int,
    level: float,
) -> Comparison | None:
    agents = list(sections)
    if len(agents) < 2:
        return None
    common = sorted(set.intersection(*(set(s.per_game) for s in sections.values())))
    means = np.array(
        [
            [
                np.inf if sections[a].per_game[g].infinite else sections[a].per_game[g].score or 0.0
                for g in common
            ]
            for a in agents
        ]
    ).reshape(len(agents), len(common))
    scaled = inter_algorithm_normalize(means) if common else means
    inter = InterAlgorithm(
        per_game={
            g: {a: finite(scaled[i, j]) for i, a in enumerate(agents)} for j, g in enumerate(common)
        },
        mean={
            a: finite(np.nanmean(scaled[i])) if np.isfinite(scaled[i]).any() else None
            for i, a in enumerate(agents)
        },
    )
    pairs = [
        _pair(table, sections, x, y, time_limit, common, seed, n_resamples, level)
        for i, x in enumerate(agents)
        for y in agents[i + 1 :]
    ]
    omitted = {"inter_algorithm": {"mean": INTER_ALGORITHM_OMITTED}} if len(common) == 1 else {}
    return Comparison(
        agents=agents, games=common, inter_algorithm=inter, pairs=pairs, omitted=omitted
    )


def _scores_by_game(
    table: ScoreTable,
    agent: str,
    section: Section,
    time_limit: str,
    unit: Resampled,
    games: list[str],
) -> list[NDArray]:
    """Per game, the scores a pair compares: per-run means, or the episodes of every
    counted run (pooled: an agent of several runs beside one of a single run)."""
    runs = table.run_episodes(agent, time_limit)
    if unit == "runs":
        return [
            np.array([game_mean(runs[r][g].scores, runs[r][g].infinite) for r in section.runs])
            for g in games
        ]
    # Infinite gameplay beats any finite episode, so the whole game counts as infinite.
    return [
        np.concatenate(
            [
                np.full(runs[r][g].scores.shape, np.inf)
                if runs[r][g].infinite
                else runs[r][g].scores
                for r in section.runs
            ]
        )
        for g in games
    ]


def _one_score_each(section: Section) -> bool:
    """A single run with one score per game: nothing to resample (``ONE_SCORE_NOTE``)."""
    return section.interval_note == ONE_SCORE_NOTE


def _pair_skipped(sections: dict[str, Section], x: str, y: str, games: list[str]) -> str | None:
    """Why a pair has no probability of improvement and no t-test, one sentence; None: it has."""
    pair = (x, y)
    mean_only = [a for a in pair if sections[a].mean_only]
    if mean_only:
        return (
            f"{' and '.join(mean_only)}: published per-game means only; the probability of "
            "improvement and the t-tests need scores per run or per episode"
        )
    if not sections[x].runs or not sections[y].runs:
        return "an agent has no run with every game"
    if not games:
        return "no game in common"
    single = [a for a in pair if _one_score_each(sections[a])]
    if single:
        return (
            f"{' and '.join(single)}: one score per game (a single run of one episode): "
            "no spread to compare, and no interval"
        )
    return None


def _pair(
    table: ScoreTable,
    sections: dict[str, Section],
    x: str,
    y: str,
    time_limit: str,
    games: list[str],
    seed: int,
    n_resamples: int,
    level: float,
) -> Pair:
    sx, sy = sections[x], sections[y]
    no_test = {"alpha": SIGNIFICANCE_LEVEL, "x_better": 0, "y_better": 0}
    skipped = _pair_skipped(sections, x, y, games)
    if skipped is not None:
        return Pair(x, y, None, NO_INTERVAL, None, skipped, {}, no_test)
    # rliable's unit is the run; with a single run on either side there is no spread over
    # runs (its interval would resample one number), so both sides' episodes are compared.
    unit: Resampled = "runs" if min(len(sx.runs), len(sy.runs)) >= 2 else "episodes"
    xs = _scores_by_game(table, x, sx, time_limit, unit, games)
    ys = _scores_by_game(table, y, sy, time_limit, unit, games)
    rng = np.random.default_rng(seed)
    if unit == "runs":
        mx, my = np.stack(xs, axis=1), np.stack(ys, axis=1)  # (R_x, G), (R_y, G)
        poi = probability_of_improvement(mx, my)
        # rliable's StratifiedIndependentBootstrap: each agent's runs resampled on its own.
        bx, by = bootstrap_runs(mx, rng, n_resamples), bootstrap_runs(my, rng, n_resamples)
        samples = pairwise_improvement(bx, by)
    else:
        poi, samples = improvement_over_episodes(xs, ys, rng, n_resamples)
    ci = finite_interval(*percentile_interval(samples, level))
    welch: dict[str, Welch | None] = {}
    better = {"x_better": 0, "y_better": 0}
    for g, a, b in zip(games, xs, ys, strict=True):
        if a.size < 2 or b.size < 2 or not (np.isfinite(a).all() and np.isfinite(b).all()):
            welch[g] = None  # no variance to test, or infinite gameplay
            continue
        result = welch_t_test(a, b)
        welch[g] = Welch(finite(result.t), finite(result.df), finite(result.p_value))
        if result.p_value < SIGNIFICANCE_LEVEL:
            better["x_better" if result.t > 0 else "y_better"] += 1
    return Pair(
        x=x,
        y=y,
        probability_of_improvement=finite(poi),
        probability_of_improvement_ci=ci,
        unit=unit,
        skipped=None,
        welch=welch,
        significant={"alpha": SIGNIFICANCE_LEVEL, **better},
    )


def make_report(
    table: ScoreTable, seed: int = 0, n_resamples: int = 2000, level: float = 0.95
) -> Report:
    """Compute every statistic of a score table.

    Args:
        table: the scores, e.g. from :func:`saber.scoring.read_scores`, merged with
            :func:`saber.scoring.references.reference_table` for references. Beside
            agents of the user's, the references keep only the user's games
            (:func:`saber.reports.like_for_like.restrict_references`).
        seed: seed of the bootstrap generators (``numpy.random.default_rng(seed)``).
        n_resamples: bootstrap resamples per interval.
        level: coverage of the intervals (0.95 for 95%).

    Returns:
        The :class:`~saber.reports.model.Report`.

    Example:
        The SABER paper's Rainbow-IQN (a shipped reference) under the protocol's
        unlimited time: its median world-record-normalized score (percent), the games
        counted, and the games per class:

        >>> from saber.scoring import reference_table
        >>> report = make_report(reference_table("saber-paper"), n_resamples=100)
        >>> wr = report.agents["rainbow-iqn@saber-paper"]["saber"].world_record
        >>> round(wr.median, 1), wr.games, wr.left_out
        (3.1, 58, ['double_dunk', 'elevator_action', 'tennis'])
        >>> wr.classes
        {'failing': 13, 'poor': 24, 'medium': 6, 'fair': 11, 'superhuman': 4}
    """
    table, like_for_like = restrict_references(table)
    time_limits = table.time_limits()
    agents: dict[str, dict[str, Section]] = {}
    warnings = list(table.warnings)
    # The user's agents first, then references, each in order of appearance.
    order = sorted(table.agents(), key=lambda a: a in table.references)
    for agent in order:
        agents[agent] = {}
        for time_limit in time_limits:
            if table.runs(agent, time_limit):
                section = _section(table, agent, time_limit, seed, n_resamples, level)
                agents[agent][time_limit] = section
                for run, missing in section.runs_incomplete.items():
                    warnings.append(
                        f"agent {agent!r}, run {run!r} at {time_limit}: no scores for "
                        f"{', '.join(missing)}; the run is left out of the aggregates"
                    )
    comparisons = {}
    for time_limit in time_limits:
        sections = {a: s[time_limit] for a, s in agents.items() if time_limit in s}
        comparison = _comparison(table, sections, time_limit, seed, n_resamples, level)
        if comparison is not None:
            comparisons[time_limit] = comparison
    used = set(table.references.values())
    references = [
        ReferenceUsed(r.name, list(r.agents), r.description, r.citation, r.mean_only, r.deviations)
        for r in list_references()
        if r.name in used
    ]
    return Report(
        format=REPORT_FORMAT,
        schema_version=SCHEMA_VERSION,
        saber_version=__version__,
        saber_compliant=table.saber_compliant,
        sources=list(table.sources),
        warnings=warnings,
        time_limits=time_limits,
        bootstrap=Bootstrap(n_resamples, 100 * level, seed),
        baseline_sources=dict(BASELINE_SOURCES),
        references=references,
        agents=agents,
        comparisons=comparisons,
        like_for_like=differing_game_sets(agents, like_for_like, time_limits),
        time_limit_groups=time_limit_groups(agents, comparisons, time_limits),
        trained_outside_saber=dict(table.trained_outside_saber),
    )
