"""Run episodes of one game on one vector env, calling the policy on the whole batch.

Each episode starts with a seeded reset of its row, so it plays what its seed and the
policy decide whatever row, unit or worker it lands in; docs/harness.md ("Workers")
describes how units join and envs are kept.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from saber.envs import SaberVectorEnv
from saber.errors import PolicyError
from saber.harness.policies import Policy, check_actions, describe_error, policy_of
from saber.harness.replays import ReplayRecorder
from saber.harness.work import (
    EpisodeDone,
    Event,
    FailureKind,
    FramesPlayed,
    Job,
    UnitDrained,
    UnitFailed,
    UnitFinished,
    UnitStarted,
    WorkUnit,
)
from saber.protocol.episode import EpisodeRecord
from saber.protocol.settings import SaberSettings
from saber.rundir import EpisodeLine

_TICK_SECONDS = 1.0  # how often frame counts go to the progress bar


def _record(
    game: str,
    agent: str,
    episode: int,
    seed: int,
    stats: dict[str, np.ndarray],
    row: int,
    run: str | None,
    replays: ReplayRecorder | None,
) -> EpisodeLine:
    """The ``episodes.jsonl`` line of sub-env ``row``'s record in a vector env's
    ``info["saber"]``, naming its replay when ``replays`` records them."""
    record = EpisodeRecord.from_dict({key: values[row] for key, values in stats.items()})
    replay = sha256 = None
    if replays is not None:
        replay, sha256 = replays.finish(row, episode, seed, record.steps)
    return EpisodeLine(game, episode, seed, agent, record, run, replay, sha256)


def episode_info(info: dict[str, Any]) -> tuple[np.ndarray | None, dict[str, np.ndarray]]:
    """The vector env's end-of-episode mask and records: ``info["_saber"]`` and
    ``info["saber"]``, or the older ``info["_episode"]`` and ``info["episode"]``."""
    for key in ("saber", "episode"):
        if f"_{key}" in info:
            return info[f"_{key}"], info[key]
    return None, {}


def _start(policy: Policy, rows: Sequence[int], seeds: Sequence[int]) -> None:
    hook: Callable[[np.ndarray, np.ndarray], None] | None = getattr(policy, "start_episodes", None)
    if hook is not None:
        hook(np.asarray(rows, dtype=np.int64), np.asarray(seeds, dtype=np.int64))


def _mask(rows: Sequence[int], size: int) -> np.ndarray:
    mask = np.zeros(size, dtype=bool)
    mask[list(rows)] = True
    return mask


def _begin(
    policy: Policy, replays: ReplayRecorder | None, rows: Sequence[int], seeds: Sequence[int]
) -> None:
    """Tell the policy (``start_episodes``) and the replays that ``rows`` start episodes."""
    _start(policy, rows, seeds)
    if replays is not None:
        replays.start(rows)


def _start_queued(
    env: SaberVectorEnv,
    policy: Policy,
    active: list[tuple[int, int] | None],
    queue: deque[tuple[int, int]],
    replays: ReplayRecorder | None,
) -> tuple[list[int], np.ndarray | None]:
    """Idle rows, in order, take the queued episodes with a seeded reset of those rows:
    the rows started and the new observations (None when none started)."""
    starting: list[int] = []
    for row in range(len(active)):
        if not queue:
            break
        if active[row] is None:
            active[row] = queue.popleft()
            starting.append(row)
    if not starting:
        return starting, None
    seeds = [active[row][1] for row in starting]  # type: ignore[index]
    mask = _mask(starting, len(active))
    observations, _ = env.reset(seed=np.array(seeds), options={"reset_mask": mask})
    _begin(policy, replays, starting, seeds)
    return starting, observations


class QueueEmpty:
    """Yielded by :func:`run_episodes` when its last queued episode has started: the
    moment to send more episodes (``more``) before a row goes idle."""

    def __repr__(self) -> str:
        return "QUEUE_EMPTY"


QUEUE_EMPTY = QueueEmpty()


def run_episodes(
    env: SaberVectorEnv,
    policy: Policy,
    episodes: Sequence[tuple[int, int]],
    agent: str,
    run: str | None = None,
    replays: ReplayRecorder | None = None,
    more: Callable[[], Sequence[tuple[int, int]]] | None = None,
) -> Iterator[EpisodeLine | int | QueueEmpty]:
    """Play ``episodes`` on ``env``; yield each episode's line as its episode ends.

    Also yields, about once a second, the number of emulator frames played since the
    last such count (an int, approximate: active rows times the frame skip).

    Args:
        env: a vector env with autoreset disabled and at most ``len(episodes)`` rows.
        policy: see :mod:`saber.harness.policies`.
        episodes: ``(episode index, seed)`` pairs, started in this order.
        agent: the agent name written in each record.
        run: the run name written in each record (None: no ``run`` key).
        replays: records every episode's actions; each record then names its replay
            (``replays.take(episode)`` gives its bytes once the record is out).
        more: called (it must not block) while the queue is empty and a row is idle:
            further ``(episode, seed)`` pairs of the same game, started in idle rows
            at once, so the batch stays full as long as episodes remain. With ``more``,
            :data:`QUEUE_EMPTY` is yielded each time the last queued episode starts.

    Raises:
        PolicyError: the policy returned something other than ``num_envs`` valid actions.
    """
    size = env.num_envs
    if not 0 < size <= len(episodes):
        raise ValueError(f"Expect 1..{len(episodes)} sub-envs, actually: {size}")
    queue = deque(episodes)
    active: list[tuple[int, int] | None] = [queue.popleft() for _ in range(size)]
    seeds = [seed for _, seed in active]  # type: ignore[misc]
    observations, _ = env.reset(seed=np.array(seeds))
    _begin(policy, replays, range(size), seeds)
    if more is not None and not queue:
        yield QUEUE_EMPTY
    frame_skip = env.saber_settings.frame_skip
    frames, last_tick = 0, time.monotonic()
    idle_rows = 0  # rows with no episode of ours: stepped until the last episode ends
    while idle_rows < size:
        actions = check_actions(policy(observations), size)
        if replays is not None:
            replays.add(actions)
        observations, _, _, _, info = env.step(actions)
        frames += frame_skip * (size - idle_rows)
        if time.monotonic() - last_tick >= _TICK_SECONDS:
            yield frames
            frames, last_tick = 0, time.monotonic()
        ended, stats = episode_info(info)
        ended_rows = np.flatnonzero(ended).tolist() if ended is not None and ended.any() else []
        waiting = idle_rows > 0 and more is not None  # idle rows that more() may fill
        if not ended_rows and not waiting:
            continue
        for row in ended_rows:
            item = active[row]
            if item is not None:
                yield _record(env.rom_id, agent, item[0], item[1], stats, row, run, replays)
                active[row] = None
                idle_rows += 1
        if more is not None and 0 < idle_rows < size and not queue:
            queue.extend(more())  # not once every row is idle: the env's work is over
        starting, restarted = _start_queued(env, policy, active, queue, replays)
        if restarted is not None:
            observations, idle_rows = restarted, idle_rows - len(starting)
            if more is not None and not queue:
                yield QUEUE_EMPTY
        idle = [row for row in ended_rows if active[row] is None]
        if idle:
            if replays is not None:
                replays.stop(idle)
            observations, _ = env.reset(options={"reset_mask": _mask(idle, size)})
    if frames:
        yield frames


# The vector env a worker keeps between units: one per thread (a Dask worker may run
# several units at once, one per thread), the last one built.
_kept = threading.local()


def _vector_env(
    game: str, rows: int, num_threads: int, overrides: dict[str, Any]
) -> SaberVectorEnv:
    """The kept vector env when it is the one asked for, else a new one (kept instead)."""
    key = (game, rows, num_threads, json.dumps(overrides, sort_keys=True, default=repr))
    kept: tuple[tuple[Any, ...], SaberVectorEnv] | None = getattr(_kept, "env", None)
    if kept is not None and kept[0] == key:
        return kept[1]
    release_envs()
    env = SaberVectorEnv(
        game, rows, num_threads=num_threads, autoreset_mode=AutoresetMode.DISABLED, **overrides
    )
    _kept.env = (key, env)
    return env


def release_envs() -> None:
    """Close the vector env this thread kept between units, if any."""
    kept = getattr(_kept, "env", None)
    _kept.env = None
    if kept is not None:
        kept[1].close()


def quiet_ale() -> None:
    """Silence ale-py's banner and info messages in this process (they tear the progress bar)."""
    import ale_py

    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)


