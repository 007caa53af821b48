"""Turn a finished ``saber eval --agent random --games all`` run into saber's shipped reference.

Maintainers' tool, run once per emulator or protocol change (it is how the package data
``saber/data/saber_random_*`` and the table of ``docs/random-agent.md`` were made)::

    saber eval --agent random --games all --episodes 100 --workers 2 --seed 0 \\
        --out runs/random-saber
    python scripts/release/ship_random_reference.py runs/random-saber --time-log runs/random-saber.err

Writes, from the run directory's ``episodes.jsonl`` and ``run.json`` (read only):

* ``saber/data/saber_random_episodes.csv.gz``: one row per finished episode, the harness
  record's columns (scores in points, frames at 60 fps);
* ``saber/data/saber_random_games.csv``: per game, mean and standard deviation of the
  score, the 5- and 30-minute scores, episode lengths, end reasons and rollovers;
* ``saber/data/saber_random_provenance.json``: versions, settings, seeds, dates, wall time,
  cores, and how many attempts failed;
* the generated table of ``docs/random-agent.md`` (between its ``<!-- table -->`` markers).

A game is flagged when the measured SABER mean differs from the published random score
(the one reports normalize with) by more than 2 standard errors of the measured mean
(at least one point over the square root of the episodes: scores move in whole points).
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import math
import os
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from saber.games import get_game

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "saber" / "data"
DOC = ROOT / "docs" / "random-agent.md"
EPISODE_COLUMNS = (
    "game",
    "episode",
    "seed",
    "score",
    "score_5min",
    "score_30min",
    "frames",
    "steps",
    "end",
    "rollovers",
    "infinite",
)
ENDS = ("game_over", "stuck_timeout", "time_cap", "truncated")
FLAG_STANDARD_ERRORS = 2.0


def read_records(run: Path) -> tuple[list[dict[str, Any]], int]:
    """Finished episode records (last one per game and episode) and the count of failed attempts."""
    finished: dict[tuple[str, int], dict[str, Any]] = {}
    failed = 0
    with (run / "episodes.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # a torn line from an interrupted write: the episode ran again
            if "error" in record:
                failed += 1
            else:
                finished[(record["game"], int(record["episode"]))] = record
    return sorted(finished.values(), key=lambda r: (r["game"], int(r["episode"]))), failed


def _typed(row: dict[str, str]) -> dict[str, Any]:
    """A row of the shipped episodes CSV as the harness record it was written from."""
    record: dict[str, Any] = dict(row)
    for key in ("episode", "seed", "frames", "steps", "rollovers"):
        record[key] = int(row[key])
    for key in ("score", "score_5min", "score_30min"):
        record[key] = float(row[key])
    record["infinite"] = row["infinite"] == "true"
    return record


def summarize(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per game: means, spreads, lengths, end reasons, rollovers (see module doc)."""
    by_game: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        by_game[record["game"]].append(record)
    rows = []
    for game, episodes in sorted(by_game.items()):
        scores = [float(e["score"]) for e in episodes]
        frames = [int(e["frames"]) for e in episodes]
        ends = Counter(e["end"] for e in episodes)
        std = statistics.stdev(scores) if len(scores) > 1 else 0.0
        rows.append(
            {
                "game": game,
                "episodes": len(episodes),
                "mean": statistics.fmean(scores),
                "std": std,
                "sem": std / math.sqrt(len(scores)),
                "min": min(scores),
                "max": max(scores),
                "mean_5min": statistics.fmean(float(e["score_5min"]) for e in episodes),
                "mean_30min": statistics.fmean(float(e["score_30min"]) for e in episodes),
                "mean_frames": statistics.fmean(frames),
                "max_frames": max(frames),
                **{f"ends_{end}": ends.get(end, 0) for end in ENDS},
                "rollovers": sum(int(e["rollovers"]) for e in episodes),
                "infinite": sum(bool(e["infinite"]) for e in episodes),
            }
        )
    return rows


def compare_with_published(row: dict[str, Any]) -> dict[str, Any]:
    """The published random score of a game, the difference, and the flag (> 2 SE)."""
    published = get_game(row["game"]).random
    difference = None if published is None else row["mean"] - published
    # Scores move in whole points: 100 episodes that all scored the same (SE 0) cannot tell
    # apart means less than about one point in 100 episodes (Freeway: published 0.01, all
    # 0 here), so the standard error is floored at one point over sqrt(episodes).
    sem = max(row["sem"], 1 / math.sqrt(row["episodes"]))
    z = None if difference is None else difference / sem
    flagged = z is not None and abs(z) > FLAG_STANDARD_ERRORS
    return {"published": published, "difference": difference, "z": z, "flagged": flagged}


def write_csv(
    path: Path,
    rows: list[dict[str, Any]],
    columns: tuple[str, ...] | list[str],
    value: Callable[[Any], Any] | None = None,
) -> None:
    """``rows`` as a CSV at ``path``, each cell written by ``value`` (default: floats to 6
    significant digits), gzipped when it ends with .gz (mtime 0: the same rows give the
    same bytes on every run)."""
    value = value or _csv_value
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: value(row[key]) for key in columns})
    data = buffer.getvalue().encode("utf-8")
    path.write_bytes(gzip.compress(data, mtime=0) if path.suffix == ".gz" else data)


def _csv_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6g}" if not value.is_integer() else f"{value:.1f}"
    return value


