"""Built-in agents: the shipped trained policies and what stochastic policies share.

* :mod:`saber.agents.convnet`: a convolutional actor in numpy (its policy file and its
  inference; no PyTorch or JAX);
* :mod:`saber.agents.pretrained`: the trained agents saber ships (``ppo-pong``), with
  their provenance;
* :mod:`saber.agents.generators`: one random generator per episode, seeded from the
  episode's seed (reproducible stochastic policies).

The harness loads these (``saber eval --agent ppo-pong``); nothing here knows the harness.
"""

from __future__ import annotations

from saber.agents.convnet import ConvActorPolicy, read_policy_file
from saber.agents.generators import PerEpisodeGenerators
from saber.agents.pretrained import PRETRAINED, pretrained_policy
from saber.errors import PolicyFileError

__all__ = [
    "PRETRAINED",
    "ConvActorPolicy",
    "PerEpisodeGenerators",
    "PolicyFileError",
    "pretrained_policy",
    "read_policy_file",
]
