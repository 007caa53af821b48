"""Run episodes of one game on one vector env, calling the policy on the whole batch.

Each episode starts with a seeded reset of its row (``reset_mask`` with autoreset
disabled), so it plays exactly what its seed and the policy decide, whatever row or unit
it lands in. A seeded reset reloads the ROM, about 0.08 s of CPU in ale-py 0.12 (the palette
is rebuilt); that is the price of per-episode seeds, paid once per episode.

When a unit has no more episodes to start, a row whose episode ends is reset without a
seed (after a game over that continues the emulator's random stream without reloading)
and kept stepping until the last episode of the unit ends; its results are ignored.
That wastes the idle rows' emulation at the tail of each unit, which is why units hold
several times more episodes than rows (see :func:`saber.harness.work.plan_units`).
"""

from __future__ import annotations

import functools
import inspect
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from saber.envs import SaberSettings, SaberVectorEnv
from saber.harness.policies import (
    Policy,
    PolicyError,
    build_policy,
    check_actions,
    describe_error,
    load_policy,
)
from saber.harness.replays import ReplayRecorder
from saber.harness.work import (
    EpisodeDone,
    Event,
    FramesPlayed,
    Job,
    UnitFailed,
    UnitFinished,
    UnitStarted,
    WorkUnit,
)
from saber.protocol.episode import EpisodeRecord
from saber.protocol.rundir import EpisodeLine

__all__ = ["execute_unit", "quiet_ale", "run_episodes"]

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
) -> dict[str, Any]:
    """The ``episodes.jsonl`` line of sub-env ``row``'s record in a vector env's
    ``info["saber"]``, naming its replay when ``replays`` records them."""
    record = EpisodeRecord.from_dict({key: values[row] for key, values in stats.items()})
    replay = sha256 = None
    if replays is not None:
        replay, sha256 = replays.finish(row, episode, seed, record.steps)
    return EpisodeLine(game, episode, seed, agent, record, run, replay, sha256).to_dict()


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


def run_episodes(
    env: SaberVectorEnv,
    policy: Policy,
    episodes: Sequence[tuple[int, int]],
    agent: str,
    run: str | None = None,
    replays: ReplayRecorder | None = None,
) -> Iterator[dict[str, Any] | int]:
    """Play ``episodes`` on ``env``; yield each record as its episode ends.

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
    _start(policy, range(size), seeds)
    if replays is not None:
        replays.start(range(size))
    frame_skip = env.saber_settings.frame_skip
    frames, last_tick = 0, time.monotonic()
    while any(item is not None for item in active):
        actions = check_actions(policy(observations), size)
        if replays is not None:
            replays.add(actions)
        observations, _, _, _, info = env.step(actions)
        frames += frame_skip * sum(item is not None for item in active)
        if time.monotonic() - last_tick >= _TICK_SECONDS:
            yield frames
            frames, last_tick = 0, time.monotonic()
        ended, stats = episode_info(info)
        if ended is None or not ended.any():
            continue
        starting: list[int] = []
        idle: list[int] = []
        for row in np.flatnonzero(ended).tolist():
            item = active[row]
            if item is not None:
                yield _record(env.rom_id, agent, item[0], item[1], stats, row, run, replays)
            active[row] = queue.popleft() if queue else None
            (starting if active[row] is not None else idle).append(row)
        if starting:
            new_seeds = [active[row][1] for row in starting]  # type: ignore[index]
            observations, _ = env.reset(
                seed=np.array(new_seeds), options={"reset_mask": _mask(starting, size)}
            )
            _start(policy, starting, new_seeds)
            if replays is not None:
                replays.start(starting)
        if idle:
            if replays is not None:
                replays.stop(idle)
            observations, _ = env.reset(options={"reset_mask": _mask(idle, size)})
    if frames:
        yield frames


@functools.lru_cache(maxsize=4)
def _cached_policy(spec: str) -> Policy:
    # A worker builds a spec's policy once (a model load), then reuses it for every unit.
    return load_policy(spec)


@functools.lru_cache(maxsize=4)
def _cached_instance(policy_class: type) -> Policy:
    # A policy class is built like a spec's class: once per worker, without arguments.
    return build_policy(policy_class, f"Policy class {policy_class.__qualname__!r}")


def _policy_of(job: Job) -> Policy:
    if isinstance(job.policy, str):
        return _cached_policy(job.policy)
    if inspect.isclass(job.policy):
        return _cached_instance(job.policy)
    return job.policy  # type: ignore[no-any-return]


def quiet_ale() -> None:
    """Silence ale-py's banner and info messages in this process (they tear the progress bar)."""
    import ale_py

    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)


def execute_unit(
    unit: WorkUnit, job: Job, num_threads: int | None = None, worker: str = ""
) -> Iterator[Event]:
    """Run one work unit in this process; every outcome, failures too, is an event.

    Args:
        unit: the episodes to run.
        job: the run's policy and settings.
        num_threads: emulation threads, overriding ``job.num_threads``.
        worker: how :class:`UnitStarted` names this worker.

    Yields:
        :class:`UnitStarted`, then :class:`EpisodeDone` per finished episode and
        :class:`FramesPlayed` counts, then :class:`UnitFinished`, or :class:`UnitFailed` as
        soon as something goes wrong.
    """
    yield UnitStarted(unit.unit_id, worker)
    quiet_ale()
    try:
        policy = _policy_of(job)
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
        env = SaberVectorEnv(
            unit.game,
            rows,
            num_threads=job.num_threads if num_threads is None else num_threads,
            autoreset_mode=AutoresetMode.DISABLED,
            **job.settings,
        )
    except Exception as error:
        yield UnitFailed(unit.unit_id, "setup", describe_error(error))
        return
    try:
        for item in run_episodes(env, policy, unit.episodes, job.agent, job.run, recorder):
            if isinstance(item, int):
                yield FramesPlayed(unit.unit_id, item)
                continue
            replay = recorder.take(item["episode"]) if recorder is not None else None
            if job.replays:
                yield EpisodeDone(unit.unit_id, item, replay)
            else:
                record = {k: v for k, v in item.items() if k not in ("replay", "replay_sha256")}
                yield EpisodeDone(unit.unit_id, record)
            if film is not None and replay is not None:
                # After the record is out: a video never delays it. Filming a long episode
                # takes minutes: 0 frames played, but alive for the unit deadline
                # (--unit-timeout watches for any message).
                for _ in film.filming(item, replay):
                    yield FramesPlayed(unit.unit_id, 0)
    except PolicyError as error:
        yield UnitFailed(unit.unit_id, "policy", str(error))
        return
    except Exception as error:
        yield UnitFailed(unit.unit_id, "episode", describe_error(error))
        return
    finally:
        env.close()
    yield UnitFinished(unit.unit_id)
