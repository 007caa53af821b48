"""Turn Dopamine's published Atari training curves into saber's shipped ``dopamine`` references.

Maintainers' tool, run once per Dopamine data release (it is how the package data
``saber/data/dopamine_*`` and the 10M-frame Atari-5 table of ``docs/reports.md`` were made)::

    git clone https://github.com/google/dopamine /tmp/dopamine     # Apache-2.0
    python scripts/release/ship_dopamine_reference.py /tmp/dopamine

``DOPAMINE`` is a checkout (a work tree) or a bare git directory of google/dopamine; the
script reads ``baselines/atari/data/<game>.json`` (the plain files: not ``*.vg.json``,
``*_CNN.json`` or ``*_Impala.json``) and ``LICENSE`` at ``--rev`` (default ``HEAD``), and
writes:

* ``saber/data/dopamine_checkpoints.csv.gz``: per game (saber's ale id), agent and run, the
  value at the 10M, 50M, 100M and 200M-frame checkpoints, with the iteration that stands
  for the checkpoint and the frames it covers;
* ``saber/data/dopamine_iterations.csv.gz``: every published iteration, one row per game,
  agent and iteration, one column per run (the training-curve figure's bands);
* ``saber/data/dopamine_provenance.json``: repository, commit, licence, the files read
  (git blob ids), the game and agent names mapped to saber's, the iteration -> frames
  mapping and the settings of Dopamine's runs;
* ``saber/data/dopamine_LICENSE.txt``: the Apache-2.0 notice and licence text;
* the generated table of ``docs/reports.md`` (between its ``<!-- dopamine-10M -->`` markers).

The layout of a ``<game>.json`` file, checked here (the script stops on any surprise): a
list of ``{"Iteration", "Value", "Agent"}`` records; per agent, 5 runs one after the
other, each restarting at iteration 0 and ending at iteration 198 (iteration 199, the
200th of Dopamine's ``Runner.num_iterations = 200``, is not published). Values are kept
exactly (Python's shortest round-trip ``repr``), so the shipped numbers equal the JSON's.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import io
import json
import math
import re
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from saber.errors import UnknownGameError
from saber.games import get_game, saber_games
from saber.scoring import dopamine

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "saber" / "data"
DOC = ROOT / "docs" / "reports.md"
SOURCE = "https://github.com/google/dopamine"
DATA_PATH = "baselines/atari/data"
RUNS = 5
ITERATIONS = 199  # published: 0..198


class LayoutError(RuntimeError):
    """The JSON files are not laid out as this script (and saber's reader) expects."""


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(_git_dir(repo)), *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def _git_dir(repo: Path) -> Path:
    return repo / ".git" if (repo / ".git").exists() else repo


def read_source(repo: Path, rev: str) -> tuple[dict[str, bytes], bytes, dict[str, Any]]:
    """The plain ``<game>.json`` files and ``LICENSE`` at ``rev``, and the commit facts."""
    commit = _git(repo, "rev-parse", f"{rev}^{{commit}}").strip()
    date = _git(repo, "show", "-s", "--format=%cI", commit).strip()
    listing = _git(repo, "ls-tree", commit, f"{DATA_PATH}/").splitlines()
    files, blobs = {}, {}
    for line in listing:
        meta, path = line.split("\t")
        name = path.rsplit("/", 1)[1]
        # Only <game>.json: the other variants are other experiments (CNN/Impala, vg).
        if re.fullmatch(r"[a-z]+\.json", name):
            blob = meta.split()[2]
            files[name[:-5]] = subprocess.run(
                ["git", "--git-dir", str(_git_dir(repo)), "cat-file", "blob", blob],
                check=True,
                capture_output=True,
            ).stdout
            blobs[path] = blob
    licence = subprocess.run(
        ["git", "--git-dir", str(_git_dir(repo)), "show", f"{commit}:LICENSE"],
        check=True,
        capture_output=True,
    ).stdout
    if not files:
        raise LayoutError(f"{repo}: no {DATA_PATH}/<game>.json at {commit}")
    return files, licence, {"commit": commit, "commit_date": date, "blobs": blobs}


def parse_game(name: str, raw: bytes) -> dict[str, list[list[float]]]:
    """``{dopamine agent: [run][iteration] values}`` of one file, its layout checked."""
    records = json.loads(raw)
    by_agent: dict[str, list[list[float]]] = {}
    for index, record in enumerate(records):
        if set(record) != {"Iteration", "Value", "Agent"}:
            raise LayoutError(f"{name}.json record {index}: keys {sorted(record)}")
        runs = by_agent.setdefault(record["Agent"], [])
        iteration, value = record["Iteration"], record["Value"]
        if iteration == 0:
            runs.append([])  # a run's iterations restart at 0
        if not runs or iteration != len(runs[-1]):
            raise LayoutError(f"{name}.json record {index}: iteration {iteration} out of order")
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            raise LayoutError(f"{name}.json record {index}: value {value!r}")
        runs[-1].append(float(value))
    if set(by_agent) != set(dopamine.AGENTS.values()):
        raise LayoutError(f"{name}.json: agents {sorted(by_agent)}")
    for agent, runs in by_agent.items():
        if len(runs) != RUNS or any(len(run) != ITERATIONS for run in runs):
            shape = [len(run) for run in runs]
            raise LayoutError(f"{name}.json {agent}: runs x iterations {shape}")
    return by_agent


def map_games(names: list[str]) -> tuple[dict[str, str], list[str], list[str]]:
    """Dopamine file name -> ale id; Dopamine games outside saber's 61; saber's not in Dopamine."""
    mapping, outside = {}, []
    for name in names:
        try:
            game = get_game(name)
        except UnknownGameError:
            outside.append(name)
            continue
        if game.in_saber:
            mapping[name] = game.ale_id
        else:
            outside.append(name)
    missing = sorted({g.ale_id for g in saber_games()} - set(mapping.values()))
    return mapping, sorted(outside), missing


def write_data(
    curves: dict[str, dict[str, list[list[float]]]], games: dict[str, str]
) -> tuple[str, bytes]:
    """The checkpoint CSV and the gzipped per-iteration CSV, as written."""
    checkpoints = io.StringIO()
    writer = csv.writer(checkpoints, lineterminator="\n")
    writer.writerow(dopamine.CHECKPOINT_COLUMNS)
    iterations = io.StringIO()
    wide = csv.writer(iterations, lineterminator="\n")
    wide.writerow(dopamine.ITERATION_COLUMNS)
    for name in sorted(curves, key=lambda n: games[n]):
        for agent in dopamine.AGENTS:
            runs = curves[name][dopamine.AGENTS[agent]]
            for label, iteration in dopamine.CHECKPOINT_ITERATIONS.items():
                first, last = dopamine.iteration_frames(iteration)
                for run, values in enumerate(runs, start=1):
                    score = repr(values[iteration])  # exact: the JSON's own digits
                    writer.writerow([games[name], agent, run, label, iteration, first, last, score])
            for iteration in range(ITERATIONS):
                wide.writerow(
                    [games[name], agent, iteration, *(repr(run[iteration]) for run in runs)]
                )
    # mtime=0: the same data give the same bytes, so a re-run changes nothing in git.
    return checkpoints.getvalue(), gzip.compress(iterations.getvalue().encode(), mtime=0)


def licence_notice(licence: bytes, facts: dict[str, Any]) -> str:
    """Apache-2.0 section 4: the licence, the copyright notice, and what was changed."""
    return (
        "The files saber/data/dopamine_checkpoints.csv.gz, saber/data/dopamine_iterations.csv.gz\n"
        "and saber/data/dopamine_provenance.json are derived from the Dopamine baselines\n"
        f"data ({SOURCE}, {DATA_PATH}/<game>.json, commit {facts['commit']}).\n"
        "Copyright 2018 The Dopamine Authors. Licensed under the Apache License, Version 2.0.\n"
        "\n"
        "Changes made by saber (scripts/release/ship_dopamine_reference.py): the values were taken\n"
        "unchanged from the JSON files and rewritten as CSV; game and agent names were\n"
        "mapped to saber's; the runs were numbered 1 to 5 in file order; the checkpoint\n"
        "file keeps iterations 9, 49, 99 and 198 only.\n"
        "\n"
        "The licence of the Dopamine repository (its LICENSE file) follows.\n"
        "\n" + licence.decode("utf-8")
    )


def provenance(
    facts: dict[str, Any], games: dict[str, str], outside: list[str], missing: list[str]
) -> dict[str, Any]:
    """The provenance record (``dopamine_provenance.json``)."""
    return {
        "description": "Dopamine's published training curves (per-iteration mean training "
        "return) for 6 agents x 5 runs on 60 Atari games, as saber references.",
        "source": SOURCE,
        "path": f"{DATA_PATH}/<game>.json",
        "commit": facts["commit"],
        "commit_date": facts["commit_date"],
        "licence": "Apache-2.0",
        "licence_file": f"saber/data/{dopamine.LICENSE_FILE}",
        "copyright": "Copyright 2018 The Dopamine Authors",
        "citation": dopamine.CITATION,
        "files": facts["blobs"],
        "generated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "generated_by": "scripts/release/ship_dopamine_reference.py",
        "agents": dict(dopamine.AGENTS),
        "games": games,
        "dopamine_games_not_in_saber": outside,
        "saber_games_not_in_dopamine": missing,
        "layout": {
            "runs_per_agent": RUNS,
            "iterations_per_run": ITERATIONS,
            "iterations": f"0..{ITERATIONS - 1}; a run's iterations restart at 0; runs in "
            "file order are numbered 1..5",
            "missing_iteration": "199 (Dopamine's Runner.num_iterations = 200: the last "
            "iteration is not in the files)",
        },
        "iteration_frames": {
            "frames_per_iteration": dopamine.FRAMES_PER_ITERATION,
            "rule": "iteration k covers training frames k*1M to (k+1)*1M (250,000 agent "
            "steps x frame skip 4; nominal: an iteration plays whole episodes, so it ends "
            "past its 1M frames by the rest of its last episode)",
            "checkpoints": {
                label: {
                    "iteration": iteration,
                    "first_frame": dopamine.iteration_frames(iteration)[0],
                    "last_frame": dopamine.iteration_frames(iteration)[1],
                }
                for label, iteration in dopamine.CHECKPOINT_ITERATIONS.items()
            },
            "200M": "iteration 198 (frames 198M-199M), the last published, stands for 200M",
        },
        "settings": {
            "repeat_action_probability": 0.25,
            "action_set": "minimal",
            "frame_skip": 4,
            "max_steps_per_episode": 27_000,
            "max_episode_frames": 108_000,
            "stuck_timeout": None,
            "rollover_correction": None,
            "value": "mean undiscounted return of all training episodes of the iteration "
            "(Runner._run_train_phase: train_average_return)",
            "source": "dopamine/jax/agents/*/configs/*.gin and "
            "dopamine/discrete_domains/{atari_lib,run_experiment}.py",
        },
        "deviations_from_saber": {k: list(v) for k, v in dopamine.DEVIATIONS.items()},
    }


def doc_table(seed: int = 0, resamples: int = 2000) -> str:
    """The 10M-frame table of Atari-5: per game and agent, the 5-run mean [95% CI]."""
    from saber.reports.report import make_report  # the report's own Atari-5 estimate
    from saber.scoring import reference_table
    from saber.scoring.atari5 import subset_weights

    games = list(subset_weights("atari5"))
    scores = dopamine.checkpoint_scores()
    header = ["Agent", *(get_game(g).title for g in games), "Atari-5 estimate"]
    rows = []
    for agent in dopamine.AGENTS:
        values = np.stack([scores[agent]["10M"][g] for g in games], axis=1)  # (runs, games)
        mean, low, high = dopamine.run_band(values, seed, resamples)
        table = reference_table(f"dopamine:{agent}@10M")
        table.records = [r for r in table.records if r.game in games]
        section = next(iter(make_report(table, seed, resamples).agents.values()))
        atari5 = section[dopamine.TIME_LIMIT].atari5.estimate
        cells = [_cell(m, lo, hi) for m, lo, hi in zip(mean, low, high, strict=True)]
        rows.append([agent, *cells, "n/a" if atari5 is None else f"{atari5:.1f}%"])
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _cell(mean: float, low: float, high: float) -> str:
    digits = 1 if abs(mean) < 100 else 0  # Double Dunk's -19.4 is not -19
    return f"{mean:,.{digits}f} [{low:,.{digits}f}, {high:,.{digits}f}]"


def write_doc_table(table: str) -> None:
    """Replace the table between the ``<!-- dopamine-10M -->`` markers of docs/reports.md."""
    text = DOC.read_text(encoding="utf-8")
    start, end = "<!-- dopamine-10M -->", "<!-- /dopamine-10M -->"
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    DOC.write_text(f"{head}{start}\n{table}{end}{tail}", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dopamine", type=Path, help="a checkout or git directory of dopamine")
    parser.add_argument("--rev", default="HEAD", help="the commit to read [HEAD]")
    args = parser.parse_args()
    files, licence, facts = read_source(args.dopamine, args.rev)
    games, outside, missing = map_games(sorted(files))
    if outside:
        print(f"Dopamine games outside saber's 61 (not shipped): {', '.join(outside)}")
    curves = {name: parse_game(name, files[name]) for name in games}
    checkpoints, iterations = write_data(curves, games)
    # mtime 0: the same rows give the same bytes (and the same hash) on every run.
    checkpoint_bytes = gzip.compress(checkpoints.encode(), mtime=0)
    (DATA / dopamine.CHECKPOINT_FILE).write_bytes(checkpoint_bytes)
    (DATA / dopamine.ITERATION_FILE).write_bytes(iterations)
    record = provenance(facts, games, outside, missing)
    record["sha256"] = {
        dopamine.CHECKPOINT_FILE: hashlib.sha256(checkpoint_bytes).hexdigest(),
        dopamine.ITERATION_FILE: hashlib.sha256(iterations).hexdigest(),
    }
    (DATA / dopamine.PROVENANCE_FILE).write_text(
        json.dumps(record, indent=2) + "\n", encoding="utf-8"
    )
    (DATA / dopamine.LICENSE_FILE).write_text(licence_notice(licence, facts), encoding="utf-8")
    dopamine.checkpoint_scores.cache_clear()
    write_doc_table(doc_table())
    print(
        f"{len(games)} games x {len(dopamine.AGENTS)} agents x {RUNS} runs from "
        f"{SOURCE}@{facts['commit'][:12]}; saber games not in Dopamine: {', '.join(missing)}"
    )


if __name__ == "__main__":
    main()
