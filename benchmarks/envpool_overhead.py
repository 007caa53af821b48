"""What saber.envpool and the vector env under it cost per batch step, emulation left out.

The emulation (ale-py's engine) is replaced by a stub that returns one fixed result, so
what is timed is the Python work alone, in CPU microseconds of the calling thread per
batch step (8 envs, random actions), the best of several repeats: a measure that a loaded
machine disturbs far less than a wall-clock rate.

  * adapter: ``saber.envpool``'s own work, the vector env's step stubbed: sync mode
    (Gymnasium's API and the old gym API when ``gym`` is installed) and async mode
    (``batch_size=4``: ``recv`` then ``send`` with ``info["env_id"]``).
  * vector env: ``SaberVectorEnv``'s own work per step (resize, frame stack, SABER rules,
    copies), the engine stubbed, and its parts: the bilinear resize of the 8 frames, the
    ordered copy of the stack, the rules, the action check.

Run ``python benchmarks/envpool_overhead.py``; it writes
``benchmarks/results/envpool-overhead.json`` for docs/measurements/envs.md.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from _results import Measurement, add_options

import saber  # noqa: F401  (registers SABER/<Game>)
from saber import envpool
from saber.envs.framestack import resize_bilinear_batch

NUM_ENVS = 8


def cpu_per_call(call: Callable[[], Any], calls: int = 3000, repeats: int = 7) -> float:
    """This thread's CPU microseconds per ``call()``, the best of ``repeats``."""
    best = float("inf")
    for _ in range(repeats):
        start = time.thread_time()
        for _ in range(calls):
            call()
        best = min(best, (time.thread_time() - start) / calls * 1e6)
    return best


def adapter_cost(env_type: str, batch_size: int = 0) -> float:
    """saber.envpool's CPU per batch step, each group's vector env stepping a stub."""
    pool = envpool.make("Breakout-v5", env_type, num_envs=NUM_ENVS, batch_size=batch_size)
    pool.reset()
    for vector in pool._groups:  # private: the stub replaces the vector env's step halves
        fixed = vector.step(np.zeros(vector.num_envs, dtype=np.int64))
        vector.step_async = lambda actions: None
        vector.step_wait = lambda fixed=fixed: (
            fixed[0],
            fixed[1].copy(),
            fixed[2].copy(),
            fixed[3].copy(),
            dict(fixed[4]),
        )
    actions = np.random.default_rng(0).integers(0, 18, pool.batch_size)
    if not pool.is_async:
        cost = cpu_per_call(lambda: pool.step(actions))
    else:
        for ids in pool._group_ids:
            pool.send(actions, ids)

        def recv_send() -> None:
            *_, info = pool.recv()
            pool.send(actions, info["env_id"])

        cost = cpu_per_call(recv_send)
        for _ in pool._groups:
            pool.recv()
    pool.close()
    return cost


def vector_costs() -> dict[str, float]:
    """SaberVectorEnv's CPU per batch step, its engine stubbed, and its parts."""
    env = gym.make_vec("SABER/Breakout", num_envs=NUM_ENVS)
    env.reset(seed=0)
    vector = env.unwrapped
    engine = vector._engine  # private: the stub replaces the engine's step
    no_rows = np.zeros(0, dtype=np.intp)
    frames, rewards, game_over, frame = engine.step(np.zeros(NUM_ENVS, np.int64), no_rows, [])
    engine.step = lambda *_: (frames, rewards.copy(), game_over.copy(), frame.copy())
    engine.send = lambda actions: None
    actions = np.random.default_rng(0).integers(0, 18, NUM_ENVS)
    resized = np.empty((NUM_ENVS, 84, 84), dtype=np.uint8)
    costs = {
        "vector env step": cpu_per_call(lambda: env.step(actions)),
        "  bilinear resize of the frames": cpu_per_call(
            lambda: resize_bilinear_batch(frames, 84, resized)
        ),
        "  ordered copy of the stack": cpu_per_call(vector._stack.observation),
        "  SABER rules": cpu_per_call(
            lambda: vector._apply_rules(rewards.copy(), game_over, frame, ~vector._ended)
        ),
        "  action check": cpu_per_call(lambda: vector._check_actions(actions)),
    }
    env.close()
    return costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_options(parser, "envpool-overhead")
    args = parser.parse_args()
    measurement = Measurement(
        args,
        page="envs",
        order=90,
        title="What saber.envpool and the vector env cost per batch step",
        benchmark=__file__,
    )
    rows = {"adapter, sync (gymnasium)": adapter_cost("gymnasium")}
    try:
        import gym as _  # noqa: F401  (the old package: env_type="gym")

        rows["adapter, sync (old gym API)"] = adapter_cost("gym")
    except ImportError:
        pass
    rows["adapter, async (batch 4)"] = adapter_cost("gymnasium", NUM_ENVS // 2)
    rows.update(vector_costs())
    measurement.table(
        [f"Breakout, {NUM_ENVS} envs, emulation stubbed", "CPU per batch step (us)"],
        [[name, f"{cost:.1f}"] for name, cost in rows.items()],
    )
    measurement.write()


if __name__ == "__main__":
    main()
