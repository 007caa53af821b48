"""The work of an evaluation, fixed before it runs: episodes, their seeds, and work units.

An episode's seed depends only on the run's base seed, its game and index
(:func:`saber.protocol.seeds.episode_seed`); the messages workers send back are plain
picklable dataclasses, the same for every backend.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from saber.rundir import EpisodeLine
    from saber.training.video import VideoRequest


@dataclass(frozen=True)
class Job:
    """What every worker needs besides its unit: the same for the whole run.

    Attributes:
        agent: the agent spec or name written in each record.
        policy: an agent spec (loaded in each worker), a policy class (instantiated
            without arguments in each worker) or a picklable policy object.
        settings: overrides of :class:`~saber.protocol.SaberSettings` (empty for SABER).
        envs_per_worker: sub-envs of a worker's vector env (fewer for a smaller unit).
        num_threads: emulation threads per vector env (0: one per core).
        video: the episodes to film, if any (:mod:`saber.training.video`).
        run: the run name written in each record (None: no ``run`` key).
        replays: record every episode's replay (:mod:`saber.harness.replays`).
    """

    agent: str
    policy: Any
    settings: dict[str, Any] = field(default_factory=dict)
    envs_per_worker: int = 8
    num_threads: int = 0
    video: VideoRequest | None = None
    run: str | None = None
    replays: bool = True


@dataclass(frozen=True)
class WorkUnit:
    """Episodes of one game run together on one vector env by one worker.

    Attributes:
        unit_id: unique within the run.
        game: ale id.
        episodes: ``(episode index, seed)`` pairs.
        attempt: 0 for the first try, 1 for the retry of episodes whose unit failed.
    """

    unit_id: int
    game: str
    episodes: tuple[tuple[int, int], ...]
    attempt: int = 0


@dataclass(frozen=True)
class UnitStarted:
    """A worker took the unit (its deadline starts now); ``worker`` names the worker."""

    unit_id: int
    worker: str = ""


@dataclass(frozen=True)
class EpisodeDone:
    """A finished episode's line of ``episodes.jsonl`` and, when replays are recorded,
    the bytes of its replay file (which the line names)."""

    unit_id: int
    record: EpisodeLine
    replay: bytes | None = None


@dataclass(frozen=True)
class FramesPlayed:
    """Emulator frames played since the last message, for the progress bar (approximate)."""

    unit_id: int
    frames: int


@dataclass(frozen=True)
class UnitFinished:
    """Every episode of the unit has been sent."""

    unit_id: int


@dataclass(frozen=True)
class UnitDrained:
    """Every episode of the unit has started: the worker's vector env will have idle rows
    unless it is given another unit of the same game (a local worker takes it into those
    rows, :func:`saber.harness.runner.execute_unit`). For the backend, not the run."""

    unit_id: int


FailureKind = Literal["setup", "policy", "episode", "worker", "timeout"]


@dataclass(frozen=True)
class UnitFailed:
    """A unit stopped early; its episodes without a record did not finish.

    ``kind``: ``setup`` (the policy or the env could not be built), ``policy`` (the policy
    broke the policy protocol), ``episode`` (an exception while playing), ``worker`` (the
    worker process died or was lost), ``timeout`` (no frame progress within the unit
    deadline: the worker was stopped).

    ``also``: other units that failed in the same incident (units sharing one vector env
    or one worker); one failure, however many units it ends.
    """

    unit_id: int
    kind: FailureKind
    error: str
    also: tuple[int, ...] = ()


Event = UnitStarted | EpisodeDone | FramesPlayed | UnitFinished | UnitFailed | UnitDrained


def plan_units(
    pending: dict[str, list[tuple[int, int]]],
    workers: int,
    envs_per_worker: int,
    first_unit_id: int = 0,
) -> list[WorkUnit]:
    """Split each game's pending episodes into work units.

    A unit holds at least ``envs_per_worker`` episodes (so its vector env is full) and, to
    keep every worker busy to the end, about a quarter of one worker's share of the whole
    run, but never more than a game has. Larger units waste less: a vector env whose
    queue is empty keeps stepping its idle rows until its last episode ends. A run with
    fewer episodes than ``workers * envs_per_worker`` is split into one unit per worker
    (8 episodes on 2 workers: two units of 4), not into full vector envs that leave a
    worker idle: two batches of 4 on two cores play in about half the time of one batch
    of 8 on one. The split changes which episodes run together, never what they play.

    Args:
        pending: ``{game: [(episode, seed), ...]}`` in the order to run them.
        workers: worker processes (or Dask threads) that will run the units.
        envs_per_worker: sub-envs per vector env.
        first_unit_id: id of the first unit (ids go up from it).
    """
    total = sum(len(items) for items in pending.values())
    workers = max(workers, 1)
    rows = min(envs_per_worker, math.ceil(total / workers))  # every worker gets a unit
    share = math.ceil(total / (4 * workers))
    units = []
    for game, items in pending.items():
        if not items:
            continue
        size = max(rows, share)
        count = max(1, len(items) // size)
        # Balanced chunks of at least `size`: 100 episodes, size 30 -> 34, 33, 33.
        bounds = [round(i * len(items) / count) for i in range(count + 1)]
        for start, stop in itertools.pairwise(bounds):
            units.append(WorkUnit(first_unit_id + len(units), game, tuple(items[start:stop])))
    return units
