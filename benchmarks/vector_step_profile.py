"""Where a vector step's wall time goes: the engine emulating, or this process working.

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

It reaches the engine through ``env.unwrapped._engine.ale`` (a private attribute) to wrap
``send``/``recv`` with timers, whose own cost is small beside a batch step's.
Run ``python benchmarks/vector_step_profile.py --game Pong --envs 8``; it writes
``benchmarks/results/vector-profile.json`` for docs/measurements/envs.md.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable
from typing import Any

import cv2
import gymnasium as gym
import numpy as np
from _results import Measurement, add_options

import saber
from saber.envs.vector import new_vector_engine
from saber.protocol import SaberSettings


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


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--game", default="Pong")
    parser.add_argument("--envs", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--env-steps", type=int, default=4000, help="timed env-steps per round")
    add_options(parser, "vector-profile")
    args = parser.parse_args()
    measurement = Measurement(
        args,
        page="envs",
        order=45,
        title="Where a vector step's wall time goes",
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


if __name__ == "__main__":
    main()
