"""DQN on SABER's vector env, in one file (in the style of CleanRL's dqn_atari.py).

Shows what a training loop must do on ``gymnasium.make_vec("SABER/<Game>", num_envs=N)``:

* Gymnasium 1.x's NEXT_STEP autoreset: the step after an episode ends returns the first
  observation of the next episode, reward 0, and ignores the action. That "transition"
  (last frame -> first frame of a new game) never happened, so it is not stored.
* ``clip_rewards=True``: the agent learns from rewards clipped to [-1, 1], while the
  scores in ``info["saber"]`` (and so in the training log) stay raw.
* Truncations (the 5-minute stuck timeout, the 100-hour cap) are not terminal: the
  target bootstraps from the last observation; only a game over ends the return.
* Every training episode goes to a log (``VectorTrainingRecorder``) with the cumulative
  training frames, from which ``saber training LOG --at 10M,50M`` computes the
  paper's training-time scores (mean of 100 consecutive episodes at each checkpoint).

Run (the defaults are a real, long training; flags shrink it):

    python examples/dqn_vector.py --game Breakout --num-envs 8 --total-steps 10000000
    python examples/dqn_vector.py --total-steps 20000 --learning-starts 2000   # a quick look
    python examples/dqn_vector.py --tensorboard runs/dqn/tb   # SABER's metrics in TensorBoard
    saber training runs/dqn/training.jsonl --at 10M,40M
    python examples/evaluate_torch_policy.py runs/dqn/checkpoint.pt --games breakout

The checkpoint (``--checkpoint``) holds the network's architecture and weights
(``nature_cnn.save_checkpoint``), which ``evaluate_torch_policy.py`` loads.
Memory: the replay buffer stores 35 KB per transition (the 4-frame observation plus the
next frame), so the default 100,000 transitions take 3.5 GB once full.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
import torch.nn.functional as F
from nature_cnn import NatureCNN, save_checkpoint

import saber  # noqa: F401  (registers SABER/*: Gymnasium 1.x loads no entry-point plugins)
from saber.training import VectorTrainingRecorder, format_training_scores, training_scores


@dataclass
class Args:
    """Hyperparameters: Mnih et al. (2015) / CleanRL's, counted in agent steps (all sub-envs)."""

    game: str = field(default="Breakout", metadata={"help": "SABER/<game>"})
    num_envs: int = field(default=8, metadata={"help": "sub-envs of the vector env"})
    seed: int = field(default=1, metadata={"help": "env, network and exploration seed"})
    total_steps: int = field(default=10_000_000, metadata={"help": "agent steps (x4 frames)"})
    learning_rate: float = 1e-4
    buffer_size: int = field(default=100_000, metadata={"help": "transitions (35 KB each)"})
    gamma: float = 0.99
    target_network_frequency: int = field(default=1000, metadata={"help": "agent steps"})
    batch_size: int = 32
    start_e: float = 1.0
    end_e: float = 0.01
    exploration_fraction: float = field(
        default=0.10, metadata={"help": "share of total-steps to anneal epsilon over"}
    )
    learning_starts: int = field(default=80_000, metadata={"help": "agent steps before training"})
    train_frequency: int = field(default=4, metadata={"help": "agent steps per gradient step"})
    log: Path = field(default=Path("runs/dqn/training.jsonl"), metadata={"help": "training log"})
    checkpoint: Path = field(default=Path("runs/dqn/checkpoint.pt"), metadata={"help": "output"})
    save_every: int = field(default=1_000_000, metadata={"help": "agent steps between saves"})
    tensorboard: Path | None = field(
        default=None,
        metadata={"help": "TensorBoard log dir for SABER's metrics (saber/...) and the loss"},
    )
    max_episode_frames: int | None = field(
        default=None,
        metadata={"help": "cap episodes (smoke tests); not SABER, so the log is not SABER's"},
    )


