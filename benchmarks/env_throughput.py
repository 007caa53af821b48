"""Steps per second of the SABER envs against their peers, measured side by side in one run.

Single env (Pong, Breakout; random actions, 4 frames per step):
  * bare loop: only what any agent needs from the emulator, 4 ``ale.act`` per step;
  * SABER: ``gymnasium.make("SABER/<Game>")``, the whole stack;
  * Gymnasium stack users build today: ``AtariPreprocessing`` + ``FrameStackObservation``
    over ``ALE/<Game>-v5`` with ``frameskip=1`` and the full action set.
Vector env (8 envs): ``gymnasium.make_vec("SABER/<Game>", 8)`` against ale-py's
``AtariVectorEnv`` with the closest settings (sticky 0.25, full actions, no no-op/FIRE
starts, no clipping; it resizes with INTER_AREA in C++).

The contenders run in many short interleaved rounds and the table reports the median of
the per-round ratios: on a shared machine the speed drifts over seconds, so adjacent short
rounds pair up far better than long ones (per-round ratios of 6-second rounds were seen
spread from 0.73 to 1.16; medians of 30 short rounds agreed within 0.04 between runs). Run: ``python benchmarks/env_throughput.py``
(``--steps`` and ``--rounds`` trade time for precision).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import ale_py
import gymnasium as gym
import numpy as np
from ale_py import ALEInterface, LoggerMode, roms

import saber  # noqa: F401  (registers SABER/*)

gym.register_envs(ale_py)


def bare_loop(game: str) -> Callable[[np.ndarray], None]:
    ale = ALEInterface()
    ale.setLoggerMode(LoggerMode.Error)
    ale.setFloat("repeat_action_probability", 0.25)
    ale.setInt("random_seed", 0)
    ale.loadROM(roms.get_rom_path(game))
    ale.reset_game()
    actions = [ale_py.Action(i) for i in range(18)]

    def run(steps: np.ndarray) -> None:
        for action in steps:
            ale_action = actions[action]
            for _ in range(4):
                ale.act(ale_action)
            if ale.game_over():
                ale.reset_game()

    return run


def single_env(env: gym.Env) -> Callable[[np.ndarray], None]:
    env.reset(seed=0)

    def run(steps: np.ndarray) -> None:
        for action in steps:
            _, _, terminated, truncated, _ = env.step(int(action))
            if terminated or truncated:
                env.reset()

    return run


def gymnasium_stack(name: str) -> gym.Env:
    env = gym.make(
        f"ALE/{name}-v5", frameskip=1, full_action_space=True, repeat_action_probability=0.25
    )
    env = gym.wrappers.AtariPreprocessing(env, noop_max=0, frame_skip=4, screen_size=84)
    return gym.wrappers.FrameStackObservation(env, 4)


def vector_env(env: gym.vector.VectorEnv) -> Callable[[np.ndarray], None]:
    env.reset(seed=0)

    def run(steps: np.ndarray) -> None:
        for actions in steps:
            env.step(actions)

    return run


def measure(
    contenders: dict[str, Callable[[np.ndarray], None]], steps: np.ndarray, rounds: int
) -> dict[str, list[float]]:
    """Seconds per step of each contender, one list entry per round (interleaved)."""
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, run in contenders.items():
            start = time.perf_counter()
            run(steps)
            times[name].append((time.perf_counter() - start) / len(steps))
    return times


def ratio(times: dict[str, list[float]], faster: str, slower: str) -> float:
    """Median over rounds of speed(faster) / speed(slower)."""
    return statistics.median(s / f for f, s in zip(times[faster], times[slower], strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--steps", type=int, default=400, help="agent steps per round and contender"
    )
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    rows = []
    for game, name in (("pong", "Pong"), ("breakout", "Breakout")):
        steps = rng.integers(0, 18, args.steps)
        times = measure(
            {
                "bare": bare_loop(game),
                "saber": single_env(gym.make(f"SABER/{name}")),
                "gymnasium": single_env(gymnasium_stack(name)),
            },
            steps,
            args.rounds,
        )
        rows.append(
            (f"single {name}", "SABER / bare ale.act loop", ratio(times, "saber", "bare"), 0.85)
        )
        rows.append(
            (f"single {name}", "SABER / Gymnasium stack", ratio(times, "saber", "gymnasium"), 1.3)
        )
        for contender, values in times.items():
            print(f"  {name:9s} {contender:10s} {1 / statistics.median(values):8.0f} steps/s")

        # Half as many batch steps as single steps: 4x the env-steps, for a steadier ratio.
        batch = rng.integers(0, 18, (args.steps // 2, 8))
        ale_vector = ale_py.AtariVectorEnv(
            game,
            num_envs=8,
            repeat_action_probability=0.25,
            full_action_space=True,
            noop_max=0,
            use_fire_reset=False,
            reward_clipping=False,
            episodic_life=False,
        )
        times = measure(
            {
                "saber": vector_env(gym.make_vec(f"SABER/{name}", num_envs=8)),
                "ale-py": vector_env(ale_vector),
            },
            batch,
            args.rounds,
        )
        rows.append(
            (
                f"vector {name} x8",
                "SABER / ale-py AtariVectorEnv",
                ratio(times, "saber", "ale-py"),
                0.9,
            )
        )
        for contender, values in times.items():
            print(
                f"  {name:9s} vec-{contender:6s} {8 / statistics.median(values):8.0f} env-steps/s"
            )

    print("\n| setting | ratio | measured | goal |\n|---|---|---|---|")
    for setting, what, value, goal in rows:
        print(
            f"| {setting} | {what} | {value:.2f}x | >= {goal}x {'ok' if value >= goal else 'MISSED'} |"
        )


if __name__ == "__main__":
    main()
