"""examples/ppo_saber.py beside CleanRL's ppo_atari.py on SABER/Pong: env-steps/s, and where
the time goes in each.

Both scripts run as a user runs them, in fresh processes, on the same machine, one after
the other. CleanRL's is ``benchmarks/programs/cleanrl_ppo_atari.py``: CleanRL's file unmodified but
for the environment id and the wrappers SABER replaces (its header says exactly what).

Each rate is marginal: a run of N agent steps and one of 2N, and N divided by the
difference of their wall times, so that start-up (imports, envs, the first compilation
of kernels) cancels out. Where the time goes, per agent step:

* env: the script's own vector env stepped with random actions, nothing else (CleanRL:
  ``SyncVectorEnv`` of 8 ``SABER/Pong`` under ``RecordEpisodeStatistics``; ours:
  ``make_vec("SABER/Pong", 16)`` under saber's ``VectorTrainingRecorder``); and of that,
  the emulator alone (ale-py's vector engine stepping the same number of games with
  sticky actions and frame skip 4, no resize, no stack: ``benchmarks/env_throughput.py``'s
  "engine alone"), the part no environment library can remove;
* acting: the script's own network choosing the actions of one batch (forward pass and
  sampling, as its rollout calls it), per step;
* learning and the rest: the whole script's time per step minus those two (gradient
  steps, advantages, the rollout's buffers and logging).

(``--update-epochs 0`` would time the rollouts directly, but CleanRL's file then fails
after its first iteration: its logging reads the loss of the update that did not run.)

Run (it needs torch, tyro and tensorboard for CleanRL's file:
``pip install torch==2.13.0 tyro tensorboard``)::

    python benchmarks/ppo_training_loop.py
    python benchmarks/ppo_training_loop.py --steps 4096   # quicker, noisier

It writes ``benchmarks/results/training-loop.json`` for docs/measurements/training.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from _results import Measurement, add_options

import saber  # noqa: F401  (registers SABER/*)
from saber.training import VectorTrainingRecorder

HERE = Path(__file__).resolve().parent
OURS = HERE.parent / "examples" / "ppo_saber.py"
CLEANRL = HERE / "programs" / "cleanrl_ppo_atari.py"
FRAME_SKIP = 4


def wall_time(command: list[str], cwd: Path) -> float:
    """Seconds a command takes, start-up included; fails loudly with its output."""
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(
            f"{' '.join(command)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        )
    return elapsed


def ours(steps: int, shape: tuple[int, int], out: Path) -> list[str]:
    envs, rollout = shape
    return [
        sys.executable,
        str(OURS),
        *("--out", str(out), "--total-frames", str(steps * FRAME_SKIP)),
        *("--num-envs", str(envs), "--num-steps", str(rollout), "--checkpoint-frames", "1e9"),
    ]


def cleanrl(steps: int) -> list[str]:
    return [sys.executable, str(CLEANRL), "--total-timesteps", str(steps), "--no-cuda"]


def load(path: Path) -> Any:
    """A script as a module (its ``__main__`` block does not run)."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[path.stem] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def acting_seconds(act: Any, batch: int, repeats: int = 300) -> float:
    """Seconds per agent step of ``act(observations)`` on batches of real-sized input."""
    import torch

    observations = torch.randint(0, 256, (batch, 4, 84, 84), dtype=torch.uint8)
    with torch.no_grad():
        for _ in range(20):
            act(observations)
        start = time.perf_counter()
        for _ in range(repeats):
            act(observations)
    return (time.perf_counter() - start) / (repeats * batch)


def our_acting(batch: int) -> float:
    import torch

    module = load(OURS)
    torch.set_flush_denormal(True)  # as the script does
    agent = module.Agent((16, 32, 32), 256, 18).to(memory_format=torch.channels_last)

    def act(observations: Any) -> Any:
        logits, _ = agent(observations)
        return torch.multinomial(torch.softmax(logits, -1), 1)

    return acting_seconds(act, batch)


def cleanrl_acting(envs: gym.vector.VectorEnv) -> float:
    import torch

    agent = load(CLEANRL).Agent(envs)
    # CleanRL's rollout turns the uint8 observation into a float tensor, then acts.
    return acting_seconds(lambda obs: agent.get_action_and_value(torch.Tensor(obs.numpy())), 8)


def marginal_seconds(make: object, steps: int, workdir: Path) -> float:
    """Seconds per agent step of ``make(n)`` (a command for n steps), start-up cancelled."""
    times = []
    for count in (steps, 2 * steps):
        with tempfile.TemporaryDirectory(dir=workdir) as run:
            times.append(wall_time(make(count, Path(run)), Path(run)))  # type: ignore[operator]
    return (times[1] - times[0]) / steps


