"""PPO on SABER, sized for a 2-core CPU: the training behind saber's built-in PPO agents.

One file in the style of CleanRL's ppo_atari.py (Huang et al. 2022), on
``gymnasium.make_vec("SABER/<Game>")``: sticky actions 0.25, all 18 actions, no life
signal, no FIRE or no-op starts, the 5-minute stuck timeout and the 100-hour cap. It
keeps CleanRL's algorithm and hyperparameters (rollouts of 1,024 steps, 4 epochs of 4
minibatches, clip 0.1, learning rate 2.5e-4 decayed linearly, entropy 0.01, GAE 0.95)
and changes what a 2-core CPU and the SABER env need:

* **16 envs x 64 steps** instead of 8 x 128 (the same 1,024 steps per update): a batch
  of 16 costs less per step to emulate and to act on (measured: 3,190 against 2,870
  frames/s over the same 120k frames).
* **10M frames** by default: SABER's baselines budget (docs/baselines.md); ``ppo-pong``
  was trained for 21M (``--total-frames 21M``). The budget sets the number of updates
  (10M frames: 2,442 of 1,024 agent steps, 4 frames each); the frames the emulators play
  are a little fewer (about 0.3% on Breakout), since the autoreset step after each
  episode's end plays none, and the log and summary count those played.
* **A half-width network** (16-32-32 filters, 256 units instead of 32-64-64 and 512): on
  two cores the Nature CNN's gradient costs 1.6x more per sample, and the policy must
  ship inside the package (this one: about 0.9 MB in float16).
* **Denormal floats flushed to zero** (``torch.set_flush_denormal``): Adam's first moments
  of units that stopped firing decay by 0.9 a step into the denormal range, where x86
  arithmetic is ~100x slower (a quarter of the dense layer's moments were denormal after
  1M frames in a first attempt at ppo-pong, which slowed to 60% of its speed). Set before
  any torch thread starts, so the workers inherit it.
* **channels_last tensors**: oneDNN's convolutions run 1.7x faster on this CPU with the
  channels in the last dimension (a batch of 256, forward, backward and Adam, 2 threads).
* **NEXT_STEP autoreset done right**: the step after an episode's end returns the first
  observation of the next episode, reward 0, and ignores the action; that transition
  never happened, so it is masked out of the loss and cuts the advantage chain.
* **Truncation is not death**: a stuck timeout or the frame cap bootstraps the return
  from the last observation's value; only a game over ends it.
* **Rewards clipped for learning only** (``clip_rewards=True``): the scores in
  ``info["saber"]``, and so in the training log, stay raw, as SABER requires.

**Other setups, to measure what SABER costs** (``--setup``, not SABER: refused without
``--allow-non-saber``, and written into the summary and the policy file's provenance):
``lifeloss`` is SABER with each life lost taken by the learner as an episode end (no
bootstrap across it, the advantage chain cut) while the game goes on, as CleanRL's
``EpisodicLifeEnv`` does; ``cleanrl`` is the setup of CleanRL's ``ppo_atari.py``: that, no
sticky actions, the game's minimal action set, FIRE then the minimal set's third action
after each start and each life lost (``FireResetEnv``, where the set's second action is
FIRE), 1 to 30 no-op frames at each game's start (``NoopResetEnv``; played as 1 to 8
steps of 4 frames, drawn from the episode's seed), the 108,000-frame cap and no stuck
timeout. The forced steps (no-ops, FIRE) are masked out of the loss, as the autoreset
step is. A minimal-set policy's file has all 18 logits: its own at their ALE ids, the
others :data:`UNCHOSEN_LOGIT`, so ``saber eval`` plays it under SABER unchanged. The
default, ``saber``, trains exactly as without these options.

It logs every training episode with saber's :class:`VectorTrainingRecorder` (so
``saber training`` and ``saber report`` draw its curve), and every update's diagnostics
in ``updates.jsonl`` beside it (``saber training LOG --plots`` draws them): the means over
the update's minibatches of the policy and value losses, the entropy, the approximate KL
(the k3 estimator of CleanRL and SB3), the clip fraction and the gradient norm before
clipping; the explained variance of the rollout's values; and how often each action was
taken. They are computed from tensors the update has already made, after its steps, so
they change nothing that is learned (``--diagnostics 0`` leaves them out: the same log
and network, tested). It prints progress every 30 s.

**Checkpoints and resuming.** A checkpoint is written each time the frames pass a
multiple of ``--checkpoint-frames`` (1M), and on Ctrl-C or SIGTERM (then the script exits
130 or 143); the one before it is kept. Run the same command again to resume: after
Ctrl-C, SIGTERM or kill -9 at any moment, the training goes on from the last checkpoint
and ends with the very training log, and the very network, that it would have had
without the stop. Everything is restored: the network, Adam, the random generators, and
the environments, whose episodes in progress are played again from their seeds and
actions (:class:`EpisodeTracks`; every episode is seeded). Lines logged after the
checkpoint are cut and played again. A damaged last checkpoint falls back to the one
before it, and says so. A resume under another version of this file, other
hyperparameters or another seed is refused in one line.

Run (the defaults are the baselines' settings: 10M frames, about an hour on 2 cores):

    python examples/ppo_saber.py --game Breakout --seed 1 --out runs/ppo-breakout-1
    python examples/ppo_saber.py --out runs/quick --total-frames 200k   # a quick look
    saber training runs/ppo-breakout-1/training.jsonl --at 5M,10M
    saber eval --agent conv-actor:runs/ppo-breakout-1/policy.npz --games breakout

Outputs in ``--out``: ``training.jsonl`` (the log), ``updates.jsonl`` (the diagnostics),
``checkpoint.pt`` and
``checkpoint.previous.pt`` (everything to resume), ``policy.npz`` (the actor for numpy
inference, :mod:`saber.agents.convnet`) and ``summary.json`` (provenance: the command,
commit, versions, frames, wall time, frames/s and where the time went).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import hashlib
import json
import math
import os
import platform
import signal
import subprocess
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ale_py
import gymnasium as gym
import numpy as np
import torch
from torch import nn

import saber
from saber.agents.convnet import LAYERS, write_policy_file
from saber.envs.emulator import rom_path
from saber.envs.factory import resolve_rom_id
from saber.protocol.settings import NUM_ACTIONS
from saber.protocol.training import parse_frames
from saber.training import VectorTrainingRecorder

CHECKPOINT_FORMAT = "saber-examples/ppo-saber/1"
FRAME_SKIP = 4  # SABER's frame repeat: one agent step is 4 emulator frames
PROGRESS_EVERY = 30.0  # seconds between progress lines
RECENT = 20  # episodes in the progress line's recent mean
# The logit of an action outside a minimal set in the policy file: exp(-1e4) is 0.0 in
# float64, so the 18-way softmax is the minimal set's exactly; float16 holds it exactly.
UNCHOSEN_LOGIT = -1e4
NOOP_STREAM = 0x4E00  # mixed into an episode's seed to draw its no-op start


@dataclass(frozen=True)
class Setup:
    """How the env and the learner differ from SABER's (``--setup``)."""

    settings: dict[str, Any]  # SaberSettings overrides for make_vec
    life_loss: bool  # a life lost ends the learner's episode (EpisodicLifeEnv)
    minimal_actions: bool  # the policy chooses among the game's minimal action set
    fire_reset: bool  # FIRE, then the set's third action, after a start or a life lost
    noop_max: int  # 1 to noop_max no-op frames at each game's start (0: none)

    def deviations(self, game: str) -> list[str]:
        """What this setup changes, in words (empty for SABER's)."""
        said = [f"{name}={value}" for name, value in self.settings.items() if name != "life_signal"]
        if self.life_loss:
            said.append("a life lost ends the learner's episode")
        if self.minimal_actions:
            said.append(f"the minimal action set ({len(minimal_action_ids(game))} of 18)")
        if self.fire_reset and fires_to_start(game):
            said.append("FIRE after each start and life lost")
        if self.noop_max:
            said.append(f"1 to {self.noop_max} no-op frames at each start")
        return said


