"""saber.jax: its speed inside ``jax.lax.scan`` against its peers, its many-games env against
the games stepped by hand, the PQN example's update, unrolled against scanned, and this
checkout against another saber version.

    python benchmarks/jax_speed.py envs [--games Pong Breakout --envs 8 32]
    python benchmarks/jax_speed.py games
    python benchmarks/jax_speed.py pqn [--num-envs 32 --rounds 3]
    python benchmarks/jax_speed.py versions --other ../saber-0.5

Each mode writes ``<name>-<platform>.json`` (cpu, gpu) for docs/measurements/ (``versions``:
``jax-versions.json``); ``MODE --help`` says how it measures.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

import gymnasium as gym
import numpy as np

try:
    import jax
    import jax.numpy as jnp
except ImportError:
    raise SystemExit("benchmarks/jax_speed.py needs JAX: pip install 'saber-ale[jax]'") from None
from _results import ROOT, Measurement, add_options, interleaved, run_modes, spread, timed
from ale_py.vector_env import AtariVectorEnv

import saber  # noqa: F401  (registers SABER/*)
from saber.jax import make

ENVS = """Steps per second of ``saber.jax`` inside ``jax.lax.scan``, against its peers, side by side.

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
over seconds, and adjacent short rounds pair up far better than long ones. Writes
``jax-cpu.json`` (``jax-gpu.json`` on a GPU).
"""

GAMES = """saber.jax's many-games env against the same games' single-game envs stepped by hand.

Contenders (random actions, all 18; the same games, the same rows per game):
  * many games: ``saber.jax.make(games, G * n)``, one jitted ``lax.scan`` of its step;
  * by hand: ``saber.jax.make(game, n)`` for each game, each game's own jitted
    ``lax.scan``, called one game after another (what a user writes without the
    many-games env).

Goal: the many-games env >= 1.0x (median of the per-round ratios): it steps each game by
that game's own step, so it should cost no more. The contenders run in short
interleaved rounds (compilation before the first); the table reports the median and
the spread (min-max) of the per-round ratios. Writes ``jax-multigame-<platform>.json``.
"""

PQN = """Why examples/pqn_jax.py unrolls its gradient steps on CPU: one PQN update, both ways.

