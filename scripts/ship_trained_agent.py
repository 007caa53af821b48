"""Turn a finished ``examples/ppo_saber.py`` run, then its evaluation, into a shipped agent.

Maintainers' tool (it is how ``saber/agents/data/ppo_pong.*`` were made), in two steps,
because the evaluation plays the shipped file::

    python examples/ppo_saber.py --out runs/ppo-pong
    python scripts/ship_trained_agent.py policy runs/ppo-pong --commit <the commit it ran from>
    saber eval --agent ppo-pong --games pong --episodes 100 --seed 0 --out runs/ppo-pong-eval
    python scripts/ship_trained_agent.py evaluation runs/ppo-pong-eval

``policy`` writes (needs torch, to read the checkpoint):

* ``saber/agents/data/ppo_pong.npz``: the actor, float32, for numpy inference
  (:mod:`saber.agents.convnet`), with the provenance inside;
* ``saber/agents/data/ppo_pong.json``: the provenance (script, commit, seed, frames,
  episodes, wall time and where it went, machine, hyperparameters) and the policy
  file's SHA-256, which :func:`saber.agents.pretrained.provenance` checks;
* ``saber/agents/data/ppo_pong_training.jsonl.gz``: the training log (every training
  episode), for ``saber training`` and the docs' curve.

``evaluation`` writes ``saber/agents/data/ppo_pong_episodes.csv`` (one row per episode of
the 100-episode SABER evaluation, with its seed) and adds the evaluation's summary and
versions to the provenance; it leaves the policy file alone.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from ship_random_reference import EPISODE_COLUMNS, read_records, summarize, write_csv

from saber.protocol.rundir import read_run_json

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "saber" / "agents" / "data"
NAME = "ppo_pong"


def ship_policy(run: Path, commit: str) -> None:
    import torch

    sys.path.insert(0, str(ROOT / "examples"))
    from ppo_saber import Agent, actor_layers

    from saber.agents.convnet import write_policy_file

    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    state = torch.load(run / "checkpoint.pt", map_location="cpu", weights_only=True)
    architecture = summary["architecture"]
    agent = Agent(tuple(architecture["channels"]), architecture["hidden"], architecture["actions"])
    agent.load_state_dict(state["agent"])
    training = {**summary, "commit": commit}
    policy = write_policy_file(DATA / f"{NAME}.npz", actor_layers(agent), training)
    # mtime 0: the same log gives the same bytes (and the same hash) on every run.
    with (
        (run / "training.jsonl").open("rb") as source,
        (DATA / f"{NAME}_training.jsonl.gz").open("wb") as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as target,
    ):
        shutil.copyfileobj(source, target)
    provenance = {
        "name": "ppo-pong",
        "description": "PPO (examples/ppo_saber.py) trained under SABER on Pong on a 2-core "
        "CPU; actions sampled from the policy, seeded per episode",
        "policy_file": policy.name,
        "sha256": hashlib.sha256(policy.read_bytes()).hexdigest(),
        "bytes": policy.stat().st_size,
        "training": training,
        "training_log": f"{NAME}_training.jsonl.gz",
    }
    write_provenance(provenance)
    print(f"wrote {policy} ({policy.stat().st_size:,} bytes) and its provenance")


def ship_evaluation(run: Path) -> None:
    provenance = json.loads((DATA / f"{NAME}.json").read_text(encoding="utf-8"))
    records, failed = read_records(run)
    (row,) = summarize(records)
    write_csv(DATA / f"{NAME}_episodes.csv", records, EPISODE_COLUMNS)
    run_json = read_run_json(run / "run.json")
    provenance["evaluation"] = {
        "command": "saber eval --agent ppo-pong --games pong --episodes 100 --seed 0",
        "episodes_file": f"{NAME}_episodes.csv",
        "failed_attempts": failed,
        "summary": {key: value for key, value in row.items() if key != "game"},
        "run": _plain(run_json),
    }
    write_provenance(provenance)
    print(f"wrote {DATA / f'{NAME}_episodes.csv'} and the evaluation in the provenance")


def _plain(value: Any) -> Any:
    """run.json's content as JSON data (dataclasses and mappings alike)."""
    return json.loads(json.dumps(value, default=lambda item: getattr(item, "__dict__", str(item))))


def write_provenance(provenance: dict[str, Any]) -> None:
    path = DATA / f"{NAME}.json"
    path.write_text(json.dumps(provenance, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    steps = parser.add_subparsers(dest="step", required=True)
    policy = steps.add_parser("policy", help="ship the trained actor and its provenance")
    policy.add_argument("run", type=Path, help="the run directory of examples/ppo_saber.py")
    policy.add_argument("--commit", required=True, help="the commit the training ran from")
    evaluation = steps.add_parser("evaluation", help="ship the 100-episode evaluation")
    evaluation.add_argument("run", type=Path, help="the run directory of saber eval")
    args = parser.parse_args()
    if args.step == "policy":
        ship_policy(args.run, args.commit)
    else:
        ship_evaluation(args.run)


if __name__ == "__main__":
    main()
