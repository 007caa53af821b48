"""Many games in one vector env (``gymnasium.make_vec("SABER/Atari5", ...)``): its speed.

Four measurements, in one run:

1. **Side by side** (goal: >= 0.95x): the multi-game env of a set's games against the
   games' own vector envs (``gymnasium.make_vec("SABER/<Game>", num_envs=k)``, one per
   game) stepped one after another, for the same sub-envs (``k`` per game), random
   actions. One contender alive at a time (each built, reset, warmed up, timed and closed
   in turn; the order alternates each round): engines alive at once share the cores. The
   ratio is the multi-game env's steps per second over the other's within a round; the
   median over rounds, with the min-max spread.
2. **Scaling**: sub-env steps per second (x 4 emulator frames) of the multi-game env as
   the number of games (1, 5, 10, 57: the first games of Atari-57, alphabetical) and of
   sub-envs per game grow.
3. **Memory per sub-env**: the resident memory a fresh process gains by building and
   resetting the env, over its sub-envs (57 games, 1 and 2 sub-envs per game: the
   difference between the two over 57 is the cost of one more sub-env).
4. **Start-up**: the wall time of ``gymnasium.make_vec("SABER/Atari57", num_envs=57)``
   and of its first ``reset``, in a fresh process (saber and Gymnasium imported before the
   clock starts).

Run ``python benchmarks/multigame_speed.py`` (``--quick`` for a short run); it writes
``benchmarks/results/multigame.json`` (the tables and the raw numbers) for
docs/measurements/envs.md.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from _results import Measurement, add_options

import saber  # noqa: F401  registers SABER/*
from saber.games import game_sets, get_game

Stepper = tuple[Callable[[np.ndarray], Any], Callable[[], None]]


def _own_envs(games: list[str], per_game: int) -> Stepper:
    """The games' own vector envs, stepped one after another."""
    envs = [gym.make_vec(get_game(game).env_id, num_envs=per_game) for game in games]
    count = len(envs)
    for i, env in enumerate(envs):
        env.reset(seed=i)

    def step(actions: np.ndarray) -> None:
        for g, env in enumerate(envs):
            env.step(actions[g::count])

    def close() -> None:
        for env in envs:
            env.close()

    return step, close


def _multi_env(games: list[str], per_game: int) -> Stepper:
    env = gym.make_vec("SABER/Games", num_envs=per_game * len(games), games=games)
    env.reset(seed=0)
    return env.step, env.close


def _rate(make: Callable[[], Stepper], num_envs: int, seconds: float) -> float:
    """Batch steps per second of one contender, built, warmed up, timed and closed."""
    step, close = make()
    actions = np.random.default_rng(0).integers(0, 18, (4096, num_envs))
    for i in range(20):  # warm-up
        step(actions[i])
    steps, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        step(actions[steps % len(actions)])
        steps += 1
    close()
    gc.collect()
    return steps / elapsed


def side_by_side(games: list[str], per_game: int, rounds: int, seconds: float) -> dict[str, Any]:
    num_envs = per_game * len(games)
    ratios, multi_rates, own_rates = [], [], []
    for round_ in range(rounds):
        contenders = [("multi", _multi_env), ("own", _own_envs)]
        if round_ % 2:
            contenders.reverse()
        rates = {
            name: _rate(lambda m=make: m(games, per_game), num_envs, seconds)
            for name, make in contenders
        }
        multi_rates.append(rates["multi"])
        own_rates.append(rates["own"])
        ratios.append(rates["multi"] / rates["own"])
    return {
        "games": len(games),
        "per_game": per_game,
        "num_envs": num_envs,
        "multi_steps_per_s": statistics.median(multi_rates),
        "own_steps_per_s": statistics.median(own_rates),
        "ratio_median": statistics.median(ratios),
        "ratio_min": min(ratios),
        "ratio_max": max(ratios),
    }


def scaling(counts: list[int], per_games: list[int], seconds: float) -> list[dict[str, Any]]:
    atari57 = [game.ale_id for game in game_sets()["atari57"]]
    rows = []
    for count in counts:
        for per_game in per_games:
            games = atari57[:count]
            rate = _rate(lambda g=games, k=per_game: _multi_env(g, k), count * per_game, seconds)
            rows.append(
                {
                    "games": count,
                    "per_game": per_game,
                    "num_envs": count * per_game,
                    "batch_steps_per_s": rate,
                    "frames_per_s": rate * count * per_game * 4,
                }
            )
    return rows


