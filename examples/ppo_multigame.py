"""One PPO agent on many games at once: ``gymnasium.make_vec("SABER/Atari5", num_envs=10)``.

One file in the style of CleanRL's ppo_atari.py (Huang et al. 2022). Under SABER every game
has the same 18 actions and the same observations, so one network plays all the games
of the vector env, with no per-game action head; sub-env ``i`` plays game ``i % 5``. The
algorithm is that of ``examples/ppo_saber.py`` (its docstring says why each choice), kept
short: no checkpoints and no resuming, which that script shows how to do.

* Rollouts of ``num_envs x num_steps`` steps, 4 epochs of 4 minibatches, clip 0.1,
  learning rate 2.5e-4 decayed linearly, entropy 0.01, GAE 0.95, gamma 0.99.
* NEXT_STEP autoreset done right: the step after an end is masked out of the loss and cuts
  the advantage chain; a truncation (stuck timeout, cap) bootstraps, a game over does not.
* Rewards clipped for learning only (``clip_rewards=True``): the scores logged stay raw.

Each training episode is logged by :class:`saber.training.VectorTrainingRecorder`: each
line's ``game`` is its sub-env's and ``frames`` counts that game's frames, so ``saber
training`` gives each game's curve and the median and mean over games of the
world-record-normalized scores. Run::

    python examples/ppo_multigame.py --out runs/ppo-atari5 --total-frames 10M
    saber training runs/ppo-atari5/training.jsonl --at 1M,2M
    saber eval --agent conv-actor:runs/ppo-atari5/policy.npz --games atari5 --out runs/ppo-atari5/eval

Outputs in ``--out``: ``training.jsonl``, ``policy.npz`` (the actor for numpy inference,
:mod:`saber.agents.convnet`, which ``saber eval`` plays) and ``summary.json``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import platform
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch
from torch import nn

import saber
from saber.agents.convnet import LAYERS, write_policy_file
from saber.protocol.training import parse_frames
from saber.training import VectorTrainingRecorder

FRAME_SKIP = 4  # SABER's frame repeat: one agent step is 4 emulator frames


@dataclass
class Args:
    """Hyperparameters; each becomes a --flag."""

    games: str = field(default="SABER/Atari5", metadata={"help": "a set id, or games a,b,c"})
    seed: int = 1
    total_frames: str = field(default="10M", metadata={"help": "emulator frames (all games)"})
    envs_per_game: int = 2
    num_steps: int = field(default=64, metadata={"help": "steps per env per rollout"})
    learning_rate: float = 2.5e-4
    gamma: float = 0.99
    gae_lambda: float = 0.95
    num_minibatches: int = 4
    update_epochs: int = 4
    clip_coef: float = 0.1
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    channels: str = field(default="16,32,32", metadata={"help": "conv filters"})
    hidden: int = field(default=256, metadata={"help": "dense units"})
    threads: int = field(default=0, metadata={"help": "torch threads (0: every core)"})
    max_episode_frames: int = field(
        default=0, metadata={"help": "0: SABER's 100-hour cap; less is not SABER (quick tests)"}
    )
    out: Path = field(default=Path("runs/ppo-atari5"), metadata={"help": "run directory"})


def parse_args(argv: list[str] | None = None) -> Args:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    kinds = {"int": int, "float": float, "str": str, "Path": Path}
    for item in dataclasses.fields(Args):
        parser.add_argument(
            "--" + item.name.replace("_", "-"),
            type=kinds[str(item.type)],
            default=item.default,
            help=f"{item.metadata.get('help', '')} (default: {item.default})".strip(),
        )
    return Args(**vars(parser.parse_args(argv)))


def layer_init(layer: nn.Module, std: float = math.sqrt(2), bias: float = 0.0) -> nn.Module:
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


class Agent(nn.Module):
    """Actor-critic on ``uint8`` (n, 4, 84, 84); layer names as :mod:`saber.agents.convnet`."""

    def __init__(self, channels: tuple[int, int, int], hidden: int, num_actions: int) -> None:
        super().__init__()
        c1, c2, c3 = channels
        self.conv1 = layer_init(nn.Conv2d(4, c1, 8, stride=4))  # 84 -> 20
        self.conv2 = layer_init(nn.Conv2d(c1, c2, 4, stride=2))  # 20 -> 9
        self.conv3 = layer_init(nn.Conv2d(c2, c3, 3, stride=1))  # 9 -> 7
        self.fc = layer_init(nn.Linear(c3 * 7 * 7, hidden))
        self.policy = layer_init(nn.Linear(hidden, num_actions), std=0.01)
        self.value = layer_init(nn.Linear(hidden, 1), std=1.0)

    def forward(self, observations: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Action logits (n, actions) and values (n,)."""
        x = observations.float() / 255.0
        x = torch.relu(self.conv3(torch.relu(self.conv2(torch.relu(self.conv1(x))))))
        hidden = torch.relu(self.fc(x.reshape(len(x), -1)))
        return self.policy(hidden), self.value(hidden).squeeze(-1)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    torch.set_flush_denormal(True)  # see examples/ppo_saber.py
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    generator = torch.Generator().manual_seed(args.seed)
    channels = tuple(int(part) for part in args.channels.split(","))
    set_id = args.games.startswith("SABER/")
    envs = gym.make_vec(
        args.games if set_id else "SABER/Games",
        num_envs=args.envs_per_game * len(_games(args.games)),
        clip_rewards=True,
        **({} if set_id else {"games": args.games}),
        **({"max_episode_frames": args.max_episode_frames} if args.max_episode_frames else {}),
    )
    num_envs = envs.num_envs
    args.out.mkdir(parents=True, exist_ok=True)
    envs = VectorTrainingRecorder(envs, args.out / "training.jsonl")
    agent = Agent(channels, args.hidden, int(envs.single_action_space.n))  # type: ignore[arg-type]
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    total_frames = parse_frames(args.total_frames)
    batch = num_envs * args.num_steps
    iterations = max(1, math.ceil(total_frames / (batch * FRAME_SKIP)))
    minibatch_size = max(1, batch // args.num_minibatches)

    shape = (args.num_steps, num_envs)
    buffer_obs = torch.zeros(shape + envs.single_observation_space.shape, dtype=torch.uint8)
    actions = torch.zeros(shape, dtype=torch.long)
    logprobs, rewards, values = torch.zeros(shape), torch.zeros(shape), torch.zeros(shape)
    terminated, ended = torch.zeros(shape), torch.zeros(shape)
    valid = torch.zeros(shape, dtype=torch.bool)
    autoreset = torch.zeros(num_envs, dtype=torch.bool)  # this step is NEXT_STEP's reset
    obs = torch.from_numpy(envs.reset(seed=10_000 * args.seed)[0])
    started = time.perf_counter()
    print(f"PPO on {args.games}: {num_envs} envs, {iterations} iterations of {batch} steps")
    for iteration in range(iterations):
        optimizer.param_groups[0]["lr"] = args.learning_rate * (1.0 - iteration / iterations)
        for step in range(args.num_steps):
            buffer_obs[step] = obs
            valid[step] = ~autoreset
            with torch.inference_mode():
                logits, value = agent(obs)
                action = torch.multinomial(torch.softmax(logits, -1), 1, generator=generator)[:, 0]
                logprobs[step] = torch.log_softmax(logits, -1).gather(1, action[:, None])[:, 0]
            values[step], actions[step] = value, action
            obs_np, reward, term, trunc, _ = envs.step(action.numpy())
            obs = torch.from_numpy(obs_np)
            rewards[step] = torch.from_numpy(np.asarray(reward, dtype=np.float32))
            terminated[step] = torch.from_numpy(term.astype(np.float32))
            autoreset = torch.from_numpy(term | trunc)
            ended[step] = autoreset.float()

        with torch.inference_mode():
            _, next_value = agent(obs)
        advantages, running = torch.zeros(shape), torch.zeros(num_envs)
        for t in reversed(range(args.num_steps)):  # GAE; see examples/ppo_saber.py
            bootstrap = next_value if t == args.num_steps - 1 else values[t + 1]
            delta = rewards[t] + args.gamma * bootstrap * (1.0 - terminated[t]) - values[t]
            running = delta + args.gamma * args.gae_lambda * (1.0 - ended[t]) * running
            advantages[t] = running
        returns = advantages + values

        keep = valid.reshape(-1)
        b_obs = buffer_obs.reshape((-1, *buffer_obs.shape[2:]))[keep]
        b_actions, b_logprobs = actions.reshape(-1)[keep], logprobs.reshape(-1)[keep]
        b_advantages, b_returns = advantages.reshape(-1)[keep], returns.reshape(-1)[keep]
        b_values = values.reshape(-1)[keep]
        for _epoch in range(args.update_epochs):
            order = torch.randperm(len(b_actions), generator=generator)
            for start in range(0, len(b_actions), minibatch_size):
                rows = order[start : start + minibatch_size]
                logits, new_values = agent(b_obs[rows])
                log_probs = torch.log_softmax(logits, -1)
                new_logprob = log_probs.gather(1, b_actions[rows, None])[:, 0]
                entropy = -(log_probs.exp() * log_probs).sum(-1)
                ratio = (new_logprob - b_logprobs[rows]).exp()
                advantage = b_advantages[rows]
                advantage = (advantage - advantage.mean()) / (advantage.std() + 1e-8)
                clip = args.clip_coef
                policy_loss = torch.max(
                    -advantage * ratio, -advantage * ratio.clamp(1 - clip, 1 + clip)
                ).mean()
                clipped = b_values[rows] + (new_values - b_values[rows]).clamp(-clip, clip)
                value_loss = (
                    0.5
                    * torch.max(
                        (new_values - b_returns[rows]) ** 2, (clipped - b_returns[rows]) ** 2
                    ).mean()
                )
                loss = policy_loss - args.ent_coef * entropy.mean() + args.vf_coef * value_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()
        metrics = envs.metrics()
        median = metrics.get("saber/median_wr_normalized")
        print(
            f"iteration {iteration + 1}/{iterations} | {envs.total_frames:,} frames | "
            f"episodes {int(metrics['saber/episodes'])} | median WR-normalized "
            + ("n/a" if median is None else f"{median:.2f}%"),
            flush=True,
        )
    seconds = time.perf_counter() - started
    envs.close()
    provenance = {
        "script": "examples/ppo_multigame.py",
        "command": "python examples/ppo_multigame.py "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "saber": saber.__version__,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "games": list(_games(args.games)),
        "seed": args.seed,
        "frames": envs.total_frames,
        "wall_seconds": round(seconds, 1),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "args": {key: str(value) for key, value in dataclasses.asdict(args).items()},
    }
    layers = {
        f"{name}.{kind}": getattr(getattr(agent, name), kind).detach().numpy()
        for name in LAYERS
        for kind in ("weight", "bias")
    }
    write_policy_file(args.out / "policy.npz", layers, provenance)
    (args.out / "summary.json").write_text(json.dumps(provenance, indent=2) + "\n")
    print(f"Done: {envs.total_frames:,} frames in {seconds:.0f} s; wrote {args.out}")
    return 0


def _games(games: str) -> tuple[str, ...]:
    """The games of ``--games``: a set id's (``SABER/Atari5``), or the list's."""
    from saber.games import game_sets, resolve_games
    from saber.registration import env_id

    if games.startswith("SABER/"):
        by_id = {env_id(name): name for name in game_sets()}
        if games not in by_id:
            raise SystemExit(f"Unknown set id {games!r}; known: {', '.join(by_id)}")
        return tuple(game.ale_id for game in game_sets()[by_id[games]])
    return tuple(game.ale_id for game in resolve_games(games))


if __name__ == "__main__":
    sys.exit(main())
