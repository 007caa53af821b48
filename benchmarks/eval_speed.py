"""``saber eval`` against the least work for the same episodes, how its defaults are chosen,
what recording replays costs, and what the quick probe adds to its start-up.

    python benchmarks/eval_speed.py least-work [--policies random,torch,ppo-pong]
    python benchmarks/eval_speed.py defaults [--configs 2x4,2x8,2x16,1x8]
    python benchmarks/eval_speed.py replays [--agent random --game pong]
    python benchmarks/eval_speed.py startup [--rounds 5]

Each mode writes its result file for docs/measurements/eval.md (``startup``:
docs/measurements/check.md); ``MODE --help`` says how it measures. Run it from the
repository's root; the least work and the PyTorch policies are in ``benchmarks/programs/``.
"""

from __future__ import annotations

import argparse
import bz2
import compileall
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from _results import Measurement, add_options, cpu_seconds, run_modes, timed

import saber
from saber.harness import Inline, Processes, Recording, evaluate
from saber.protocol.replay import read_replay

LEAST_WORK = """``saber eval`` with its defaults against the least work for the same episodes.

Per policy and game, interleaved rounds (the order alternates), whole processes timed
(wall clock, and CPU seconds of the processes and their children):

* least work: ``--processes`` processes (one per core) of ``programs/least_work.py``,
  each playing its share of the episodes with the same policy on one thread;
* saber eval: ``saber eval --agent SPEC --games GAME --episodes N --out DIR``, every
  other option at its default.

Frames per second are the finished episodes' emulator frames over the process's wall
time (start-up and report included); the ratio (goal >= 0.9x) is the median of the
rounds' ratios. Policies: ``random``, ``torch`` (a NatureCNN in PyTorch with no thread
setting, benchmarks/programs/torch_nature_cnn.py), ``ppo-pong`` and, on a CUDA machine,
``torch-cuda`` (``--policy-process``: one copy for every worker). ``--games`` takes
comma-separated jobs; a group (``atari5``) is one job. One untimed ``saber eval`` warms
the machine up first, and saber's modules are byte-compiled as ``pip install`` leaves
them (``--no-compile``: not). Writes ``eval-least-work.json`` (``--policy-process``:
``policy-process-<platform>.json``).
"""

DEFAULTS = """Which ``--workers`` and ``--envs-per-worker`` ``saber eval`` should default to.

Per policy, ``saber eval`` with each ``--workers W --envs-per-worker E`` of ``--configs``
(``WxE``; a trailing ``p`` adds ``--policy-process``), in interleaved rounds, whole
processes timed: frames per second of wall time, and CPU seconds. Real policies (the
trained ``ppo-pong``, a NatureCNN in PyTorch), on Freeway by default: its episodes all
last 8,192 frames, so every configuration plays the same frames. Writes
``eval-defaults.json``.
"""

REPLAYS = """What recording every episode's replay costs, and a replay's bytes per 1,000 steps.

The same episodes evaluated with and without replays, in this process (``Inline``: every
file written and fsynced on the timed path, the worst case) or with ``--workers N``
(``Processes``), in ABBA-interleaved rounds; the cost is the median of the rounds'
``1 - with / without`` (goal: at most 3%), in frames per wall second and per CPU second.
Sizes, from the last round's replays: bytes per 1,000 agent steps (whole files and the
compressed actions alone) beside the entropy floor of uniform actions over 18 and the
policy's own action entropy (orders 0 and 1). ``--sizes RUN``: the sizes of a run
``saber eval`` made. Writes ``replay-overhead.json`` (``--sizes``: ``replay-sizes.json``).
"""

STARTUP = """What the quick probe (saber.check) adds to the start-up of ``saber eval``.

Each round runs, in fresh processes, a 1-episode NOOP evaluation of Pong in this process
(``workers=0``) with the probe and without (``EnvOptions(allow_non_saber=True)``),
interleaved: the median and spread of the differences and ratios. It also times the
probe alone, cold (a fresh process) and warm. A 1-episode run is the worst case for the
ratio. Writes ``check-startup.json`` (docs/measurements/check.md).
"""

# ------------------------------------------------------------ least-work
HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"  # the least work and the PyTorch policies: the runs' folder


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