class _Joined:
    """The units playing on one vector env: the first, and those joined through ``more``
    (each episode's unit, the episodes not yet recorded, the :class:`UnitStarted` of a
    joined unit not yet sent)."""

    def __init__(self, unit: WorkUnit, worker: str, more: Callable[[str], WorkUnit | None]):
        self.game, self.worker, self.more = unit.game, worker, more
        self.open_units: dict[int, set[int]] = {}  # unit -> its episodes not yet recorded
        self.unit_of: dict[int, int] = {}  # episode -> its unit
        self.started: list[Event] = []  # UnitStarted of joined units, sent before records
        self.latest = unit.unit_id
        self.add(unit)

    def add(self, unit: WorkUnit) -> None:
        self.open_units[unit.unit_id] = {index for index, _ in unit.episodes}
        self.unit_of.update((index, unit.unit_id) for index, _ in unit.episodes)
        self.latest = unit.unit_id

    def join(self) -> list[tuple[int, int]]:
        """``run_episodes``'s ``more``: the episodes of another unit of the game, if any."""
        extra = self.more(self.game)
        if extra is None:
            return []
        self.started.append(UnitStarted(extra.unit_id, self.worker))
        self.add(extra)
        return list(extra.episodes)

    def recorded(self, unit_id: int, episode: int) -> bool:
        """Note that ``episode`` of ``unit_id`` is recorded; True if that ends the unit."""
        self.open_units[unit_id].discard(episode)
        if self.open_units[unit_id]:
            return False
        del self.open_units[unit_id]
        return True

    def failed(self, kind: FailureKind, reason: str) -> Iterator[Event]:
        """One failure of every unfinished unit (the joined ones started first)."""
        yield from self.started  # a unit that joined before the failure: started, then failed
        failed = sorted(self.open_units)
        if failed:
            yield UnitFailed(failed[0], kind, reason, also=tuple(failed[1:]))