SETUPS = {
    "saber": Setup({}, life_loss=False, minimal_actions=False, fire_reset=False, noop_max=0),
    "lifeloss": Setup(
        {"life_signal": True}, life_loss=True, minimal_actions=False, fire_reset=False, noop_max=0
    ),
    "cleanrl": Setup(
        {
            "life_signal": True,
            "repeat_action_probability": 0.0,
            "max_episode_frames": 108_000,
            "max_frames_without_reward": None,
        },
        life_loss=True,
        minimal_actions=True,
        fire_reset=True,
        noop_max=30,
    ),
}


@functools.cache  # each caller would load the ROM again
def minimal_action_ids(game: str) -> tuple[int, ...]:
    """The ALE ids of the game's minimal action set (an SABER action's index is its id)."""
    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)  # before the banner
    ale = ale_py.ALEInterface()
    ale.loadROM(str(rom_path(resolve_rom_id(game))))
    return tuple(action.value for action in ale.getMinimalActionSet())


def fires_to_start(game: str) -> bool:
    """CleanRL's test for FireResetEnv: the minimal set's second action is FIRE."""
    ids = minimal_action_ids(game)
    return len(ids) > 2 and ids[1] == ale_py.Action.FIRE.value


class ForcedSteps:
    """Each sub-env's queue of forced actions (indices of the policy's actions): the no-ops
    and FIRE that CleanRL's reset wrappers play before the policy acts."""

    def __init__(self, setup: Setup, game: str, num_envs: int) -> None:
        self.setup = setup
        self.fire = setup.fire_reset and fires_to_start(game)
        self.queues: list[list[int]] = [[] for _ in range(num_envs)]

    def episode_started(self, row: int, seed: int) -> None:
        """A new game: its no-op start (frames drawn from its seed), then FIRE."""
        noops = 0
        if self.setup.noop_max:
            draw = np.random.default_rng([seed, NOOP_STREAM]).integers(self.setup.noop_max)
            noops = math.ceil((1 + int(draw)) / FRAME_SKIP)
        self.queues[row] = [0] * noops + ([1, 2] if self.fire else [])

    def life_lost(self, row: int) -> None:
        """EpisodicLifeEnv's no-op step, then FIRE (FireResetEnv)."""
        self.queues[row] = [0, 1, 2] if self.fire else []

    def apply(self, actions: torch.Tensor) -> torch.Tensor:
        """Replace the actions of rows with a forced one (popped); True for those rows."""
        forced = torch.zeros(len(actions), dtype=torch.bool)
        for row, queue in enumerate(self.queues):
            if queue:
                actions[row] = queue.pop(0)
                forced[row] = True
        return forced