XLA's CPU backend runs the gradients of convolutions many times slower inside a while
loop (``jax.lax.scan``) than unrolled. The example therefore, on CPU, traces the epochs
and minibatches as a Python loop and compiles one update per call (``--unroll yes``);
on GPUs it keeps the scans (``--unroll no``: ``--chunk-updates`` updates in one call).
This mode compiles the example's update both ways on saber.jax and times them in
interleaved rounds (the machine's speed drifts; adjacent rounds pair up), printing the
median per-round ratio with its range, and the frames per second of the compiled loop
(env steps, acting and learning). Writes ``pqn-cpu.json`` (``pqn-gpu.json`` on a GPU).
"""

VERSIONS = """This checkout's saber.jax against another saber version's, side by side in one run.

Each setting (``--settings game:num_envs:steps``) is the ``envs`` mode's headline program:
``saber.jax.make(game, num_envs)`` and a jitted ``lax.scan`` of ``steps`` steps of
``env.step`` with random actions (all 18). Each round runs both versions, each in a fresh
process, their order alternating from round to round, so that both see the same machine.
In its process a version makes the env, resets it and runs the scan once (compilation
included: the start), then times ``--scans`` more scans: env-steps per second (steps of
all envs). The table gives each version's median of the rounds and this version's over
the other's, median [min-max] of the per-round ratios (above 1: this version is faster),
and the median start in seconds (other / this).

The other version is a checkout of its own, e.g. saber 0.5, the commit before 0.6's
work: ``git worktree add ../saber-0.5 6ffbae4``, then ``versions --other ../saber-0.5``.
Its saber is imported from ``--other`` (``PYTHONPATH``, the process started in that
folder), with this environment's JAX, ale-py and numpy, and both run this file's program,
so the run compares saber's own code and nothing else. Writes ``jax-versions.json``; run
it on a machine with nothing else running.
"""

# ------------------------------------------------------------ envs
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


def envs_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(
        description=ENVS,
        prog=f"{Path(__file__).name} envs",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--steps", type=int, default=200, help="scan length of one round")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--envs", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--games", nargs="+", default=list(ROM_IDS), help="Pong, Breakout")
    add_options(parser, "jax-<platform>")
    args = parser.parse_args(argv)
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


# ------------------------------------------------------------ games
ScanRunner = Callable[[jax.Array], None]


def _scanned(env: object) -> Callable:
    @jax.jit
    def rollout(state, actions):
        def one(state, action):
            state, _, reward, *_ = env.step(state, action)  # type: ignore[attr-defined]
            return state, reward

        return jax.lax.scan(one, state, actions)

    return rollout


def many_games(games: list[str], per_game: int) -> ScanRunner:
    env = make(games, len(games) * per_game)
    rollout = _scanned(env)
    state = [env.reset(0)[0]]

    def run(actions: jax.Array) -> None:
        state[0], rewards = rollout(state[0], actions)
        rewards.block_until_ready()

    run.env = env  # type: ignore[attr-defined]  (keeps the engines alive)
    return run


def by_hand(games: list[str], per_game: int) -> ScanRunner:
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


def games_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(
        description=GAMES,
        prog=f"{Path(__file__).name} games",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--games", default="atari5", help="a set's name or games a,b,c")
    parser.add_argument("--envs-per-game", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--steps", type=int, default=100, help="scan length of one round")
    parser.add_argument("--rounds", type=int, default=10)
    platform = jax.devices()[0].platform
    add_options(parser, f"jax-multigame-{platform}")
    args = parser.parse_args(argv)
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


# ------------------------------------------------------------ pqn
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "pqn_jax.py"


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pqn_jax", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["pqn_jax"] = module
    spec.loader.exec_module(module)
    return module


def compiled_update(pqn: ModuleType, argv: list[str], unroll: str) -> tuple[Any, Any]:
    """The example's compiled call for one update, and a runner to feed it (compiled)."""
    args = pqn.parse_args([*argv, "--unroll", unroll, "--chunk-updates", "1"])
    env = pqn.make(args.game, num_envs=args.num_envs, clip_rewards=True)
    chunk, optimizer, _ = pqn.make_chunk(env, args, total_updates=100)
    runner = pqn.start(env, optimizer, args.seed)
    runner, episodes = chunk(runner)  # compile
    jax.block_until_ready(episodes)
    return chunk, runner


def pqn_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(
        description=PQN,
        prog=f"{Path(__file__).name} pqn",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--game", default="Pong")
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--num-steps", type=int, default=32)
    parser.add_argument("--minibatches", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    add_options(parser, "pqn-<platform>")
    options = parser.parse_args(argv)
    platform = jax.devices()[0].platform
    measurement = Measurement(
        options,
        page="jax",
        order=20,
        title=f"The PQN update on a {platform.upper()}: unrolled against lax.scan",
        benchmark=__file__,
        name=f"pqn-{platform}",
    )
    argv = [
        *("--game", options.game, "--num-envs", str(options.num_envs)),
        *("--num-steps", str(options.num_steps), "--minibatches", str(options.minibatches)),
        *("--epochs", str(options.epochs)),
    ]
    pqn = load_example()
    contenders = {way: compiled_update(pqn, argv, way) for way in ("yes", "no")}
    seconds: dict[str, list[float]] = {way: [] for way in contenders}
    for _ in range(options.rounds):
        for way, (chunk, runner) in contenders.items():
            start = time.perf_counter()
            runner, episodes = chunk(runner)
            jax.block_until_ready(episodes)
            seconds[way].append(time.perf_counter() - start)
            contenders[way] = (chunk, runner)
    ratios = [no / yes for yes, no in zip(seconds["yes"], seconds["no"], strict=True)]
    frames = 4 * options.num_envs * options.num_steps  # per update (SABER: 4 frames a step)
    measurement.text(
        f"{jax.devices()[0]}, jax {jax.__version__}; one update of examples/pqn_jax.py "
        f"({options.num_envs} envs x {options.num_steps} steps, {options.epochs} epochs x "
        f"{options.minibatches} minibatches) compiled both ways, {options.rounds} interleaved "
        "rounds:"
    )
    rows = []
    for way, label in (("yes", "unrolled (--unroll yes)"), ("no", "lax.scan (--unroll no)")):
        median = statistics.median(seconds[way])
        rows.append([label, f"{median:.2f}", f"{frames / median:,.0f}"])
    measurement.table(["update", "median s", "frames/s"], rows)
    measurement.text(
        f"scan / unrolled time: median {statistics.median(ratios):.1f}x "
        f"(rounds {min(ratios):.1f}x to {max(ratios):.1f}x)."
    )
    measurement.write()


# ------------------------------------------------------------ versions
# One round of one version, in a fresh process started in its checkout: this file's
# saber_jax (the envs mode's program) with that version's saber.jax.
ROUND = """
import sys, time
sys.path.insert(0, sys.argv[1])
import jax, jax.numpy as jnp, numpy as np, saber
from jax_speed import saber_jax
game, num_envs, steps, scans = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
actions = jnp.asarray(np.random.default_rng(0).integers(0, 18, (steps, num_envs)), jnp.int32)
start = time.perf_counter()
run = saber_jax(game, num_envs)
run(actions)
begun = time.perf_counter()
for _ in range(scans):
    run(actions)
rate = num_envs * steps * scans / (time.perf_counter() - begun)
print(saber.__version__, jax.devices()[0].platform, begun - start, rate)
"""


def one_round(
    tree: Path, setting: tuple[str, int, int], scans: int
) -> tuple[str, str, float, float]:
    """(saber's version, JAX's platform, start seconds, env-steps per second) of one round
    of ``tree``'s saber.jax, in a fresh process."""
    game, num_envs, steps = setting
    command = [sys.executable, "-c", ROUND, str(Path(__file__).resolve().parent), game,
               str(num_envs), str(steps), str(scans)]  # fmt: skip
    _, _, (out,) = timed([command], {**os.environ, "PYTHONPATH": str(tree)}, tree)
    version, platform, start, rate = out.split()[-4:]
    return version, platform, float(start), float(rate)


def parse_settings(parser: argparse.ArgumentParser, text: str) -> list[tuple[str, int, int]]:
    """``Pong:8:200,Breakout:32:200`` -> ``[("Pong", 8, 200), ("Breakout", 32, 200)]``."""
    from saber.errors import UnknownGameError
    from saber.games import get_game

    settings = []
    for setting in filter(None, text.split(",")):
        game, _, rest = setting.partition(":")
        num_envs, _, steps = rest.partition(":")
        if not (game and num_envs.isdigit() and steps.isdigit() and int(num_envs) and int(steps)):
            parser.error(f"--settings {setting!r}: write game:num_envs:steps, e.g. Pong:8:200")
        try:
            get_game(game)
        except UnknownGameError as error:
            parser.error(f"--settings {setting!r}: {error}")
        settings.append((game, int(num_envs), int(steps)))
    if not settings:
        parser.error("--settings is empty: give game:num_envs:steps, e.g. Pong:8:200")
    return settings


def versions_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(
        description=VERSIONS,
        prog=f"{Path(__file__).name} versions",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--other", type=Path, required=True,
                        help="the other version's checkout (git worktree add ../saber-0.5 "
                             "6ffbae4)")  # fmt: skip
    parser.add_argument("--settings", default="Pong:8:200,Breakout:32:200",
                        help="game:num_envs:steps (the scan's length) of each setting, "
                             "comma-separated (default: %(default)s)")  # fmt: skip
    parser.add_argument("--scans", type=int, default=5, help="scans timed in each round's process")
    parser.add_argument("--rounds", type=int, default=6)
    add_options(parser, "jax-versions")
    args = parser.parse_args(argv)
    settings = parse_settings(parser, args.settings)
    if args.scans < 1 or args.rounds < 1:
        parser.error("--scans and --rounds take 1 or more")
    other = args.other.resolve()
    if not (other / "saber" / "jax" / "__init__.py").is_file():
        parser.error(f"--other {args.other} holds no saber.jax: make the other checkout with "
                     "git worktree add ../saber-0.5 6ffbae4")  # fmt: skip
    trees = {"this": ROOT, "other": other}
    measurement = Measurement(
        args, page="envs", order=6, title="saber.jax against its previous version, side by side",
        benchmark=__file__, name="jax-versions",
    )  # fmt: skip
    rows, found = [], {}
    for setting in settings:
        runs = interleaved(
            {side: partial(one_round, tree, setting, args.scans)
             for side, tree in trees.items()},
            args.rounds,
        )  # fmt: skip
        versions = {side: results[-1][0] for side, results in runs.items()}
        platform = runs["this"][-1][1]
        measurement.page = "envs" if platform == "cpu" else "jax"
        rates = {side: [result[3] for result in results] for side, results in runs.items()}
        starts = {side: statistics.median(r[2] for r in results) for side, results in runs.items()}
        ratios = [a / b for a, b in zip(rates["this"], rates["other"], strict=True)]
        rows.append([
            f"{setting[0]} x{setting[1]}, scan of {setting[2]}",
            f"{versions['other']}: {statistics.median(rates['other']):,.0f}",
            f"{versions['this']}: {statistics.median(rates['this']):,.0f}",
            spread(ratios),
            f"{starts['other']:.1f} s / {starts['this']:.1f} s",
        ])  # fmt: skip
        print(" | ".join(rows[-1]), flush=True)
        found[":".join(map(str, setting))] = runs
    measurement.text(
        f"saber.jax of this checkout against {other}, jax {jax.__version__} on {platform}: "
        f"{args.rounds} round(s), each version in a fresh process per round, their order "
        f"alternating; {args.scans} jitted `lax.scan`(s) timed per round, env-steps per second "
        "(median of the rounds), this version's over the other's (median [min-max] of the "
        "rounds), and the median start: make, reset, compile and the first scan (other / this)."
    )
    measurement.table(["setting", "other version", "this version", "this / other", "start"], rows)
    measurement.data.update(rounds=found)
    measurement.write()


MODES = {
    "envs": (envs_main, "saber.jax against ale-py's XLA env and make_vec, in lax.scan"),
    "games": (games_main, "the many-games env against each game's own env stepped by hand"),
    "pqn": (pqn_main, "examples/pqn_jax.py's update compiled unrolled and as lax.scan"),
    "versions": (versions_main, "saber.jax in lax.scan against another saber checkout's"),
}


if __name__ == "__main__":
    run_modes(MODES, __doc__)
