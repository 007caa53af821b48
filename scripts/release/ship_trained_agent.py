"""Turn a finished ``examples/ppo_saber.py`` run, then its evaluation, into a shipped agent.

Maintainers' tool (it is how ``saber/agents/data/ppo_*`` and the ``saber-ppo`` reference's
data were made), in two steps, because the evaluation plays the shipped file::

    python examples/ppo_saber.py --game Breakout --seed 1 --out baselines/runs/ppo-breakout-1
    python scripts/release/ship_trained_agent.py policy baselines/runs/ppo-breakout-1 \\
        --name ppo-breakout --commit <the commit it ran from> --dtype int8 --reference saber-ppo
    saber eval --agent ppo-breakout --games breakout --episodes 100 --seed 0 \\
        --out baselines/evals/ppo-breakout-1
    python scripts/release/ship_trained_agent.py evaluation baselines/evals/ppo-breakout-1 \\
        --name ppo-breakout

``policy`` writes (needs torch, to read the checkpoint):

* ``saber/agents/data/<stem>.npz``: the actor for numpy inference
  (:mod:`saber.agents.convnet`), its weights stored as ``--dtype`` says, with the provenance
  inside (``<stem>``: the name with ``_`` for ``-``);
* ``saber/agents/data/<stem>.json``: the provenance (script and its SHA-256, command,
  commit, versions, seed, frames, episodes, wall time, frames/s and where the time went,
  machine, hyperparameters) and the policy file's SHA-256, which
  :func:`saber.agents.pretrained.agent_provenance` checks;
* ``saber/agents/data/<stem>_training.jsonl.gz``: the training log (every training
  episode), for ``saber training``;
* the agent's entry in ``saber/agents/data/agents.json`` (what ``saber eval --agent``
  and ``saber list`` know);
* with ``--reference saber-ppo``: the agent's training episodes (game, seed, frames,
  score) in ``saber/data/saber_ppo_training.csv.gz``, the reference's training curves.

``evaluation`` writes the evaluation's episodes (one row per episode of the 100-episode
SABER evaluation, with its seed) and adds the evaluation's summary and versions to the
provenance; it leaves the policy file alone. The episodes go to
``saber/data/saber_ppo_episodes.csv`` for an agent of the ``saber-ppo`` reference (its
rows replaced), else to ``saber/agents/data/<stem>_episodes.csv``.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import io
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np
from ship_random_reference import EPISODE_COLUMNS, read_records, summarize, write_csv

from saber.games import get_game
from saber.rundir.reading import read_run_json

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "saber" / "agents" / "data"
REFERENCE_DATA = ROOT / "saber" / "data"
MANIFEST = DATA / "agents.json"
# The saber-ppo reference's files (saber.scoring.references reads them).
PPO_EPISODES = REFERENCE_DATA / "saber_ppo_episodes.csv"
PPO_TRAINING = REFERENCE_DATA / "saber_ppo_training.csv.gz"
PPO_EPISODE_COLUMNS = ("agent", "training_seed", *EPISODE_COLUMNS)
PPO_TRAINING_COLUMNS = ("agent", "game", "training_seed", "frames", "score")


def stem(name: str) -> str:
    return name.replace("-", "_")


def manifest() -> list[dict[str, Any]]:
    return json.loads(MANIFEST.read_text(encoding="utf-8"))


def entry(name: str) -> dict[str, Any]:
    for item in manifest():
        if item["name"] == name:
            return item
    raise SystemExit(f"ship_trained_agent.py: {name} is not in {MANIFEST}: ship its policy first")


def write_manifest(item: dict[str, Any]) -> None:
    """``item`` in the manifest, replacing the entry of the same name (kept in name order)."""
    items = [old for old in manifest() if old["name"] != item["name"]] + [item]
    items.sort(key=lambda old: old["name"])
    MANIFEST.write_text(json.dumps(items, indent=2) + "\n", encoding="utf-8")


def replace_rows(path: Path, columns: tuple[str, ...], agent: str, rows: list[dict]) -> None:
    """``path`` (a CSV, gzipped if it ends in .gz) with ``agent``'s rows replaced by
    ``rows``, in agent order."""
    kept = []
    if path.exists():
        data = path.read_bytes()
        text = (gzip.decompress(data) if path.suffix == ".gz" else data).decode("utf-8")
        kept = [row for row in csv.DictReader(io.StringIO(text)) if row["agent"] != agent]
    merged = sorted(kept + rows, key=lambda row: str(row["agent"]))
    write_csv(path, merged, columns, value=_csv_value)  # the values as they come


def _csv_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def ship_policy(run: Path, name: str, commit: str, dtype: str, reference: str | None) -> None:
    import torch

    sys.path.insert(0, str(ROOT / "examples"))
    from ppo_saber import Agent, actor_layers

    from saber.agents.convnet import write_policy_file

    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    setup = summary.get("setup", "saber")
    if reference and setup != "saber":
        raise SystemExit(
            f"ship_trained_agent.py: {run} was trained with --setup {setup}, not under SABER: "
            f"it never joins --reference {reference}; ship it without --reference"
        )
    state = torch.load(run / "checkpoint.pt", map_location="cpu", weights_only=True)
    if state["progress"]["frames"] != summary["frames"]:
        raise SystemExit(f"ship_trained_agent.py: {run}: the checkpoint is not the summary's")
    architecture = summary["architecture"]
    agent = Agent(tuple(architecture["channels"]), architecture["hidden"], architecture["actions"])
    agent.load_state_dict(state["agent"])
    game = get_game(summary["game"])
    training = {**summary, "commit": commit}
    stored = {"float32": np.float32, "float16": np.float16, "int8": np.int8}[dtype]
    # A minimal-action-set policy's logits go to their ALE ids (the runs before setups: all 18).
    action_ids = summary.get("action_ids", list(range(architecture["actions"])))
    layers = actor_layers(agent, action_ids)
    policy = write_policy_file(DATA / f"{stem(name)}.npz", layers, training, stored)
    log = f"{stem(name)}_training.jsonl.gz"
    # mtime 0: the same log gives the same bytes (and the same hash) on every run.
    with (
        (run / "training.jsonl").open("rb") as source,
        (DATA / log).open("wb") as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as target,
    ):
        shutil.copyfileobj(source, target)
    frames = f"{summary['frames'] / 1e6:.0f}M"
    under = "under SABER" if setup == "saber" else f"outside SABER (--setup {setup}; not SABER)"
    description = (
        f"PPO trained {under} on {game.title}, {frames} frames on 2 CPU cores, seed "
        f"{summary['seed']} (examples/ppo_saber.py; numpy inference"
        + (f"; --reference {reference})" if reference else ")")
    )
    provenance = {
        "name": name,
        "description": description + "; actions sampled from the policy, seeded per episode",
        "policy_file": policy.name,
        "dtype": dtype,
        "sha256": hashlib.sha256(policy.read_bytes()).hexdigest(),
        "bytes": policy.stat().st_size,
        "reference": reference,
        "training": training,
        "training_log": log,
    }
    write_provenance(name, provenance)
    write_manifest(
        {
            "name": name,
            "description": description,
            "game": game.ale_id,
            "training_seed": int(summary["seed"]),
            "policy_file": policy.name,
            "provenance_file": f"{stem(name)}.json",
        }
    )
    if reference == "saber-ppo":
        with (run / "training.jsonl").open(encoding="utf-8") as lines:
            rows = [
                {
                    "agent": name,
                    "game": game.ale_id,
                    "training_seed": summary["seed"],
                    "frames": line["frames"],
                    "score": line["score"],
                }
                for line in map(json.loads, lines)
            ]
        replace_rows(PPO_TRAINING, PPO_TRAINING_COLUMNS, name, rows)
    print(f"wrote {policy} ({policy.stat().st_size:,} bytes), its provenance and {MANIFEST.name}")


def ship_evaluation(run: Path, name: str) -> None:
    item = entry(name)
    provenance = json.loads((DATA / item["provenance_file"]).read_text(encoding="utf-8"))
    records, failed = read_records(run)
    (row,) = summarize(records)
    if provenance.get("reference") == "saber-ppo":
        seed = item["training_seed"]
        rows = [{"agent": name, "training_seed": seed, **record} for record in records]
        replace_rows(PPO_EPISODES, PPO_EPISODE_COLUMNS, name, rows)
        episodes_file = f"saber/data/{PPO_EPISODES.name}"
    else:
        write_csv(DATA / f"{stem(name)}_episodes.csv", records, EPISODE_COLUMNS)
        episodes_file = f"{stem(name)}_episodes.csv"
    run_json = read_run_json(run / "run.json")
    provenance["evaluation"] = {
        "command": f"saber eval --agent {name} --games {item['game']} --episodes "
        f"{len(records)} --seed {run_json['base_seed']}",
        "episodes_file": episodes_file,
        "failed_attempts": failed,
        "summary": {key: value for key, value in row.items() if key != "game"},
        "run": _plain(run_json),
    }
    write_provenance(name, provenance)
    print(f"wrote {episodes_file} and the evaluation in the provenance of {name}")


def _plain(value: Any) -> Any:
    """run.json's content as JSON data (dataclasses and mappings alike)."""
    return json.loads(json.dumps(value, default=lambda item: getattr(item, "__dict__", str(item))))