@dataclass
class Args:
    """Hyperparameters (``resume: False`` marks those a resumed run may change)."""

    game: str = field(default="Pong", metadata={"help": "SABER/<game>"})
    seed: int = field(default=1, metadata={"help": "env, network and sampling seed"})
    total_frames: str = field(default="10M", metadata={"help": "emulator frames (all envs)"})
    num_envs: int = 16
    num_steps: int = field(default=64, metadata={"help": "steps per env per rollout"})
    learning_rate: float = 2.5e-4
    anneal_lr: int = field(default=1, metadata={"help": "1: decay linearly to 0"})
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
    setup: str = field(
        default="saber", metadata={"help": "saber, lifeloss or cleanrl (not SABER: see above)"}
    )
    allow_non_saber: bool = field(
        default=False, metadata={"help": "train a setup other than SABER's", "resume": False}
    )
    diagnostics: int = field(
        default=1, metadata={"help": "1: log each update's diagnostics in updates.jsonl"}
    )
    out: Path = field(
        default=Path("runs/ppo-pong"), metadata={"help": "run directory", "resume": False}
    )
    threads: int = field(
        default=0, metadata={"help": "torch threads (0: every core)", "resume": False}
    )
    checkpoint_frames: str = field(
        default="1M",
        metadata={"help": "frames between checkpoints (0: every iteration)", "resume": False},
    )


def parse_args(argv: list[str] | None = None) -> Args:
    """Each field of Args becomes a --flag (underscores as dashes), with its default."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    kinds = {"int": int, "float": float, "str": str, "Path": Path}
    for item in dataclasses.fields(Args):
        if str(item.type) == "bool":
            parser.add_argument(
                "--" + item.name.replace("_", "-"), action="store_true", help=item.metadata["help"]
            )
            continue
        parser.add_argument(
            "--" + item.name.replace("_", "-"),
            type=kinds[str(item.type)],
            default=item.default,
            help=f"{item.metadata.get('help', '')} (default: {item.default})".strip(),
        )
    return Args(**vars(parser.parse_args(argv)))


def resumable_args(args: Args) -> dict[str, Any]:
    """The hyperparameters a resume must keep (all but the operational fields)."""
    return {
        item.name: getattr(args, item.name)
        for item in dataclasses.fields(Args)
        if item.metadata.get("resume", True)
    }


def layer_init(layer: nn.Module, std: float = math.sqrt(2), bias: float = 0.0) -> nn.Module:
    """CleanRL's initialization: orthogonal weights, constant biases."""
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


