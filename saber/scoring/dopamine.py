"""Dopamine's published Atari training curves as references (6 agents, 5 runs, not SABER).

docs/reports.md describes the data, how they deviate from SABER (:func:`deviation_label`)
and which iteration stands for each checkpoint.

    >>> iteration_for(10_000_000), iteration_for(200_000_000), iteration_frames(9)
    (9, 198, (9000000, 10000000))
"""

from __future__ import annotations

import csv
import functools
import io
import json
from typing import Any

import numpy as np
from numpy.typing import NDArray

from saber.protocol.settings import NUM_ACTIONS, SaberSettings
from saber.scoring.packaged import data_text
from saber.scoring.scoretable import EpisodeScore, ScoreTable, TableBuilder
from saber.scoring.stats import bootstrap_runs, percentile_interval

# saber's agent name -> Dopamine's (the "Agent" field of the JSON files).
AGENTS = {
    "dqn": "DQN",
    "c51": "C51",
    "rainbow": "Rainbow",
    "iqn": "IQN",
    "qr-dqn": "Quantile (JAX)",
    "dqn-adam-mse": "DQN (Adam + MSE in JAX)",
}
FRAMES_PER_ITERATION = 1_000_000  # Runner.training_steps = 250,000 agent steps x 4 frames
LAST_ITERATION = 198  # published 0..198; the 200th (199) is not in the files
CHECKPOINT_ITERATIONS = {"10M": 9, "50M": 49, "100M": 99, "200M": LAST_ITERATION}
RUNS = 5
TIME_LIMIT = "30min"  # Dopamine's episodes stop at 30 minutes
SOURCE = "github.com/google/dopamine"
CITATION = (
    "Castro et al. (2018), Dopamine: A Research Framework for Deep Reinforcement Learning, "
    "arXiv:1812.06110; data: github.com/google/dopamine baselines/atari/data (Apache-2.0)"
)
# --reference names -> the agents they add.
REFERENCE_NAMES: dict[str, tuple[str, ...]] = {"dopamine": tuple(AGENTS)} | {
    f"dopamine:{agent}": (agent,) for agent in AGENTS
}
CHECKPOINT_FILE = "dopamine_checkpoints.csv.gz"
ITERATION_FILE = "dopamine_iterations.csv.gz"
PROVENANCE_FILE = "dopamine_provenance.json"
LICENSE_FILE = "dopamine_LICENSE.txt"
CHECKPOINT_COLUMNS = (
    "game",
    "agent",
    "run",
    "checkpoint",
    "iteration",
    "first_frame",
    "last_frame",
    "score",
)
ITERATION_COLUMNS = ("game", "agent", "iteration", *(f"run_{r}" for r in range(1, RUNS + 1)))

_SABER = SaberSettings()
_DOPAMINE_CAP_FRAMES = 27_000 * 4  # Runner.max_steps_per_episode (agent steps) x frame skip
# Dopamine's runs against SABER, as SaberSettings.deviations(): {name: (saber, dopamine)}.
# action_set and score are not SaberSettings fields (SABER fixes both), so they are named
# here in the same form.
DEVIATIONS: dict[str, tuple[Any, Any]] = {
    "action_set": (f"full ({NUM_ACTIONS})", "minimal"),
    "max_episode_frames": (_SABER.max_episode_frames, _DOPAMINE_CAP_FRAMES),
    "max_frames_without_reward": (_SABER.max_frames_without_reward, None),
    "rollover_mode": (_SABER.rollover_mode, "off"),
    "score": ("last 100 episodes", "iteration mean"),
}


def deviation_label() -> str:
    """How Dopamine's runs differ from SABER, compact, for every table and figure.

    Example:
        >>> deviation_label()  # doctest: +NORMALIZE_WHITESPACE
        "not SABER: sticky actions kept (repeat_action_probability=0.25);
        action_set='minimal' (SABER: 'full (18)'); max_episode_frames=108000 (SABER:
        21600000); max_frames_without_reward=None (SABER: 18000); rollover_mode='off'
        (SABER: 'correct'); score='iteration mean' (SABER: 'last 100 episodes')"
    """
    kept = f"repeat_action_probability={_SABER.repeat_action_probability!r}"
    changes = "; ".join(
        f"{name}={actual!r} (SABER: {saber!r})" for name, (saber, actual) in DEVIATIONS.items()
    )
    return f"not SABER: sticky actions kept ({kept}); {changes}"


def iteration_frames(iteration: int) -> tuple[int, int]:
    """The training frames an iteration covers, ``(first, last)`` (nominal: docs/reports.md)."""
    return iteration * FRAMES_PER_ITERATION, (iteration + 1) * FRAMES_PER_ITERATION


def iteration_for(frames: int) -> int | None:
    """The iteration that stands for a checkpoint of ``frames`` training frames, if any.

    The iteration ending at ``frames`` (a whole number of millions, 1M to 199M), and for
    200M the last published one (198). None where the data have no iteration.

    Example:
        >>> iteration_for(15_500_000) is None  # not a whole number of millions
        True
    """
    if frames == 200 * FRAMES_PER_ITERATION:
        return LAST_ITERATION
    iteration, rest = divmod(frames, FRAMES_PER_ITERATION)
    if rest or not 1 <= iteration <= LAST_ITERATION + 1:
        return None
    return iteration - 1


