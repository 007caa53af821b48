"""Training-time scores beside a reference's at the same checkpoints (``saber training --reference``).

docs/reports.md describes the references (the SABER paper's, Dopamine's) and checkpoints.

    >>> from saber.reports.training_log import CheckpointScore
    >>> rows = compare_training([CheckpointScore("pong", 10_000_000, 5.0, 100, 0, 99)])
    >>> rows[0].references["rainbow-iqn@saber-paper"].score
    6.76
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from saber.errors import UnknownGameError
from saber.games import get_game
from saber.reports.tables import NOT_SABER_MARK
from saber.reports.training_log import (
    CheckpointScore,
    episodes_cell,
    game_training_scores,
    mean_cell,
    not_reached_note,
    read_training_log,
)
from saber.scoring import dopamine
from saber.scoring.references import (
    PPO_AGENT,
    PPO_FRAMES,
    ppo_training_episodes,
    training_reference,
)

CURVE_POINTS = 500  # most points of the user's curve in a figure


@dataclass(frozen=True)
class ReferenceScore:
    """A reference agent's published training-time score at one checkpoint.

    Attributes:
        score: raw mean score (the mean over runs where there are several); None for
            infinite gameplay (see ``infinite``).
        infinite: the reference reached infinite gameplay there.
        low, high: the 95% bootstrap interval over runs (None with one run).
        runs: how many runs the score averages.
        iteration: Dopamine's iteration that stands for the checkpoint (None otherwise).
    """

    score: float | None
    infinite: bool
    low: float | None = None
    high: float | None = None
    runs: int = 1
    iteration: int | None = None


@dataclass(frozen=True)
class TrainingRow:
    """One game at one checkpoint: the user's agent and the reference agents.

    Attributes:
        game: ale id (as in the log when it is not a known game).
        at_frames: the checkpoint, cumulative training frames.
        mean: the user's agent: mean of the last ``episodes`` training episodes (None if
            none had ended).
        episodes: episodes averaged (100, or fewer; 0 when not reached).
        references: reference agent -> its score here; None when it published none at
            this checkpoint or for this game.
        reached: whether the user's log reached the checkpoint (its last ``frames`` >= it;
            :mod:`saber.reports.training_log`); not reached: ``mean`` None.
        log_frames: the user's log's last recorded cumulative training frames (this game).
    """

    game: str
    at_frames: int
    mean: float | None
    episodes: int
    references: dict[str, ReferenceScore | None]
    reached: bool = True
    log_frames: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return asdict(self)


def _ale_id(game: str) -> str:
    try:
        return get_game(game).ale_id
    except UnknownGameError:
        return game


def check_training_reference(name: str) -> None:
    """Raise :class:`UnknownReferenceError` unless ``name`` has training-time scores.

    Those are ``saber-paper`` (Rainbow-IQN) and the Dopamine references.
    """
    key = name.strip().lower()
    if key == "saber-ppo" and ppo_training_episodes():
        return
    if key not in dopamine.REFERENCE_NAMES:
        training_reference(name)


def _dopamine_cells(
    agents: tuple[str, ...], frames: Iterable[int], games: Iterable[str], seed: int, resamples: int
) -> dict[str, dict[int, dict[str, ReferenceScore]]]:
    """``{agent@dopamine: {frames: {game: score}}}`` at the iterations standing for ``frames``."""
    iterations = {f: dopamine.iteration_for(f) for f in frames}
    columns = sorted({i for i in iterations.values() if i is not None})
    cells: dict[str, dict[int, dict[str, ReferenceScore]]] = {}
    for agent in agents:
        by_frames = cells.setdefault(f"{agent}@dopamine", {f: {} for f in iterations})
        for game in games:
            values = dopamine.iteration_scores(game, agent)
            if values is None or not columns:
                continue
            mean, low, high = dopamine.run_band(values[:, columns], seed, resamples)
            at = dict(zip(columns, zip(mean, low, high, strict=True), strict=True))
            for f, iteration in iterations.items():
                if iteration is not None:
                    m, lo, hi = (float(v) for v in at[iteration])
                    by_frames[f][game] = ReferenceScore(
                        m, False, lo, hi, values.shape[0], iteration
                    )
    return cells


def _ppo_scores(game: str, frames: Sequence[int]) -> np.ndarray | None:
    """saber-ppo's training-time scores on ``game``: (runs, len(frames)), NaN where a run
    had ended no episode by then; None if no run trained on it.

    Every shipped run made all the updates of its 10M-frame budget (agent steps x 4, as
    CleanRL counts), and its log counts the frames the emulator played, a little fewer
    (the autoreset step after each episode plays none): so each run reaches 10M.
    """
    runs = ppo_training_episodes().get(game)
    if not runs:
        return None
    return np.array(
        [
            [
                np.nan if s.mean is None else s.mean
                for s in game_training_scores(game, e, frames, trained_frames=PPO_FRAMES)
            ]
            for _seed, e in sorted(runs.items())
        ],
        dtype=float,
    )


def _ppo_cell(values: np.ndarray, seed: int, resamples: int) -> ReferenceScore | None:
    """One checkpoint's score over runs (``values``: one per run), its interval over runs
    where there are several."""
    values = values[~np.isnan(values)]
    if values.size == 0:
        return None
    if values.size == 1:
        return ReferenceScore(float(values[0]), False)
    mean, low, high = dopamine.run_band(values[:, None], seed, resamples)
    return ReferenceScore(float(mean[0]), False, float(low[0]), float(high[0]), values.size)


def _ppo_cells(
    frames: Iterable[int], games: Iterable[str], seed: int, resamples: int
) -> dict[str, dict[int, dict[str, ReferenceScore]]]:
    frames = sorted(frames)
    cells: dict[int, dict[str, ReferenceScore]] = {f: {} for f in frames}
    for game in games:
        values = _ppo_scores(game, frames)
        if values is None:
            continue
        for column, f in enumerate(frames):
            cell = _ppo_cell(values[:, column], seed, resamples)
            if cell is not None:
                cells[f][game] = cell
    return {PPO_AGENT: cells}


def _published(
    reference: str, frames: Iterable[int], games: Iterable[str], seed: int, resamples: int
) -> dict[str, dict[int, dict[str, ReferenceScore]]]:
    key = reference.strip().lower()
    if key == "saber-ppo":
        return _ppo_cells(frames, games, seed, resamples)
    agents = dopamine.REFERENCE_NAMES.get(key)
    if agents is not None:
        return _dopamine_cells(agents, frames, games, seed, resamples)
    return {
        agent: {
            f: {
                game: ReferenceScore(None if math.isinf(v) else v, math.isinf(v))
                for game, v in by_game.items()
            }
            for f, by_game in by_frames.items()
        }
        for agent, by_frames in training_reference(reference).items()
    }


def compare_training(
    scores: Sequence[CheckpointScore],
    reference: str = "saber-paper",
    seed: int = 0,
    n_resamples: int = 2000,
) -> list[TrainingRow]:
    """The user's training-time scores with a reference's at the same checkpoints.

    Args:
        scores: from :func:`saber.training.training_scores`.
        reference: a shipped reference with training-time scores (``"saber-paper"``,
            ``"dopamine"``, ``"dopamine:rainbow"``).
        seed, n_resamples: the bootstrap of the intervals over runs (Dopamine).

    Raises:
        UnknownReferenceError: an unknown reference, or one without training-time scores.
    """
    check_training_reference(reference)
    games = {_ale_id(s.game) for s in scores}
    published = _published(reference, {s.at_frames for s in scores}, games, seed, n_resamples)
    rows = []
    for score in scores:
        game = _ale_id(score.game)
        cells: dict[str, ReferenceScore | None] = {}
        for agent, by_frames in published.items():
            cells[agent] = by_frames.get(score.at_frames, {}).get(game)
        rows.append(
            TrainingRow(
                game,
                score.at_frames,
                score.mean,
                score.episodes,
                cells,
                score.reached,
                score.log_frames,
            )
        )
    return rows


def _cell(value: ReferenceScore | None) -> str:
    if value is None:
        return "not published"
    if value.infinite:
        return "∞ (infinite gameplay)"
    if value.low is None or value.high is None:
        return f"{value.score:,.1f}"
    return f"{value.score:,.1f} [{value.low:,.1f}, {value.high:,.1f}]"


def _is_dopamine(agent: str) -> bool:
    return agent.endswith("@dopamine")


def format_training_comparison(rows: Sequence[TrainingRow]) -> str:
    """A Markdown table: game, checkpoint, the user's mean, episodes, each reference's score.

    Dopamine's agents are marked ‡ and the notes under the table say how they differ from
    SABER and which iteration stands for each checkpoint.
    """
    agents = list(dict.fromkeys(a for row in rows for a in row.references))
    marked = [f"{a} {NOT_SABER_MARK}" if _is_dopamine(a) else a for a in agents]
    header = ["game", "frames", "mean score", "episodes", *marked]
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    for row in rows:
        mean = mean_cell(row.mean, row.reached)
        episodes = episodes_cell(row.episodes, row.reached)
        cells = [_cell(row.references.get(a)) for a in agents]
        lines.append(
            f"| {row.game} | {row.at_frames:,} | {mean} | {episodes} | " + " | ".join(cells) + " |"
        )
    note = not_reached_note(rows)
    if note:
        lines.append(note.rstrip("\n"))
    if any(_is_dopamine(a) for a in agents):
        used = sorted(
            {
                (row.at_frames, cell.iteration)
                for row in rows
                for cell in row.references.values()
                if cell is not None and cell.iteration is not None
            }
        )
        where = ", ".join(f"{f:,} frames: iteration {i} ({_frames(i)})" for f, i in used)
        lines += [
            "",
            f"{NOT_SABER_MARK} Dopamine (5 runs; mean [95% bootstrap interval over runs]), "
            f"{dopamine.deviation_label()}.",
            f"Each value is the mean training return of one iteration of 1M frames: {where}.",
        ]
    return "\n".join(lines) + "\n"


TRAINING_CSV_COLUMNS = ("game", "frames", "reached", "mean_score", "episodes", "log_frames")


def training_csv(rows: Sequence[CheckpointScore] | Sequence[TrainingRow]) -> str:
    """``saber training --csv``: one row per game and checkpoint, columns
    ``game,frames,reached,mean_score,episodes,log_frames``, then one column per reference
    agent (rows of :func:`compare_training`). An empty cell has no score: ``mean_score``
    not reached (``reached`` false) or no episode ended by then; a reference's, not
    published. ``inf``: a reference's infinite gameplay.
    """
    import csv
    import io

    agents = list(dict.fromkeys(a for row in rows for a in getattr(row, "references", {})))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*TRAINING_CSV_COLUMNS, *agents])
    for row in rows:
        references = getattr(row, "references", {})
        cells = [
            "" if cell is None else "inf" if cell.infinite else repr(cell.score)
            for cell in (references.get(agent) for agent in agents)
        ]
        writer.writerow(
            [
                row.game,
                row.at_frames,
                str(row.reached).lower(),
                "" if row.mean is None else repr(row.mean),
                row.episodes,
                "" if row.log_frames is None else row.log_frames,
                *cells,
            ]
        )
    return out.getvalue()


def _frames(iteration: int) -> str:
    first, last = dopamine.iteration_frames(iteration)
    return f"frames {first // 1_000_000}M-{last // 1_000_000}M"


@dataclass(frozen=True)
class ReferenceCurve:
    """A reference's training curve on one game, for the figure.

    Attributes:
        agent: ``rainbow@dopamine``, ``rainbow-iqn@saber-paper``.
        frames: x of each point, cumulative training frames (Dopamine: the end of each
            iteration, (k+1)*1M).
        mean: the score there (mean over runs).
        low, high: its 95% bootstrap interval over runs (NaN with one run).
        checkpoints: checkpoint frames -> the reference's :class:`ReferenceScore` there.
        deviations: how it differs from SABER (None: SABER's protocol).
    """

    agent: str
    frames: np.ndarray
    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray
    checkpoints: dict[int, ReferenceScore]
    deviations: str | None


@dataclass(frozen=True)
class TrainingCurve:
    """The user's training curve on one game beside the references'.

    Attributes:
        game: ale id (as in the log when it is not a known game).
        frames: where the user's curve is evaluated: episode ends, cumulative frames.
        mean: the training-time score there (mean of the last 100 episodes).
        checkpoints: the user's :class:`~saber.reports.training_log.CheckpointScore` at each
            checkpoint (``reached`` False, no score, where the log ends before it).
        references: the references' curves.
    """

    game: str
    frames: np.ndarray
    mean: np.ndarray
    checkpoints: list[CheckpointScore]
    references: list[ReferenceCurve] = field(default_factory=list)


def _reference_curves(
    reference: str, game: str, checkpoints: Sequence[int], seed: int, resamples: int
) -> list[ReferenceCurve]:
    if reference.strip().lower() == "saber-ppo":
        return _ppo_curves(game, checkpoints, seed, resamples)
    agents = dopamine.REFERENCE_NAMES.get(reference.strip().lower())
    at = _published(reference, checkpoints, [game], seed, resamples)
    curves = []
    if agents is None:  # one run, published at the checkpoints only
        for agent, by_frames in at.items():
            points = sorted((f, c[game]) for f, c in by_frames.items() if game in c)
            frames = np.array([f for f, _ in points], dtype=float)
            mean = np.array([np.inf if c.infinite else c.score for _, c in points], dtype=float)
            nan = np.full(mean.shape, np.nan)
            curves.append(ReferenceCurve(agent, frames, mean, nan, nan, dict(points), None))
        return curves
    for agent in agents:
        values = dopamine.iteration_scores(game, agent)
        if values is None:
            continue
        mean, low, high = dopamine.run_band(values, seed, resamples)
        ends = np.array([dopamine.iteration_frames(k)[1] for k in range(values.shape[1])])
        name = f"{agent}@dopamine"
        marks = {f: cells[game] for f, cells in at[name].items() if game in cells}
        deviations = dopamine.deviation_label()
        curves.append(ReferenceCurve(name, ends, mean, low, high, marks, deviations))
    return curves


PPO_CURVE_STEP = 100_000  # frames between the points of saber-ppo's curves


def _ppo_curves(
    game: str, checkpoints: Sequence[int], seed: int, resamples: int
) -> list[ReferenceCurve]:
    """saber-ppo's curve on ``game``: the training-time score every 100k frames, the mean
    over its runs and (several runs) the interval over them."""
    runs = ppo_training_episodes().get(game)
    if not runs:
        return []
    frames = list(range(PPO_CURVE_STEP, PPO_FRAMES + 1, PPO_CURVE_STEP))
    values = _ppo_scores(game, frames)
    assert values is not None
    cells = [_ppo_cell(values[:, column], seed, resamples) for column in range(len(frames))]
    points = [(f, c) for f, c in zip(frames, cells, strict=True) if c is not None]

    def column(pick: Any) -> np.ndarray:
        return np.array([np.nan if pick(c) is None else pick(c) for _, c in points], dtype=float)

    marks = _ppo_cells(checkpoints, [game], seed, resamples)[PPO_AGENT]
    return [
        ReferenceCurve(
            PPO_AGENT,
            np.array([f for f, _ in points], dtype=float),
            column(lambda c: c.score),
            column(lambda c: c.low),
            column(lambda c: c.high),
            {f: by_game[game] for f, by_game in marks.items() if game in by_game},
            None,
        )
    ]


def training_curves(
    log: str | Path,
    reference: str | None = None,
    checkpoints: Sequence[int] = (10_000_000, 50_000_000, 100_000_000, 200_000_000),
    seed: int = 0,
    n_resamples: int = 2000,
    trained_frames: int | None = None,
) -> list[TrainingCurve]:
    """The user's training curve per game of ``log``, with a reference's beside it.

    The user's curve is SABER's training-time score
    (:func:`~saber.reports.training_log.training_scores`: the mean of the last 100
    episodes) at each episode's end (at most ``CURVE_POINTS`` of them,
    evenly spaced in episodes); the reference's is its score at every published point
    (Dopamine: each iteration, the mean over 5 runs and its 95% bootstrap interval).

    Args:
        log: a training log (:class:`~saber.training.TrainingRecorder`).
        reference: ``saber-paper``, ``dopamine``, ``dopamine:<agent>``, or None.
        checkpoints: frames at which the scores are marked.
        trained_frames: how far the training went, when the script knows it (as
            :func:`~saber.reports.training_log.training_scores` takes it).
        seed, n_resamples: the bootstrap of the intervals over runs.
    """

    if reference is not None:
        check_training_reference(reference)
    curves = []
    for game, episodes in read_training_log(Path(log)).items():
        ends = np.unique([e["frames"] for e in episodes])
        ends = ends[
            np.unique(np.linspace(0, ends.size - 1, min(ends.size, CURVE_POINTS)).astype(int))
        ]
        # The log is read once: each game's scores come from the episodes in hand.
        along = game_training_scores(game, episodes, ends.tolist())
        marks = game_training_scores(game, episodes, checkpoints, trained_frames)
        references = (
            []
            if reference is None
            else _reference_curves(reference, _ale_id(game), checkpoints, seed, n_resamples)
        )
        curves.append(
            TrainingCurve(
                game,
                np.array([s.at_frames for s in along], dtype=float),
                np.array([s.mean for s in along], dtype=float),
                marks,
                references,
            )
        )
    return curves