class Agent(nn.Module):
    """Actor-critic on ``uint8`` (n, 4, 84, 84): three convolutions, a dense layer, two heads.

    The layer names are those :mod:`saber.agents.convnet` reads (``conv1`` ... ``fc``,
    ``policy``): :func:`actor_layers` hands them to its policy file for numpy inference.
    """

    def __init__(self, channels: tuple[int, int, int], hidden: int, num_actions: int) -> None:
        super().__init__()
        c1, c2, c3 = channels
        self.conv1 = layer_init(nn.Conv2d(4, c1, 8, stride=4))  # 84 -> 20
        self.conv2 = layer_init(nn.Conv2d(c1, c2, 4, stride=2))  # 20 -> 9
        self.conv3 = layer_init(nn.Conv2d(c2, c3, 3, stride=1))  # 9 -> 7
        self.fc = layer_init(nn.Linear(c3 * 7 * 7, hidden))
        self.policy = layer_init(nn.Linear(hidden, num_actions), std=0.01)
        self.value = layer_init(nn.Linear(hidden, 1), std=1.0)

    def features(self, observations: torch.Tensor) -> torch.Tensor:
        x = (observations.float() / 255.0).contiguous(memory_format=torch.channels_last)
        x = torch.relu(self.conv1(x))
        x = torch.relu(self.conv2(x))
        x = torch.relu(self.conv3(x))
        # reshape (not view): flattens in (C, H, W) order whatever the memory format.
        return torch.relu(self.fc(x.reshape(len(x), -1)))

    def forward(self, observations: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Action logits (n, actions) and values (n,)."""
        hidden = self.features(observations)
        return self.policy(hidden), self.value(hidden).squeeze(-1)


def actor_layers(agent: Agent, action_ids: list[int]) -> dict[str, np.ndarray]:
    """The actor's arrays by the names :mod:`saber.agents.convnet` reads (no value head),
    with 18 logits: those of a policy over ``action_ids`` (the ALE ids of its actions) at
    their ids, the others :data:`UNCHOSEN_LOGIT` (never drawn)."""
    layers = {
        f"{name}.{kind}": getattr(getattr(agent, name), kind).detach().cpu().numpy()
        for name in LAYERS
        for kind in ("weight", "bias")
    }
    if len(action_ids) < NUM_ACTIONS:
        weight = np.zeros((NUM_ACTIONS, layers["policy.weight"].shape[1]), np.float32)
        bias = np.full(NUM_ACTIONS, UNCHOSEN_LOGIT, np.float32)
        weight[action_ids], bias[action_ids] = layers["policy.weight"], layers["policy.bias"]
        layers["policy.weight"], layers["policy.bias"] = weight, bias
    return layers


def git_commit() -> str:
    """The commit the script runs from (with ``-dirty`` for uncommitted changes)."""
    try:
        return subprocess.run(
            ["git", "describe", "--always", "--dirty", "--abbrev=12"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).parent,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


class Stop:
    """Ctrl-C or SIGTERM asks the loop to checkpoint and stop at the end of the rollout."""

    def __init__(self) -> None:
        self.signal: int | None = None
        for number in (signal.SIGINT, signal.SIGTERM):
            signal.signal(number, self._ask)

    def _ask(self, number: int, frame: Any) -> None:
        if self.signal is None:
            print(f"\n{signal.Signals(number).name}: saving a checkpoint, then stopping")
        self.signal = number


def fail(message: str) -> SystemExit:
    """One line on stderr and exit status 2 (bad input: no traceback)."""
    print(f"ppo_saber.py: {message}", file=sys.stderr)
    return SystemExit(2)


def script_sha256() -> str:
    """SHA-256 of this file: a checkpoint resumes only under the script that wrote it."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


def read_checkpoint(path: Path) -> dict[str, Any]:
    """The checkpoint at ``path``; ValueError (one line) if unreadable or foreign."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises many kinds for a damaged file
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ValueError(f"{path}: not a readable checkpoint ({first})") from None
    if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path}: not a {CHECKPOINT_FORMAT} checkpoint")
    return state


def load_checkpoint(paths: tuple[Path, Path], args: Args) -> dict[str, Any] | None:
    """The last checkpoint (``paths[0]``), or the one before it (``paths[1]``) if the last
    is damaged or missing (said on stdout); None if there is none. A checkpoint of another
    script, other hyperparameters or another seed is refused with one line."""
    last, previous = paths
    state = None
    try:
        if last.exists():
            state = read_checkpoint(last)
    except ValueError as damage:
        if not previous.exists():
            raise fail(f"{damage}; delete it to start afresh") from None
        print(f"{damage}: falling back to the checkpoint before it, {previous}")
    if state is None and previous.exists():
        try:
            state = read_checkpoint(previous)
        except ValueError as damage:
            raise fail(f"{damage}, and the last one too; delete both to start afresh") from None
    if state is None:
        return None
    if state["script_sha256"] != script_sha256():
        raise fail(
            f"{last.parent}: refusing to resume a training of another script (its SHA-256 "
            f"{state['script_sha256'][:12]}..., this one {script_sha256()[:12]}...): resume it "
            "with the script that started it, or use another --out"
        )
    saved = state["args"]
    wanted = {key: str(value) for key, value in resumable_args(args).items()}
    differences = [
        f"{key}={saved.get(key)!s} in the checkpoint, {wanted[key]} now"
        for key in wanted
        if str(saved.get(key)) != wanted[key]
    ]
    if differences:
        raise fail(
            f"{last.parent}: refusing to resume with other hyperparameters ("
            + "; ".join(differences)
            + "): use the checkpoint's, or another --out"
        )
    return state


class EpisodeTracks:
    """Each sub-env's current episode: the seed it started from and the actions played since.

    ale-py's vector engine cannot save its emulators' states, but a SABER episode seeded at
    its start replays exactly from its seed and its actions (the rule ``saber verify``
    checks). So every episode is seeded (``seed_each_episode``), the checkpoint keeps these
    tracks, and a resume plays them again (:func:`restore_envs`): every sub-env, its frame
    stack and SABER's counters are then where they were, and the training goes on as if it
    had never stopped.
    """

    def __init__(self, seeds: np.ndarray) -> None:
        self.seeds = [int(seed) for seed in seeds]
        self.actions: list[list[int]] = [[] for _ in self.seeds]

    def step(self, actions: np.ndarray, resetting: np.ndarray, seeds: np.ndarray) -> None:
        """One vector step: ``resetting`` rows played their NEXT_STEP reset step (the action
        ignored, a new episode from ``seeds[row]``), the others ``actions[row]``."""
        for row, (action, reset) in enumerate(
            zip(actions.tolist(), resetting.tolist(), strict=True)
        ):
            if reset:
                self.seeds[row] = int(seeds[row])
                self.actions[row] = []
            else:
                self.actions[row].append(action)

    def state(self) -> dict[str, Any]:
        return {
            "seeds": self.seeds,
            "actions": [torch.tensor(actions, dtype=torch.uint8) for actions in self.actions],
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> EpisodeTracks:
        tracks = cls(np.asarray(state["seeds"]))
        tracks.actions = [actions.tolist() for actions in state["actions"]]
        return tracks


def restore_envs(
    envs: gym.vector.VectorEnv, tracks: EpisodeTracks
) -> tuple[np.ndarray, np.ndarray]:
    """Play every sub-env's current episode again (``tracks``); returns the observations and
    ``episode_frame_number`` after the last action.

    The vector engine steps every sub-env together, so the replays are aligned on their
    ends: a sub-env whose episode is k steps shorter than the longest starts it (a reset
    with its seed) k steps later, and the steps it plays before that are overwritten by
    the reset. Costs the longest episode in progress, every sub-env stepping.
    """
    lengths = np.array([len(actions) for actions in tracks.actions])
    longest = int(lengths.max())
    starts = longest - lengths
    seeds = np.array(tracks.seeds, dtype=np.int64)
    obs, info = envs.reset(seed=seeds)  # the first reset resets every sub-env
    frames = info["episode_frame_number"]
    actions = np.zeros(len(seeds), dtype=np.int64)
    for t in range(longest + 1):
        begin = starts == t
        if t > 0 and begin.any():
            obs, info = envs.reset(seed=seeds[begin], options={"reset_mask": begin})
            frames = info["episode_frame_number"]
        if t == longest:
            break
        for row in np.flatnonzero(starts <= t).tolist():
            actions[row] = tracks.actions[row][t - starts[row]]
        obs, _, _, _, info = envs.step(actions)
        frames = info["episode_frame_number"]
    return obs, np.asarray(frames, dtype=np.int64)


def digest(array: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()


def truncate_log(log: Path, size: int) -> int:
    """Cut ``log`` back to the ``size`` bytes the checkpoint saw; returns the lines dropped.

    Lines past that size are episodes played after the checkpoint, by a training that
    then died (kill -9): the resumed training plays those frames again, so keeping them
    would log that stretch twice.
    """
    actual = log.stat().st_size if log.exists() else 0
    if actual == size == 0:
        return 0
    if actual < size:
        raise fail(
            f"{log}: {actual} bytes, but the checkpoint logged {size}: the log lost episodes; "
            "restore it or start afresh in another --out"
        )
    with log.open("rb+") as handle:
        handle.seek(size)
        dropped = handle.read().count(b"\n")
        handle.truncate(size)
    return dropped


def recent_scores(log: Path) -> deque[float]:
    """The last :data:`RECENT` scores of the log (for the progress line after a resume)."""
    scores: deque[float] = deque(maxlen=RECENT)
    if log.exists():
        with log.open(encoding="utf-8") as handle:
            for line in handle:
                scores.append(float(json.loads(line)["score"]))
    return scores


def cpu_seconds() -> float:
    """CPU seconds this process (all its threads) has used."""
    times = os.times()
    return times.user + times.system


def beside(machine: dict[str, float], wall_seconds: float) -> dict[str, Any]:
    """What the machine did beside the run, for its provenance: the 1-minute load average
    (runnable threads of every process, this one's included) sampled with each progress
    line, and the cores this process kept busy on average (its CPU seconds over wall)."""
    samples = max(machine["load_samples"], 1)
    return {
        "load_average_mean": round(machine["load_sum"] / samples, 2),
        "load_average_max": round(machine["load_max"], 2),
        "cores_used_mean": round(machine["cpu_seconds"] / max(wall_seconds, 1e-9), 2),
        "cores": os.cpu_count(),
    }


def clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


DIAGNOSTICS = ("policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction", "grad_norm")


def update_line(
    update: int,
    frames: int,
    learning_rate: float,
    minibatch_stats: list[torch.Tensor],
    values: torch.Tensor,
    returns: torch.Tensor,
    actions: torch.Tensor,
    num_actions: int,
) -> str:
    """One line of ``updates.jsonl``: the update's number (1 for the first), the frames played
    by its end, its learning rate, the means of :data:`DIAGNOSTICS` over its minibatches
    (``minibatch_stats``: one tensor of them per minibatch), the explained variance of the
    rollout's values (None when the returns do not vary) and the count of each action."""
    means = torch.stack(minibatch_stats).double().mean(0).tolist()
    spread = returns.double().var(correction=0).item()
    explained = (
        None
        if spread == 0
        else 1.0 - (returns.double() - values.double()).var(correction=0).item() / spread
    )
    return json.dumps(
        {
            "update": update,
            "frames": frames,
            "learning_rate": learning_rate,
            **dict(zip(DIAGNOSTICS, means, strict=True)),
            "explained_variance": explained,
            "actions": torch.bincount(actions, minlength=num_actions).tolist(),
        }
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # Before torch starts its worker threads: they inherit the main thread's FPU mode.
    torch.set_flush_denormal(True)
    total_frames = parse_frames(args.total_frames)
    checkpoint_frames = parse_frames(args.checkpoint_frames)
    channels = tuple(int(part) for part in args.channels.split(","))
    if len(channels) != 3:
        raise fail(f"--channels takes three filter counts, actually: {args.channels!r}")
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.setup not in SETUPS:
        raise fail(f"--setup {args.setup!r}: choose one of {', '.join(SETUPS)}")
    setup = SETUPS[args.setup]
    deviations = setup.deviations(args.game)
    if deviations and not args.allow_non_saber:
        raise fail(
            f"--setup {args.setup} is not SABER ({'; '.join(deviations)}): add "
            "--allow-non-saber to train it anyway (its policy is labelled with them)"
        )
    steps_per_rollout = args.num_envs * args.num_steps
    iterations = math.ceil(total_frames / (steps_per_rollout * FRAME_SKIP))
    minibatch_size = steps_per_rollout // args.num_minibatches

    args.out.mkdir(parents=True, exist_ok=True)
    log_path = args.out / "training.jsonl"
    updates_path = args.out / "updates.jsonl"
    checkpoint_paths = (args.out / "checkpoint.pt", args.out / "checkpoint.previous.pt")
    state = load_checkpoint(checkpoint_paths, args)
    if state is not None:
        dropped = truncate_log(log_path, state["log_bytes"])
        truncate_log(updates_path, state["updates_bytes"])
        saved = state["progress"]
        print(
            f"Resuming at {saved['frames']:,} frames "
            f"(iteration {saved['iteration']}/{iterations}, {saved['episodes']} episodes logged"
            + (f"; {dropped} episodes logged after it are played again)" if dropped else ")")
        )
    elif log_path.exists() and log_path.stat().st_size:
        raise fail(f"{log_path} holds a training log but no checkpoint: choose another --out")

    torch.manual_seed(args.seed)
    generator = torch.Generator().manual_seed(args.seed)
    envs = gym.make_vec(
        f"SABER/{args.game}", num_envs=args.num_envs, clip_rewards=True, **setup.settings
    )
    envs.unwrapped.seed_each_episode = True  # every episode replays from its seed (EpisodeTracks)
    # The ALE id (the SABER env's action) of each of the policy's actions.
    action_ids = (
        list(minimal_action_ids(args.game)) if setup.minimal_actions else list(range(NUM_ACTIONS))
    )
    to_env_action = torch.tensor(action_ids)
    num_actions = len(action_ids)
    forced = ForcedSteps(setup, args.game, args.num_envs)
    agent = Agent(channels, args.hidden, num_actions).to(memory_format=torch.channels_last)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    progress: dict[str, Any] = {
        "iteration": 0,
        "global_step": 0,
        "frames": 0,
        "episodes": 0,
        "wall_seconds": 0.0,
        "seconds": {"emulation": 0.0, "acting": 0.0, "learning": 0.0, "restoring": 0.0},
        "resumes": 0,
        "machine": {"load_samples": 0, "load_sum": 0.0, "load_max": 0.0, "cpu_seconds": 0.0},
    }
    # Rows whose previous step ended an episode: this step is their autoreset (NEXT_STEP).
    autoreset = torch.zeros(args.num_envs, dtype=torch.bool)
    if state is None:
        obs_np, info = envs.reset(seed=10_000 * args.seed)  # sub-env i: 10,000 * seed + i
        tracks = EpisodeTracks(envs.unwrapped.episode_seeds)
        start_frames = 0
        lives = np.asarray(info.get("lives", np.zeros(args.num_envs)), dtype=np.int64)
        for row, seed in enumerate(tracks.seeds):
            forced.episode_started(row, seed)
    else:
        agent.load_state_dict(state["agent"])
        optimizer.load_state_dict(state["optimizer"])
        generator.set_state(state["generator"])
        torch.set_rng_state(state["torch_rng"])
        progress = state["progress"]
        progress["resumes"] += 1
        tick = time.perf_counter()
        tracks = EpisodeTracks.from_state(state["tracks"])
        obs_np, frames = restore_envs(envs, tracks)
        progress["seconds"]["restoring"] += time.perf_counter() - tick
        if digest(obs_np) != state["obs_sha256"]:
            raise fail(
                f"{args.out}: replaying the episodes in progress did not give the checkpoint's "
                "observations (another ale-py or ROM?); start afresh in another --out"
            )
        autoreset = state["autoreset"].clone()
        lives = np.asarray(state["lives"], dtype=np.int64)
        forced.queues = [list(queue) for queue in state["forced"]]
        # The recorder counts each sub-env's frames from its episode_frame_number, which
        # restarts with every episode: the frames the episodes in progress played before
        # the checkpoint are already in progress["frames"], and the recorder will see
        # them again at its first step. (A row about to autoreset starts from frame 0.)
        start_frames = progress["frames"] - int(frames[~autoreset.numpy()].sum())
    envs = VectorTrainingRecorder(
        envs, log_path, start_frames=start_frames, start_episodes=progress["episodes"]
    )
    recent = recent_scores(log_path)

    def save_checkpoint() -> None:
        # After a resume the recorder counts the episodes in progress from their first
        # frame at its first step: until that step its count is short of theirs.
        if progress["iteration"] > resumed_at:
            progress["frames"] = envs.total_frames
            progress["episodes"] = envs.log.episodes
        payload = {
            "format": CHECKPOINT_FORMAT,
            "script_sha256": script_sha256(),
            "args": {key: str(value) for key, value in resumable_args(args).items()},
            "agent": agent.state_dict(),
            "optimizer": optimizer.state_dict(),
            "generator": generator.get_state(),
            "torch_rng": torch.get_rng_state(),
            "progress": progress,
            "log_bytes": log_path.stat().st_size if log_path.exists() else 0,
            "updates_bytes": updates_path.stat().st_size if updates_path.exists() else 0,
            "tracks": tracks.state(),
            "autoreset": autoreset.clone(),
            "lives": lives.tolist(),
            "forced": forced.queues,
            "obs_sha256": digest(obs.numpy()),
        }
        last, previous = checkpoint_paths
        partial = last.with_name(last.name + ".partial")
        torch.save(payload, partial)
        with open(partial, "rb+") as handle:
            os.fsync(handle.fileno())
        # Whole or absent, and the one before kept: a kill between the two renames leaves
        # the previous checkpoint, which load_checkpoint falls back to.
        if last.exists():
            os.replace(last, previous)
        os.replace(partial, last)

    obs = torch.from_numpy(obs_np)
    shape = (args.num_steps, args.num_envs)
    buffer_obs = torch.zeros(shape + envs.single_observation_space.shape, dtype=torch.uint8)
    actions = torch.zeros(shape, dtype=torch.long)
    logprobs = torch.zeros(shape)
    rewards = torch.zeros(shape)
    terminated = torch.zeros(shape)
    ended = torch.zeros(shape)  # terminated or truncated
    values = torch.zeros(shape)
    valid = torch.zeros(shape, dtype=torch.bool)

    stop = Stop()
    resumed_at = progress["iteration"]
    started = time.perf_counter() - progress["wall_seconds"]
    session_start_frames, session_start = progress["frames"], time.perf_counter()
    session_cpu = cpu_seconds()
    machine = progress["machine"]
    last_progress = time.perf_counter()
    seconds = progress["seconds"]
    print(
        f"PPO on SABER/{args.game}"
        + (f" under the {args.setup} setup (not SABER)" if deviations else "")
        + f": {total_frames:,} frames in {iterations} iterations of "
        f"{steps_per_rollout} steps; {sum(p.numel() for p in agent.parameters()):,} parameters; "
        f"torch threads {torch.get_num_threads()}; run directory {args.out}"
    )
    while progress["iteration"] < iterations and stop.signal is None:
        iteration_frames = envs.total_frames
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = args.learning_rate * (
                1.0 - progress["iteration"] / iterations
            )
        for step in range(args.num_steps):
            tick = time.perf_counter()
            buffer_obs[step] = obs
            with torch.inference_mode():
                logits, value = agent(obs)
                action = torch.multinomial(torch.softmax(logits, -1), 1, generator=generator)
                action = action.squeeze(-1)
                chosen = ~forced.apply(action)  # a forced step is no choice of the policy's
                logprobs[step] = torch.log_softmax(logits, -1).gather(1, action[:, None])[:, 0]
            valid[step] = ~autoreset & chosen
            values[step] = value
            actions[step] = action
            env_action = to_env_action[action].numpy()
            tock = time.perf_counter()
            obs_np, reward, term, trunc, info = envs.step(env_action)
            seconds["acting"] += tock - tick
            seconds["emulation"] += time.perf_counter() - tock
            tracks.step(env_action, autoreset.numpy(), envs.unwrapped.episode_seeds)
            obs = torch.from_numpy(obs_np)
            rewards[step] = torch.from_numpy(np.asarray(reward, dtype=np.float32))
            game_over = term | trunc
            # A life lost (never at an autoreset step, whose lives are the new game's) ends
            # the learner's episode under the life-loss setups; the game goes on.
            lost = np.zeros(args.num_envs, dtype=bool)
            if setup.life_loss:
                now_lives = np.asarray(info["lives"], dtype=np.int64)
                lost = (now_lives < lives) & ~game_over & ~autoreset.numpy()
                lives = now_lives
            for row in np.flatnonzero(autoreset.numpy()).tolist():  # a new game began
                forced.episode_started(row, int(envs.unwrapped.episode_seeds[row]))
            for row in np.flatnonzero(lost).tolist():
                forced.life_lost(row)
            terminated[step] = torch.from_numpy((term | lost).astype(np.float32))
            autoreset = torch.from_numpy(game_over)
            ended[step] = torch.from_numpy((game_over | lost).astype(np.float32))
            if "_saber" in info:
                recent.extend(info["saber"]["score"][info["_saber"]].tolist())
        progress["global_step"] += steps_per_rollout

        tick = time.perf_counter()
        with torch.inference_mode():
            _, next_value = agent(obs)
        # GAE. Under NEXT_STEP autoreset the observation after a step that ended an episode
        # is the episode's last one (the next episode's first comes a step later), so
        # values[t + 1] is the right bootstrap for a truncation; a game over has none. The
        # autoreset step itself is masked out of the loss, and `ended` cuts the advantage
        # chain before it.
        advantages = torch.zeros(shape)
        running = torch.zeros(args.num_envs)
        for t in reversed(range(args.num_steps)):
            bootstrap = next_value if t == args.num_steps - 1 else values[t + 1]
            delta = rewards[t] + args.gamma * bootstrap * (1.0 - terminated[t]) - values[t]
            running = delta + args.gamma * args.gae_lambda * (1.0 - ended[t]) * running
            advantages[t] = running
        returns = advantages + values

        keep = valid.reshape(-1)
        b_obs = buffer_obs.reshape((-1, *buffer_obs.shape[2:]))[keep]
        b_actions = actions.reshape(-1)[keep]
        b_logprobs = logprobs.reshape(-1)[keep]
        b_advantages = advantages.reshape(-1)[keep]
        b_returns = returns.reshape(-1)[keep]
        b_values = values.reshape(-1)[keep]
        count = len(b_actions)
        minibatch_stats: list[torch.Tensor] = []
        for _epoch in range(args.update_epochs):
            order = torch.randperm(count, generator=generator)
            for start in range(0, count, minibatch_size):
                rows = order[start : start + minibatch_size]
                logits, new_values = agent(b_obs[rows])
                log_probs = torch.log_softmax(logits, -1)
                new_logprob = log_probs.gather(1, b_actions[rows, None])[:, 0]
                entropy = -(log_probs.exp() * log_probs).sum(-1)
                ratio = (new_logprob - b_logprobs[rows]).exp()
                advantage = b_advantages[rows]
                advantage = (advantage - advantage.mean()) / (advantage.std() + 1e-8)
                policy_loss = torch.max(
                    -advantage * ratio,
                    -advantage * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef),
                ).mean()
                clipped_values = b_values[rows] + (new_values - b_values[rows]).clamp(
                    -args.clip_coef, args.clip_coef
                )
                value_loss = (
                    0.5
                    * torch.max(
                        (new_values - b_returns[rows]) ** 2, (clipped_values - b_returns[rows]) ** 2
                    ).mean()
                )
                loss = policy_loss - args.ent_coef * entropy.mean() + args.vf_coef * value_loss
                optimizer.zero_grad()
                loss.backward()
                grad_norm = nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()
                if args.diagnostics:  # from tensors already computed: nothing learned changes
                    with torch.no_grad():
                        log_ratio = new_logprob.detach() - b_logprobs[rows]
                        minibatch_stats.append(
                            torch.stack(
                                [
                                    policy_loss.detach(),
                                    value_loss.detach(),
                                    entropy.detach().mean(),
                                    (log_ratio.exp() - 1 - log_ratio).mean(),
                                    ((log_ratio.exp() - 1).abs() > args.clip_coef).float().mean(),
                                    grad_norm.detach(),
                                ]
                            )
                        )
        seconds["learning"] += time.perf_counter() - tick
        progress["iteration"] += 1
        if args.diagnostics:
            line = update_line(
                progress["iteration"],
                envs.total_frames,
                optimizer.param_groups[0]["lr"],
                minibatch_stats,
                b_values,
                b_returns,
                b_actions,
                num_actions,
            )
            with updates_path.open("a", encoding="utf-8") as handle:
                handle.write(line + "\n")
        progress["wall_seconds"] = time.perf_counter() - started

        now = time.perf_counter()
        if now - last_progress >= PROGRESS_EVERY or progress["iteration"] == iterations:
            last_progress = now
            load = os.getloadavg()[0]
            machine["load_samples"] += 1
            machine["load_sum"] += load
            machine["load_max"] = max(machine["load_max"], load)
            frames = envs.total_frames
            rate = (frames - session_start_frames) / max(now - session_start, 1e-9)
            mean = f"{np.mean(recent):+.1f}" if recent else "n/a"
            print(
                f"{frames / 1e6:6.2f}M / {total_frames / 1e6:.0f}M frames | {rate:,.0f} frames/s"
                f" | mean of last {len(recent)} episodes {mean} | episodes {envs.log.episodes}"
                f" | elapsed {clock(progress['wall_seconds'])}"
                f" | left {clock((total_frames - frames) / max(rate, 1e-9))}",
                flush=True,
            )
        # A checkpoint each time the frames pass a multiple of --checkpoint-frames.
        machine["cpu_seconds"] += cpu_seconds() - session_cpu
        session_cpu = cpu_seconds()
        if not checkpoint_frames or (
            envs.total_frames // checkpoint_frames > iteration_frames // checkpoint_frames
        ):
            save_checkpoint()

    save_checkpoint()
    envs.close()
    provenance = {
        "script": "examples/ppo_saber.py",
        "script_sha256": script_sha256(),
        "command": "python examples/ppo_saber.py "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "commit": git_commit(),
        "saber": saber.__version__,
        "torch": torch.__version__,
        "versions": {
            "python": platform.python_version(),
            "ale_py": ale_py.__version__,
            "gymnasium": gym.__version__,
            "numpy": np.__version__,
        },
        "game": args.game,
        "seed": args.seed,
        "frames": progress["frames"],
        "episodes": progress["episodes"],
        "iterations": progress["iteration"],
        "wall_seconds": round(progress["wall_seconds"], 1),
        "frames_per_second": round(progress["frames"] / max(progress["wall_seconds"], 1e-9), 1),
        "seconds": {key: round(value, 1) for key, value in seconds.items()},
        "resumes": progress["resumes"],
        "beside": beside(machine, progress["wall_seconds"]),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.processor() or platform.platform()}",
        "args": {key: str(value) for key, value in resumable_args(args).items()},
        "architecture": {"channels": list(channels), "hidden": args.hidden, "actions": num_actions},
        "setup": args.setup,
        "deviations": deviations,
        "action_ids": action_ids,
    }
    write_policy_file(args.out / "policy.npz", actor_layers(agent, action_ids), provenance)
    (args.out / "summary.json").write_text(json.dumps(provenance, indent=2) + "\n")
    if stop.signal is not None:
        print(f"Stopped at {progress['frames']:,} frames; run the same command to resume.")
        return 128 + stop.signal
    print(f"Done: {progress['frames']:,} frames in {clock(progress['wall_seconds'])}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
