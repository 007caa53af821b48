"""saber.envpool against envpool, side by side: CleanRL's envpool scripts and an async loop.

1. CleanRL's ``ppo_atari_envpool.py`` and ``pqn_atari_envpool.py`` (tests/clients/cleanrl/,
   unmodified) as their users run them: on envpool, in an interpreter that has the envpool
   they run with (envpool 0.8.4 with gym 0.23.1: envpool 1.x's ``env_type="gym"`` returns
   Gymnasium's 5-tuples, which these scripts cannot unpack), and on saber.envpool, patched
   by docs/rl-libraries.md's diff (the import and ``episodic_life``), in this interpreter.
   The number is the script's own last ``SPS:`` line (agent steps of all envs per second
   since its start: emulation, acting and learning), the number its users see.
2. An async loop: ``num_envs`` envs, ``batch_size = num_envs // 2``, ``async_reset``, then
   ``recv`` / random actions / ``send`` for a fixed number of batches, on saber.envpool
   and on envpool 1.2.5's async mode (in this interpreter: ``pip install envpool==1.2.5``)
   with the settings closest to SABER's (sticky 0.25, 18 actions, bilinear resize, no
   life signal, ``noop_max=1``: envpool's least). Env-steps per second.

envpool applies its own Atari rules (it is not SABER), so only the rates compare. The
runs interleave (A B A B ...) so that a machine whose load changes hurts both sides
alike; each line reports the range over rounds. Run::

    python -m venv /tmp/envpool084 && /tmp/envpool084/bin/pip install torch==2.13.0 \\
        envpool==0.8.4 gym==0.23.1 "numpy<2" tyro tensorboard
    pip install envpool==1.2.5 gym==0.23.1 tyro tensorboard   # into saber's venv
    python benchmarks/cleanrl_envpool_speed.py --envpool-python /tmp/envpool084/bin/python
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.clients.cleanrl_envpool: the scripts and the diff

from tests.clients.cleanrl_envpool import SCRIPTS, saber_script  # noqa: E402

TRAINING_SCRIPTS = ("ppo_atari_envpool.py", "pqn_atari_envpool.py")


def script_sps(python: str, script: Path, game: str, steps: int) -> float:
    """The last ``SPS:`` a CleanRL script prints, run as its users run it."""
    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run(
            [python, str(script), "--env-id", f"{game}-v5", "--total-timesteps", str(steps)],
            cwd=folder,
            capture_output=True,
            text=True,
        )
    if done.returncode:
        raise SystemExit(f"{python} {script.name} failed:\n{done.stderr[-3000:]}")
    return float(re.findall(r"SPS: (\d+)", done.stdout)[-1])


def saber_async(game: str, num_envs: int, batches: int) -> float:
    """Env-steps/s of saber.envpool's async mode, random actions."""
    from saber import envpool

    pool = envpool.make(
        f"{game}-v5", "gymnasium", num_envs=num_envs, batch_size=num_envs // 2, seed=0
    )
    rate = _async_loop(pool, num_envs // 2, batches)
    pool.close()
    return rate


def envpool_async(game: str, num_envs: int, batches: int) -> float:
    """Env-steps/s of envpool 1.2.5's async mode, closest settings, random actions."""
    import envpool  # pip install envpool==1.2.5

    pool = envpool.make_gymnasium(
        f"{game}-v5",
        num_envs=num_envs,
        batch_size=num_envs // 2,
        noop_max=1,  # its least: 0 crashes envpool 1.2.5
        episodic_life=False,
        repeat_action_probability=0.25,
        use_fire_reset=False,
        full_action_space=True,
        use_inter_area_resize=False,
        max_episode_steps=10**7,
        seed=0,
    )
    rate = _async_loop(pool, num_envs // 2, batches)
    pool.close()
    return rate


def _async_loop(pool, batch_size: int, batches: int) -> float:
    rng = np.random.default_rng(0)
    pool.async_reset()
    for _ in range(20):  # warm up: threads started, first frames resized
        *_, info = pool.recv()
        pool.send(rng.integers(0, 18, batch_size), info["env_id"])
    start = time.perf_counter()
    for _ in range(batches):
        *_, info = pool.recv()
        pool.send(rng.integers(0, 18, batch_size), info["env_id"])
    elapsed = time.perf_counter() - start
    pool.recv()
    return batches * batch_size / elapsed


def _line(name: str, saber: list[float], envpool: list[float]) -> str:
    ratios = [a / b for a, b in zip(saber, envpool, strict=True)]
    return (
        f"| {name} | {min(saber):.0f}-{max(saber):.0f} | {min(envpool):.0f}-{max(envpool):.0f} "
        f"| {min(ratios):.2f}-{max(ratios):.2f}x |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--envpool-python", required=True, help="python with envpool 0.8.4")
    parser.add_argument("--game", default="Breakout")
    parser.add_argument("--rounds", type=int, default=2, help="A B pairs per comparison")
    parser.add_argument("--total-timesteps", type=int, default=4096)
    parser.add_argument("--num-envs", type=int, default=8, help="of the async loop")
    parser.add_argument("--batches", type=int, default=2000, help="recv/send of the async loop")
    args = parser.parse_args()

    rows = ["| run | saber.envpool | envpool | saber / envpool |", "|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as folder:
        for name in TRAINING_SCRIPTS:
            ours = saber_script(name, Path(folder))
            saber, theirs = [], []
            for _ in range(args.rounds):
                saber.append(script_sps(sys.executable, ours, args.game, args.total_timesteps))
                theirs.append(
                    script_sps(args.envpool_python, SCRIPTS / name, args.game, args.total_timesteps)
                )
                print(f"{name}: saber {saber[-1]:.0f}, envpool {theirs[-1]:.0f} SPS", flush=True)
            rows.append(_line(f"{name} (SPS, 8 envs)", saber, theirs))
    saber, theirs = [], []
    for _ in range(args.rounds):
        saber.append(saber_async(args.game, args.num_envs, args.batches))
        theirs.append(envpool_async(args.game, args.num_envs, args.batches))
        print(f"async: saber {saber[-1]:.0f}, envpool {theirs[-1]:.0f} env-steps/s", flush=True)
    rows.append(
        _line(f"async loop, {args.num_envs} envs, batch {args.num_envs // 2}", saber, theirs)
    )
    print("\n".join(rows))


if __name__ == "__main__":
    main()
