"""Evaluate a PyTorch Q-network under the SABER protocol and print the report.

Shows how a trained network becomes a saber policy: a picklable object that maps a batch
of observations ``uint8`` (n, 4, 84, 84) to n actions (``nature_cnn.QNetworkPolicy``,
epsilon-greedy, seeded per episode), evaluated with ``saber.evaluate`` in worker processes.

    # a checkpoint from the DQN example (examples/dqn_vector.py --help for its options):
    python examples/dqn_vector.py --total-steps 200000 --checkpoint runs/dqn/breakout.pt
    python examples/evaluate_torch_policy.py runs/dqn/breakout.pt --games breakout --episodes 100

    # no trained network at hand: write a randomly initialized one and evaluate that
    python examples/evaluate_torch_policy.py runs/random-cnn.pt --init-random --episodes 2

Results go to ``--out`` (default ``runs/torch-policy``); the same command resumes there.
Needs PyTorch: ``pip install torch==<version>`` (the CPU build) before ``saber-ale[sb3]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
from nature_cnn import NatureCNN, QNetworkPolicy, load_checkpoint, save_checkpoint

from saber.harness import EnvOptions, Inline, Processes, evaluate
from saber.reports import to_markdown

# protocol.md fixes the environment, not the agent: it says nothing about an evaluation
# epsilon. Nature DQN evaluated with 0.05, Dopamine's Rainbow and IQN (the base of the
# SABER authors' Rainbow-IQN) with 0.001. A small epsilon keeps a greedy network from
# repeating one action forever; sticky actions already make the game itself stochastic.
DEFAULT_EPSILON = 0.001


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", type=Path, help="a nature_cnn checkpoint (.pt)")
    parser.add_argument(
        "--init-random",
        action="store_true",
        help="write a randomly initialized network to CHECKPOINT first (refuses to overwrite)",
    )
    parser.add_argument("--games", default="pong", help="games, or all / atari5 / atari10")
    parser.add_argument("--episodes", type=int, default=10, help="per game (SABER: 100)")
    parser.add_argument("--workers", type=int, default=None, help="0: in this process")
    parser.add_argument("--envs-per-worker", type=int, default=8, help="the policy's batch size")
    parser.add_argument("--epsilon", type=float, default=DEFAULT_EPSILON)
    parser.add_argument("--seed", type=int, default=0, help="base seed of the episode seeds")
    parser.add_argument("--out", type=Path, default=Path("runs/torch-policy"))
    parser.add_argument(
        "--max-episode-frames",
        type=int,
        default=None,
        help="cap episodes (a smoke test); not SABER: the run is marked non_saber",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.init_random:
        if args.checkpoint.exists():
            sys.exit(f"{args.checkpoint} exists; --init-random does not overwrite a checkpoint")
        torch.manual_seed(args.seed)
        save_checkpoint(args.checkpoint, NatureCNN(), {"trained_frames": 0, "note": "random init"})
        print(f"wrote a randomly initialized network to {args.checkpoint}")
    elif not args.checkpoint.is_file():
        sys.exit(
            f"No checkpoint at {args.checkpoint}. Train one with\n"
            f"    python examples/dqn_vector.py --checkpoint {args.checkpoint}\n"
            f"or add --init-random to evaluate a randomly initialized network."
        )
    _, metadata = load_checkpoint(args.checkpoint)  # fail here, not in every worker
    print(f"{args.checkpoint}: {metadata}")

    overrides = {}
    if args.max_episode_frames is not None:
        overrides["max_episode_frames"] = args.max_episode_frames
    result = evaluate(
        QNetworkPolicy(args.checkpoint, args.epsilon),
        args.games,
        episodes=args.episodes,
        out=args.out,
        backend=(
            Inline(args.envs_per_worker)
            if args.workers == 0
            else Processes(args.workers, envs_per_worker=args.envs_per_worker)
        ),
        base_seed=args.seed,
        # The name in every record: which network, and the epsilon it was played with.
        agent=f"nature-cnn:{args.checkpoint.name}:epsilon={args.epsilon}",
        env_options=EnvOptions(overrides, allow_non_saber=bool(overrides)),
        progress=True,
    )
    result.write_report()
    print(f"{len(result.records)} episodes in {result.directory}, {result.seconds:.0f} s")
    print(result.mean_scores())
    print(to_markdown(result.report()))
    return 1 if result.failed else 0


# Worker processes import this script: evaluate must run under the __main__ guard.
if __name__ == "__main__":
    sys.exit(main())