def least_work(
    spec: str, games: list[str], episodes: int, processes: int, envs: int
) -> tuple[float, float, int]:
    """The least work's processes at once: (wall seconds, CPU seconds, frames played)."""
    shares = [episodes // processes + (k < episodes % processes) for k in range(processes)]
    program = str(PROGRAMS / "least_work.py")
    commands = [
        [sys.executable, program, json.dumps([spec, games, [share] * len(games), envs])]
        for share in shares
    ]
    wall, cpu, outputs = timed(commands, {**os.environ, **ONE_THREAD}, PROGRAMS)
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
    wall, cpu, _ = timed([command], os.environ, PROGRAMS)
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
    """One short ``saber eval``, untimed: the page cache and the probe's verdict warm."""
    with tempfile.TemporaryDirectory() as tmp:
        timed([eval_command("random", "pong", 2, Path(tmp) / "warm-up")], os.environ, PROGRAMS)


def thread_probe() -> str:
    """What PyTorch's intra-op pool is in each worker of a default ``saber eval``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "probe"
        spec = "torch_nature_cnn:thread_probe"
        command = eval_command(spec, "pong", 2, out, "--no-report", "--no-replays")
        done = subprocess.run(command, cwd=PROGRAMS, capture_output=True, text=True, check=False)
    lines = [line for line in done.stderr.splitlines() if "threads" in line]
    return "\n".join(lines) or done.stderr[-2000:]


def least_work_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(
        description=LEAST_WORK,
        prog=f"{Path(__file__).name} least-work",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
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
    args = parser.parse_args(argv)
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
    on_gpu = "torch-cuda" in policies
    titles = {  # the pages' headings (the guide links to them)
        False: (20, "Against the least work", None),
        True: (50, "Measured on a GPU", "policy-process-gpu")
        if on_gpu
        else (40, "The policy process: design and measurements on a CPU", "policy-process-cpu"),
    }
    order, title, name = titles[args.policy_process]
    measurement = Measurement(
        args, page="eval", order=order, title=title, benchmark=__file__, name=name
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
    columns = "policy|games|episodes|least work frames/s|saber eval frames/s|ratio|range"
    columns += "|least work CPU s|saber eval CPU s"
    align = ["left", "left", "right", "right", "right", "right", "left", "right", "right"]
    measurement.table(columns.split("|"), table, align=align)
    measurement.write()


# ------------------------------------------------------------ defaults
def run_config(
    spec: str, game: str, episodes: int, config: tuple[int, int, bool], out: Path
) -> tuple:
    workers, envs, policy_process = config
    options = ["--workers", str(workers), "--envs-per-worker", str(envs)]
    if policy_process:
        options.append("--policy-process")
    command = eval_command(spec, game, episodes, out, *options)
    wall, cpu, _ = timed([command], os.environ, PROGRAMS)
    with (out / "episodes.jsonl").open(encoding="utf-8") as lines:
        frames = sum(json.loads(line).get("frames", 0) for line in lines)
    return wall, cpu, frames


def defaults_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(
        description=DEFAULTS,
        prog=f"{Path(__file__).name} defaults",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--policies", default="torch,ppo-pong", help="random, torch, ppo-pong or agent specs"
    )
    parser.add_argument("--game", default="freeway")
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--configs", default="2x4,2x8,2x16,1x8", help="WORKERSxENVS[p],... (p: --policy-process)"
    )
    add_options(parser, "eval-defaults")
    args = parser.parse_args(argv)
    measurement = Measurement(
        args, page="eval", order=30, title="Choosing the defaults", benchmark=__file__
    )
    configs = [
        (int(workers), int(envs.removesuffix("p")), envs.endswith("p"))
        for workers, envs in (item.split("x") for item in args.configs.split(","))
    ]
    cases = [(policy, config) for policy in args.policies.split(",") for config in configs]
    results: dict[tuple, list[tuple]] = {}
    print(f"cwd {PROGRAMS}; load average before: {os.getloadavg()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            shift = round_ % len(cases)
            for index, (policy, config) in enumerate(cases[shift:] + cases[:shift]):
                out = Path(tmp) / f"{round_}-{index}"
                spec = SPECS.get(policy, policy)  # or an agent spec of yours
                measured = run_config(spec, args.game, args.episodes, config, out)
                results.setdefault((policy, config), []).append(measured)
                wall, cpu, frames = measured
                workers, envs, policy_process = config
                print(
                    f"round {round_ + 1} {policy:8} --workers {workers} --envs-per-worker "
                    f"{envs:<3}{' --policy-process' if policy_process else ''} "
                    f"{frames:>9,} frames {wall:6.1f} s {cpu:6.1f} s CPU "
                    f"{frames / wall:8,.0f} frames/s",
                    flush=True,
                )
    print(f"load average after: {os.getloadavg()}\n")
    measurement.text(f"{args.game}, {args.episodes} episodes, {args.rounds} rounds, medians:")
    table = []
    for (policy, (workers, envs, policy_process)), runs in results.items():
        rate = statistics.median(f / w for w, _, f in runs)
        cpu = statistics.median(c for _, c, _ in runs)
        shared = "yes" if policy_process else "no"
        table.append([policy, workers, envs, shared, f"{rate:,.0f}", f"{cpu:.1f}"])
    measurement.table(
        ["policy", "--workers", "--envs-per-worker", "--policy-process", "frames/s", "CPU s"],
        table,
        align=["left", "right", "right", "left", "right", "right"],
    )
    measurement.write()


# ------------------------------------------------------------ replays
FLOOR_BITS = math.log2(18)  # uniform over the 18 actions


def run_replays(
    agent: str, game: str, episodes: int, replays: bool, workers: int = 0
) -> tuple[int, float, float, Path]:
    """Evaluate once; returns (frames, wall seconds, CPU seconds, directory)."""
    directory = Path(tempfile.mkdtemp(prefix="saber-replay-bench-"))
    rows = episodes if workers == 0 else max(1, episodes // workers)
    backend = Inline(rows) if workers == 0 else Processes(workers, envs_per_worker=rows)
    started, cpu = time.perf_counter(), cpu_seconds(children=True)
    result = evaluate(agent, game, episodes, out=directory, backend=backend,
                      recording=Recording(replays=replays), progress=False)  # fmt: skip
    cpu = cpu_seconds(children=True) - cpu
    return result.frames, time.perf_counter() - started, cpu, directory


def entropy(counts: Counter) -> float:
    """Shannon entropy in bits of a frequency table."""
    total = sum(counts.values())
    return -sum(n / total * math.log2(n / total) for n in counts.values() if n)


def sizes(directory: Path) -> dict[str, float]:
    """Agent steps, bytes of replay files and of compressed actions alone, and the
    actions' empirical entropies (bits per step, order 0 and order 1)."""
    steps = files = actions = 0
    single: Counter = Counter()
    pairs: Counter = Counter()
    previous: Counter = Counter()
    for path in (directory / "replays").rglob("*.saber-replay"):
        replay = read_replay(path)
        steps += replay.header.steps
        files += path.stat().st_size
        actions += len(bz2.compress(replay.actions, 9))  # the file's bz2 stream
        single.update(replay.actions)
        pairs.update(zip(replay.actions, replay.actions[1:], strict=False))
        previous.update(replay.actions[:-1])
    conditional = entropy(pairs) - entropy(previous)  # H(a_t | a_t-1) = H(pair) - H(a_t-1)
    return {"steps": steps, "files": files, "actions": actions,
            "order0": entropy(single), "order1": conditional}  # fmt: skip


def replays_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(
        description=REPLAYS,
        prog=f"{Path(__file__).name} replays",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--agent", default="random", help="an agent spec, as saber eval --agent")
    parser.add_argument("--game", default="pong")
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--workers", type=int, default=0,
                        help="0: in this process (the worst case); N: N worker processes")  # fmt: skip
    parser.add_argument("--sizes", type=Path, default=None, metavar="RUN",
                        help="only report the sizes of the replays of this run directory")  # fmt: skip
    add_options(parser, "replay-overhead")
    args = parser.parse_args(argv)
    if args.sizes is not None:
        measurement = Measurement(
            args, page="eval", order=62, title="The size of a replay", benchmark=__file__,
            name="replay-sizes",
        )  # fmt: skip
        episodes = sum(1 for _ in (args.sizes / "replays").rglob("*.saber-replay"))
        measurement.text(f"`{args.sizes.name}`: {episodes} recorded episodes.")
        report_sizes(sizes(args.sizes), episodes, measurement)
        measurement.write()
        return
    title = "What recording replays costs"
    measurement = Measurement(args, page="eval", order=60, title=title, benchmark=__file__)
    load = os.getloadavg()[0]
    rates: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    recorded: Path | None = None
    frames = set()
    for replays in (False, True):  # warm-up, not timed: imports, the ROM, the agent's model
        shutil.rmtree(run_replays(args.agent, args.game, 1, replays, args.workers)[3])
    for index in range(args.rounds):
        order = (False, True) if index % 2 == 0 else (True, False)
        for replays in order:
            played, wall, cpu, directory = run_replays(
                args.agent, args.game, args.episodes, replays, args.workers
            )
            frames.add(played)
            rates[replays].append((played / wall, played / cpu))
            if replays:
                if recorded is not None:
                    shutil.rmtree(recorded)
                recorded = directory
            else:
                shutil.rmtree(directory)
    print(f"load average {load:.2f} before, {os.getloadavg()[0]:.2f} after")
    measurement.text(
        f"{args.agent} on {args.game}: {args.episodes} episodes ({', '.join(map(str, frames))} "
        f"frames) per evaluation, {args.rounds} interleaved rounds (ABBA), "
        f"{f'{args.workers} worker processes' if args.workers else 'in this process'}; "
        "medians of the rounds:"
    )
    measurement.table(
        ["variant", "frames/s (wall)", "frames per CPU s"],
        [
            [
                label,
                f"{statistics.median(rate for rate, _ in rates[replays]):,.0f}",
                f"{statistics.median(rate for _, rate in rates[replays]):,.0f}",
            ]
            for replays, label in ((False, "without replays"), (True, "with replays"))
        ],
    )
    costs = []
    for column, name in ((0, "wall-clock"), (1, "CPU")):
        without = [rates[False][i][column] for i in range(args.rounds)]
        with_ = [rates[True][i][column] for i in range(args.rounds)]
        paired = [100 * (1 - w / o) for w, o in zip(with_, without, strict=True)]
        of_medians = 100 * (1 - statistics.median(with_) / statistics.median(without))
        costs.append(
            [
                f"{name} throughput",
                f"{statistics.median(paired):+.2f}%",
                f"{min(paired):+.1f}% .. {max(paired):+.1f}%",
                f"{of_medians:+.2f}%",
            ]
        )
    measurement.text("The cost of recording (the goal: at most 3%):")
    measurement.table(
        ["cost of recording", "median of the rounds' ratios", "rounds", "ratio of the medians"],
        costs,
    )
    assert recorded is not None
    size = sizes(recorded)
    shutil.rmtree(recorded)
    report_sizes(size, args.episodes, measurement)
    measurement.write()


def report_sizes(size: dict[str, float], episodes: int, measurement: Measurement) -> None:
    """Record the bytes per 1,000 steps beside the entropies."""
    per = 1000 / size["steps"]
    measurement.text(
        f"size: {size['steps']:,} steps in {size['files']:,} bytes of replay files "
        f"({size['files'] / episodes:,.0f} bytes per episode) = "
        f"{size['files'] * per:,.0f} bytes per 1,000 steps (header and checksum included); "
        f"the compressed actions alone {size['actions'] * per:,.0f} bytes per 1,000 steps"
    )
    measurement.text(
        f"entropy per 1,000 steps: uniform over 18 actions {125 * FLOOR_BITS:,.0f} bytes "
        f"({FLOOR_BITS:.3f} bits per step); this policy's actions, order 0 "
        f"{125 * size['order0']:,.0f} bytes ({size['order0']:.3f} bits per step), order 1 "
        f"{125 * size['order1']:,.0f} bytes ({size['order1']:.3f} bits per step)"
    )


# ------------------------------------------------------------ startup
EVAL = """
import time, tempfile, saber
started = time.perf_counter()
saber.evaluate("noop", "pong", episodes=1, backend=saber.harness.Inline(), out=tempfile.mkdtemp(),
               env_options=saber.harness.EnvOptions(allow_non_saber={allow}), progress=False)
print(time.perf_counter() - started)
"""

PROBE = """
import time
started = time.perf_counter()
from saber.check.gate import require_saber_env
require_saber_env()
cold = time.perf_counter() - started
started = time.perf_counter()
require_saber_env({"frame_skip": 4})  # other options: probed again, warm
print(cold, time.perf_counter() - started)
"""


def _run(code: str) -> list[float]:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [float(value) for value in done.stdout.split()]


def startup_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(
        description=STARTUP,
        prog=f"{Path(__file__).name} startup",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--rounds", type=int, default=5)
    add_options(parser, "check-startup")
    args = parser.parse_args(argv)
    title = "What the quick probe adds to start-up"
    measurement = Measurement(args, page="check", order=20, title=title, benchmark=__file__)
    differences, ratios, colds, warms = [], [], [], []
    for _ in range(args.rounds):
        (probed,) = _run(EVAL.format(allow=False))
        (skipped,) = _run(EVAL.format(allow=True))
        cold, warm = _run(PROBE)
        differences.append(probed - skipped)
        ratios.append(probed / skipped)
        colds.append(cold)
        warms.append(warm)

    def spread(values: list[float]) -> str:
        return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"

    rows = [
        ["`saber.evaluate` of 1 episode, with the probe minus without", f"{spread(differences)} s"],
        ["`saber.evaluate` of 1 episode, with the probe over without", f"{spread(ratios)}x"],
        ["the quick probe alone, in a fresh process", f"{spread(colds)} s"],
        ["the quick probe alone, warm (other options)", f"{spread(warms)} s"],
    ]
    measurement.text(
        f"Median (min-max) of {args.rounds} interleaved rounds in fresh processes; the "
        "evaluation is the NOOP agent's, 1 episode of Pong, in the calling process:"
    )
    measurement.table(["what", "median (min-max)"], rows)
    measurement.write()


MODES = {
    "least-work": (
        least_work_main,
        "saber eval with its defaults against a hand-written loop, same policy and episodes",
    ),
    "defaults": (defaults_main, "saber eval over --workers x --envs-per-worker, real policies"),
    "replays": (
        replays_main,
        "throughput with and without replays, and a replay's bytes per 1,000 steps",
    ),
    "startup": (startup_main, "what the quick probe adds to saber eval's start-up"),
}


if __name__ == "__main__":
    run_modes(MODES, __doc__)