def parse_args(argv: list[str] | None = None) -> Args:
    """Each field of Args becomes a --flag (underscores as dashes), with its default."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for item in dataclasses.fields(Args):
        # The annotations are strings (from __future__ import annotations).
        kind = {
            "int": int,
            "float": float,
            "str": str,
            "Path": Path,
            "int | None": int,
            "Path | None": Path,
        }
        parser.add_argument(
            "--" + item.name.replace("_", "-"),
            type=kind[str(item.type)],
            default=item.default,
            help=f"{item.metadata.get('help', '')} (default: {item.default})".strip(),
        )
    return Args(**vars(parser.parse_args(argv)))


class ReplayBuffer:
    """A ring of transitions in numpy; ``next_obs`` is rebuilt from ``obs`` and one frame.

    Within an episode, the next observation is the current one shifted by a frame plus
    the newest frame, so only that frame is stored (4 frames + 1 instead of 4 + 4). It
    holds because transitions across an autoreset are never added.
    """

    def __init__(self, capacity: int, obs_shape: tuple[int, ...]) -> None:
        self.capacity = capacity
        self.obs = np.zeros((capacity, *obs_shape), dtype=np.uint8)
        self.next_frames = np.zeros((capacity, *obs_shape[1:]), dtype=np.uint8)
        self.actions = np.zeros(capacity, dtype=np.int64)
        self.rewards = np.zeros(capacity, dtype=np.float32)
        self.terminated = np.zeros(capacity, dtype=np.float32)
        self.position = 0
        self.size = 0

    def add(
        self,
        obs: np.ndarray,
        next_obs: np.ndarray,
        actions: np.ndarray,
        rewards: np.ndarray,
        terminated: np.ndarray,
    ) -> None:
        rows = (self.position + np.arange(len(obs))) % self.capacity
        self.obs[rows] = obs
        self.next_frames[rows] = next_obs[:, -1]
        self.actions[rows] = actions
        self.rewards[rows] = rewards
        self.terminated[rows] = terminated
        self.position = int((self.position + len(obs)) % self.capacity)
        self.size = min(self.size + len(obs), self.capacity)

    def sample(self, batch_size: int, rng: np.random.Generator) -> dict[str, torch.Tensor]:
        rows = rng.integers(self.size, size=batch_size)
        obs = self.obs[rows]
        next_obs = np.concatenate([obs[:, 1:], self.next_frames[rows, None]], axis=1)
        return {
            "obs": torch.from_numpy(obs),
            "next_obs": torch.from_numpy(next_obs),
            "actions": torch.from_numpy(self.actions[rows]),
            "rewards": torch.from_numpy(self.rewards[rows]),
            "terminated": torch.from_numpy(self.terminated[rows]),
        }


def linear_schedule(start: float, end: float, duration: float, step: int) -> float:
    """``start`` at step 0, ``end`` from step ``duration`` on, linear in between."""
    return max(end, start + (end - start) * step / max(duration, 1.0))


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.log.exists() and args.log.stat().st_size:
        # The recorder appends, and frames would restart from 0 in the middle of the log.
        raise SystemExit(f"{args.log} already holds a training log: choose another --log")
    rng = np.random.default_rng(args.seed)
    torch.manual_seed(args.seed)

    overrides: dict[str, Any] = {}
    if args.max_episode_frames is not None:
        overrides["max_episode_frames"] = args.max_episode_frames
        print(f"max_episode_frames={args.max_episode_frames}: not SABER, for smoke tests only")
    # clip_rewards clips the rewards returned by step() (the learning signal) and keeps the
    # SABER protocol: the scores in info["saber"], which the recorder logs, stay raw.
    envs = VectorTrainingRecorder(
        gym.make_vec(f"SABER/{args.game}", num_envs=args.num_envs, clip_rewards=True, **overrides),
        args.log,
    )
    q_network = NatureCNN(num_actions=int(envs.single_action_space.n))
    target_network = NatureCNN(num_actions=int(envs.single_action_space.n))
    target_network.load_state_dict(q_network.state_dict())
    optimizer = torch.optim.Adam(q_network.parameters(), lr=args.learning_rate)
    buffer = ReplayBuffer(args.buffer_size, envs.single_observation_space.shape)
    writer = None
    if args.tensorboard is not None:
        from torch.utils.tensorboard import SummaryWriter  # needs the tensorboard package

        writer = SummaryWriter(str(args.tensorboard))

    def save(step: int, updates: int) -> None:
        metadata = {
            "game": args.game,
            "agent_steps": step,
            "gradient_steps": updates,
            "trained_frames": envs.total_frames,
            "episodes": envs.log.episodes,
            "args": {k: str(v) for k, v in dataclasses.asdict(args).items()},
        }
        save_checkpoint(args.checkpoint, q_network, metadata)

    obs, _ = envs.reset(seed=args.seed)
    # Rows whose previous step ended an episode: this step is their autoreset (NEXT_STEP).
    autoreset = np.zeros(args.num_envs, dtype=bool)
    # updates_done: the agent steps' share of updates, dealt with (run, or skipped before
    # learning_starts); gradient_steps: the updates actually run.
    updates_done, gradient_steps, target_synced, last_save = 0, 0, 0, 0
    started = time.monotonic()
    step = 0  # agent steps taken by all sub-envs together
    while step < args.total_steps:
        epsilon = linear_schedule(
            args.start_e, args.end_e, args.exploration_fraction * args.total_steps, step
        )
        with torch.no_grad():
            actions = q_network(torch.from_numpy(obs)).argmax(dim=1).numpy()
        explore = rng.random(args.num_envs) < epsilon
        actions[explore] = rng.integers(envs.single_action_space.n, size=int(explore.sum()))

        next_obs, rewards, terminated, truncated, info = envs.step(actions)
        # Under NEXT_STEP, next_obs of an ending row is its real last observation (kept for
        # the transition); the reset comes at the row's next step, which we skip here.
        real = ~autoreset
        buffer.add(obs[real], next_obs[real], actions[real], rewards[real], terminated[real])
        autoreset = terminated | truncated
        obs = next_obs
        step += int(real.sum())

        if "_saber" in info:
            for row in np.flatnonzero(info["_saber"]):
                print(
                    f"step {step:>9,} frames {envs.total_frames:>11,} env {row} "
                    f"score {info['saber']['score'][row]:8.1f} ({info['saber']['end'][row]}) "
                    f"epsilon {epsilon:.3f}"
                )
            if writer is not None:
                # SABER's training numbers (mean of the last 100 episodes raw and
                # world-record-normalized, 5/30-minute scores, checkpoints, infinite and
                # stuck episodes), against the training's emulator frames.
                for key, value in envs.metrics().items():
                    writer.add_scalar(key, value, envs.total_frames)

        if step >= args.learning_starts and buffer.size >= args.batch_size:
            # train_frequency counts agent steps: N sub-envs bring N steps per call.
            while updates_done < step // args.train_frequency:
                updates_done += 1
                gradient_steps += 1
                batch = buffer.sample(args.batch_size, rng)
                with torch.no_grad():
                    next_q = target_network(batch["next_obs"]).max(dim=1).values
                    target = batch["rewards"] + args.gamma * next_q * (1.0 - batch["terminated"])
                q = q_network(batch["obs"]).gather(1, batch["actions"][:, None]).squeeze(1)
                loss = F.smooth_l1_loss(q, target)  # Huber, as in Mnih et al. (2015)
                if writer is not None and gradient_steps % 100 == 0:
                    writer.add_scalar("losses/td_loss", loss.item(), envs.total_frames)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            if step // args.target_network_frequency > target_synced:
                target_synced = step // args.target_network_frequency
                target_network.load_state_dict(q_network.state_dict())
        else:
            updates_done = step // args.train_frequency  # no backlog of updates at the start
        if step - last_save >= args.save_every:
            save(step, gradient_steps)
            last_save = step

    save(step, gradient_steps)
    if writer is not None:
        for key, value in envs.metrics().items():
            writer.add_scalar(key, value, envs.total_frames)
        writer.close()
    envs.close()
    seconds = time.monotonic() - started
    print(
        f"{step:,} agent steps, {envs.total_frames:,} frames, {envs.log.episodes} episodes, "
        f"{gradient_steps:,} updates in {seconds:.0f} s"
    )
    print(f"checkpoint: {args.checkpoint}\ntraining log: {args.log}")
    if envs.log.episodes:
        # The score now: mean of the last 100 training episodes (the paper's training score).
        frames = envs.total_frames  # the training went on past its last logged episode
        print(format_training_scores(training_scores(args.log, [frames], trained_frames=frames)))


if __name__ == "__main__":
    main()