_CHILD = """
import gc, json, sys, time
import gymnasium as gym
import saber
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * {page}
set_id, num_envs = sys.argv[1], int(sys.argv[2])
gc.collect()
before = rss()
start = time.perf_counter()
env = gym.make_vec(set_id, num_envs=num_envs)
made = time.perf_counter()
env.reset(seed=0)
reset = time.perf_counter()
print(json.dumps({{"num_envs": num_envs, "rss_gain": rss() - before,
                  "make_s": made - start, "reset_s": reset - made}}))
"""


def _child(num_envs: int, set_id: str = "SABER/Atari57") -> dict[str, Any]:
    """Memory and start-up of ``set_id`` with ``num_envs`` sub-envs, in a fresh process."""
    code = _CHILD.format(page=os.sysconf("SC_PAGE_SIZE"))
    out = subprocess.run(
        [sys.executable, "-c", code, set_id, str(num_envs)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def memory_and_startup(repeats: int) -> dict[str, Any]:
    one = [_child(57) for _ in range(repeats)]
    two = [_child(114) for _ in range(repeats)]
    gain_one = statistics.median(r["rss_gain"] for r in one)
    gain_two = statistics.median(r["rss_gain"] for r in two)
    return {
        "rss_per_sub_env_mib_57": gain_one / 57 / 2**20,
        "rss_per_sub_env_mib_114": gain_two / 114 / 2**20,
        "rss_per_added_sub_env_mib": (gain_two - gain_one) / 57 / 2**20,
        "startup_make_s_57": statistics.median(r["make_s"] for r in one),
        "startup_reset_s_57": statistics.median(r["reset_s"] for r in one),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run")
    add_options(parser, "multigame")
    args = parser.parse_args()
    measurement = Measurement(
        args, page="envs", order=100, title="Many games in one vector env", benchmark=__file__
    )
    seconds, rounds = (0.7, 3) if args.quick else (2.0, 5)
    atari5 = [game.ale_id for game in game_sets()["atari5"]]
    with_skiing = ["breakout", "pong", "skiing", "space_invaders", "qbert"]
    results: dict[str, Any] = {
        "side_by_side": [
            side_by_side(atari5, 1, rounds, seconds),
            side_by_side(atari5, 4, rounds, seconds),
            side_by_side(with_skiing, 2, rounds, seconds),
        ],
        "scaling": scaling([1, 5, 10, 57], [1, 2, 4], seconds),
        "memory_startup": memory_and_startup(1 if args.quick else 3),
    }
    names = ["Atari-5", "Atari-5", "Breakout, Pong, Skiing, Space Invaders, Q*bert"]
    measurement.text(
        f"Side by side, {rounds} rounds of {seconds} s: the multi-game env against the games' "
        "own vector envs stepped one after another, for the same sub-envs:"
    )
    measurement.table(
        [
            "games",
            "sub-envs per game",
            "multi-game env (steps/s)",
            "own envs one after another (steps/s)",
            "ratio (median, min-max)",
        ],
        [
            [
                name,
                row["per_game"],
                f"{row['multi_steps_per_s']:,.0f}",
                f"{row['own_steps_per_s']:,.0f}",
                f"{row['ratio_median']:.2f}x ({row['ratio_min']:.2f}-{row['ratio_max']:.2f})",
            ]
            for name, row in zip(names, results["side_by_side"], strict=True)
        ],
    )
    measurement.text("Scaling:")
    measurement.table(
        ["games", "sub-envs per game", "sub-envs", "batch steps/s", "frames/s"],
        [
            [
                row["games"],
                row["per_game"],
                row["num_envs"],
                f"{row['batch_steps_per_s']:,.1f}",
                f"{row['frames_per_s']:,.0f}",
            ]
            for row in results["scaling"]
        ],
        align=["right"] * 5,
    )
    memory = results["memory_startup"]
    measurement.text(
        f"Memory: {memory['rss_per_sub_env_mib_57']:.1f} MiB per sub-env with 57 sub-envs (one "
        f"per game), {memory['rss_per_sub_env_mib_114']:.1f} MiB with 114; each added sub-env "
        f"{memory['rss_per_added_sub_env_mib']:.1f} MiB. Start-up of `SABER/Atari57` (57 "
        f"sub-envs, 57 ROMs): `make_vec` {memory['startup_make_s_57']:.1f} s and the first "
        f"`reset` {memory['startup_reset_s_57']:.1f} s."
    )
    measurement.data = results
    measurement.write()


if __name__ == "__main__":
    main()
