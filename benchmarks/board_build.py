"""How long ``saber board`` takes on a board of 100 entries over 57 games, once verified.

The entries are run directories of 57 of the SABER games, ``--episodes`` per game, made
from the records of saber's random agent under SABER (``saber/data/saber_random_episodes.csv``:
real records, their seeds the run's), each entry its own run (its own ``run_id`` and agent,
its scores scaled by 1 + i/100 so that no two entries are alike). Their replays are not
made: playing 100 x 57 x 100 episodes takes days, and verifying them is ``saber verify``'s
cost (benchmarks/eval_speed.py replays), not the board's. Instead the verification each run
would have had is put in the cache, as a first build leaves it ("once verified"), and the
builds measured are what follows:

1. **cold**: every verification found in the cache; every report, ranking, figure page
   and file computed;
2. **again**: the same entries again (everything found in the cache: a rebuild);
3. **one more**: one entry added (its report and page computed, the others found).

The goal: a board of 100 entries over 57 games builds in under a minute on 2 cores once
verified, and a build that adds one entry does not verify the others again.

    python benchmarks/board_build.py [--entries 100] [--episodes 100] [--no-figures]

It writes ``benchmarks/results/board-build.json`` for docs/measurements/board.md, where
the figures measured so far are: each build's time, and the site's size (bytes in all, a
report page with its figures, the figures, the JSON and CSV files), the issue's "small".
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import tempfile
import time
import uuid
from importlib import resources
from pathlib import Path

from _results import Measurement, add_options

from saber.board import build_board
from saber.board.cache import Cache
from saber.board.entries import run_content
from saber.board.status import DEFAULT_BUDGET, verify_key
from saber.games import saber_games
from saber.protocol.seeds import SEED_SCHEME
from saber.protocol.settings import SaberSettings
from saber.replay.verify import versions_here
from saber.rundir.durable import write_run_file
from saber.rundir.reading import episodes_log_checkpoint
from saber.rundir.records import EPISODES_FILE
from saber.rundir.runfile import RunFile, Session

GAMES = 57


def _random_records(games: list[str], episodes: int) -> list[dict]:
    text = resources.files("saber.data").joinpath("saber_random_episodes.csv").read_text()
    wanted = set(games)
    return [
        row for row in csv.DictReader(text.splitlines())
        if row["game"] in wanted and int(row["episode"]) < episodes
    ]  # fmt: skip


def make_entry(folder: Path, index: int, rows: list[dict], games: list[str], episodes: int) -> Path:
    """One run directory: the random agent's records, scaled, under agent ``agent-<i>``."""
    run = folder / f"entry-{index:03d}"
    run.mkdir(parents=True)
    agent = f"agent-{index:03d}"
    scale = 1 + index / 100
    lines = []
    for row in rows:
        record = {
            "game": row["game"], "episode": int(row["episode"]), "seed": int(row["seed"]),
            "agent": agent, "score": float(row["score"]) * scale,
            "score_5min": float(row["score_5min"]) * scale,
            "score_30min": float(row["score_30min"]) * scale, "frames": int(row["frames"]),
            "steps": int(row["steps"]), "end": row["end"], "rollovers": int(row["rollovers"]),
            "infinite": row["infinite"] == "true", "seconds": 1.0,
        }  # fmt: skip
        lines.append(json.dumps(record) + "\n")
    (run / EPISODES_FILE).write_text("".join(lines))
    started = "2026-11-28T00:00:00+00:00"
    command = ["saber", "eval", "--agent", agent, "--out", str(run)]
    session = Session(
        command=command, started=started, versions=dict(versions_here()), ended=started,
        status="finished", counts={"episodes_finished": len(rows), "attempts_failed": 0},
        episodes_log=episodes_log_checkpoint(run / EPISODES_FILE),
    )  # fmt: skip
    write_run_file(
        run,
        RunFile(
            settings=SaberSettings().as_dict(), deviations={}, agent=agent, games=games,
            episodes=episodes, base_seed=0, seed_scheme=SEED_SCHEME, command=command,
            started=started, versions=dict(versions_here()), run_id=uuid.uuid4().hex,
            sessions=[session],
        ),
    )  # fmt: skip
    return run


