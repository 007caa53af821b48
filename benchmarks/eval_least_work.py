"""``saber eval`` with its default settings against the least work for the same episodes.

For each policy and game, in one run, with interleaved rounds (the order of the two
alternates, so machine noise hits both alike), whole processes timed (wall clock from
start to exit, and CPU seconds of the processes and their children):

* ``least work``: a hand-written program with no harness: ``--processes`` processes
  (default 2, one per core), each playing its share of the episodes on
  ``gymnasium.make_vec("SABER/<Game>", num_envs=8, num_threads=1)`` with the same
  policy, one thread each for the policy (``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``,
  ``MKL_NUM_THREADS`` = 1 set before Python starts). Each sub-env plays episodes until
  the process's share is started, then steps idle until the last one ends, as the
  harness does; it records nothing, resets with gymnasium's autoreset (no seeded reset
  per episode) and checks nothing;
* ``saber eval``: ``saber eval --agent SPEC --games GAME --episodes N --out DIR`` with
  every other option at its default (workers, envs per worker, replays, report).

Frames per second are the emulator frames of the finished episodes over the whole
process's wall time (imports, start-up and the report included). The ratio is saber
eval's frames/s over the least work's (goal: >= 0.9x), the median of the per-round
ratios; the table also shows each side's median frames/s and CPU seconds.

Policies: ``random`` (SABER's random agent), ``torch`` (a NatureCNN in PyTorch written
without any thread setting, ``torch_nature_cnn:make_policy`` beside this script) and
``ppo-pong`` (the shipped trained agent, numpy); on a machine with a CUDA GPU,
``torch-cuda`` (the NatureCNN on the GPU, ``torch_nature_cnn:make_cuda_policy``: a copy
per process on each side, or one for every worker with ``--policy-process``). Before the
rounds, a short ``saber eval`` of ``torch_nature_cnn:thread_probe`` prints how many
intra-op threads PyTorch really uses in the harness's workers.

Default jobs: Pong (short for random actions: 3,700 frames an episode) and Freeway
(8,192 frames, every episode), 16 episodes each (2 processes x 8 sub-envs: the default
``saber eval`` batch), for ``random`` and ``torch``; Pong alone for ``ppo-pong``, whose
Pong episodes are long (about 26,000 frames), 8 episodes (a batch of 4 on each side).

    python benchmarks/eval_least_work.py [--rounds 3] [--policies random,torch,ppo-pong]
    python benchmarks/eval_least_work.py --games atari5 --episodes 100 --rounds 1
    python benchmarks/eval_least_work.py --policies torch --policy-process   # one policy copy

``--games`` takes comma-separated jobs; a group name (``atari5``) is one job of all its
games (one ``saber eval --games atari5``; the least work plays the games one after the
other). The full job, ``--games atari5 --episodes 100``, is opt-in for its cost: with
random actions it plays 2.9 million frames per side and round; the NatureCNN and
ppo-pong play other games than the one they were made for, and their episodes can run to
the 5-minute stuck timeout (18,000 frames) or beyond, many times the random agent's cost.
Before the rounds, one short ``saber eval`` warms the machine up: it reads the libraries
into the page cache and leaves the quick probe's pass on disk (saber.check.verdicts), so
the rounds measure what every run after a machine's first one costs. The first run of an
installed saber (or of an edited checkout) probes its env too.
Before the warm-up, saber's modules (and this folder's) are byte-compiled, as ``pip
install`` does for a user: a checkout installed in editable mode on a machine that sets
``PYTHONDONTWRITEBYTECODE=1`` (this development machine does) keeps no bytecode, and
every process compiles the saber modules it imports again (saber eval starts three
processes, the least work two). The ``__pycache__`` folders this
makes are removed at the end; ``--no-compile`` measures without them.
With more episodes than sub-envs the least work resets with gymnasium's autoreset,
while saber eval gives every episode its seeded reset (a ROM reload: the price of
per-episode seeds), so part of any gap there is the protocol's.

It writes ``benchmarks/results/eval-least-work.json`` for docs/measurements/eval.md.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from _results import Measurement, add_options

HERE = Path(__file__).resolve().parent
SPECS = {
    "random": "random",
    "torch": "torch_nature_cnn:make_policy",
    "ppo-pong": "ppo-pong",
    "torch-cuda": "torch_nature_cnn:make_cuda_policy",  # a GPU machine only
}
# Per policy: the games (comma-separated jobs) and episodes per game of the default run.
DEFAULT_JOBS = {
    "random": ("pong,freeway", 16),
    "torch": ("pong,freeway", 16),
    "ppo-pong": ("pong", 8),  # about 26,000 frames an episode: 8 episodes, a batch of 4 each
    "torch-cuda": ("pong", 16),
}
ONE_THREAD = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}


# ------------------------------------------------------------------ the least work (child)
def play(spec: str, games: list[str], episodes: list[int], envs: int, seed: int) -> int:
    """Play ``episodes[i]`` episodes of ``games[i]`` on one vector env each; return the
    frames of the finished episodes. What a user writes, without any harness."""
    import gymnasium
    import numpy as np

    import saber  # noqa: F401  (registers SABER/<Game>)
    from saber.games import resolve_games

    if spec == "random":
        rng = np.random.default_rng(seed)

        def policy(observations: np.ndarray) -> np.ndarray:
            return rng.integers(18, size=len(observations))
    else:
        from saber.harness.policies import load_policy

        policy = load_policy(spec)
    frames = 0
    for game, count in zip(games, episodes, strict=True):
        if count == 0:
            continue
        name = resolve_games(game)[0].env_id
        rows = min(envs, count)
        env = gymnasium.make_vec(name, num_envs=rows, num_threads=1)
        observations, _ = env.reset(seed=seed)
        start = getattr(policy, "start_episodes", None)
        if start is not None:
            start(np.arange(rows), seed + np.arange(rows))
        to_start = count - rows
        playing = np.ones(rows, dtype=bool)
        while playing.any():
            observations, _, _, _, info = env.step(policy(observations))
            if "_saber" not in info or not info["_saber"].any():
                continue
            for row in np.flatnonzero(info["_saber"]).tolist():
                if not playing[row]:
                    continue
                frames += int(info["saber"]["frames"][row])
                if to_start:
                    to_start -= 1
                    if start is not None:  # autoreset continues the row's episodes
                        start(np.array([row]), np.array([seed + 1000 + to_start]))
                else:
                    playing[row] = False
        env.close()
    return frames


# ------------------------------------------------------------------------- timing (parent)
def timed(commands: list[list[str]], env: dict[str, str]) -> tuple[float, float, list[str]]:
    """Run ``commands`` at once; (wall seconds until all exit, their CPU seconds, stdouts)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    processes = [
        subprocess.Popen(
            command, cwd=HERE, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for command in commands
    ]
    outputs = []
    for process, command in zip(processes, commands, strict=True):
        out, err = process.communicate()
        if process.returncode:
            sys.exit(f"failed ({process.returncode}): {' '.join(command)}\n{err[-3000:]}")
        outputs.append(out)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, outputs


def least_work(
    spec: str, games: list[str], episodes: int, processes: int, envs: int
) -> tuple[float, float, int]:
    shares = [episodes // processes + (k < episodes % processes) for k in range(processes)]
    commands = [
        [sys.executable, __file__, "--play", json.dumps([spec, games, [share] * len(games), envs])]
        for share in shares
    ]
    wall, cpu, outputs = timed(commands, {**os.environ, **ONE_THREAD})
    return wall, cpu, sum(int(out.split()[-1]) for out in outputs)


def eval_command(spec: str, games: str, episodes: int, out: Path, *extra: str) -> list[str]:
    """``saber eval --agent SPEC --games GAMES --episodes N --out OUT [EXTRA...]``."""
    saber = str(Path(sys.executable).with_name("saber"))
    options = ["--agent", spec, "--games", games, "--episodes", str(episodes), "--out", str(out)]
    return [saber, "eval", *options, *extra]


def saber_eval(
    spec: str, games: list[str], episodes: int, out: Path, extra: list[str]
) -> tuple[float, float, int]:
    command = eval_command(spec, ",".join(games), episodes, out, *extra)
    wall, cpu, _ = timed([command], dict(os.environ))
    frames = 0
    with (out / "episodes.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            if "error" not in record:
                frames += record["frames"]
    return wall, cpu, frames


@contextmanager
def compiled_as_installed(enabled: bool) -> Iterator[None]:
    """saber's modules and this folder's byte-compiled within the block, as ``pip install``
    leaves them; the ``__pycache__`` folders that were not there before removed after."""
    import saber

    roots = [Path(saber.__file__).parent, HERE]
    before = {path for root in roots for path in root.rglob("__pycache__")}
    try:
        if enabled:
            for root in roots:
                compileall.compile_dir(root, quiet=1)
        yield
    finally:
        for path in {path for root in roots for path in root.rglob("__pycache__")} - before:
            shutil.rmtree(path, ignore_errors=True)


def warm_up() -> None:
    """One short ``saber eval``, untimed (see the module's docstring)."""
    with tempfile.TemporaryDirectory() as tmp:
        command = eval_command("random", "pong", 2, Path(tmp) / "warm-up")
        subprocess.run(command, cwd=HERE, capture_output=True, check=True)


def thread_probe() -> str:
    """What PyTorch's intra-op pool is in each worker of a default ``saber eval``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "probe"
        spec = "torch_nature_cnn:thread_probe"
        command = eval_command(spec, "pong", 2, out, "--no-report", "--no-replays")
        done = subprocess.run(command, cwd=HERE, capture_output=True, text=True, check=False)
    lines = [line for line in done.stderr.splitlines() if "threads" in line]
    return "\n".join(lines) or done.stderr[-2000:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--play", help=argparse.SUPPRESS)  # a least-work process (internal)
    parser.add_argument("--policies", default="random,torch,ppo-pong")
    parser.add_argument("--games", default=None, help="comma-separated jobs [default: per policy]")
    parser.add_argument("--episodes", type=int, default=None, help="per game [default: per policy]")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--envs", type=int, default=8, help="sub-envs per least-work process")
    parser.add_argument(
        "--policy-process",
        action="store_true",
        help="saber eval with --policy-process (one copy of the policy for every worker)",
    )
    parser.add_argument(
        "--no-compile",
        action="store_true",
        help="leave saber's modules as installed (see the module's docstring)",
    )
    add_options(parser, "eval-least-work")
    args = parser.parse_args()
    if args.play:
        spec, games, episodes, envs = json.loads(args.play)
        print(play(spec, games, episodes, envs, seed=1000 * os.getpid()))
        return

    from saber.games import resolve_games

    policies = args.policies.split(",")
    jobs = [
        (policy, [game.ale_id for game in resolve_games(item)], args.episodes or episodes)
        for policy in policies
        for games, episodes in [DEFAULT_JOBS[policy]]
        for item in (args.games or games).split(",")
    ]
    with compiled_as_installed(not args.no_compile):
        measure(args, jobs)


def measure(args: argparse.Namespace, jobs: list[tuple[str, list[str], int]]) -> None:
    """Warm up, run the rounds and record the table."""
    policies = args.policies.split(",")
    measurement = Measurement(
        args,
        page="eval",
        order=20,
        title="`saber eval` against the least work",
        benchmark=__file__,
    )
    warm_up()
    print(f"bytecode: {'as installed' if args.no_compile else 'compiled (pip install)'}")
    print(f"load average before: {os.getloadavg()}", flush=True)
    if "torch" in policies:
        print("saber eval workers (thread_probe):", thread_probe(), sep="\n", flush=True)
    results: dict[tuple[int, str], list[tuple[float, float, int]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            for index, (policy, games, episodes) in enumerate(jobs):
                sides = ["least work", "saber eval"]
                if (round_ + index) % 2:
                    sides.reverse()
                for side in sides:
                    if side == "least work":
                        measured = least_work(
                            SPECS[policy], games, episodes, args.processes, args.envs
                        )
                    else:
                        out = Path(tmp) / f"run-{round_}-{index}"
                        extra = ["--policy-process"] if args.policy_process else []
                        measured = saber_eval(SPECS[policy], games, episodes, out, extra)
                    results.setdefault((index, side), []).append(measured)
                    wall, cpu, frames = measured
                    print(
                        f"round {round_ + 1} {policy:8} {','.join(games):12} {side:10} "
                        f"{frames:>9,} frames {wall:6.1f} s wall {cpu:6.1f} s CPU "
                        f"{frames / wall:8,.0f} frames/s",
                        flush=True,
                    )
    print(f"load average after: {os.getloadavg()}\n")
    measurement.text(
        f"{args.rounds} rounds, medians; ratio = saber eval frames/s over the least work's "
        "(the median of the rounds' ratios, and their range); bytecode "
        f"{'as installed' if args.no_compile else 'compiled (as pip install leaves it)'}"
        f"{'; saber eval with --policy-process' if args.policy_process else ''}:"
    )
    table = []
    for index, (policy, games, episodes) in enumerate(jobs):
        least, harness = results[(index, "least work")], results[(index, "saber eval")]
        ratios = [(h[2] / h[0]) / (w[2] / w[0]) for w, h in zip(least, harness, strict=True)]
        table.append(
            [
                policy,
                ",".join(games),
                episodes,
                f"{statistics.median(f / w for w, _, f in least):,.0f}",
                f"{statistics.median(f / w for w, _, f in harness):,.0f}",
                f"**{statistics.median(ratios):.2f}x**",
                f"{min(ratios):.2f}-{max(ratios):.2f}",
                f"{statistics.median(c for _, c, _ in least):.1f}",
                f"{statistics.median(c for _, c, _ in harness):.1f}",
            ]
        )
    measurement.table(
        [
            "policy",
            "games",
            "episodes",
            "least work frames/s",
            "saber eval frames/s",
            "ratio",
            "range",
            "least work CPU s",
            "saber eval CPU s",
        ],
        table,
        align=["left", "left", "right", "right", "right", "right", "left", "right", "right"],
    )
    measurement.write()


if __name__ == "__main__":
    main()
