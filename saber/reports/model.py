"""The report's data model: typed objects, serialised to JSON with a ``schema_version``.

:class:`Report` (``make_report``), ``report.to_dict()`` and :meth:`Report.from_dict`;
docs/reports.md documents every key and the conventions (percent, ``null``, intervals).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

import numpy as np

from saber.errors import ReportDocumentError

# Version of the JSON layout: 2 added runs, resampled, interval keys for every aggregate,
# references and schema_version itself (version 1 had only "format": "saber-report/1").
SCHEMA_VERSION = 2

Interval = tuple[float | None, float | None]
"""``(low, high)`` in the unit of the statistic; ``(None, None)`` when there is none."""

NO_INTERVAL: Interval = (None, None)
Resampled = Literal["runs", "episodes"]


@dataclass
class Profile:
    """Score distribution (rliable's performance profile) of world-record-normalized scores.

    Attributes:
        thresholds_pct: T thresholds tau, percent (-1000% .. -0.1%, 0%, 0.1% .. 1000%,
            on a symmetric log grid).
        fraction_above: for each tau, the fraction of all (run, game) entries scoring
            above it (infinite gameplay is above every tau); ``None`` everywhere when no
            game has the reference score.
        fraction_above_low, fraction_above_high: the band: the interval's ends at each tau
            (same resampling as the section), or ``None`` everywhere without intervals.
    """

    thresholds_pct: list[float]
    fraction_above: list[float | None]
    fraction_above_low: list[float | None]
    fraction_above_high: list[float | None]


@dataclass
class Aggregates:
    """Aggregates over games of one agent at one time limit, for one normalization.

    Computed on the (runs x games) matrix of per-run, per-game mean normalized scores
    with rliable's definitions (:mod:`saber.scoring.stats`) and SABER's rules
    (:mod:`saber.scoring.rules`). With one run, the matrix has one row.

    Attributes:
        median: median over games of the per-game mean over runs; ``None`` if infinite.
        median_infinite: the median falls on infinite games (shown as ∞).
        mean: mean over games of the per-game mean over runs. World record: infinite
            gameplay counts 200%. Human: infinite games are left out (``left_out_of_mean``).
        iqm: interquartile mean of all (run, game) entries (``trim_mean(x, 0.25)``), with
            the same treatment of infinite gameplay as ``mean``.
        optimality_gap: ``100 - mean(min(score, 100))`` over all entries (infinite: 100).
        games: number of games counted.
        left_out: games not counted (no reference score), alphabetical.
        left_out_reasons: game -> why: ``"no SABER baseline"``, ``"no world record"``,
            ``"no human score"``.
        infinite: counted games with infinite gameplay (in any counted run).
        left_out_of_mean: infinite games left out of ``mean`` and ``iqm`` (human only).
        classes: games per SABER class of the per-game mean over runs (thresholds on this
            normalization: world record's are SABER's; the human block's are for
            comparison only).
        median_ci, mean_ci, iqm_ci, optimality_gap_ci: 95% (``Report.bootstrap``)
            percentile intervals; ``(None, None)`` without intervals.
        profile: the score distribution with its band (world record only, else None).
    """

    median: float | None
    median_infinite: bool
    mean: float | None
    iqm: float | None
    optimality_gap: float | None
    games: int
    left_out: list[str]
    left_out_reasons: dict[str, str]
    infinite: list[str]
    left_out_of_mean: list[str]
    classes: dict[str, int]
    median_ci: Interval = NO_INTERVAL
    mean_ci: Interval = NO_INTERVAL
    iqm_ci: Interval = NO_INTERVAL
    optimality_gap_ci: Interval = NO_INTERVAL
    profile: Profile | None = None


@dataclass
class Atari5:
    """Atari-N estimates of the 57-game median human-normalized score (a guide under SABER).

    Attributes:
        estimate: the Atari-5 estimate, percent; None if a game is missing.
        missing: Atari-5 games without a finite score.
        estimates: subset name (atari1, atari3, atari5, atari10, validation sets) -> estimate.
        measured_median_57: the measured median over the 57 games when all are present.
        predicted: model (atari5, atari10) -> {game: predicted human-average-normalized
            score}, None when the model's inputs are missing.
        caveat: why the estimate is a guide, not a measurement.
    """

    estimate: float | None
    missing: list[str]
    estimates: dict[str, float | None]
    measured_median_57: float | None
    predicted: dict[str, dict[str, float | None] | None]
    caveat: str


@dataclass
class GameScore:
    """One game of one agent at one time limit.

    Attributes:
        score: raw mean score: the mean over runs of each run's mean over its episodes;
            ``None`` when infinite gameplay was given without a number.
        infinite: infinite gameplay in any run (SABER counts the game as infinite).
        episodes: episodes over all runs.
        runs: runs that have this game.
        run_scores: run -> that run's raw mean score (None: infinite without a number).
        world_record_pct, human_pct, human_average_pct: ``score`` normalized (percent);
            None without the reference score (or without a number).
        class_: SABER class of the world-record-normalized mean over runs (JSON key
            ``class``); None without a world record.
    """

    score: float | None
    infinite: bool
    episodes: int
    runs: int
    run_scores: dict[str, float | None]
    world_record_pct: float | None
    human_pct: float | None
    human_average_pct: float | None
    class_: str | None


@dataclass
class Section:
    """Everything about one agent at one time limit (``agents.<agent>.<time_limit>``).

    Attributes:
        games: games with scores (in any run).
        episodes: episodes over all runs and games (for a published table: one per game).
        runs: the runs counted in the aggregates (those that have every game).
        runs_incomplete: run -> its missing games: such a run is left out of the
            aggregates (never filled in); its scores still appear in ``per_game``.
        resampled: ``"runs"``, ``"episodes"`` or None.
        interval_note: why there are no intervals, when ``resampled`` is None.
        reference: the shipped reference this agent comes from (``"saber-paper"``,
            ``"saber-random"``), None for the user's own agents. Draw it as a reference.
        mean_only: the scores are published per-game means (no runs, no episodes).
        world_record: aggregates of world-record-normalized scores (SABER's headline).
        human: aggregates of beginner-human-normalized scores (Mnih et al. 2015).
        classes: games per SABER class of the world-record-normalized mean over runs.
        classes_per_run: run -> games per class of that run's own scores.
        atari5: Atari-N estimates.
        per_game: ale id -> :class:`GameScore`, alphabetical.
        omitted: block -> statistic -> why the renderings leave it out: it means nothing
            for this input (``{"world_record": {"iqm": ...}, "human": {"iqm": ...}}``:
            fewer than 4 (run, game) entries, so the IQM trims nothing and is the mean).
            The value stays in its block.
    """

    games: int
    episodes: int
    runs: list[str]
    runs_incomplete: dict[str, list[str]]
    resampled: Resampled | None
    interval_note: str | None
    reference: str | None
    mean_only: bool
    world_record: Aggregates
    human: Aggregates
    classes: dict[str, int]
    classes_per_run: dict[str, dict[str, int]]
    atari5: Atari5
    per_game: dict[str, GameScore]
    omitted: dict[str, dict[str, str]] = field(default_factory=dict)

    def block(self, name: str) -> Aggregates:
        """The aggregates block ``name``: ``"world_record"`` or ``"human"``."""
        if name not in ("world_record", "human"):
            raise ValueError(f"no aggregates block {name!r}: world_record or human")
        return self.world_record if name == "world_record" else self.human


@dataclass
class Welch:
    """Two-tailed Welch t-test on one game (scipy's ``ttest_ind(equal_var=False)``).

    Attributes:
        t: the statistic, positive when X's mean is higher.
        df: the Welch-Satterthwaite degrees of freedom.
        p_value: the two-tailed p-value.
    """

    t: float | None
    df: float | None
    p_value: float | None


@dataclass
class Pair:
    """Agent X against agent Y at one time limit, on the games they share.

    Attributes:
        x, y: agent names.
        probability_of_improvement: P(X > Y), rliable's definition (Mann-Whitney per game,
            averaged over games); None when skipped or without a common game.
        probability_of_improvement_ci: its interval: stratified bootstrap over ``unit``,
            each agent's resampled on its own; (None, None) when skipped.
        unit: what P(X > Y) compares: ``"runs"`` (per-run means, when both agents have
            two runs or more: rliable's) or ``"episodes"`` (an agent has a single run:
            each game's episodes of X against Y's, every counted run's pooled); None when
            skipped.
        skipped: why there is no probability of improvement or t-test (a published
            table of means has neither runs nor episodes), else None.
        welch: game -> t-test of X's against Y's ``unit`` scores; None for a game without
            two finite scores on each side.
        significant: ``{"alpha": 0.05, "x_better": n, "y_better": n}``: games where the
            t-test is significant for each side.
    """

    x: str
    y: str
    probability_of_improvement: float | None
    probability_of_improvement_ci: Interval
    unit: Resampled | None
    skipped: str | None
    welch: dict[str, Welch | None]
    significant: dict[str, float | int]


@dataclass
class InterAlgorithm:
    """Inter-algorithm normalization (Bellemare et al. 2013): each game scaled to the agents' range.

    Attributes:
        per_game: game -> agent -> percent (0 = worst agent, 100 = best; None: all equal).
        mean: agent -> mean over games (None when no game has a range).
    """

    per_game: dict[str, dict[str, float | None]]
    mean: dict[str, float | None]


@dataclass
class Comparison:
    """All agents at one time limit (``comparisons.<time_limit>``), with two agents or more.

    Attributes:
        agents: the agents compared, report order.
        games: the games they all have, alphabetical.
        inter_algorithm: inter-algorithm normalized scores.
        pairs: every pair (x before y in ``agents``).
        omitted: part -> statistic -> why the renderings leave it out (``inter_algorithm`` ``mean``
            over one game: each agent is 0% or 100%, which only says who scored higher).
    """

    agents: list[str]
    games: list[str]
    inter_algorithm: InterAlgorithm
    pairs: list[Pair]
    omitted: dict[str, dict[str, str]] = field(default_factory=dict)

    def pair(self, x: str, y: str) -> Pair:
        """X against Y, whichever order ``pairs`` holds them in: P(Y > X) = 1 - P(X > Y),
        its interval's ends likewise (ties count one half both ways), t negated."""
        for pair in self.pairs:
            if (pair.x, pair.y) == (x, y):
                return pair
            if (pair.y, pair.x) == (x, y):
                return _reversed(pair)
        raise KeyError(f"no comparison of {x!r} with {y!r}: agents {', '.join(self.agents)}")


def _reversed(pair: Pair) -> Pair:
    p = pair.probability_of_improvement
    low, high = pair.probability_of_improvement_ci
    return Pair(
        x=pair.y,
        y=pair.x,
        probability_of_improvement=None if p is None else 1.0 - p,
        probability_of_improvement_ci=(
            None if high is None else 1.0 - high,
            None if low is None else 1.0 - low,
        ),
        unit=pair.unit,
        skipped=pair.skipped,
        welch={
            g: None if w is None else Welch(None if w.t is None else -w.t, w.df, w.p_value)
            for g, w in pair.welch.items()
        },
        significant={
            **pair.significant,
            "x_better": pair.significant.get("y_better", 0),
            "y_better": pair.significant.get("x_better", 0),
        },
    )


@dataclass
class LikeForLike:
    """Which games each agent's aggregates cover, so that none is set beside one over others.

    Attributes:
        references_restricted: the references (shipped agents) were restricted to the games
            of the user's agents, so that their aggregates cover the same games.
        reference_games: time limit -> the games the references kept there: those the
            user's agents have at that limit (at a limit none of them has: at any limit).
            Empty when nothing was restricted (no reference, or references alone).
        references_left_out: reference agent -> its games left out by the restriction.
        differing: time limit -> agent -> games it has there, at the limits where the
            agents' game sets differ (their aggregates are not like for like).
        common_games: time limit -> the games every agent has there (limits of
            ``differing`` only): the ``--games`` that makes the table like for like.
        notes: what the renderings print about it, one sentence each.
    """

    references_restricted: bool = False
    reference_games: dict[str, list[str]] = field(default_factory=dict)
    references_left_out: dict[str, list[str]] = field(default_factory=dict)
    differing: dict[str, dict[str, int]] = field(default_factory=dict)
    common_games: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass
class Bootstrap:
    """How the intervals were computed.

    Attributes:
        resamples: bootstrap resamples per interval.
        confidence_pct: coverage, percent (95).
        seed: seed of ``numpy.random.default_rng``; each section starts a fresh generator.
        method: ``"percentile"`` (rliable's default).
    """

    resamples: int
    confidence_pct: float
    seed: int
    method: str = "percentile"


@dataclass
class ReferenceUsed:
    """A shipped reference added with ``--reference`` (see :mod:`saber.scoring.references`).

    Attributes:
        name: the name ``--reference`` takes (``"saber-paper"``).
        agents: its agents, as the report names them (``rainbow@saber-paper``).
        description: what it is, one line.
        citation: where its scores come from.
        mean_only: its scores are published per-game means (no runs, no episodes).
        deviations: how its runs differ from SABER, compact; None for SABER references.
    """

    name: str
    agents: list[str]
    description: str
    citation: str
    mean_only: bool
    deviations: str | None = None  # how its runs differ from SABER; None: SABER's protocol


@dataclass
class Report:
    """A SABER report: every statistic of a score table.

    Attributes:
        format: ``"saber-report/2"``.
        schema_version: :data:`SCHEMA_VERSION`.
        saber_version: the package version that computed it.
        saber_compliant: False when a run declared non-SABER settings.
        sources: the files read.
        warnings: what the readers skipped or noticed (failed episodes, incomplete runs).
        time_limits: time limits present, in ``TIME_LIMITS`` order.
        bootstrap: how the intervals were computed.
        baseline_sources: ``random``, ``human``, ``world_record`` -> the citation of that
            column's scores, as the Markdown prints it.
        references: shipped references included, in order.
        agents: agent -> time limit -> :class:`Section` (user agents first, then references).
        comparisons: time limit -> :class:`Comparison` (two agents or more).
        like_for_like: the games behind each agent's aggregates (:class:`LikeForLike`).
        trained_outside_saber: agent -> how it was trained outside SABER, for the shipped
            agents whose provenance says so (``ScoreTable.trained_outside_saber``).
        time_limit_groups: the time limits in groups whose sections and comparisons are
            identical (every score the same at each), in ``time_limits`` order: the
            renderings print each group once, e.g. ``[["5min", "30min", "saber"]]``.
    """

    format: str
    schema_version: int
    saber_version: str
    saber_compliant: bool
    sources: list[str]
    warnings: list[str]
    time_limits: list[str]
    bootstrap: Bootstrap
    baseline_sources: dict[str, str]
    references: list[ReferenceUsed]
    agents: dict[str, dict[str, Section]]
    comparisons: dict[str, Comparison] = field(default_factory=dict)
    like_for_like: LikeForLike = field(default_factory=LikeForLike)
    time_limit_groups: list[list[str]] = field(default_factory=list)
    trained_outside_saber: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document: plain dicts, lists, str, numbers, bools and None (no NaN/inf)."""
        return _plain(self)

    @classmethod
    def from_dict(cls, document: Mapping[str, Any]) -> Report:
        """The report a JSON document holds: :meth:`to_dict`'s, or ``json.load`` of a
        ``report.json``; ``Report.from_dict(r.to_dict()) == r``.

        A key the document lacks takes the value that says "none" where there is one:
        ``None``, an empty list or dict, ``(None, None)`` for an interval, ``False``,
        ``""`` (as the renderers read such a dict before they read the typed report).
        Keys this saber does not know are left out.

        Raises:
            ReportDocumentError: (a ValueError) a document of another schema version
                (saber 0.1's has none), or one that lacks a
                number or a part that no default can stand for (a section without
                ``world_record``, say): it is not a SABER report of this schema.
        """
        if isinstance(document, Mapping) and "schema_version" not in document:
            raise ReportDocumentError(
                f"not a report of schema version {SCHEMA_VERSION} (format "
                f"{document.get('format', 'unknown')!r}): make it again with this saber "
                "(saber report SCORES --json)"
            )
        version = document.get("schema_version")
        if version != SCHEMA_VERSION:  # its keys differ: refused rather than read wrong
            raise ReportDocumentError(
                f"A report of schema version {version}; this saber reads version "
                f"{SCHEMA_VERSION}: run saber report on the scores again"
            )
        return _typed(cls, document, "report")

    def deviations_by_agent(self) -> dict[str, str]:
        """Agent -> how it is not SABER, for the agents of references whose runs differ
        (Dopamine's) and the agents trained outside SABER: every table and figure prints
        it beside the agent."""
        labels = {r.name: r.deviations for r in self.references}
        return {
            agent: labels[section.reference]
            for agent, sections in self.agents.items()
            for section in sections.values()
            if labels.get(section.reference or "")
        } | {a: label for a, label in self.trained_outside_saber.items() if a in self.agents}


ReportLike: TypeAlias = Report | Mapping[str, Any]
"""What a renderer accepts: the typed :class:`Report`, or its JSON document."""


def as_report(report: ReportLike) -> Report:
    """The typed report, from the typed report itself or from its JSON document."""
    return report if isinstance(report, Report) else Report.from_dict(report)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            # ``class`` is a keyword in Python: the attribute is class_.
            f.name.rstrip("_"): _plain(getattr(value, f.name))
            for f in dataclasses.fields(value)
        }
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if value is None or isinstance(value, str | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    try:
        return _plain(float(value))  # numpy scalars
    except (TypeError, ValueError):
        raise TypeError(f"Cannot put {type(value).__name__} into a report") from None


@functools.cache
def _fields(cls: type) -> tuple[tuple[str, str, Any, bool, bool], ...]:
    """Per field of a dataclass: name, JSON key, type, whether JSON's value is already
    the typed one (:func:`_plain_kind`), whether it has no default."""
    hints = typing.get_type_hints(cls)
    return tuple(
        (
            f.name,
            f.name.rstrip("_"),  # ``class`` is a keyword in Python: the attribute is class_
            hints[f.name],
            _plain_kind(hints[f.name]),
            f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING,
        )
        for f in dataclasses.fields(cls)
    )


def _typed(kind: Any, value: Any, where: str) -> Any:
    """``value`` (plain JSON) as ``kind``: dataclasses, lists, dicts and intervals, typed."""
    if dataclasses.is_dataclass(kind):
        if not isinstance(value, Mapping):
            raise ReportDocumentError(f"not a SABER report: {where} is not an object")
        found = {}
        for name, key, hint, plain, required in _fields(kind):
            if key in value:
                # Most fields are numbers or strings: no call per number.
                found[name] = value[key] if plain else _typed(hint, value[key], f"{where}.{key}")
            elif required:
                found[name] = _absent(hint, f"{where}.{key}")
        return kind(**found)
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if value is None:
        return None
    if origin in (typing.Union, types.UnionType):
        kinds = [a for a in args if a is not type(None)]
        return _typed(kinds[0], value, where) if len(kinds) == 1 else value  # float | int
    if origin is list:
        if _plain_kind(args[0]):  # the long lists (a profile's): no call per number
            return list(value)
        return [_typed(args[0], v, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is tuple:  # an Interval
        return tuple(_typed(a, v, where) for a, v in zip(args, value, strict=True))
    if origin is dict:
        if _plain_kind(args[1]):
            return dict(value)
        return {k: _typed(args[1], v, f"{where}.{k}") for k, v in value.items()}
    return value  # str, numbers, bools, Literal, Any


@functools.cache
def _plain_kind(kind: Any) -> bool:
    """Whether JSON's own value is already the typed one: str, numbers, bools, None."""
    args = typing.get_args(kind)
    if typing.get_origin(kind) in (typing.Union, types.UnionType, Literal):
        return all(_plain_kind(a) for a in args if isinstance(a, type) or a is None)
    return kind in (str, int, float, bool, type(None), Any)


def _absent(kind: Any, where: str) -> Any:
    """The value of a key an older report lacks (see :meth:`Report.from_dict`)."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (typing.Union, types.UnionType) and type(None) in args:
        return None
    if origin is tuple:
        return NO_INTERVAL
    if (origin or kind) in (list, dict, bool, str):
        return (origin or kind)()  # [], {}, False, ""
    raise ReportDocumentError(f"not a SABER report: no {where}")
