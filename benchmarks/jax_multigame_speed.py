"""saber.jax's many-games env against the same games' single-game envs stepped by hand.

Contenders (random actions, all 18; the same games, the same rows per game):
  * many games: ``saber.jax.make(games, G * n)``, one jitted ``lax.scan`` of its step;
  * by hand: ``saber.jax.make(game, n)`` for each game, each game's own jitted
    ``lax.scan``, called one game after another (what a user writes without the
    many-games env).

Goal: the many-games env >= 1.0x (median of the per-round ratios): it steps each game by
that game's own step, so it should cost no more. The contenders run in short
interleaved rounds (compilation before the first); the table reports the median and
the spread (min-max) of the per-round ratios.
Run: ``python benchmarks/jax_multigame_speed.py`` (``--games``, ``--envs-per-game``,
``--steps``, ``--rounds``); writes ``benchmarks/results/jax-multigame-<platform>.json``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from _results import Measurement, add_options

from saber.jax import make

Runner = Callable[[jax.Array], None]


def _scanned(env: object) -> Callable:
    @jax.jit
    def rollout(state, actions):
        def one(state, action):
            state, _, reward, *_ = env.step(state, action)  # type: ignore[attr-defined]
            return state, reward

        return jax.lax.scan(one, state, actions)

    return rollout


def many_games(games: list[str], per_game: int) -> Runner:
    env = make(games, len(games) * per_game)
    rollout = _scanned(env)
    state = [env.reset(0)[0]]

    def run(actions: jax.Array) -> None:
        state[0], rewards = rollout(state[0], actions)
        rewards.block_until_ready()

    run.env = env  # type: ignore[attr-defined]  (keeps the engines alive)
    return run


def by_hand(games: list[str], per_game: int) -> Runner:
    envs = [make(game, per_game) for game in games]
    rollouts = [_scanned(env) for env in envs]
    states = [env.reset(0)[0] for env in envs]
    count = len(games)

    def run(actions: jax.Array) -> None:
        for g, rollout in enumerate(rollouts):
            states[g], rewards = rollout(states[g], actions[:, g::count])
            rewards.block_until_ready()

    run.envs = envs  # type: ignore[attr-defined]
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", default="atari5", help="a set's name or games a,b,c")
    parser.add_argument("--envs-per-game", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--steps", type=int, default=100, help="scan length of one round")
    parser.add_argument("--rounds", type=int, default=10)
    platform = jax.devices()[0].platform
    add_options(parser, f"jax-multigame-{platform}")
    args = parser.parse_args()
    from saber.games import resolve_games

    games = [game.ale_id for game in resolve_games(args.games.split(","))]
    measurement = Measurement(
        args,
        page="envs" if platform == "cpu" else "jax",
        order=35 if platform == "cpu" else 15,
        title=f"saber.jax: many games in one env against the games stepped by hand "
        f"({platform.upper()})",
        benchmark=__file__,
        name=f"jax-multigame-{platform}",
    )
    measurement.text(
        f"jax {jax.__version__} on {platform}; {', '.join(games)}; {args.rounds} rounds of "
        f"{args.steps} steps; median ratio of the rounds (min-max):"
    )
    rows = []
    for per_game in args.envs_per_game:
        runners = {"many": many_games(games, per_game), "by hand": by_hand(games, per_game)}
        rng = np.random.default_rng(0)
        num_envs = len(games) * per_game
        actions = jnp.asarray(rng.integers(0, 18, (args.steps, num_envs)), jnp.int32)
        for run in runners.values():  # compile (and warm up) outside the rounds
            run(actions)
        speeds: dict[str, list[float]] = {name: [] for name in runners}
        for _ in range(args.rounds):
            for name, run in runners.items():
                start = time.perf_counter()
                run(actions)
                speeds[name].append(args.steps * num_envs / (time.perf_counter() - start))
        ratios = [a / b for a, b in zip(speeds["many"], speeds["by hand"], strict=True)]
        rows.append(
            [
                f"{len(games)} games x {per_game}",
                f"{statistics.median(speeds['many']):,.0f}",
                f"{statistics.median(speeds['by hand']):,.0f}",
                f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})",
            ]
        )
        print(" | ".join(rows[-1]), flush=True)
        for run in runners.values():
            for env in getattr(run, "envs", [getattr(run, "env", None)]):
                env.close()
    measurement.table(
        ["games x envs each", "many games steps/s", "by hand steps/s", "ratio (goal >= 1.0x)"],
        rows,
    )
    measurement.write()


if __name__ == "__main__":
    main()