def mark_verified(cache: Path, run: Path, episodes: int) -> None:
    """Put in the cache what verifying ``run`` would have kept: every replay reproduced."""
    key = verify_key(run_content(run).decode(), None, DEFAULT_BUDGET)
    Cache(cache).put(
        "verify",
        key,
        {"error": None, "ok": True, "whole": True, "played": episodes, "drawn": episodes,
         "intended": episodes, "finished": episodes, "requested": episodes,
         "episodes_per_game": episodes // GAMES, "missing": 0, "problems": [],
         "problem_count": 0, "deviations": {}, "agent": run.name, "notes": [], "seed": 0,
         "steps_played": 0, "steps_total": 0, "summary": "(benchmark: marked verified)",
         "fingerprint": run.name},
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100)
    parser.add_argument("--episodes", type=int, default=100, help="episodes per game")
    parser.add_argument("--figures", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--keep", type=Path, default=None, help="build here and keep it")
    add_options(parser, "board-build")
    args = parser.parse_args()
    measurement = Measurement(
        args,
        page="board",
        order=10,
        title=f"{args.entries} entries over {GAMES} games",
        benchmark=__file__,
    )
    folder = args.keep or Path(tempfile.mkdtemp(prefix="board-bench-"))
    games = [g.ale_id for g in saber_games()][:GAMES]
    rows = _random_records(games, args.episodes)
    cache = folder / "cache"
    started = time.perf_counter()
    runs = [
        make_entry(folder / "runs", i, rows, games, args.episodes) for i in range(args.entries + 1)
    ]
    for run in runs:
        mark_verified(cache, run, len(rows))
    made = time.perf_counter() - started
    print(f"{args.entries} entries + 1 over {len(games)} games, {len(rows)} episodes each "
          f"({made:.1f} s to make; {os.cpu_count()} cores); figures: {args.figures}")  # fmt: skip
    results = []
    for name, given in (("cold", runs[:-1]), ("again", runs[:-1]), ("one more", runs)):
        board = build_board(given, folder / "site", figures=args.figures, cache=cache)
        results.append((name, board))
        print(f"{name}: {board.summary()}", flush=True)
    size = site_size(folder / "site")
    measurement.text(
        f"{args.entries} entries x {len(games)} games x {len(rows)} episodes, made from the "
        "random agent's records under SABER, their verifications put in the cache as a first "
        f"build leaves them; figures {'drawn' if args.figures else 'not drawn'}."
    )
    measurement.table(
        ["build", "entries", "runs verified", "reports computed", "files", "MB", "seconds"],
        [
            [
                name,
                len(board.entries),
                board.verified_now,
                board.reports_computed,
                board.files,
                f"{board.size / 1e6:.1f}",
                f"{board.seconds:.1f}",
            ]
            for name, board in results
        ],
    )
    measurement.table(
        ["the site (one more)", "files", "bytes", "bytes per entry (shared pages too)"],
        [
            [kind, files, bytes_, round(bytes_ / (args.entries + 1))]
            for kind, (files, bytes_) in size.items()
        ],
    )
    measurement.data["site_bytes"] = {kind: bytes_ for kind, (_, bytes_) in size.items()}
    measurement.write()


def site_size(site: Path) -> dict[str, tuple[int, int]]:
    """Files and bytes of the site, in all and by kind: report pages, figures, JSON, CSV,
    the other pages."""
    kinds = {"all": [0, 0]}
    for path in sorted(site.rglob("*")):
        if not path.is_file():
            continue
        if path.name == "report.html":
            kind = "report pages"
        elif path.parent.name == "figures":
            kind = "figures"
        elif path.suffix in (".json", ".csv"):
            kind = f"{path.suffix[1:].upper()} files"
        else:
            kind = "other pages, style, script"
        for counted in (kinds.setdefault(kind, [0, 0]), kinds["all"]):
            counted[0] += 1
            counted[1] += path.stat().st_size
    return {kind: (files, bytes_) for kind, (files, bytes_) in kinds.items()}


if __name__ == "__main__":
    main()
