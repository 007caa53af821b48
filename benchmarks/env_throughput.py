"""Steps per second of the SABER envs against their honest limits and their peers.

Single env (random actions, 4 frames per step), all contenders alive at once (none has threads):
  * tight loop: the least work any SABER step needs, written tightly: 4 ``ale.act``;
    ``getScreenGrayscale`` of the last two frames into preallocated buffers;
    ``np.maximum``; bilinear resize into a slot of a ring-buffer stack; an ordered copy
    of the stack. The honest limit: no SABER step can skip any of it. Goal: >= 0.95x.
  * bare loop (information): 4 ``ale.act`` per step and no screen read;
  * SABER: ``gymnasium.make("SABER/<Game>")``, the whole stack;
  * the Gymnasium stack users build today: ``AtariPreprocessing`` + ``FrameStackObservation``
    over ``ALE/<Game>-v5`` with ``frameskip=1`` and the full action set. Goal: >= 1.3x.

Vector env (8 and 32 envs by default), ONE vector env alive at a time (each is built, reset,
warmed up, timed and closed in turn; the order rotates each round), because two engines
alive at once share the cores and pull their ratio toward 1:
  * vector tight loop (the honest limit): ale-py's C++ engine ``ALEVectorInterface``
    configured as SABER needs it (210x160 max-pooled grayscale, sticky 0.25 per frame, 18
    actions, no resize), then ``cv2.resize(INTER_LINEAR)`` of each frame into a
    ring-buffer stack, then an ordered copy. Goal: SABER >= 0.95x.
  * engine alone (information): the same engine, its output unused: the ceiling of any
    vector env that leaves the resize and the stack to Python;
  * ale-py ``AtariVectorEnv`` with the closest settings (sticky 0.25, full actions, no
    no-op/FIRE starts, no clipping; it resizes with INTER_AREA in its C++ threads). Goal:
    SABER >= 1.0x.
  * envpool (when installed: ``pip install envpool``) with the closest settings (bilinear
    resize, sticky 0.25, full actions, ``noop_max=1``: its least). Information.
  * SABER: ``gymnasium.make_vec("SABER/<Game>", num_envs=n)``.

Each ratio is SABER's speed over the contender's within one round (adjacent runs pair up
far better than long ones on a shared machine), reported as the median over rounds with
the min-max spread. CPU use is the process's CPU time over the wall time of the timed
steps (cores busy). Run ``python benchmarks/env_throughput.py`` (``--quick`` for a short
run; ``--envs 16 32 64`` on a many-core machine); it writes
``benchmarks/results/env-headline.json`` for docs/measurements/envs.md.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import ale_py
import cv2
import gymnasium as gym
import numpy as np
from _results import Measurement, add_options, spread
from ale_py import ALEInterface, LoggerMode, roms

import saber
from saber.envs.engines import new_vector_engine
from saber.protocol import SaberSettings

gym.register_envs(ale_py)

GAMES = (("pong", "Pong"), ("breakout", "Breakout"))
SINGLE_GOALS = {"tight loop": 0.95, "bare ale.act loop": None, "Gymnasium stack": 1.3}
VECTOR_GOALS = {
    "vector tight loop": 0.95,
    "engine alone": None,
    "ale-py AtariVectorEnv": 1.0,
    "envpool": None,
}
WARMUP_STEPS = 10  # batch steps after the reset, untimed (first-touch allocations)


@dataclass
class Timings:
    """Per-round results of one contender: env-steps per second and cores busy."""

    speed: list[float] = field(default_factory=list)
    cores: list[float] = field(default_factory=list)


# ------------------------------------------------------------------ single env
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


def measure_single(
    contenders: dict[str, Callable[[np.ndarray], None]], steps: np.ndarray, rounds: int
) -> dict[str, Timings]:
    """Steps per second and cores busy of each contender, one entry per round (interleaved)."""
    results = {name: Timings() for name in contenders}
    for _ in range(rounds):
        for name, run in contenders.items():
            wall, cpu = time.perf_counter(), time.process_time()
            run(steps)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            results[name].speed.append(len(steps) / wall)
            results[name].cores.append(cpu / wall)
    return results


# ------------------------------------------------------------------ vector env
class VectorRun:
    """A built vector contender: ``step(actions)`` plays one batch step; ``close()`` frees it."""

    def __init__(self, step: Callable[[np.ndarray], None], close: Callable[[], None]) -> None:
        self.step = step
        self.close = close


def vector_tight_loop(game: str, num_envs: int, *, resize: bool = True) -> VectorRun:
    engine = new_vector_engine(game, num_envs, SaberSettings())
    engine.reset(np.arange(num_envs, dtype=np.int32), np.arange(num_envs, dtype=np.int32))
    strength = np.ones(num_envs, dtype=np.float32)
    stack = np.zeros((num_envs, 4, 84, 84), dtype=np.uint8)
    orders = [np.roll(np.arange(4), -(slot + 1)) for slot in range(4)]  # oldest first
    slot = 0

    def step(actions: np.ndarray) -> None:
        nonlocal slot
        engine.send(actions.astype(np.int32), strength)
        frames = engine.recv()[0]
        if resize:
            for row in range(num_envs):
                cv2.resize(
                    frames[row, 0], (84, 84), dst=stack[row, slot], interpolation=cv2.INTER_LINEAR
                )
            stack[:, orders[slot]]  # the observation: an ordered copy
            slot = (slot + 1) % 4

    def close() -> None:
        nonlocal engine
        del engine  # ale-py joins the engine's threads when it is released

    return VectorRun(step, close)


def gymnasium_vector(env: gym.vector.VectorEnv) -> VectorRun:
    env.reset(seed=0)
    return VectorRun(env.step, env.close)


def ale_vector(game: str, num_envs: int) -> VectorRun:
    env = ale_py.AtariVectorEnv(
        game,
        num_envs=num_envs,
        repeat_action_probability=0.25,
        full_action_space=True,
        noop_max=0,
        use_fire_reset=False,
        reward_clipping=False,
        episodic_life=False,
    )
    env.reset(seed=0)

    def close() -> None:
        nonlocal env
        del env  # AtariVectorEnv has no close that stops its threads: release it

    return VectorRun(env.step, close)


def envpool_vector(name: str, num_envs: int) -> VectorRun:
    import envpool  # optional: pip install envpool

    env = envpool.make_gym(
        f"{name}-v5",
        num_envs=num_envs,
        batch_size=num_envs,
        img_height=84,
        img_width=84,
        stack_num=4,
        gray_scale=True,
        frame_skip=4,
        noop_max=1,  # its least: 0 crashes envpool 1.2.5
        episodic_life=False,
        reward_clip=False,
        repeat_action_probability=0.25,
        use_fire_reset=False,
        full_action_space=True,
        use_inter_area_resize=False,  # bilinear, as SABER
        max_episode_steps=10**7,
        seed=0,
    )
    env.reset()

    def close() -> None:
        nonlocal env
        del env

    return VectorRun(env.step, close)


def vector_builders(game: str, name: str, num_envs: int) -> dict[str, Callable[[], VectorRun]]:
    builders: dict[str, Callable[[], VectorRun]] = {
        "SABER": lambda: gymnasium_vector(gym.make_vec(f"SABER/{name}", num_envs=num_envs)),
        "vector tight loop": lambda: vector_tight_loop(game, num_envs),
        "engine alone": lambda: vector_tight_loop(game, num_envs, resize=False),
        "ale-py AtariVectorEnv": lambda: ale_vector(game, num_envs),
    }
    try:
        import envpool  # noqa: F401
    except ImportError:
        pass
    else:
        builders["envpool"] = lambda: envpool_vector(name, num_envs)
    return builders


def measure_vector(
    builders: dict[str, Callable[[], VectorRun]], actions: np.ndarray, rounds: int
) -> dict[str, Timings]:
    """Each round builds, warms up, times and closes each contender in turn, one at a time."""
    results = {name: Timings() for name in builders}
    names = list(builders)
    num_envs = actions.shape[1]
    for round_index in range(rounds):
        shift = round_index % len(names)  # rotate the order: no contender always goes first
        for name in names[shift:] + names[:shift]:
            run = builders[name]()
            for batch in actions[:WARMUP_STEPS]:
                run.step(batch)
            wall, cpu = time.perf_counter(), time.process_time()
            for batch in actions:
                run.step(batch)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            run.close()
            del run
            gc.collect()  # the engine's threads end here, before the next one starts
            results[name].speed.append(num_envs * len(actions) / wall)
            results[name].cores.append(cpu / wall)
    return results


# ------------------------------------------------------------------ report
def verdict(values: list[float], goal: float | None) -> tuple[str, str]:
    if goal is None:
        return "-", "information"
    return f">= {goal}x", "met" if statistics.median(values) >= goal else "NOT MET"


def report(
    setting: str,
    results: dict[str, Timings],
    goals: dict[str, float | None],
    speeds: list[tuple[str, str, float, float]],
    rows: list[tuple[str, str, list[float], float | None]],
) -> None:
    """Append the speeds of one setting, and SABER's per-round ratio to each other contender."""
    saber_speed = results["SABER"].speed
    for contender, timing in results.items():
        speed, cores = statistics.median(timing.speed), statistics.median(timing.cores)
        speeds.append((setting, contender, speed, cores))
        if contender != "SABER":
            ratios = [s / o for s, o in zip(saber_speed, timing.speed, strict=True)]
            rows.append((setting, contender, ratios, goals[contender]))