@functools.cache
def checkpoint_scores() -> dict[str, dict[str, dict[str, NDArray]]]:
    """``{agent: {checkpoint: {game: values of the 5 runs}}}``, from the shipped CSV.

    Checkpoints are ``"10M"``, ``"50M"``, ``"100M"``, ``"200M"``; games are ale ids; the
    arrays are in run order (runs 1..5). Do not modify them (cached).

    Example:
        >>> checkpoint_scores()["rainbow"]["10M"]["pong"].shape  # 5 runs
        (5,)
    """
    runs: dict[str, dict[str, dict[str, list[float]]]] = {}
    text = data_text(CHECKPOINT_FILE)
    for row in csv.DictReader(io.StringIO(text)):
        by_game = runs.setdefault(row["agent"], {}).setdefault(row["checkpoint"], {})
        by_game.setdefault(row["game"], []).append(float(row["score"]))
    return {
        agent: {
            checkpoint: {game: np.array(values) for game, values in by_game.items()}
            for checkpoint, by_game in by_checkpoint.items()
        }
        for agent, by_checkpoint in runs.items()
    }


def agent_name(agent: str, checkpoint: str) -> str:
    """The report's name of a Dopamine agent at a checkpoint: ``rainbow@dopamine-10M``."""
    return f"{agent}@dopamine-{checkpoint}"


def reference_table(agents: tuple[str, ...], checkpoint: str, name: str) -> ScoreTable:
    """The score table of Dopamine agents at one checkpoint: one row per game and run.

    Each run's value is one score (``episode`` None) under :data:`TIME_LIMIT`, so a report
    has 5 runs per game and resamples runs for its intervals.

    Args:
        agents: keys of :data:`AGENTS`.
        checkpoint: ``"10M"``, ``"50M"``, ``"100M"`` or ``"200M"``.
        name: the reference's name (``"dopamine:rainbow"``), recorded for the report.
    """
    builder = TableBuilder()
    text = data_text(CHECKPOINT_FILE)
    for line, row in enumerate(csv.DictReader(io.StringIO(text)), start=2):
        if row["agent"] in agents and row["checkpoint"] == checkpoint:
            builder.add(
                EpisodeScore(
                    agent=agent_name(row["agent"], checkpoint),
                    game=row["game"],
                    time_limit=TIME_LIMIT,
                    score=float(row["score"]),
                    infinite=False,
                    episode=None,
                    where=f"saber/data/{CHECKPOINT_FILE}:{line}",
                    run=row["run"],
                )
            )
    table = builder.table
    table.sources.append(f"saber/data/{CHECKPOINT_FILE} (--reference {name}@{checkpoint})")
    table.references = {agent_name(agent, checkpoint): name for agent in agents}
    return table


@functools.cache
def _iterations() -> dict[tuple[str, str], NDArray]:
    raw = data_text(ITERATION_FILE)
    rows: dict[tuple[str, str], list[list[float]]] = {}
    for row in csv.DictReader(io.StringIO(raw)):
        values = [float(row[f"run_{r}"]) for r in range(1, RUNS + 1)]
        rows.setdefault((row["game"], row["agent"]), []).append(values)
    return {key: np.array(values).T for key, values in rows.items()}  # (runs, iterations)


def iteration_scores(game: str, agent: str) -> NDArray | None:
    """Every published iteration of one game and agent, shape (5 runs, 199 iterations).

    Args:
        game: ale id (``"pong"``).
        agent: one of :data:`AGENTS` (``"rainbow"``).

    Returns:
        The values (column k: iteration k, frames k*1M to (k+1)*1M), or None where
        Dopamine has no such game (``defender``).
    """
    values = _iterations().get((game, agent))
    return None if values is None else values.copy()


@functools.cache
def dopamine_provenance() -> dict[str, Any]:
    """The shipped ``dopamine_provenance.json``: source commit, licence, mappings."""
    return json.loads(data_text(PROVENANCE_FILE))


def run_band(
    values: NDArray, seed: int = 0, n_resamples: int = 2000, level: float = 0.95
) -> tuple[NDArray, NDArray, NDArray]:
    """The mean over runs and its bootstrap interval, column by column.

    rliable's interval of a per-game mean (``get_interval_estimates`` with the mean over
    runs, ``StratifiedBootstrap``, percentile method): each column is a stratum whose
    runs are redrawn with replacement (:func:`~saber.scoring.stats.bootstrap_runs`).

    Args:
        values: shape (R runs, N): one column per game, checkpoint or iteration.
        seed: seed of ``numpy.random.default_rng``.
        n_resamples: bootstrap resamples.
        level: coverage (0.95 for 95%).

    Returns:
        ``(mean, low, high)``, each of shape (N,).

    Example:
        >>> mean, low, high = run_band(np.array([[1.0], [2.0], [3.0], [4.0], [5.0]]))
        >>> float(mean[0]), bool(1.0 <= low[0] < 3.0 < high[0] <= 5.0)
        (3.0, True)
    """
    values = np.asarray(values, dtype=float)
    samples = bootstrap_runs(values, np.random.default_rng(seed), n_resamples).mean(axis=1)
    low, high = percentile_interval(samples, level)
    return values.mean(axis=0), low, high
