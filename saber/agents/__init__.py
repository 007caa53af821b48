"""Built-in agents: the shipped trained policies (a numpy convolutional actor) and
per-episode generators for stochastic policies; the harness loads them, and nothing here
knows the harness (docs/trained-agent.md).
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
