"""The least work for a batch of evaluation episodes: what a user writes with no harness.

One process plays ``episodes[i]`` episodes of ``games[i]`` on
``gymnasium.make_vec("SABER/<Game>", num_envs=min(envs, episodes), num_threads=1)`` with
the given policy; a row whose episode ends plays the next while episodes are left, then
steps idle until the last one ends, as saber eval's workers do. It records nothing,
checks nothing and resets by Gymnasium's autoreset (no seeded reset per episode). It
prints the frames of the finished episodes. ``benchmarks/eval_speed.py least-work`` runs
one per core beside ``saber eval`` on the same episodes::

    python benchmarks/programs/least_work.py '["random", ["pong"], [8], 8]'
"""

from __future__ import annotations

import json
import os
import sys

import gymnasium
import numpy as np

import saber  # noqa: F401  (registers SABER/<Game>)
from saber.games import resolve_games


def play(spec: str, games: list[str], episodes: list[int], envs: int, seed: int) -> int:
    """Play the episodes; return the frames of the finished ones."""
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


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        raise SystemExit(0 if len(sys.argv) == 2 else 2)
    spec, games, episodes, envs = json.loads(sys.argv[1])
    print(play(spec, games, episodes, envs, seed=1000 * os.getpid()))