def _set_up(
    unit: WorkUnit, job: Job, num_threads: int | None
) -> tuple[Policy, SaberVectorEnv, ReplayRecorder | None, Any]:
    """The policy, the vector env, the replay recorder and the film of a unit."""
    policy = policy_of(job.policy)
    settings = SaberSettings.from_overrides(**job.settings)
    rows = min(job.envs_per_worker, len(unit.episodes))
    # Films are made from the replays, so filming records them even without --replays.
    recorder = None
    if job.replays or job.video is not None:
        recorder = ReplayRecorder(unit.game, rows, job.agent, job.run, settings)
    film = None
    if job.video is not None:
        from saber.training.video import EpisodeFilm

        film = EpisodeFilm(job.video, unit.game)
    threads = job.num_threads if num_threads is None else num_threads
    return policy, _vector_env(unit.game, rows, threads, job.settings), recorder, film


def execute_unit(
    unit: WorkUnit,
    job: Job,
    num_threads: int | None = None,
    worker: str = "",
    more: Callable[[str], WorkUnit | None] | None = None,
) -> Iterator[Event]:
    """Run one work unit in this process; every outcome, failures too, is an event.

    Args:
        unit: the episodes to run.
        job: the run's policy and settings.
        num_threads: emulation threads, overriding ``job.num_threads``.
        worker: how :class:`UnitStarted` names this worker.
        more: called (it must not block) once the unit's episodes have all started and
            a row is idle: another unit of the same game (``more(game)``), whose
            episodes then take the idle rows of this vector env, or None. Such units
            run on; :class:`UnitDrained` says when the last one has started all its
            episodes (the moment to offer another).

    Yields:
        :class:`UnitStarted`, then :class:`EpisodeDone` per finished episode and
        :class:`FramesPlayed` counts, then :class:`UnitFinished`, or :class:`UnitFailed` as
        soon as something goes wrong; the same for every unit joined through ``more``
        (its :class:`UnitStarted` before its first record). A failure fails every
        unfinished unit at once: one :class:`UnitFailed` naming the others in ``also``.
    """
    yield UnitStarted(unit.unit_id, worker)
    quiet_ale()
    try:
        policy, env, recorder, film = _set_up(unit, job, num_threads)
    except Exception as error:
        yield UnitFailed(unit.unit_id, "setup", describe_error(error))
        return
    units = _Joined(unit, worker, more or (lambda game: None))
    finished = False
    try:
        # A retry (attempt 1) runs alone: an episode that fails again is the one that fails.
        joins = units.join if more is not None and unit.attempt == 0 else None
        for item in run_episodes(env, policy, unit.episodes, job.agent, job.run, recorder, joins):
            yield from units.started
            units.started.clear()
            if isinstance(item, QueueEmpty):
                yield UnitDrained(units.latest)
                continue
            if isinstance(item, int):
                yield FramesPlayed(units.latest, item)
                continue
            unit_id = units.unit_of.pop(item.episode)
            replay = recorder.take(item.episode) if recorder is not None else None
            if job.replays:
                yield EpisodeDone(unit_id, item, replay)
            else:
                yield EpisodeDone(unit_id, replace(item, replay=None, replay_sha256=None))
            if film is not None and replay is not None:
                # After the record is out: a video never delays it. Filming a long episode
                # takes minutes: 0 frames played, but alive for the unit deadline
                # (--unit-timeout watches for any message).
                for _ in film.filming(item.to_dict(), replay):
                    yield FramesPlayed(unit_id, 0)
            if units.recorded(unit_id, item.episode):
                yield UnitFinished(unit_id)
    except Exception as error:
        kind: FailureKind = "policy" if isinstance(error, PolicyError) else "episode"
        reason = str(error) if isinstance(error, PolicyError) else describe_error(error)
        yield from units.failed(kind, reason)
        return
    else:
        finished = True
    finally:
        if not finished:  # failed, or abandoned (a generator closed early): not reused
            release_envs()
