"""Train Stable-Baselines3 PPO on a SABER game, log training scores, then evaluate it.

Shows how to put SB3 on SABER without changing the protocol:

* SABER envs already give what SB3's Atari recipe builds with ``make_atari_env`` and
  ``VecFrameStack``: 4 stacked 84x84 grayscale frames, ``uint8`` (4, 84, 84). Do not use
  either: ``make_atari_env`` adds ``AtariWrapper`` (no-op starts, FIRE on reset, an episode
  per life, reward clipping, another resize) and crashes on SABER's stacked observation.
* SB3 treats a ``uint8`` Box of shape (4, 84, 84) with bounds [0, 255] as a channels-first
  image (``is_image_space``; the smallest dimension is first), so it adds no
  ``VecTransposeImage``, and ``CnnPolicy`` divides by 255 itself (``normalize_images``).
* SB3 wants its own ``VecEnv`` (reset-on-done, the last observation in
  ``info["terminal_observation"]``); ``saber.training.sb3.SaberVecEnv`` puts that interface on
  ``gymnasium.make_vec("SABER/<Game>")`` (ale-py's threaded engine: one process, every core),
  with ``VectorTrainingRecorder`` underneath logging every training episode with the
  cumulative training frames (``saber training LOG --at 10M,40M``).
* ``clip_rewards=True`` clips what PPO learns from; the logged and reported scores stay raw
  (SB3's ``rollout/ep_rew_mean`` shows the raw scores too: ``SaberVecEnv`` fills SB3's
  ``info["episode"]["r"]`` from SABER's ``info["saber"]["score"]``).
* The trained model is evaluated with ``saber.evaluate`` through ``SB3Policy``.

    pip install torch==<version>   # the CPU build, first: SB3 would pull CUDA torch otherwise
    pip install "saber-ale[sb3]"
    python examples/train_sb3_ppo.py --game Pong --total-steps 10000000 --out runs/ppo-pong
    python examples/train_sb3_ppo.py --total-steps 4096 --eval-episodes 2   # a quick look
    saber training runs/ppo-pong/training.jsonl --at 10M,40M
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import AutoresetMode
from stable_baselines3 import PPO

import saber  # noqa: F401  (registers SABER/*: Gymnasium 1.x loads no entry-point plugins)
from saber.agents.generators import PerEpisodeGenerators
from saber.harness import EnvOptions, Inline, Processes, evaluate
from saber.reports import to_markdown
from saber.training import VectorTrainingRecorder, format_training_scores, training_scores
from saber.training.sb3 import SaberVecEnv


class SB3Policy(PerEpisodeGenerators):
    """A saber harness policy from a saved SB3 model: a batch of observations -> actions.

    ``deterministic=False`` (the default) samples from PPO's action distribution, the
    policy PPO optimized and whose training scores the log holds; the argmax of a
    stochastic policy is another policy, and can repeat one action forever. The samples
    come from a generator per batch row, seeded from the episode seed in
    ``start_episodes``, so scores do not depend on the number of workers
    (``model.predict(deterministic=False)`` would draw from torch's global generator).

    Picklable: workers get the path and load the model themselves, on first use.
    """

    stream = 0x5B3  # mixed into each episode seed: samples never equal the env's stream

    def __init__(self, path: str | Path, deterministic: bool = False) -> None:
        super().__init__()
        self.path = str(path)
        self.deterministic = deterministic
        self._model: PPO | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "deterministic": self.deterministic}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"], state["deterministic"])  # type: ignore[misc]
        torch.set_num_threads(1)  # a worker process: one core each

    @property
    def model(self) -> PPO:
        if self._model is None:
            self._model = PPO.load(self.path, device="cpu")
        return self._model

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        if self.deterministic:
            actions, _ = self.model.predict(observations, deterministic=True)
            return np.asarray(actions, dtype=np.int64)
        policy = self.model.policy
        with torch.no_grad():
            obs_tensor, _ = policy.obs_to_tensor(observations)
            probs = policy.get_distribution(obs_tensor).distribution.probs.numpy()
        cumulative = np.cumsum(probs.astype(np.float64), axis=1)
        actions = np.empty(len(observations), dtype=np.int64)
        for row in range(len(observations)):
            generator = self.generator(row)
            # Inverse CDF: robust to float32 probabilities that do not sum to exactly 1.
            draw = generator.random() * cumulative[row, -1]
            action = int(np.searchsorted(cumulative[row], draw, side="right"))
            actions[row] = min(action, probs.shape[1] - 1)
        return actions

    def __repr__(self) -> str:
        return f"SB3Policy({self.path!r}, deterministic={self.deterministic})"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="Pong")
    parser.add_argument("--out", type=Path, default=Path("runs/ppo"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--total-steps", type=int, default=10_000_000, help="agent steps")
    # SB3 zoo's Atari PPO hyperparameters (the learning rate and clip range decay linearly).
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--n-steps", type=int, default=128, help="steps per env per rollout")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--n-epochs", type=int, default=4)
    parser.add_argument("--learning-rate", type=float, default=2.5e-4)
    parser.add_argument("--clip-range", type=float, default=0.1)
    parser.add_argument("--ent-coef", type=float, default=0.01)
    parser.add_argument("--eval-episodes", type=int, default=10, help="0: no evaluation")
    parser.add_argument("--eval-workers", type=int, default=None, help="0: in this process")
    parser.add_argument(
        "--deterministic", action="store_true", help="evaluate the argmax action (see SB3Policy)"
    )
    parser.add_argument(
        "--max-episode-frames",
        type=int,
        default=None,
        help="cap episodes (smoke tests); not SABER: the runs are marked non_saber",
    )
    return parser.parse_args(argv)


def linear(initial: float) -> Any:
    """SB3 schedules get the remaining progress, 1 -> 0."""
    return lambda progress_remaining: progress_remaining * initial


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    log = args.out / "training.jsonl"
    if log.exists() and log.stat().st_size:
        # The recorder appends, and frames would restart from 0 in the middle of the log.
        sys.exit(f"{log} already holds a training log: choose another --out")
    overrides: dict[str, Any] = {}
    if args.max_episode_frames is not None:
        overrides["max_episode_frames"] = args.max_episode_frames

    # No make_atari_env, no VecFrameStack, no VecTransposeImage: the SABER env is the
    # whole preprocessing. clip_rewards only changes the rewards PPO learns from.
    envs = SaberVecEnv(
        VectorTrainingRecorder(
            gym.make_vec(
                f"SABER/{args.game}",
                num_envs=args.num_envs,
                autoreset_mode=AutoresetMode.DISABLED,
                clip_rewards=True,
                **overrides,
            ),
            log,
        )
    )
    model = PPO(
        "CnnPolicy",
        envs,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.n_epochs,
        learning_rate=linear(args.learning_rate),
        clip_range=linear(args.clip_range),
        ent_coef=args.ent_coef,
        vf_coef=0.5,
        seed=args.seed,
        device="cpu",
        verbose=1,
    )
    model.learn(total_timesteps=args.total_steps)
    model_path = args.out / "model.zip"
    model.save(model_path)
    recorder = envs.envs
    print(f"{recorder.total_frames:,} training frames, {recorder.log.episodes} episodes")
    envs.close()
    if recorder.log.episodes:
        # The training score now: mean of the last 100 training episodes.
        frames = recorder.total_frames  # the training went on past its last logged episode
        print(format_training_scores(training_scores(log, [frames], trained_frames=frames)))
    print(f"model: {model_path}\ntraining log: {log}")

    if args.eval_episodes == 0:
        return 0
    result = evaluate(
        SB3Policy(model_path, deterministic=args.deterministic),
        args.game,
        episodes=args.eval_episodes,
        out=args.out / "eval",
        backend=Inline() if args.eval_workers == 0 else Processes(args.eval_workers),
        base_seed=args.seed,
        agent=f"sb3-ppo:{args.out.name}:{'argmax' if args.deterministic else 'sampled'}",
        env_options=EnvOptions(overrides, allow_non_saber=bool(overrides)),
        progress=True,
    )
    result.write_report()
    print(f"{len(result.records)} evaluation episodes in {result.directory}")
    print(result.mean_scores())
    print(to_markdown(result.report()))
    return 1 if result.failed else 0


# Worker processes import this script: evaluate must run under the __main__ guard.
if __name__ == "__main__":
    sys.exit(main())
