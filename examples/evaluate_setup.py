"""Evaluate a policy of ``examples/ppo_saber.py`` under the setup it was trained in.

``saber eval`` scores any policy under SABER; this scores one under its own training setup
(``--setup cleanrl``: no sticky actions, FIRE after each start and life lost, 1 to 30 no-op
frames at each start, the 108,000-frame cap, no stuck timeout), as the papers that train
that way report it: the game's whole score, every life included. Its numbers are not
SABER's and go on the page "What SABER costs" only (docs/what-saber-costs.md).

The policy's actions are drawn from its softmax as ``saber eval`` draws them (one
generator per episode, seeded from the episode's seed); the forced steps are
``ppo_saber.ForcedSteps``'s, the training's own. Episode ``i`` is seeded with
``episode_seed(seed, game, i)`` (:mod:`saber.protocol.seeds`), so a rerun gives the same scores.

    python examples/evaluate_setup.py runs/ppo-breakout-cleanrl-1/policy.npz \\
        --game Breakout --setup cleanrl --episodes 100 --out own-setup.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from ppo_saber import SETUPS, ForcedSteps, minimal_action_ids

from saber.agents.convnet import ConvActorPolicy
from saber.envs.factory import resolve_rom_id
from saber.protocol.seeds import episode_seed
from saber.rundir.durable import writing_atomically


def play_episode(
    policy: ConvActorPolicy, game: str, setup_name: str, seed: int
) -> dict[str, float | int | str]:
    """One episode under ``setup_name``: its score, frames and how it ended."""
    setup = SETUPS[setup_name]
    env = gym.make(f"SABER/{game}", **setup.settings)
    ids = minimal_action_ids(game) if setup.minimal_actions else tuple(range(18))
    forced = ForcedSteps(setup, game, 1)
    observation, info = env.reset(seed=seed)
    policy.start_episodes(np.zeros(1, dtype=np.int64), np.array([seed]))
    forced.episode_started(0, seed)
    lives = info.get("lives", 0)
    while True:
        action = int(policy(observation[None])[0])
        choice = np.array([ids.index(action)])
        if forced.apply(choice)[0]:  # a forced step, in the policy's indices
            action = ids[int(choice[0])]
        observation, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            env.close()
            record = info["saber"]
            return {
                "seed": seed,
                "score": float(record["score"]),
                "frames": int(record["frames"]),
                "end": str(record["end"]),
            }
        if setup.life_loss and info["lives"] < lives:
            forced.life_lost(0)
        lives = info.get("lives", 0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("policy", type=Path, help="a policy file of examples/ppo_saber.py")
    parser.add_argument("--game", required=True, help="SABER/<game>, as trained")
    parser.add_argument("--setup", required=True, choices=sorted(SETUPS))
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0, help="the base seed of the episodes")
    parser.add_argument("--out", type=Path, required=True, help="a JSON file (written whole)")
    args = parser.parse_args(argv)
    policy = ConvActorPolicy(args.policy)
    started = time.perf_counter()
    episodes = []
    for index in range(args.episodes):
        seed = episode_seed(args.seed, resolve_rom_id(args.game), index)
        episodes.append({"episode": index, **play_episode(policy, args.game, args.setup, seed)})
        print(f"episode {index}: {episodes[-1]['score']:g}", flush=True)
    scores = [float(episode["score"]) for episode in episodes]
    result = {
        "policy": str(args.policy),
        "provenance": policy.actor.provenance,
        "game": args.game,
        "setup": args.setup,
        "deviations": SETUPS[args.setup].deviations(args.game),
        "base_seed": args.seed,
        "mean": float(np.mean(scores)),
        "wall_seconds": round(time.perf_counter() - started, 1),
        "episodes": episodes,
    }
    with writing_atomically(args.out) as temporary:
        temporary.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"{args.game} under {args.setup}: mean {result['mean']:g} over {len(scores)} episodes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
