"""One PPO agent on many games at once: ``gymnasium.make_vec("SABER/Atari5", num_envs=10)``.

In the style of CleanRL's ppo_atari.py (Huang et al. 2022). Under SABER every game has the
same 18 actions and the same observations, so one network plays all the games of the
vector env, with no per-game action head; sub-env ``i`` plays game ``i % 5``. The
algorithm is that of ``examples/ppo_saber.py`` (its docstring says why each choice), and
so is the resuming.

**Two files, not one.** The network (:class:`Agent`, :func:`actor_layers`), the episode
tracks a resume replays (:class:`EpisodeTracks`, :func:`restore_envs`) and the stop on
Ctrl-C or SIGTERM are imported from ``examples/ppo_saber.py``, the baselines' script,
which sits beside this one (``python examples/ppo_multigame.py`` finds it there): CleanRL
keeps each script whole in one file, but a copy of the resume machinery (whose replay
must match the env step for step) would drift from the one the baselines' runs exercise,
and the baselines' network with its measured speed-ups (channels_last) is what a
multi-game agent should train too. The PPO update itself stays here, visible, since
ppo_saber.py writes it inside its ``main``. Copy both files together. A checkpoint
resumes only under the same two files (their SHA-256 together).

* Rollouts of ``num_envs x num_steps`` steps, 4 epochs of 4 minibatches, clip 0.1,
  learning rate 2.5e-4 decayed linearly, entropy 0.01, GAE 0.95, gamma 0.99.
* NEXT_STEP autoreset done right: the step after an end is masked out of the loss and cuts
  the advantage chain; a truncation (stuck timeout, cap) bootstraps, a game over does not.
* Rewards clipped for learning only (``clip_rewards=True``): the scores logged stay raw.

Each training episode is logged by :class:`saber.training.VectorTrainingRecorder`: each
line's ``game`` is its sub-env's and ``frames`` counts that game's frames, so ``saber
training`` gives each game's curve and the median and mean over games of the
world-record-normalized scores.

Checkpoints (``checkpoint.pt``, the one before kept as ``checkpoint.previous.pt``) each
time the frames pass a multiple of ``--checkpoint-frames`` and on Ctrl-C or SIGTERM (then
exit 130 or 143). The same command resumes, and the run ends with the log and network of
an uninterrupted one: every episode is seeded, so a resume plays the episodes in progress
again from their seeds and actions (the vector engine cannot save emulator states), cuts
the log back to the checkpoint's size and gives the recorder each game's frames and
episodes so far. Run::

    python examples/ppo_multigame.py --out runs/ppo-atari5 --total-frames 10M
    saber training runs/ppo-atari5/training.jsonl --at 1M,2M
    saber eval --agent conv-actor:runs/ppo-atari5/policy.npz --games atari5 --out runs/ppo-atari5/eval

Outputs in ``--out``: ``training.jsonl``, ``policy.npz`` (the actor for numpy inference,
:mod:`saber.agents.convnet`, which ``saber eval`` plays), ``summary.json`` and the
checkpoints.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import os
import platform
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import ppo_saber
import torch
from ppo_saber import Agent, EpisodeTracks, Stop, actor_layers, digest, restore_envs
from torch import nn

import saber
from saber.agents.convnet import write_policy_file
from saber.protocol.training import parse_frames
from saber.training import VectorTrainingRecorder

FRAME_SKIP = 4  # SABER's frame repeat: one agent step is 4 emulator frames
CHECKPOINT_FORMAT = "saber-ppo-multigame-2"
UNCHECKED = ("out", "threads", "checkpoint_frames")  # may differ on a resume


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
    checkpoint_frames: str = field(default="1M", metadata={"help": "0: each iteration"})
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


def fail(message: str) -> SystemExit:
    """One line on stderr, exit status 2."""
    print(f"ppo_multigame.py: {message}", file=sys.stderr)
    return SystemExit(2)


def load_checkpoint(paths: tuple[Path, Path], args: Args) -> dict[str, Any] | None:
    """The last checkpoint, or the one before it if the last is damaged (said on stdout);
    None if there is none. Other hyperparameters (or another script) are refused."""
    state = None
    for path in paths:
        if not path.exists():
            continue
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
            if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
                raise ValueError(f"not a {CHECKPOINT_FORMAT} checkpoint")
            break
        except Exception as error:  # torch raises many kinds for a damaged file
            print(f"{path}: not a readable checkpoint ({type(error).__name__}), skipped")
            state = None
    if state is None:
        if any(path.exists() for path in paths):
            raise fail(f"{args.out}: no readable checkpoint; delete them to start afresh")
        return None
    wanted = resumable_args(args)
    differences = [key for key in wanted if state["args"].get(key) != wanted[key]]
    if state["script_sha256"] != script_sha256() or differences:
        what = (
            f"other hyperparameters ({', '.join(differences)})" if differences else "another script"
        )
        raise fail(f"{args.out}: refusing to resume a training of {what}; use another --out")
    return state


def script_sha256() -> str:
    """SHA-256 of this file and of ppo_saber.py, whose pieces it trains with."""
    code = Path(__file__).read_bytes() + Path(ppo_saber.__file__).read_bytes()
    return hashlib.sha256(code).hexdigest()


def resumable_args(args: Args) -> dict[str, str]:
    return {
        key: str(value) for key, value in dataclasses.asdict(args).items() if key not in UNCHECKED
    }


def truncate_log(log: Path, size: int) -> None:
    """Cut ``log`` back to the ``size`` bytes the checkpoint saw: lines after it are
    episodes the resumed training plays again."""
    if (log.stat().st_size if log.exists() else 0) < size:
        raise fail(f"{log} is shorter than the checkpoint's log: restore it or start afresh")
    with log.open("rb+") as handle:
        handle.truncate(size)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    torch.set_flush_denormal(True)  # see examples/ppo_saber.py
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    generator = torch.Generator().manual_seed(args.seed)
    channels = tuple(int(part) for part in args.channels.split(","))
    args.out.mkdir(parents=True, exist_ok=True)
    log_path = args.out / "training.jsonl"
    checkpoint_paths = (args.out / "checkpoint.pt", args.out / "checkpoint.previous.pt")
    state = load_checkpoint(checkpoint_paths, args)
    if state is not None:
        truncate_log(log_path, state["log_bytes"])
    elif log_path.exists() and log_path.stat().st_size:
        raise fail(f"{log_path} holds a training log but no checkpoint: choose another --out")
    set_id = args.games.startswith("SABER/")
    envs = gym.make_vec(
        args.games if set_id else "SABER/Games",
        num_envs=args.envs_per_game * len(_games(args.games)),
        clip_rewards=True,
        **({} if set_id else {"games": args.games}),
        **({"max_episode_frames": args.max_episode_frames} if args.max_episode_frames else {}),
    )
    envs.unwrapped.seed_each_episode = True  # every episode replays from its seed
    num_envs = envs.num_envs
    num_actions = int(envs.single_action_space.n)  # type: ignore[attr-defined]
    agent = Agent(channels, args.hidden, num_actions).to(memory_format=torch.channels_last)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    total_frames = parse_frames(args.total_frames)
    checkpoint_frames = parse_frames(args.checkpoint_frames)
    batch = num_envs * args.num_steps
    iterations = max(1, math.ceil(total_frames / (batch * FRAME_SKIP)))
    minibatch_size = max(1, batch // args.num_minibatches)
    autoreset = torch.zeros(num_envs, dtype=torch.bool)  # this step is NEXT_STEP's reset
    progress: dict[str, Any] = {"iteration": 0, "frames": {}, "episodes": {}, "resumes": 0}
    if state is None:
        obs_np = envs.reset(seed=10_000 * args.seed)[0]
        tracks = EpisodeTracks(envs.unwrapped.episode_seeds)
        start_frames: dict[str, int] | int = 0
    else:
        agent.load_state_dict(state["agent"])
        optimizer.load_state_dict(state["optimizer"])
        generator.set_state(state["generator"])
        torch.set_rng_state(state["torch_rng"])
        progress = state["progress"]
        progress["resumes"] += 1
        tracks = EpisodeTracks.from_state(state["tracks"])
        obs_np, frames = restore_envs(envs, tracks)
        if digest(obs_np) != state["obs_sha256"]:
            raise fail("replaying the episodes in progress did not give the checkpoint's obs")
        autoreset = state["autoreset"].clone()
        # The recorder counts the episodes in progress again from their first frame.
        in_progress = np.where(autoreset.numpy(), 0, frames)
        rows = np.asarray(envs.unwrapped.row_games)
        start_frames = {
            game: count - int(in_progress[rows == game].sum())
            for game, count in progress["frames"].items()
        }
        print(f"Resuming at iteration {progress['iteration']}/{iterations}")
    envs = VectorTrainingRecorder(
        envs, log_path, start_frames=start_frames, start_episodes=progress["episodes"] or 0
    )
    resumed_at = progress["iteration"]

    def save_checkpoint() -> None:
        # Until the first step after a resume the recorder's counts are short of the
        # episodes in progress: the checkpoint's are kept.
        if progress["iteration"] > resumed_at or not progress["frames"]:
            progress["frames"] = envs.log.frames_by_game
            progress["episodes"] = envs.log.episodes_by_game
        payload = {
            "format": CHECKPOINT_FORMAT,
            "script_sha256": script_sha256(),
            "args": resumable_args(args),
            "agent": agent.state_dict(),
            "optimizer": optimizer.state_dict(),
            "generator": generator.get_state(),
            "torch_rng": torch.get_rng_state(),
            "progress": progress,
            "log_bytes": log_path.stat().st_size if log_path.exists() else 0,
            "tracks": tracks.state(),
            "autoreset": autoreset.clone(),
            "obs_sha256": digest(obs.numpy()),
        }
        last, previous = checkpoint_paths
        partial = last.with_name(last.name + ".partial")
        torch.save(payload, partial)
        with open(partial, "rb+") as handle:
            os.fsync(handle.fileno())
        if last.exists():  # the one before kept: a kill between the renames leaves it
            os.replace(last, previous)
        os.replace(partial, last)

    obs = torch.from_numpy(obs_np)
    shape = (args.num_steps, num_envs)
    buffer_obs = torch.zeros(shape + envs.single_observation_space.shape, dtype=torch.uint8)
    actions = torch.zeros(shape, dtype=torch.long)
    logprobs, rewards, values = torch.zeros(shape), torch.zeros(shape), torch.zeros(shape)
    terminated, ended = torch.zeros(shape), torch.zeros(shape)
    valid = torch.zeros(shape, dtype=torch.bool)
    stop = Stop()
    started = time.perf_counter()
    print(f"PPO on {args.games}: {num_envs} envs, {iterations} iterations of {batch} steps")
    while progress["iteration"] < iterations and stop.signal is None:
        iteration = progress["iteration"]
        iteration_frames = envs.total_frames
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
            tracks.step(action.numpy(), autoreset.numpy(), envs.unwrapped.episode_seeds)
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
        progress["iteration"] += 1
        metrics = envs.metrics()
        median = metrics.get("saber/median_wr_normalized")
        print(
            f"iteration {iteration + 1}/{iterations} | {envs.total_frames:,} frames | "
            f"episodes {int(metrics['saber/episodes'])} | median WR-normalized "
            + ("n/a" if median is None else f"{median:.2f}%"),
            flush=True,
        )
        # A checkpoint each time the frames pass a multiple of --checkpoint-frames.
        if not checkpoint_frames or (
            envs.total_frames // checkpoint_frames > iteration_frames // checkpoint_frames
        ):
            save_checkpoint()
    save_checkpoint()
    seconds = time.perf_counter() - started
    envs.close()
    if stop.signal is not None:
        print(f"{signal.Signals(stop.signal).name}: checkpoint saved; the same command resumes")
        return 128 + stop.signal
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
        "resumes": progress["resumes"],
        "wall_seconds": round(seconds, 1),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "args": {key: str(value) for key, value in dataclasses.asdict(args).items()},
    }
    # Every game of the many-games env plays the 18 actions: the ids are all of them.
    all_actions = list(range(agent.policy.out_features))
    write_policy_file(args.out / "policy.npz", actor_layers(agent, all_actions), provenance)
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
