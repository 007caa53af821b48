"""Training-time scores beside a reference's at the same checkpoints (``saber training --reference``).

SABER reports an agent during training as the mean of 100 consecutive training episodes at
10M, 50M, 100M and 200M training frames (:func:`saber.reports.training_log.training_scores`).
The SABER paper published Rainbow-IQN's at exactly those checkpoints (Tables 6 and 7):
:func:`compare_training` puts them in the same rows, so a new agent's learning curve can
be read against it. A checkpoint the reference did not publish shows no reference score.

Example:
    >>> from saber.reports.training_log import CheckpointScore
    >>> rows = compare_training([CheckpointScore("pong", 10_000_000, 5.0, 100, 0, 99)])
    >>> rows[0].references["rainbow-iqn@saber-paper"].score
    6.76
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from saber.errors import UnknownGameError
from saber.games import get_game
from saber.scoring.references import training_reference

if TYPE_CHECKING:
    from saber.reports.training_log import CheckpointScore

__all__ = ["ReferenceScore", "TrainingRow", "compare_training", "format_training_comparison"]


@dataclass(frozen=True)
class ReferenceScore:
    """A reference agent's published training-time score at one checkpoint.

    Attributes:
        score: raw mean score; None for infinite gameplay (see ``infinite``).
        infinite: the reference reached infinite gameplay there.
    """

    score: float | None
    infinite: bool


@dataclass(frozen=True)
class TrainingRow:
    """One game at one checkpoint: the user's agent and the reference agents.

    Attributes:
        game: ale id (as in the log when it is not a known game).
        at_frames: the checkpoint, cumulative training frames.
        mean: the user's agent: mean of the last ``episodes`` training episodes (None if
            none had ended).
        episodes: episodes averaged (100, or fewer).
        references: reference agent -> its score here; None when it published none at
            this checkpoint or for this game.
    """

    game: str
    at_frames: int
    mean: float | None
    episodes: int
    references: dict[str, ReferenceScore | None]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return asdict(self)


def _ale_id(game: str) -> str:
    try:
        return get_game(game).ale_id
    except UnknownGameError:
        return game


def compare_training(
    scores: Sequence[CheckpointScore], reference: str = "saber-paper"
) -> list[TrainingRow]:
    """The user's training-time scores with a reference's at the same checkpoints.

    Args:
        scores: from :func:`saber.training.training_scores`.
        reference: a shipped reference with training-time scores (``"saber-paper"``).

    Raises:
        UnknownReferenceError: an unknown reference, or one without training-time scores.
    """
    published = training_reference(reference)
    rows = []
    for score in scores:
        game = _ale_id(score.game)
        cells: dict[str, ReferenceScore | None] = {}
        for agent, by_frames in published.items():
            value = by_frames.get(score.at_frames, {}).get(game)
            cells[agent] = (
                None
                if value is None
                else ReferenceScore(None if math.isinf(value) else value, math.isinf(value))
            )
        rows.append(TrainingRow(game, score.at_frames, score.mean, score.episodes, cells))
    return rows


def _cell(value: ReferenceScore | None) -> str:
    if value is None:
        return "not published"
    return "∞ (infinite gameplay)" if value.infinite else f"{value.score:,.1f}"


def format_training_comparison(rows: Sequence[TrainingRow]) -> str:
    """A Markdown table: game, checkpoint, the user's mean, episodes, each reference's score."""
    agents = list(dict.fromkeys(a for row in rows for a in row.references))
    header = ["game", "frames", "mean score", "episodes", *agents]
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    for row in rows:
        mean = "n/a" if row.mean is None else f"{row.mean:,.1f}"
        note = "" if row.episodes == 100 else " (fewer than 100)"
        cells = [_cell(row.references.get(a)) for a in agents]
        lines.append(
            f"| {row.game} | {row.at_frames:,} | {mean} | {row.episodes}{note} | "
            + " | ".join(cells)
            + " |"
        )
    return "\n".join(lines) + "\n"
