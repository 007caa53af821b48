"""Episode seeds and work units: fixed before the run, independent of the workers."""

from __future__ import annotations

import pytest

from saber.harness.work import plan_units
from saber.protocol.seeds import episode_seed


def test_episode_seeds_are_stable_and_distinct() -> None:
    seeds = {episode_seed(0, game, i) for game in ("pong", "breakout") for i in range(100)}
    assert len(seeds) == 200 and all(0 <= s < 2**31 for s in seeds)
    assert episode_seed(0, "pong", 3) == episode_seed(0, "pong", 3)
    assert episode_seed(1, "pong", 3) != episode_seed(0, "pong", 3)
    with pytest.raises(ValueError, match="non-negative"):
        episode_seed(-1, "pong", 0)


@pytest.mark.parametrize(("workers", "envs"), [(1, 8), (2, 8), (64, 8), (2, 2)])
def test_units_cover_every_episode_once(workers: int, envs: int) -> None:
    pending = {
        "pong": [(i, episode_seed(0, "pong", i)) for i in range(100)],
        "breakout": [(i, 7) for i in range(0, 30, 3)],
        "boxing": [],
    }
    units = plan_units(pending, workers, envs)
    for game, items in pending.items():
        got = [item for unit in units if unit.game == game for item in unit.episodes]
        assert got == items
    assert len({unit.unit_id for unit in units}) == len(units)
    total = sum(len(items) for items in pending.values())
    rows = min(envs, -(-total // workers))  # fewer episodes than workers x envs: one unit each
    for unit in units:  # full vector envs unless a game has fewer episodes left
        assert len(unit.episodes) >= min(rows, len(pending[unit.game]))


def test_unit_sizes() -> None:
    pending = {"pong": [(i, i) for i in range(100)]}
    # About a quarter of a worker's share, balanced, never below envs_per_worker (unless
    # the run has fewer episodes than workers x envs_per_worker).
    assert [len(u.episodes) for u in plan_units(pending, 1, 8)] == [25] * 4
    assert [len(u.episodes) for u in plan_units(pending, 2, 8)] == [14, 15, 14, 14, 14, 15, 14]
    # 64 workers, 100 episodes: 50 units of 2 keep 50 cores busy (12 full units: 12 cores).
    assert [len(u.episodes) for u in plan_units(pending, 64, 8)] == [2] * 50


@pytest.mark.parametrize(
    ("episodes", "workers", "sizes"),
    [
        (8, 2, [4, 4]),
        (4, 2, [2, 2]),
        (16, 2, [8, 8]),
        (8, 1, [8]),
        (12, 2, [6, 6]),
        (3, 4, [1] * 3),
    ],
)
def test_every_worker_gets_a_unit_when_episodes_are_few(
    episodes: int, workers: int, sizes: list[int]
) -> None:
    # Fewer episodes than workers x envs_per_worker (8): smaller batches on every worker,
    # not one full batch on one worker while the others idle.
    pending = {"pong": [(i, i) for i in range(episodes)]}
    assert [len(u.episodes) for u in plan_units(pending, workers, 8)] == sizes
