"""A worker's vector env between units: kept for the next unit, and joined by the next unit
of the same game as its rows free up; the episodes play the same either way. A worker
stopped between units holds up nothing."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from saber.harness import Inline, Processes, evaluate
from saber.harness import runner as runner_module
from saber.harness.local_executors import LocalExecutor
from saber.harness.work import EpisodeDone, FramesPlayed, Job, UnitFailed, UnitFinished, WorkUnit
from saber.protocol.seeds import episode_seed
from tests.harness.helpers import (
    FailOnEpisode,
    read_records,
    short_env,
    short_settings,
    strip_timing,
)

SHORT = {"env_options": short_env(), "progress": False}


def _units(game: str, count: int, size: int) -> list[WorkUnit]:
    return [
        WorkUnit(
            k, game, tuple((i, episode_seed(0, game, i)) for i in range(k * size, (k + 1) * size))
        )
        for k in range(count)
    ]


def test_next_unit_joins_the_running_one_and_plays_the_same_episodes(tmp_path: Path) -> None:
    # Reference: one unit of 6 rows, a new vector env.
    fresh = evaluate(
        "random", "breakout", 6, out=tmp_path / "a", backend=Inline(envs_per_worker=6), **SHORT
    )
    # In process: 3 units of 2 one after the other, on the env kept from unit to unit.
    kept = evaluate(
        "random", "breakout", 6, out=tmp_path / "b", backend=Inline(envs_per_worker=2), **SHORT
    )
    assert getattr(runner_module._kept, "env", None) is None  # released when the run ends
    assert strip_timing(kept.records) == strip_timing(fresh.records)
    # One worker, 3 units of 2: each unit has started both its episodes at once, so the
    # next one is sent and takes the rows as they free up (started before the last ends).
    backend = LocalExecutor(Job("random", "random", short_settings(), 2, 1), 1)
    try:
        for unit in _units("breakout", 3, 2):
            backend.submit(unit)
        events: list = []
        deadline = time.monotonic() + 120
        while sum(isinstance(e, UnitFinished) for e in events) < 3 and time.monotonic() < deadline:
            events.extend(backend.events(0.5))
    finally:
        backend.close()
    order = [
        (type(e).__name__, e.unit_id)
        for e in events
        if not isinstance(e, EpisodeDone | FramesPlayed)
    ]
    assert order.index(("UnitStarted", 1)) < order.index(("UnitFinished", 0)), order
    assert order.index(("UnitStarted", 2)) < order.index(("UnitFinished", 1)), order
    lines = [e.record for e in events if isinstance(e, EpisodeDone)]
    for line in lines:  # each record comes back with its own unit
        assert [e.unit_id for e in events if isinstance(e, EpisodeDone) and e.record is line] == [
            line.episode // 2
        ]
    assert strip_timing([line.to_dict() for line in lines]) == strip_timing(fresh.records)


def test_a_failure_in_joined_units_retries_each_episode_alone_and_counts_once(
    tmp_path: Path,
) -> None:
    # Episode 3 raises: it fails its unit and any unit playing beside it in the same env;
    # every unfinished episode is retried alone, and only episode 3 fails again.
    policy = FailOnEpisode("breakout", episode=3)
    result = evaluate(
        policy, "breakout", 6, out=tmp_path, backend=Processes(1, envs_per_worker=2), progress=False
    )
    assert [r["episode"] for r in result.failed] == [3]
    assert result.finished == 5
    history = read_records(tmp_path)
    assert [r["attempt"] for r in history if r.get("episode") == 3 and "error" in r] == [0, 1]
    # The failure's other victims (if a unit was playing beside it) finished on retry.
    retried = {r["episode"] for r in history if "error" in r} - {3}
    assert all("error" not in r for r in result.records if r["episode"] in retried)


def _run_until_done(backend: LocalExecutor, units: list[WorkUnit]) -> list:
    for unit in units:
        backend.submit(unit)
    events: list = []
    finished: set[int] = set()
    deadline = time.monotonic() + 120
    try:
        while len(finished) < len(units) and time.monotonic() < deadline:
            for event in backend.events(0.5):
                events.append(event)
                if isinstance(event, UnitFinished):
                    finished.add(event.unit_id)
                elif isinstance(event, UnitFailed):
                    finished.update((event.unit_id, *event.also))
    finally:
        backend.close()
    return [e for e in events if not isinstance(e, EpisodeDone | FramesPlayed)]


def test_a_dead_worker_fails_the_units_it_started_and_hands_on_the_others() -> None:
    # Unit 0 starts both its episodes at once, so unit 1 is sent to the same worker to
    # join it when a row frees up; 300 steps into episode 0 (long before a Pong episode
    # ends) the policy kills the worker. Unit 1 had not started: it is not failed, but
    # run by the new worker.
    policy = FailOnEpisode("pong", 0, after=300, kill=True)
    events = _run_until_done(LocalExecutor(Job("x", policy, {}, 2, 1), 1), _units("pong", 2, 2))
    failures = [(e.kind, e.unit_id, e.also) for e in events if isinstance(e, UnitFailed)]
    assert failures == [("worker", 0, ())]
    assert ("UnitFinished", 1) in [(type(e).__name__, e.unit_id) for e in events]


def test_a_dead_worker_fails_every_unit_playing_in_its_env_at_once() -> None:
    # Episode 2 (unit 1) starts in the first row that unit 0 frees: unit 1 has joined.
    # The policy kills the worker 20 steps later: one failure names unit 1, and unit 0
    # too unless its other episode had ended by then.
    policy = FailOnEpisode("pong", 2, after=20, kill=True)
    events = _run_until_done(LocalExecutor(Job("x", policy, {}, 2, 1), 1), _units("pong", 2, 2))
    failures = [e for e in events if isinstance(e, UnitFailed)]
    assert len(failures) == 1
    named = {failures[0].unit_id, *failures[0].also}
    zero_done = ("UnitFinished", 0) in [(type(e).__name__, e.unit_id) for e in events]
    assert named == ({1} if zero_done else {0, 1})


def test_a_worker_stopped_while_idle_fails_the_unit_it_is_sent_at_the_deadline() -> None:
    """A local worker stopped (SIGSTOP) once started up, idle, then sent a unit: the unit
    fails at the deadline (timeout, to be retried) and the worker is replaced, while the
    other worker's unit finishes; not a run held up for good."""
    unit_timeout = 4
    backend = LocalExecutor(Job("random", "random", short_settings(), 2, 1), 2, unit_timeout)
    events: list = []
    try:
        deadline = time.monotonic() + 120
        while not all(worker.spoke for worker in backend._workers):  # their policy verdicts
            assert time.monotonic() < deadline, "the workers did not start"
            events.extend(backend.events(0.5))
        os.kill(backend._workers[0].process.pid, signal.SIGSTOP)  # never woken
        for unit in _units("breakout", 2, 2):  # idle workers first: one unit each
            backend.submit(unit)
        deadline = time.monotonic() + 60
        while sum(isinstance(e, UnitFinished | UnitFailed) for e in events) < 2:
            assert time.monotonic() < deadline, [(type(e).__name__, e.unit_id) for e in events]
            events.extend(backend.events(0.5))
    finally:
        backend.close()
    ended = {e.unit_id: e for e in events if isinstance(e, UnitFinished | UnitFailed)}
    assert isinstance(ended[0], UnitFailed) and ended[0].kind == "timeout", ended
    assert isinstance(ended[1], UnitFinished), ended
