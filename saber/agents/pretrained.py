"""The trained agents saber ships: their names, policy files and provenance (with the
file's SHA-256); ``saber eval --agent NAME`` plays one (docs/trained-agent.md).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from saber.agents.convnet import ConvActorPolicy
from saber.errors import PolicyFileError

MANIFEST = "agents.json"  # in saber/agents/data: one entry per shipped agent


@dataclass(frozen=True)
class Pretrained:
    """A shipped agent: its spec name, what it is, and its files in ``saber/agents/data``.

    Attributes:
        name: what ``saber eval --agent`` takes (``ppo-breakout``).
        description: one line for ``saber list``.
        game: the ale id of the game it was trained on.
        training_seed: the seed of its training run.
        policy_file, provenance_file: its files in ``saber/agents/data``.
    """

    name: str
    description: str
    game: str
    training_seed: int
    policy_file: str
    provenance_file: str

    @property
    def path(self) -> Path:
        """The policy file (inside the installed package)."""
        return Path(str(resources.files("saber.agents") / "data" / self.policy_file))


def _read_manifest() -> dict[str, Pretrained]:
    folder = resources.files("saber.agents") / "data"
    entries = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    return {entry["name"]: Pretrained(**entry) for entry in entries}


# The agents are data (scripts/release/ship_trained_agent.py adds one): a new agent is a manifest
# entry and its files, no code.
#: The shipped trained agents by name (``ppo-pong``, the baselines ``ppo-<game>``): what
#: ``saber eval --agent NAME`` and :func:`pretrained_policy` load.
PRETRAINED = _read_manifest()


@cache
def agent_provenance(name: str) -> dict[str, Any]:
    """The provenance of shipped agent ``name``, checked against its policy file's hash."""
    agent = PRETRAINED[name]
    folder = resources.files("saber.agents") / "data"
    record = json.loads((folder / agent.provenance_file).read_text(encoding="utf-8"))
    digest = hashlib.sha256(agent.path.read_bytes()).hexdigest()
    if record.get("sha256") != digest:
        raise PolicyFileError(
            f"{agent.path}: SHA-256 {digest} is not the {record.get('sha256')} its provenance "
            f"({agent.provenance_file}) names: reinstall saber"
        )
    return record


def training_deviations(name: str) -> tuple[str, ...]:
    """How shipped agent ``name`` was trained outside SABER, in words, from its provenance
    (what the training script wrote into the policy file: ``examples/ppo_saber.py
    --setup``); empty for an agent trained under SABER and for a name saber does not ship.

    A run of such an agent is a SABER evaluation, but not a SABER result: ``saber report``
    and the board label it so, from here, never from a flag a run directory carries.
    """
    if name not in PRETRAINED:
        return ()
    return provenance_deviations(agent_provenance(name).get("training", {}))


def trained_outside_saber(name: str) -> str | None:
    """``"not SABER: trained with ..."`` for a shipped agent trained outside SABER (the label
    ``saber report`` prints beside it), else None."""
    deviations = training_deviations(name)
    return "not SABER: trained with " + "; ".join(deviations) if deviations else None


def provenance_deviations(training: Mapping[str, Any]) -> tuple[str, ...]:
    """The deviations from SABER a training provenance names (``examples/ppo_saber.py``'s
    summary, as a policy file and a shipped agent's record hold it); empty for SABER's."""
    return tuple(str(deviation) for deviation in training.get("deviations") or ())


def pretrained_policy(name: str, greedy: bool = False) -> ConvActorPolicy:
    """The harness policy of shipped agent ``name`` (its file and provenance checked)."""
    agent_provenance(name)
    return ConvActorPolicy(PRETRAINED[name].path, greedy=greedy)
