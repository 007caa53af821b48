"""Harness throughput: overhead against a bare loop, and 1 vs 2 worker processes.

In one run, with interleaved repeats (so machine noise hits every variant alike):

* ``bare``: a hand-written loop over a ``SaberVectorEnv`` of ``envs`` sub-envs (autoreset
  disabled, one seeded reset per episode, idle rows kept stepping), with the same
  random policy, playing the same episodes as the harness;
* ``harness, in process``: ``saber.harness.evaluate(..., workers=0)`` on the same
  episodes (one work unit): the harness's own cost (policy checks, records, fsync);
* ``harness, 1 worker``: the same in one worker process (adds process start-up);
* ``1 worker`` vs ``2 workers``: twice the episodes (two units), one or two processes.

Frames per second are emulator frames of finished episodes per wall-clock second.

    python benchmarks/harness_overhead.py [--game pong] [--envs 8] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import numpy as np
from gymnasium.vector import AutoresetMode

from saber.envs import SaberVectorEnv
from saber.harness import RandomPolicy, episode_seed, evaluate


def bare_loop(game: str, episodes: int, envs: int) -> int:
    """Play ``episodes`` with their harness seeds on one vector env; return their frames."""
    seeds = [episode_seed(0, game, index) for index in range(episodes)]
    env = SaberVectorEnv(game, envs, autoreset_mode=AutoresetMode.DISABLED)
    policy = RandomPolicy()
    observations, _ = env.reset(seed=np.array(seeds[:envs]))
    policy.start_episodes(np.arange(envs), np.array(seeds[:envs]))
    next_episode, active, frames = envs, [True] * envs, 0
    while any(active):
        observations, _, _, _, info = env.step(policy(observations))
        if "_episode" not in info:
            continue
        for row in np.flatnonzero(info["_episode"]).tolist():
            mask = np.zeros(envs, dtype=bool)
            mask[row] = True
            if active[row]:
                frames += int(info["episode"]["frames"][row])
            if next_episode < episodes:
                seed = seeds[next_episode]
                observations, _ = env.reset(seed=np.array([seed]), options={"reset_mask": mask})
                policy.start_episodes(np.array([row]), np.array([seed]))
                next_episode += 1
            else:
                active[row] = False
                observations, _ = env.reset(options={"reset_mask": mask})
    env.close()
    return frames


def harness(game: str, episodes: int, envs: int, workers: int) -> int:
    with tempfile.TemporaryDirectory() as out:
        result = evaluate(
            "random", game, episodes, out=out, workers=workers, envs_per_worker=envs, progress=False
        )
    return sum(record["frames"] for record in result.records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="pong")
    parser.add_argument("--envs", type=int, default=8, help="sub-envs per vector env")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    variants = {
        "bare loop": lambda: bare_loop(args.game, args.envs, args.envs),
        "harness, in process": lambda: harness(args.game, args.envs, args.envs, 0),
        "harness, 1 worker": lambda: harness(args.game, args.envs, args.envs, 1),
        "2 units, 1 worker": lambda: harness(args.game, 2 * args.envs, args.envs, 1),
        "2 units, 2 workers": lambda: harness(args.game, 2 * args.envs, args.envs, 2),
    }
    rates: dict[str, list[float]] = {name: [] for name in variants}
    for repeat in range(args.repeats):
        for name, run in variants.items():
            start = time.perf_counter()
            frames = run()
            rates[name].append(frames / (time.perf_counter() - start))
            print(f"repeat {repeat + 1}: {name:<20} {rates[name][-1]:>9,.0f} frames/s", flush=True)
    median = {name: statistics.median(values) for name, values in rates.items()}
    bare = median["bare loop"]
    print(f"\n{args.game}, {args.envs} envs per worker, median of {args.repeats} repeats")
    print("| variant | frames/s | ratio |\n|---|---:|---:|")
    for name in ("bare loop", "harness, in process", "harness, 1 worker"):
        print(f"| {name} | {median[name]:,.0f} | {median[name] / bare:.3f} x bare |")
    one = median["2 units, 1 worker"]
    for name in ("2 units, 1 worker", "2 units, 2 workers"):
        print(f"| {name} | {median[name]:,.0f} | {median[name] / one:.3f} x 1 worker |")


if __name__ == "__main__":
    main()