def env_seconds(envs: gym.vector.VectorEnv, steps: int) -> float:
    """Seconds per agent step of ``envs`` with random actions (after a warm-up)."""
    rng = np.random.default_rng(0)
    envs.reset(seed=0)
    for _ in range(50):
        envs.step(rng.integers(18, size=envs.num_envs))
    batches = steps // envs.num_envs
    start = time.perf_counter()
    for _ in range(batches):
        envs.step(rng.integers(18, size=envs.num_envs))
    elapsed = time.perf_counter() - start
    envs.close()
    return elapsed / (batches * envs.num_envs)


def cleanrl_envs() -> gym.vector.VectorEnv:
    """CleanRL's vector env, built by its own make_env."""
    module = load(CLEANRL)
    return gym.vector.SyncVectorEnv(
        [module.make_env("SABER/Pong", i, False, "b") for i in range(8)]
    )


def engine_seconds(num_envs: int, steps: int) -> float:
    """Seconds per agent step of the emulator alone, for ``num_envs`` games."""
    run = load(HERE / "env_throughput.py").vector_tight_loop("pong", num_envs, resize=False)
    rng = np.random.default_rng(0)
    for _ in range(50):
        run.step(rng.integers(18, size=num_envs))
    batches = steps // num_envs
    start = time.perf_counter()
    for _ in range(batches):
        run.step(rng.integers(18, size=num_envs))
    elapsed = time.perf_counter() - start
    run.close()
    return elapsed / (batches * num_envs)


def row(name: str, engine: float, env: float, acting: float, full: float) -> list[str]:
    learning = max(full - env - acting, 0.0)
    shares = [f"{100 * part / full:.0f}%" for part in (env, engine, acting, learning)]
    micros = " / ".join(f"{1e6 * part:,.0f}" for part in (env, engine, acting, learning))
    return [name, f"{1 / full:,.0f}", *shares, micros]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=16_384, help="agent steps of the short runs")
    add_options(parser, "training-loop")
    args = parser.parse_args()
    measurement = Measurement(
        args,
        page="training",
        order=10,
        title="The PPO training loop beside CleanRL's",
        benchmark=__file__,
    )
    missing = [
        name for name in ("torch", "tyro", "tensorboard") if importlib.util.find_spec(name) is None
    ]
    if missing:
        raise SystemExit(
            f"CleanRL's script needs {', '.join(missing)}: pip install {' '.join(missing)}"
        )
    steps = args.steps
    with tempfile.TemporaryDirectory() as temporary:
        workdir = Path(temporary)
        lines: list[list[str]] = []
        # The shipped shape only: a second shape (8 x 128) gave a marginal time that one
        # busy second of the machine could halve (a difference of two wall times).
        for name, shape in (("examples/ppo_saber.py (16 x 64)", (16, 64)),):
            env = env_seconds(
                VectorTrainingRecorder(
                    gym.make_vec("SABER/Pong", num_envs=shape[0], clip_rewards=True), None
                ),
                steps,
            )
            full = marginal_seconds(lambda n, run, s=shape: ours(n, s, run / "out"), steps, workdir)
            engine = engine_seconds(shape[0], steps)
            lines.append(row(name, engine, env, our_acting(shape[0]), full))
            print(" | ".join(lines[-1]), flush=True)
        cleanrl_steps = steps // 2  # 3-4x slower: half the steps keeps the runs comparable
        envs = cleanrl_envs()
        acting = cleanrl_acting(envs)
        env = env_seconds(envs, cleanrl_steps)
        full = marginal_seconds(lambda n, run: cleanrl(n), cleanrl_steps, workdir)
        engine = engine_seconds(8, cleanrl_steps)
        lines.append(row("CleanRL ppo_atari.py (8 x 128, Nature CNN)", engine, env, acting, full))
    measurement.text(
        f"SABER/Pong; marginal rates, from runs of N and 2N agent steps (N = {steps:,} for "
        f"examples/ppo_saber.py, {steps // 2:,} for CleanRL's):"
    )
    measurement.table(
        [
            "loop",
            "env-steps/s",
            "env",
            "of which the emulator",
            "acting",
            "learning and the rest",
            "us per step (env / emulator / acting / rest)",
        ],
        lines,
        align=["left", "right", "right", "right", "right", "right", "left"],
    )
    measurement.write()


if __name__ == "__main__":
    main()
