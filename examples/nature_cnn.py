"""The Nature-DQN network, its checkpoint file, and a saber policy around it.

Shared by ``dqn_vector.py`` (which trains and saves it) and ``evaluate_torch_policy.py``
(which loads and evaluates it). The examples are scripts, not a package: Python puts the
running script's folder first on ``sys.path``, so ``import nature_cnn`` works from either,
and in the harness's worker processes too (``spawn`` hands them the parent's ``sys.path``).

The network is the one of Mnih et al. (2015): three convolutions and two dense layers on
the SABER observation, ``uint8`` (4, 84, 84) scaled to [0, 1], one Q-value per action.

A checkpoint is a ``torch.save`` of a plain dict: the architecture's constructor
arguments, the ``state_dict`` and free-form metadata. Plain data only, so it loads with
``torch.load(weights_only=True)``, which never runs code from the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from saber.agents.generators import PerEpisodeGenerators

CHECKPOINT_FORMAT = "saber-examples/nature-cnn/1"
NUM_ACTIONS = 18  # SABER: the full action set, every game


class NatureCNN(nn.Module):
    """Q-network of Mnih et al. (2015): ``uint8`` (n, C, 84, 84) -> Q-values (n, actions)."""

    def __init__(
        self, in_channels: int = 4, num_actions: int = NUM_ACTIONS, hidden: int = 512
    ) -> None:
        super().__init__()
        self.config = {"in_channels": in_channels, "num_actions": num_actions, "hidden": hidden}
        self.network = nn.Sequential(
            nn.Conv2d(in_channels, 32, kernel_size=8, stride=4),
            nn.ReLU(),
            nn.Conv2d(32, 64, kernel_size=4, stride=2),
            nn.ReLU(),
            nn.Conv2d(64, 64, kernel_size=3, stride=1),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(64 * 7 * 7, hidden),  # 84 -> 20 -> 9 -> 7
            nn.ReLU(),
            nn.Linear(hidden, num_actions),
        )

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        # Scale here, not in the env: the replay buffer then stores uint8 (4x smaller).
        return self.network(observations.float() / 255.0)


def save_checkpoint(path: str | Path, model: NatureCNN, metadata: dict[str, Any]) -> Path:
    """Write ``model`` and ``metadata`` (plain JSON-like values) to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "format": CHECKPOINT_FORMAT,
        "architecture": dict(model.config),
        "state_dict": model.state_dict(),
        "metadata": metadata,
    }
    # Write then rename: an interrupted save never leaves a truncated checkpoint behind.
    partial = path.with_name(path.name + ".partial")
    torch.save(payload, partial)
    partial.replace(path)
    return path


def load_checkpoint(path: str | Path) -> tuple[NatureCNN, dict[str, Any]]:
    """The network saved at ``path`` (on the CPU, in eval mode) and its metadata."""
    payload = torch.load(Path(path), map_location="cpu", weights_only=True)
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path}: not a {CHECKPOINT_FORMAT} checkpoint")
    model = NatureCNN(**payload["architecture"])
    model.load_state_dict(payload["state_dict"])
    model.eval()
    return model, dict(payload.get("metadata", {}))


class QNetworkPolicy(PerEpisodeGenerators):
    """A saber harness policy: epsilon-greedy on a Q-network's values.

    The harness calls it with a batch ``uint8`` (n, 4, 84, 84) and wants n actions.
    ``start_episodes`` (of :class:`~saber.agents.PerEpisodeGenerators`) re-seeds a
    generator per batch row from the episode's seed, so the random actions (and so the scores) are the same whatever the number of workers and
    whichever rows the episodes land on. Epsilon 0 is purely greedy.

    Picklable (the harness sends it to worker processes): the network travels as its
    checkpoint file's path and is loaded in each worker on first use.
    """

    stream = 0xE951  # mixed into each episode seed: exploration never equals the env's stream

    def __init__(self, checkpoint: str | Path, epsilon: float) -> None:
        super().__init__()
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"Expect epsilon in [0, 1], actually: {epsilon!r}")
        self.checkpoint = str(checkpoint)
        self.epsilon = float(epsilon)
        self._model: NatureCNN | None = None

    def __getstate__(self) -> dict[str, Any]:
        # Send the path, not the weights: each worker loads the file itself.
        return {"checkpoint": self.checkpoint, "epsilon": self.epsilon}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["checkpoint"], state["epsilon"])  # type: ignore[misc]
        # In a worker process: one core each, or W workers x C torch threads fight over C cores.
        torch.set_num_threads(1)

    @property
    def model(self) -> NatureCNN:
        if self._model is None:
            self._model, _ = load_checkpoint(self.checkpoint)
        return self._model

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            q_values = self.model(torch.from_numpy(np.ascontiguousarray(observations)))
        actions = q_values.argmax(dim=1).numpy().astype(np.int64)
        if self.epsilon > 0.0:
            self.explore(actions, self.epsilon)
        return actions

    def __repr__(self) -> str:
        return f"QNetworkPolicy({self.checkpoint!r}, epsilon={self.epsilon})"
