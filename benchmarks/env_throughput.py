"""Steps per second of the SABER envs against their peers, measured side by side in one run.

Single env (Pong, Breakout; random actions, 4 frames per step):
  * tight loop: the least work any SABER step needs, written tightly: 4 ``ale.act``;
    ``getScreenGrayscale`` of the last two frames into preallocated buffers;
    ``np.maximum``; bilinear resize into a slot of a ring-buffer stack; an ordered copy
    of the stack. The honest limit: no SABER step can skip any of it. Goal: >= 0.95x.
  * bare loop (for information, no goal): 4 ``ale.act`` per step and no screen read;
  * SABER: ``gymnasium.make("SABER/<Game>")``, the whole stack;
  * Gymnasium stack users build today: ``AtariPreprocessing`` + ``FrameStackObservation``
    over ``ALE/<Game>-v5`` with ``frameskip=1`` and the full action set.
Vector env (8 envs): ``gymnasium.make_vec("SABER/<Game>", 8)`` against ale-py's
``AtariVectorEnv`` with the closest settings (sticky 0.25, full actions, no no-op/FIRE
starts, no clipping; it resizes with INTER_AREA in C++). Goal: >= 0.97x.

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
import cv2
import gymnasium as gym
import numpy as np
from ale_py import ALEInterface, LoggerMode, roms

import saber  # noqa: F401  (registers SABER/*)

gym.register_envs(ale_py)


def _ale(game: str) -> ALEInterface:
    """An emulator set as SABER's (sticky actions 0.25), the game started."""
    ale = ALEInterface()
    ale.setLoggerMode(LoggerMode.Error)
    ale.setFloat("repeat_action_probability", 0.25)
    ale.setInt("random_seed", 0)
    ale.loadROM(roms.get_rom_path(game))
    ale.reset_game()
    return ale


def bare_loop(game: str) -> Callable[[np.ndarray], None]:
    ale = _ale(game)
    actions = [ale_py.Action(i) for i in range(18)]

    def run(steps: np.ndarray) -> None:
        for action in steps:
            ale_action = actions[action]
            for _ in range(4):
                ale.act(ale_action)
            if ale.game_over():
                ale.reset_game()

    return run


def tight_loop(game: str) -> Callable[[np.ndarray], None]:
    ale = _ale(game)
    actions = [ale_py.Action(i) for i in range(18)]
    height, width = ale.getScreenDims()
    last = np.zeros((height, width), dtype=np.uint8)
    second_last = np.zeros((height, width), dtype=np.uint8)
    stack = np.zeros((4, 84, 84), dtype=np.uint8)
    orders = [np.roll(np.arange(4), -(slot + 1)) for slot in range(4)]  # oldest first
    slot = 0

    def run(steps: np.ndarray) -> None:
        nonlocal slot
        act, grayscale, resize, maximum = ale.act, ale.getScreenGrayscale, cv2.resize, np.maximum
        for action in steps:
            ale_action = actions[action]
            act(ale_action)
            act(ale_action)
            act(ale_action)
            grayscale(second_last)
            act(ale_action)
            grayscale(last)
            maximum(last, second_last, out=last)
            resize(last, (84, 84), dst=stack[slot], interpolation=cv2.INTER_LINEAR)
            stack[orders[slot]]  # the observation: an ordered copy
            slot = (slot + 1) % 4
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
                "tight": tight_loop(game),
                "bare": bare_loop(game),
                "saber": single_env(gym.make(f"SABER/{name}")),
                "gymnasium": single_env(gymnasium_stack(name)),
            },
            steps,
            args.rounds,
        )
        rows.append((f"single {name}", "SABER / tight loop", ratio(times, "saber", "tight"), 0.95))
        rows.append(
            (
                f"single {name}",
                "SABER / bare ale.act loop (information)",
                ratio(times, "saber", "bare"),
                None,
            )
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
                0.97,
            )
        )
        for contender, values in times.items():
            print(
                f"  {name:9s} vec-{contender:6s} {8 / statistics.median(values):8.0f} env-steps/s"
            )

    print("\n| setting | ratio | measured | goal |\n|---|---|---|---|")
    for setting, what, value, goal in rows:
        verdict = "-" if goal is None else f">= {goal}x {'ok' if value >= goal else 'MISSED'}"
        print(f"| {setting} | {what} | {value:.2f}x | {verdict} |")


if __name__ == "__main__":
    main()
