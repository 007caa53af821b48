"""The vector env in depth: where a step's time goes, many games in one env, and this
checkout against another saber version, side by side.

    python benchmarks/vector_speed.py profile --game Pong --envs 8
    python benchmarks/vector_speed.py games [--quick]
    python benchmarks/vector_speed.py versions --other ../saber-0.5

Each mode writes its result file for docs/measurements/envs.md; ``MODE --help`` says how
it measures.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import cv2
import gymnasium as gym
import numpy as np
from _results import Measurement, add_options, interleaved, run_modes

import saber  # registers SABER/*
from saber.envs.engines import new_vector_engine
from saber.games import game_sets, get_game
from saber.protocol import SaberSettings

PROFILE = """Where a vector step's wall time goes: the engine emulating, or this process working.

ale-py's engine steps synchronously: from ``send`` to the end of ``recv`` the main
thread waits while the engine's threads emulate; the rest of the step (resize, stack,
rules, copies) runs in this process while the engine's threads sit idle. This script times
both sides per batch step, for ``gymnasium.make_vec("SABER/<Game>")`` and for the vector
tight loop of ``env_throughput.py`` (same engine, per-frame resize, ordered copy), in
interleaved rounds, one env alive at a time:

  * engine share: wall time inside ``send`` + ``recv`` (engine busy, this thread waiting);
  * engine idle: wall time outside them (this process's own work; the engine's threads
    idle): the part a faster SABER step can remove;
  * this thread's CPU outside send/recv (microseconds per batch step): the work itself
    (OpenCV's own threads, when it uses them for a large batch, are not counted in it).

It wraps ``send``/``recv`` of ``env.unwrapped._engine.ale`` (a private attribute) with
timers, whose own cost is small beside a batch step's. Writes ``vector-profile.json``.
"""

GAMES = """Many games in one vector env (``gymnasium.make_vec("SABER/Atari5", ...)``): its speed.

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

``--quick`` for a short run. Writes ``multigame.json`` (the tables and the raw numbers).
"""

VERSIONS = """This checkout's vector env and ``saber eval`` against another saber version's, side by
side in one run.

Each round runs both versions, each in a fresh process, their order alternating from
round to round, so that both see the same machine; the figure is the ratio of each
round's two speeds:

* ``--settings``: ``gymnasium.make_vec("SABER/<Game>", n)`` stepped with the same random
  actions (env-steps per second of the step loop);
* ``--evals``: a whole ``saber eval`` command (imports, start-up and its quick probe, the
  workers, the policy, the store and the report; episodes from the same seeds in both
  versions), timed from the outside: its frames per second of wall time.

The other version is a checkout of its own, for example the last release's
(``git worktree add ../saber-0.5 v0.5.0``, then ``versions --other ../saber-0.5``). Its saber is imported from ``--other`` (``PYTHONPATH``), with this environment's ale-py,
numpy and Gymnasium, so the run compares saber's own code and nothing else.
"""


# ------------------------------------------------------------ profile
class TimedEngine:
    """Wraps an ``ALEVectorInterface``: accumulates the wall time and this thread's CPU
    time (spin-waiting included) spent in send and recv."""

    def __init__(self, ale: Any) -> None:
        self._ale = ale
        self.seconds = self.cpu_seconds = 0.0

    def _timed(self, call: Callable[..., Any], *args: Any) -> Any:
        wall, cpu = time.perf_counter(), time.thread_time()
        result = call(*args)
        self.seconds += time.perf_counter() - wall
        self.cpu_seconds += time.thread_time() - cpu
        return result

    def send(self, *args: Any) -> None:
        self._timed(self._ale.send, *args)

    def recv(self) -> Any:
        return self._timed(self._ale.recv)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ale, name)


def saber_run(name: str, num_envs: int) -> tuple[Callable[[np.ndarray], Any], TimedEngine, Any]:
    env = gym.make_vec(f"SABER/{name}", num_envs=num_envs)
    env.reset(seed=0)
    engine = env.unwrapped._engine
    engine.ale = timed = TimedEngine(engine.ale)
    return env.step, timed, env.close


def tight_run(game: str, num_envs: int) -> tuple[Callable[[np.ndarray], Any], TimedEngine, Any]:
    engine = TimedEngine(new_vector_engine(game, num_envs, SaberSettings()))
    engine.reset(np.arange(num_envs, dtype=np.int32), np.arange(num_envs, dtype=np.int32))
    strength = np.ones(num_envs, dtype=np.float32)
    stack = np.zeros((num_envs, 4, 84, 84), dtype=np.uint8)
    orders = [np.roll(np.arange(4), -(slot + 1)) for slot in range(4)]
    slot = 0

    def step(actions: np.ndarray) -> None:
        nonlocal slot
        engine.send(actions.astype(np.int32), strength)
        frames = engine.recv()[0]
        for row in range(num_envs):
            cv2.resize(
                frames[row, 0], (84, 84), dst=stack[row, slot], interpolation=cv2.INTER_LINEAR
            )
        stack[:, orders[slot]]
        slot = (slot + 1) % 4

    def close() -> None:
        nonlocal engine
        del engine

    return step, engine, close


def profile_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(
        description=PROFILE,
        prog=f"{Path(__file__).name} profile",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--game", default="Pong")
    parser.add_argument("--envs", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--env-steps", type=int, default=4000, help="timed env-steps per round")
    add_options(parser, "vector-profile")
    args = parser.parse_args(argv)
    measurement = Measurement(
        args,
        page="envs",
        order=40,
        title="Where a vector step's time goes",
        benchmark=__file__,
    )
    game = saber.get_game(args.game)  # any spelling
    actions = np.random.default_rng(0).integers(
        0, 18, (max(1, args.env_steps // args.envs), args.envs)
    )
    builders = {
        "SABER": lambda: saber_run(game.env_name, args.envs),
        "vector tight loop": lambda: tight_run(game.ale_id, args.envs),
    }
    rows: dict[str, list[tuple[float, float, float]]] = {name: [] for name in builders}
    for _ in range(args.rounds):
        for name, build in builders.items():
            step, engine, close = build()
            for batch in actions[:10]:
                step(batch)
            engine.seconds = engine.cpu_seconds = 0.0
            wall, main_cpu = time.perf_counter(), time.thread_time()
            for batch in actions:
                step(batch)
            wall, main_cpu = time.perf_counter() - wall, time.thread_time() - main_cpu
            close()
            gc.collect()
            steps = len(actions)
            own_cpu = main_cpu - engine.cpu_seconds
            rows[name].append((wall / steps, (wall - engine.seconds) / wall, own_cpu / steps))
    measurement.text(f"{game.env_name} x{args.envs}, {args.rounds} rounds (median [min-max]):")
    table = []
    for name, values in rows.items():
        cells = []
        for index, scale, digits in ((0, 1e6, 0), (1, 100, 0), (2, 1e6, 0)):
            column = [value[index] * scale for value in values]
            cells.append(
                f"{statistics.median(column):.{digits}f} "
                f"[{min(column):.{digits}f}-{max(column):.{digits}f}]" + ("%" if index == 1 else "")
            )
        table.append([name, *cells])
    measurement.table(
        [
            "env",
            "wall per batch step (us)",
            "engine idle (share of wall)",
            "own CPU per step (us)",
        ],
        table,
    )
    measurement.write()


# ------------------------------------------------------------ games
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


def games_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(
        description=GAMES,
        prog=f"{Path(__file__).name} games",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true", help="a short run")
    add_options(parser, "multigame")
    args = parser.parse_args(argv)
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


# ------------------------------------------------------------ versions
ROOT = Path(__file__).resolve().parents[1]


# Env-steps per second of the vector env's step loop, after 200 warm-up steps.
LOOP = """
import sys, time
import gymnasium, numpy as np, saber
game, num_envs, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
envs = gymnasium.make_vec(f"SABER/{game}", num_envs)
envs.reset(seed=0)
actions = np.random.default_rng(0).integers(0, 18, size=(steps + 200, num_envs))
for row in actions[:200]:
    envs.step(row)
start = time.perf_counter()
for row in actions[200:]:
    envs.step(row)
print(saber.__version__, num_envs * steps / (time.perf_counter() - start))
"""


def speed(tree: Path, game: str, num_envs: int, steps: int) -> tuple[str, float]:
    """(saber's version, env-steps per second) of one round in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-c", LOOP, game, str(num_envs), str(steps)],
        env={**os.environ, "PYTHONPATH": str(tree)},
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    version, rate = done.stdout.split()[-2:]
    return version, float(rate)


def eval_speed(
    tree: Path, agent: str, game: str, episodes: int, workers: int
) -> tuple[str, float, float]:
    """(saber's version, frames per second of wall time, wall seconds) of one whole
    ``saber eval`` command of ``tree``'s saber, in a fresh process."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "run"
        command = [sys.executable, "-m", "saber.cli", "eval", "--agent", agent, "--games",
                   game, "--episodes", str(episodes), "--workers", str(workers), "--seed",
                   "0", "--out", str(out), "--no-progress"]  # fmt: skip
        start = time.perf_counter()
        subprocess.run(command, env={**os.environ, "PYTHONPATH": str(tree)}, cwd=tree,
                       capture_output=True, check=True)  # fmt: skip
        wall = time.perf_counter() - start
        run = json.loads((out / "run.json").read_text())
        with open(out / "episodes.jsonl", encoding="utf-8") as lines:
            frames = sum(json.loads(line)["frames"] for line in lines if line.strip())
    return run["saber"], frames / wall, wall


def ratio_row(setting: str, versions: dict[str, str], rates: dict[str, list[float]],
              unit: str = "") -> list[str]:  # fmt: skip
    """One table row: each version's median speed and this one's over the other's."""
    ratios = [a / b for a, b in zip(rates["this"], rates["other"], strict=True)]
    return [
        setting,
        f"{versions['other']}: {statistics.median(rates['other']):,.0f}{unit}",
        f"{versions['this']}: {statistics.median(rates['this']):,.0f}{unit}",
        f"{statistics.median(ratios):.2f}x [{min(ratios):.2f}-{max(ratios):.2f}]",
    ]


def versions_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(
        description=VERSIONS,
        prog=f"{Path(__file__).name} versions",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--other", type=Path, required=True, help="the other version's checkout")
    parser.add_argument("--settings", default="Pong:8:1500,Breakout:32:400",
                        help="game:num_envs:steps of each setting, comma-separated")  # fmt: skip
    parser.add_argument("--evals", default="ppo-pong:pong:4:2,noop:pong:1:1",
                        help="agent:game:episodes:workers of each saber eval, comma-separated "
                             "('' for none)")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=6)
    add_options(parser, "versions-side-by-side")
    args = parser.parse_args(argv)
    measurement = Measurement(
        args,
        page="envs",
        order=5,
        title="saber against its previous version, side by side",
        benchmark=__file__,
    )
    trees = {"this": ROOT, "other": args.other.resolve()}
    rows = []
    for setting in filter(None, args.settings.split(",")):
        game, num_envs, steps = setting.split(":")
        runs = interleaved(
            {side: partial(speed, tree, game, int(num_envs), int(steps))
             for side, tree in trees.items()},
            args.rounds,
        )  # fmt: skip
        versions = {side: results[-1][0] for side, results in runs.items()}
        rates = {side: [rate for _, rate in results] for side, results in runs.items()}
        rows.append(ratio_row(f"vector {game} x{num_envs}", versions, rates))
        print(" | ".join(rows[-1]), flush=True)
    if rows:
        measurement.text(
            f"{args.rounds} rounds, each version in a fresh process per round, their order "
            "alternating; env-steps per second (median of the rounds) and this version's "
            "speed over the other's, median [min-max] of the rounds."
        )
        measurement.table(["setting", "other version", "this version", "this / other"], rows)
    rows = []
    for setting in filter(None, args.evals.split(",")):
        agent, game, episodes, workers = setting.split(":")
        evals = interleaved(
            {side: partial(eval_speed, tree, agent=agent, game=game, episodes=int(episodes),
                           workers=int(workers))
             for side, tree in trees.items()},
            args.rounds,
        )  # fmt: skip
        versions = {side: results[-1][0] for side, results in evals.items()}
        rates = {side: [rate for _, rate, _ in results] for side, results in evals.items()}
        walls = {side: [wall for _, _, wall in results] for side, results in evals.items()}
        label = (
            f"`saber eval --agent {agent} --games {game} --episodes {episodes} --workers {workers}`"
        )
        wall = (
            f"{statistics.median(walls['other']):.1f} s / {statistics.median(walls['this']):.1f} s"
        )
        rows.append([*ratio_row(label, versions, rates, " frames/s"), wall])
        print(" | ".join(rows[-1]), flush=True)
    if rows:
        measurement.text(
            f"Whole `saber eval` commands, {args.rounds} rounds, each version in a fresh "
            "process per round, their order alternating: frames per second of wall time "
            "(imports, start-up and the quick probe, workers, policy, store and report "
            "included; median of the rounds), this version's over the other's (median "
            "[min-max]), and the median wall time of a command (other / this)."
        )
        measurement.table(
            ["command", "other version", "this version", "this / other", "wall time"], rows
        )
    measurement.write()


MODES = {
    "profile": (profile_main, "where a vector step's wall time goes: the engine or this process"),
    "games": (games_main, "many games in one vector env: side by side, scaling, memory, start-up"),
    "versions": (versions_main, "the vector env and saber eval against another saber checkout"),
}


if __name__ == "__main__":
    run_modes(MODES, __doc__)
