"""A NatureCNN policy in PyTorch, written the way a user writes one: no thread settings.

Used by ``eval_speed.py`` as ``--agent torch_nature_cnn:make_policy`` (run from this
folder). The weights are PyTorch's default initialization under a fixed seed: the point
is the cost of the network (three convolutions and two dense layers on ``uint8``
(n, 4, 84, 84), Mnih et al. 2015), not its play. Nothing here sets a thread count: how
many threads PyTorch uses in a worker is whatever the harness (or the caller) set.

``make_cuda_policy`` is the same network on the first CUDA GPU (the observations copied
to it, the actions back), for ``eval_speed.py least-work --policies torch-cuda`` on a GPU
machine. ``thread_probe`` is the same factory, whose policy writes ``torch intra-op
threads: N`` to stderr at its first call (after PyTorch has run a batch), so the
benchmark can check what a worker of ``saber eval`` really uses.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import numpy as np
import torch
from torch import nn


class NatureCNN(nn.Module):
    """``uint8`` (n, 4, 84, 84) -> one logit per action (18)."""

    def __init__(self, num_actions: int = 18) -> None:
        super().__init__()
        self.network = nn.Sequential(
            nn.Conv2d(4, 32, kernel_size=8, stride=4),
            nn.ReLU(),
            nn.Conv2d(32, 64, kernel_size=4, stride=2),
            nn.ReLU(),
            nn.Conv2d(64, 64, kernel_size=3, stride=1),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(64 * 7 * 7, 512),
            nn.ReLU(),
            nn.Linear(512, num_actions),
        )

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return self.network(observations.float() / 255.0)


def make_policy() -> Callable[[np.ndarray], np.ndarray]:
    """The factory ``saber eval --agent torch_nature_cnn:make_policy`` calls in each worker."""
    torch.manual_seed(0)
    model = NatureCNN().eval()

    def policy(observations: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return model(torch.from_numpy(observations)).argmax(dim=1).numpy()

    return policy


def make_cuda_policy() -> Callable[[np.ndarray], np.ndarray]:
    """``make_policy`` on the first CUDA GPU: each call copies the batch there and the
    greedy actions back (the ``.cpu()`` waits for the GPU)."""
    if not torch.cuda.is_available():
        raise RuntimeError("torch_nature_cnn:make_cuda_policy needs a CUDA GPU; none is here")
    torch.manual_seed(0)
    device = torch.device("cuda")
    model = NatureCNN().to(device).eval()

    def policy(observations: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            batch = torch.from_numpy(observations).to(device)
            return model(batch).argmax(dim=1).cpu().numpy()

    return policy


def thread_probe() -> Callable[[np.ndarray], np.ndarray]:
    """``make_policy``, saying once on stderr how many intra-op threads PyTorch uses."""
    inner = make_policy()
    said = False

    def policy(observations: np.ndarray) -> np.ndarray:
        nonlocal said
        actions = inner(observations)
        if not said:
            said = True
            print(
                f"torch intra-op threads: {torch.get_num_threads()} (pid {os.getpid()}, "
                f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')})",
                file=sys.stderr,
                flush=True,
            )
        return actions

    return policy
