"""Steps per second of ``saber.jax`` inside ``jax.lax.scan``, against its peers, side by side.

Contenders (random actions, all 18; Pong and Breakout; 8 and 32 envs):
  * saber.jax: ``saber.jax.make(game, n)``, a jitted ``lax.scan`` of ``env.step``;
  * ale-py XLA: ale-py 0.12's own ``AtariVectorEnv(...).xla()`` with the closest settings
    (sticky 0.25, all 18 actions, no no-op or FIRE starts, no clipping, 4-frame stack of
    84 x 84; it resizes with INTER_AREA in C++ and knows no SABER rule), the same scan.
    Goal on CPU: saber.jax >= 0.9x;
  * make_vec: saber's numpy ``gymnasium.make_vec("SABER/<Game>", n)`` in a Python loop
    (for information: what a JAX user gains or loses by going through JAX).

The contenders run in short interleaved rounds (each continues its games where the last
round left them; compilation happens before the first round) and the table reports the
median and the spread (min-max) of the per-round ratios: on a shared machine speed drifts
over seconds, and adjacent short rounds pair up far better than long ones.
Run: ``python benchmarks/jax_throughput.py`` (``--steps``, ``--rounds``, ``--envs``); it
writes ``benchmarks/results/jax-cpu.json`` (``jax-gpu.json`` on a GPU) for
docs/measurements/envs.md (CPU) and docs/measurements/jax.md (GPU).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import gymnasium as gym
import jax
import jax.numpy as jnp
import numpy as np
from _results import Measurement, add_options
from ale_py.vector_env import AtariVectorEnv

import saber  # noqa: F401  (registers SABER/*)
from saber.jax import make

ROM_IDS = {"Pong": "pong", "Breakout": "breakout"}
Runner = Callable[[np.ndarray], None]


def saber_jax(game: str, num_envs: int) -> Runner:
    env = make(game, num_envs)
    state = [env.reset(0)[0]]

    @jax.jit
    def rollout(state, actions):
        def one(state, action):
            state, _, reward, *_ = env.step(state, action)
            return state, reward

        return jax.lax.scan(one, state, actions)

    def run(actions: np.ndarray) -> None:
        state[0], rewards = rollout(state[0], actions)
        rewards.block_until_ready()

    return run


def ale_xla(game: str, num_envs: int) -> Runner:
    env = AtariVectorEnv(
        ROM_IDS[game],
        num_envs,
        repeat_action_probability=0.25,
        full_action_space=True,
        noop_max=0,
        use_fire_reset=False,
        reward_clipping=False,
        max_num_frames_per_episode=21_600_000,
    )
    handle, reset, step = env.xla()
    handle, _ = reset(handle, seed=0)
    state = [handle]

    @jax.jit
    def rollout(handle, actions):
        def one(handle, action):
            handle, (_, reward, *_) = step(handle, action)
            return handle, reward

        return jax.lax.scan(one, handle, actions)

    def run(actions: np.ndarray) -> None:
        state[0], rewards = rollout(state[0], actions)
        rewards.block_until_ready()

    run.env = env  # type: ignore[attr-defined]  (keeps the engine alive)
    return run


def make_vec(game: str, num_envs: int) -> Runner:
    env = gym.make_vec(f"SABER/{game}", num_envs=num_envs)
    env.reset(seed=0)

    def run(actions: np.ndarray) -> None:
        for action in actions:
            env.step(action)

    return run


def measure(game: str, num_envs: int, steps: int, rounds: int) -> dict[str, list[float]]:
    """Per-round steps/s (agent steps of all envs) of each contender."""
    runners = {
        "saber.jax": saber_jax(game, num_envs),
        "ale-py XLA": ale_xla(game, num_envs),
        "make_vec": make_vec(game, num_envs),
    }
    rng = np.random.default_rng(0)
    actions = jnp.asarray(rng.integers(0, 18, (steps, num_envs)), jnp.int32)
    for run in runners.values():  # compile (and warm up) outside the rounds
        run(actions)
    numpy_actions = np.asarray(actions)
    speeds: dict[str, list[float]] = {name: [] for name in runners}
    for _ in range(rounds):
        for name, run in runners.items():
            start = time.perf_counter()
            run(numpy_actions if name == "make_vec" else actions)
            speeds[name].append(steps * num_envs / (time.perf_counter() - start))
    return speeds


def ratio(speeds: dict[str, list[float]], a: str, b: str) -> str:
    ratios = [x / y for x, y in zip(speeds[a], speeds[b], strict=True)]
    return f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=200, help="scan length of one round")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--envs", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--games", nargs="+", default=list(ROM_IDS), help="Pong, Breakout")
    add_options(parser, "jax-<platform>")
    args = parser.parse_args()
    platform = jax.devices()[0].platform
    measurement = Measurement(
        args,
        page="envs" if platform == "cpu" else "jax",
        order=30 if platform == "cpu" else 10,
        title=f"saber.jax against ale-py's XLA env and make_vec ({platform.upper()})",
        benchmark=__file__,
        name=f"jax-{platform}",
    )
    # Any spelling (pong, PONG, Pong): ale-py's XLA env wants its own, the keys of ROM_IDS.
    spellings = {name.lower(): name for name in ROM_IDS}
    unknown = [game for game in args.games if game.lower() not in spellings]
    if unknown:
        parser.error(f"unknown game(s) {', '.join(unknown)}: choose among {', '.join(ROM_IDS)}")
    args.games = [spellings[game.lower()] for game in args.games]
    measurement.text(
        f"jax {jax.__version__} on {platform}; {args.rounds} rounds of {args.steps} steps; "
        "median ratio of the rounds (min-max):"
    )
    rows = []
    for game in args.games:
        for num_envs in args.envs:
            speeds = measure(game, num_envs, args.steps, args.rounds)
            rows.append(
                [
                    f"{game} x{num_envs}",
                    f"{statistics.median(speeds['saber.jax']):,.0f}",
                    ratio(speeds, "saber.jax", "ale-py XLA"),
                    ratio(speeds, "saber.jax", "make_vec"),
                ]
            )
            print(" | ".join(rows[-1]), flush=True)
    measurement.table(
        [
            "game x envs",
            "saber.jax steps/s",
            "saber.jax / ale-py XLA (goal >= 0.9x)",
            "saber.jax / make_vec",
        ],
        rows,
    )
    measurement.write()


if __name__ == "__main__":
    main()
