"""saber.envpool against envpool, side by side: CleanRL's envpool scripts and an async loop.

1. CleanRL's ``ppo_atari_envpool.py`` and ``pqn_atari_envpool.py`` (tests/clients/cleanrl/,
   unmodified) as their users run them: on envpool, in an interpreter that has the envpool
   they run with (envpool 0.8.4 with gym 0.23.1: envpool 1.x's ``env_type="gym"`` returns
   Gymnasium's 5-tuples, which these scripts cannot unpack), and on saber.envpool, patched
   by docs/rl-libraries.md's diff (the import and ``episodic_life``), in this interpreter.
   The number is the script's own last ``SPS:`` line (agent steps of all envs per second
   since its start: emulation, acting and learning), the number its users see.
2. The env alone under those scripts: ``envpool.make`` with the scripts' arguments
   (``env_type="gym"``, 8 envs, ``reward_clip=True``, ``episodic_life`` as each side's
   script passes it), ``step`` with random actions in a tight loop, each side in its own
   interpreter (this file run with ``--sync-child``). Env-steps per second.
3. An async loop: ``num_envs`` envs, ``batch_size = num_envs // 2``, ``async_reset``, then
   ``recv`` / random actions / ``send`` for a fixed number of batches, on saber.envpool
   and on envpool 1.2.5's async mode (in this interpreter: ``pip install envpool==1.2.5``)
   with the settings closest to SABER's (sticky 0.25, 18 actions, bilinear resize, no
   life signal, ``noop_max=1``: envpool's least). Env-steps per second. Beside them, the
   two ceilings, ale-py's engine with no SABER work at all (no resize, stack, rules or
   info; ``saber.envs.engines.new_vector_engine``'s settings):
   * "ale-py, saber's arrangement": what saber.envpool's async mode stands on, one
     synchronous engine per group of ``batch_size`` envs, ``recv`` of the oldest group
     sent;
   * "ale-py async mode": one engine of ``num_envs`` envs whose ``recv`` returns the first
     ``batch_size`` done, as envpool's does. SABER cannot stand on it: ale-py 0.12.1
     refuses to reset some envs of an async engine and not the others, and SABER's
     truncations (stuck timeout, cap) need exactly that (a reload with the next seed).

envpool applies its own Atari rules (it is not SABER), so only the rates compare. Every
comparison interleaves its sides, the order alternating from round to round, so that a
machine whose speed drifts hurts each side alike; each line reports the range over
rounds, and the median of the rounds' ratios. Run::

    python -m venv /tmp/envpool084 && /tmp/envpool084/bin/pip install torch==2.13.0 \\
        envpool==0.8.4 gym==0.23.1 "numpy<2" tyro tensorboard
    pip install envpool==1.2.5 gym==0.23.1 tyro tensorboard   # into saber's venv
    python benchmarks/cleanrl_envpool_speed.py --envpool-python /tmp/envpool084/bin/python

It writes ``benchmarks/results/envpool-cleanrl.json`` for docs/measurements/envs.md.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.clients.cleanrl_envpool: the scripts and the diff

from _results import Measurement, add_options, interleaved  # noqa: E402

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


def sync_child(which: str, game: str, steps: int) -> None:
    """Print the env-steps/s of ``envpool.make`` with CleanRL's arguments, random actions
    (run in the interpreter of the side timed: ``--sync-child saber|envpool``)."""
    if which == "saber":
        from saber import envpool

        episodic_life = False  # docs/rl-libraries.md's diff
    else:
        import envpool  # 0.8.4, in its own interpreter

        episodic_life = True  # the scripts' own argument
    envs = envpool.make(
        f"{game}-v5",
        env_type="gym",
        num_envs=8,
        episodic_life=episodic_life,
        reward_clip=True,
        seed=1,
    )
    envs.reset()
    rng = np.random.default_rng(0)
    actions = rng.integers(0, envs.action_space.n, (steps + 100, 8))
    for action in actions[:100]:  # warm up
        envs.step(action)
    start = time.perf_counter()
    for action in actions[100:]:
        envs.step(action)
    print(f"RATE {steps * 8 / (time.perf_counter() - start):.1f}")


def sync_rate(python: str, which: str, game: str, steps: int) -> float:
    done = subprocess.run(
        [python, __file__, "--sync-child", which, "--game", game, "--sync-steps", str(steps)],
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise SystemExit(f"{python} --sync-child {which} failed:\n{done.stderr[-3000:]}")
    return float(re.findall(r"RATE ([\d.]+)", done.stdout)[-1])


def saber_async(game: str, num_envs: int, batches: int) -> float:
    """Env-steps/s of saber.envpool's async mode, random actions."""
    from saber import envpool

    pool = envpool.make(
        f"{game}-v5", "gymnasium", num_envs=num_envs, batch_size=num_envs // 2, seed=0
    )
    rate = _async_loop(pool.async_reset, pool.recv, pool.send, num_envs // 2, batches)
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
    rate = _async_loop(pool.async_reset, pool.recv, pool.send, num_envs // 2, batches)
    pool.close()
    return rate


def ale_groups(game: str, num_envs: int, batches: int) -> float:
    """Env-steps/s of ale-py's engines as saber.envpool's async mode arranges them (one
    synchronous engine per group, the oldest group received first), no SABER work."""
    from saber.envs.engines import new_vector_engine
    from saber.envs.factory import resolve_rom_id
    from saber.protocol.settings import SaberSettings

    batch_size = num_envs // 2
    engines = [
        new_vector_engine(resolve_rom_id(game), batch_size, SaberSettings()) for _ in range(2)
    ]
    strength = np.ones(batch_size, dtype=np.float32)
    sent: list[int] = []

    def reset() -> None:
        for engine in engines:
            engine.reset(
                np.arange(batch_size, dtype=np.int32), np.arange(batch_size, dtype=np.int32)
            )
        sent.extend([0, 1])
        for engine in engines:
            engine.send(np.zeros(batch_size, dtype=np.int32), strength)

    def recv() -> tuple[Any, ...]:
        group = sent.pop(0)
        sent.append(group)
        return (*engines[group].recv()[:4], {"env_id": group})

    def send(actions: np.ndarray, group: int) -> None:
        engines[group].send(actions.astype(np.int32), strength)

    rate = _async_loop(reset, recv, send, batch_size, batches)
    del engines[:]  # joins the engines' threads
    return rate


def ale_async(game: str, num_envs: int, batches: int) -> float:
    """Env-steps/s of ale-py's own async mode (one engine, the first ``batch_size`` envs
    done received), no SABER work: a ceiling SABER cannot use (see the module doc)."""
    from saber.envs.engines import new_vector_engine
    from saber.envs.factory import resolve_rom_id
    from saber.protocol.settings import SaberSettings

    batch_size = num_envs // 2
    engine = new_vector_engine(
        resolve_rom_id(game), num_envs, SaberSettings(), batch_size=batch_size
    )
    strength = np.ones(batch_size, dtype=np.float32)

    def reset() -> None:
        engine.reset(np.arange(num_envs, dtype=np.int32), np.arange(num_envs, dtype=np.int32))
        # Actions for the envs the reset returned; the other half's reset results wait in
        # the engine: then every env is in flight, as after envpool's async_reset.
        engine.send(np.zeros(batch_size, dtype=np.int32), strength)

    def send(actions: np.ndarray, env_id: Any) -> None:
        del env_id  # ale-py sends to the envs of the last recv
        engine.send(actions.astype(np.int32), strength)

    return _async_loop(reset, engine.recv, send, batch_size, batches)


def _async_loop(
    reset: Callable[[], None],
    recv: Callable[[], tuple[Any, ...]],
    send: Callable[[np.ndarray, Any], None],
    batch_size: int,
    batches: int,
) -> float:
    rng = np.random.default_rng(0)
    reset()
    for _ in range(20):  # warm up: threads started, first frames resized
        *_, info = recv()
        send(rng.integers(0, 18, batch_size), info["env_id"])
    start = time.perf_counter()
    for _ in range(batches):
        *_, info = recv()
        send(rng.integers(0, 18, batch_size), info["env_id"])
    elapsed = time.perf_counter() - start
    recv()
    return batches * batch_size / elapsed


def _line(name: str, ours: list[float], theirs: list[float]) -> list[str]:
    ratios = [a / b for a, b in zip(ours, theirs, strict=True)]
    return [
        name,
        f"{min(ours):.0f}-{max(ours):.0f}",
        f"{min(theirs):.0f}-{max(theirs):.0f}",
        f"{statistics.median(ratios):.2f}x [{min(ratios):.2f}-{max(ratios):.2f}]",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--envpool-python", help="python with envpool 0.8.4 (required)")
    parser.add_argument("--game", default="Breakout")
    parser.add_argument("--rounds", type=int, default=6, help="rounds per comparison")
    parser.add_argument("--total-timesteps", type=int, default=4096)
    parser.add_argument("--sync-steps", type=int, default=2000, help="batch steps, env alone")
    parser.add_argument("--num-envs", type=int, default=8, help="of the async loop")
    parser.add_argument("--batches", type=int, default=2000, help="recv/send of the async loop")
    parser.add_argument("--sync-child", choices=("saber", "envpool"), help=argparse.SUPPRESS)
    add_options(parser, "envpool-cleanrl")
    args = parser.parse_args()
    if args.sync_child:
        sync_child(args.sync_child, args.game, args.sync_steps)
        return
    if not args.envpool_python:
        parser.error("--envpool-python is required (an interpreter with envpool 0.8.4)")
    measurement = Measurement(
        args,
        page="envs",
        order=80,
        title="saber.envpool against envpool",
        benchmark=__file__,
    )

    envpool_python, game, steps = args.envpool_python, args.game, args.total_timesteps
    rows: list[list[str]] = []
    with tempfile.TemporaryDirectory() as folder:
        for name in TRAINING_SCRIPTS:
            ours = saber_script(name, Path(folder))
            rates = interleaved(
                {
                    "saber": lambda ours=ours: script_sps(sys.executable, ours, game, steps),
                    "envpool": lambda name=name: script_sps(
                        envpool_python, SCRIPTS / name, game, steps
                    ),
                },
                args.rounds,
                f"{name} (SPS)",
            )
            rows.append(_line(f"{name} (SPS, 8 envs)", rates["saber"], rates["envpool"]))
    rates = interleaved(
        {
            "saber": lambda: sync_rate(sys.executable, "saber", game, args.sync_steps),
            "envpool": lambda: sync_rate(envpool_python, "envpool", game, args.sync_steps),
        },
        args.rounds,
        "the scripts' env alone (env-steps/s)",
    )
    rows.append(
        _line("the scripts' env alone, 8 envs (env-steps/s)", rates["saber"], rates["envpool"])
    )
    num_envs, batches = args.num_envs, args.batches
    rates = interleaved(
        {
            "saber.envpool": lambda: saber_async(game, num_envs, batches),
            "envpool": lambda: envpool_async(game, num_envs, batches),
            "ale-py, saber's arrangement": lambda: ale_groups(game, num_envs, batches),
            "ale-py async mode": lambda: ale_async(game, num_envs, batches),
        },
        args.rounds,
        "async loop (env-steps/s)",
    )
    shape = f"{num_envs} envs, batch {num_envs // 2}"
    for name in ("saber.envpool", "ale-py, saber's arrangement", "ale-py async mode"):
        rows.append(_line(f"async loop, {shape}: {name}", rates[name], rates["envpool"]))
    measurement.text(
        f"{game}, {args.rounds} interleaved rounds per comparison: the range of each side's "
        "rate over the rounds, and the median [range] of the rounds' ratios:"
    )
    measurement.table(
        ["run", "saber side", "envpool", "saber / envpool: median [rounds]"],
        rows,
        align=["left"] * 4,
    )
    measurement.write()


if __name__ == "__main__":
    main()