def elapsed_seconds(time_log: Path | None) -> float | None:
    """Wall time of the run from GNU time's ``-v`` log (``Elapsed (wall clock) time``)."""
    if time_log is None or not time_log.exists():
        return None
    match = re.search(
        r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", time_log.read_text()
    )
    if not match:
        return None
    hours, minutes, seconds = match.groups()
    return int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds)


def provenance(
    run: Path, records: list[dict[str, Any]], failed: int, wall: float | None
) -> dict[str, Any]:
    info = json.loads((run / "run.json").read_text(encoding="utf-8"))
    keep = (
        "saber",
        "ale_py",
        "gymnasium",
        "numpy",
        "python",
        "platform",
        "settings",
        "agent",
        "episodes",
        "base_seed",
        "seed_scheme",
        "started",
    )
    frames = sum(int(r["frames"]) for r in records)
    return {
        "description": "The built-in random agent (uniform over the 18 actions, seeded per "
        "episode) evaluated with saber eval under the full SABER protocol.",
        **{key: info[key] for key in keep if key in info},
        "games": sorted({r["game"] for r in records}),
        "finished_episodes": len(records),
        "failed_attempts": failed,
        "emulator_frames": frames,
        "wall_seconds": wall,
        "cores": os.cpu_count(),
        # The command as a user types it (the first word was the venv's absolute path).
        "commands": [["saber", *s["command"][1:]] for s in info["sessions"]],
        "workers": _flag(info["sessions"][0]["command"], "--workers"),
        "exported": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def _flag(command: list[str], name: str) -> str | None:
    return command[command.index(name) + 1] if name in command else None


def markdown_table(rows: list[dict[str, Any]]) -> str:
    """The per-game table of docs/random-agent.md."""
    lines = [
        "| game | published random | SABER random (mean ± SE) | difference | z | SABER random at 5 min | stuck | length (min) | flag |",
        "|---|---:|---:|---:|---:|---:|---:|---:|:-:|",
    ]
    for row in rows:
        comparison = compare_with_published(row)
        published = comparison["published"]
        z = comparison["z"]
        lines.append(
            f"| {_title(row['game'])} "
            f"| {'—' if published is None else _points(published)} "
            f"| {_points(row['mean'])} ± {_points(row['sem'])} "
            f"| {'—' if comparison['difference'] is None else _points(comparison['difference'], '+')} "
            f"| {'—' if z is None else f'{z:+.1f}'} "
            f"| {_points(row['mean_5min'])} | {row['ends_stuck_timeout']} "
            f"| {row['mean_frames'] / 3600:,.1f} | {'**yes**' if comparison['flagged'] else ''} |"
        )
    return "\n".join(lines)


def _points(value: float, sign: str = "") -> str:
    """Points with a precision that shows small numbers (0.01) and rounds big ones."""
    return f"{value:{sign},.2f}" if abs(value) < 10 else f"{value:{sign},.1f}"


def _title(ale_id: str) -> str:
    """The game's title as people write it, where saber.games has one (else the ale-py id)."""
    return getattr(get_game(ale_id), "title", ale_id)


def write_doc_table(table: str) -> None:
    text = DOC.read_text(encoding="utf-8")
    start, end = "<!-- table -->", "<!-- /table -->"
    before, rest = text.split(start, 1)
    _, after = rest.split(end, 1)
    DOC.write_text(f"{before}{start}\n{table}\n{end}{after}", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="the saber eval run directory")
    parser.add_argument("--time-log", type=Path, help="GNU time -v output of the run")
    parser.add_argument(
        "--replace-games",
        action="store_true",
        help="RUN evaluated some games again: replace only their episodes in the shipped "
        "data (and say so in the provenance), keep every other game's",
    )
    args = parser.parse_args()
    records, failed = read_records(args.run)
    meta_path = DATA / "saber_random_provenance.json"
    if args.replace_games:
        games = sorted({r["game"] for r in records})
        text = gzip.decompress((DATA / "saber_random_episodes.csv.gz").read_bytes()).decode()
        kept = [row for row in csv.DictReader(io.StringIO(text)) if row["game"] not in games]
        records = sorted(
            [_typed(row) for row in kept] + records, key=lambda r: (r["game"], int(r["episode"]))
        )
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        rerun = provenance(args.run, read_records(args.run)[0], failed, None)
        meta.setdefault("replaced", []).append(
            {
                "games": games,
                "why": "the vector engine counted ALE's starting actions as episode frames "
                "(fixed in saber 0.5.0): these games' frames, limits and records were off",
                **{key: rerun[key] for key in ("saber", "started", "commands", "base_seed")},
            }
        )
    else:
        meta = provenance(args.run, records, failed, elapsed_seconds(args.time_log))
    rows = summarize(records)
    write_csv(DATA / "saber_random_episodes.csv.gz", records, EPISODE_COLUMNS)
    write_csv(DATA / "saber_random_games.csv", rows, list(rows[0]))
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    if DOC.exists():
        write_doc_table(markdown_table(rows))
    flagged = [r["game"] for r in rows if compare_with_published(r)["flagged"]]
    print(
        f"{len(records)} episodes of {len(rows)} games ({failed} failed attempts); "
        f"{len(flagged)} games differ by more than {FLAG_STANDARD_ERRORS:g} SE: {', '.join(flagged)}"
    )


if __name__ == "__main__":
    main()