def progress(setting: str) -> None:
    """One line on stderr per finished setting (a full run takes minutes)."""
    print(f"  {setting}: done at {time.strftime('%H:%M:%S')}", file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="a short run (about 4x shorter)")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 8; quick 3)")
    parser.add_argument(
        "--env-steps",
        type=int,
        help="timed env-steps per vector contender and round (default 4000; quick 1600)",
    )
    parser.add_argument(
        "--envs", type=int, nargs="+", default=[8, 32], help="vector sizes (default 8 32)"
    )
    parser.add_argument("--skip-single", action="store_true", help="vector env only")
    add_options(parser, "env-headline")
    args = parser.parse_args()
    measurement = Measurement(
        args,
        page="envs",
        order=20,
        title="The envs against their least work and their peers",
        benchmark=__file__,
    )
    rounds = args.rounds or (3 if args.quick else 8)
    env_steps = args.env_steps or (1600 if args.quick else 4000)
    single_steps, single_rounds = (200, 10) if args.quick else (400, 30)

    load = os.getloadavg()
    print(
        f"saber {saber.__version__}, ale-py {ale_py.__version__}, OpenCV {cv2.__version__} "
        f"({cv2.getNumThreads()} threads), Python {platform.python_version()}; "
        f"os.cpu_count() = {os.cpu_count()}; load average before: {load[0]:.2f}"
    )
    rng = np.random.default_rng(0)
    rows: list[tuple[str, str, list[float], float | None]] = []
    speeds: list[tuple[str, str, float, float]] = []
    if not args.skip_single:
        for game, name in GAMES:
            steps = rng.integers(0, 18, single_steps)
            results = measure_single(
                {
                    "SABER": single_env(gym.make(f"SABER/{name}")),
                    "tight loop": tight_loop(game),
                    "bare ale.act loop": bare_loop(game),
                    "Gymnasium stack": single_env(gymnasium_stack(name)),
                },
                steps,
                single_rounds,
            )
            report(f"single {name}", results, SINGLE_GOALS, speeds, rows)
            progress(f"single {name}")

    for game, name in GAMES:
        for num_envs in args.envs:
            actions = rng.integers(0, 18, (max(1, env_steps // num_envs), num_envs))
            results = measure_vector(vector_builders(game, name, num_envs), actions, rounds)
            report(f"vector {name} x{num_envs}", results, VECTOR_GOALS, speeds, rows)
            progress(f"vector {name} x{num_envs}")

    measurement.text(
        f"saber {saber.__version__}, ale-py {ale_py.__version__}, OpenCV {cv2.__version__} "
        f"({cv2.getNumThreads()} threads); {rounds} rounds, {env_steps} vector env-steps per "
        "round. Speeds, medians over the rounds:"
    )
    measurement.table(
        ["setting", "env", "env-steps/s (median)", "cores busy (median)"],
        [
            [setting, contender, f"{speed:,.0f}", f"{cores:.2f}"]
            for setting, contender, speed, cores in speeds
        ],
        align=["left", "left", "right", "right"],
    )
    measurement.text("SABER's speed over each contender's within a round:")
    table = []
    for setting, contender, ratios, goal in rows:
        target, outcome = verdict(ratios, goal)
        table.append([setting, contender, spread(ratios), target, outcome])
    measurement.table(
        ["setting", "SABER /", "ratio: median [min-max] over rounds", "goal", "verdict"],
        table,
        align=["left"] * 5,
    )
    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f} (1 min), on {os.cpu_count()} cores")
    measurement.write()


if __name__ == "__main__":
    main()