def write_provenance(name: str, provenance: dict[str, Any]) -> None:
    path = DATA / f"{stem(name)}.json"
    path.write_text(json.dumps(provenance, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    steps = parser.add_subparsers(dest="step", required=True)
    policy = steps.add_parser("policy", help="ship the trained actor and its provenance")
    policy.add_argument("run", type=Path, help="the run directory of examples/ppo_saber.py")
    policy.add_argument("--name", required=True, help="the agent's name (ppo-breakout)")
    policy.add_argument("--commit", required=True, help="the commit the training ran from")
    policy.add_argument(
        "--dtype",
        choices=["float32", "float16", "int8"],
        default="float32",
        help="how the weights are stored (saber.agents.convnet.write_policy_file); "
        "baselines/README.md says which agents ship in which",
    )
    # The agents shipped before --dtype were shipped with --float16: their commands still run.
    policy.add_argument(
        "--float16", dest="dtype", action="store_const", const="float16", help="--dtype float16"
    )
    policy.add_argument("--reference", choices=["saber-ppo"], help="the reference it joins")
    evaluation = steps.add_parser("evaluation", help="ship the 100-episode evaluation")
    evaluation.add_argument("run", type=Path, help="the run directory of saber eval")
    evaluation.add_argument("--name", required=True, help="the agent's name (ppo-breakout)")
    args = parser.parse_args()
    if args.step == "policy":
        ship_policy(args.run, args.name, args.commit, args.dtype, args.reference)
    else:
        ship_evaluation(args.run, args.name)


if __name__ == "__main__":
    main()
