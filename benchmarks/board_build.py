"""How long ``saber board`` takes on a board of 100 entries over 57 games, once verified.

The entries are run directories of 57 of the SABER games, ``--episodes`` per game, made
from the records of saber's random agent under SABER (``saber/data/saber_random_episodes.csv.gz``:
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

Its ``versions`` mode times ``saber verify`` and ``saber board`` of this checkout against
another saber version's, side by side, on real runs with their replays (``python
benchmarks/board_build.py versions --help``; ``benchmarks/results/board-versions.json``).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from _results import ROOT, Measurement, add_options, interleaved, spread, timed

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
from saber.scoring.packaged import data_text

GAMES = 57


def _random_records(games: list[str], episodes: int) -> list[dict]:
    text = data_text("saber_random_episodes.csv.gz")
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
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="versions --help: saber verify and saber board against another saber version",
    )
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


# ------------------------------------------------------------ versions
VERSIONS = """``saber verify`` and ``saber board`` of this checkout against another saber
version's, side by side, on honest runs: run directories with their replays (default:
the shipped baselines' evaluations, baselines/evals/, which saber 0.4 recorded and every
later version verifies).

Each round runs each version's commands, each in a fresh process, the versions' order
alternating from round to round; a command that fails ends the benchmark. The commands:

- verify: ``saber verify VERIFY_RUN --sample N --sample-seed 0 --workers W``;
- board, cold: ``saber board RUNS --out SITE --cache NEW --sample N --sample-seed 0
  --workers W --no-figures``: every run verified (its sample played), every report and
  page computed;
- board, again: the same with the cache the cold build left (nothing verified: a
  rebuild).

Timed from the outside: wall seconds and CPU seconds (the command and its worker
processes) of each whole command, imports and start-up included, and for the board the
seconds of the build itself as it prints them. Each figure is the median of the rounds;
the ratio is this version's seconds over the other's, median [min-max] of the rounds
(below 1: this version is faster).

The other version is a checkout of its own, e.g. saber 0.5, the commit before 0.6's
work: ``git worktree add ../saber-0.5 6ffbae4``, then ``versions --other ../saber-0.5``.
Its saber is imported from ``--other`` (``PYTHONPATH``, the command started in that
folder), with this environment's packages. Run it on a machine with nothing else running.
"""

BUILT = re.compile(r" in ([0-9.]+) s\b")  # the board's summary: "wrote SITE: ... in 19.9 s; ..."
COMMANDS = ("verify", "board, cold", "board, again")


def _version(tree: Path) -> str:
    """The version of the saber that ``tree`` holds, as a process started there imports it."""
    code = "import saber; print(saber.__version__)"
    done = timed([[sys.executable, "-c", code]], _env(tree), tree)
    return done[2][0].strip()


def _env(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree)}


def _saber(*words: object) -> list[str]:
    return [sys.executable, "-m", "saber.cli", *map(str, words)]


def one_round(tree: Path, args: argparse.Namespace, folder: Path) -> dict[str, tuple]:
    """``{command: (wall seconds, CPU seconds, build seconds or None)}`` of one round of
    ``tree``'s saber, in ``folder`` (emptied first)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    draw = ["--sample", args.sample, "--sample-seed", 0, "--workers", args.workers]
    board = _saber("board", *args.runs, "--out", folder / "site", "--cache", folder / "cache",
                   *draw, "--no-figures")  # fmt: skip
    found = {}
    for name, command in (("verify", _saber("verify", args.verify_run, *draw)),
                          ("board, cold", board), ("board, again", board)):  # fmt: skip
        wall, cpu, (out,) = timed([command], _env(tree), tree)
        built = BUILT.search(out) if name != "verify" else None
        found[name] = (wall, cpu, float(built.group(1)) if built else None)
    return found


def _median(values: list) -> str:
    values = [value for value in values if value is not None]
    return f"{statistics.median(values):.2f}" if values else "-"


def _rows(found: dict[str, list[dict[str, tuple]]]) -> list[list[str]]:
    """One row per command and figure: each version's median seconds, the ratio."""
    rows = []
    for name in COMMANDS:
        for index, figure in enumerate(("wall s", "CPU s", "build s")):
            this = [r[name][index] for r in found["this"]]
            other = [r[name][index] for r in found["other"]]
            if None in this or None in other:
                continue
            ratios = [a / b for a, b in zip(this, other, strict=True) if b > 0]
            ratio = spread(ratios) if ratios else "-"
            rows.append([name, figure, _median(other), _median(this), ratio])
    return rows


def versions_main(argv: list[str]) -> None:
    """Time saber verify and saber board of this checkout and another, side by side."""
    parser = argparse.ArgumentParser(
        prog=f"{Path(__file__).name} versions",
        description=VERSIONS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    evals = sorted(path for path in (ROOT / "baselines" / "evals").iterdir() if path.is_dir())
    parser.add_argument("--other", type=Path, required=True, help="the other version's checkout")
    parser.add_argument("--runs", type=Path, nargs="+", default=evals,
                        help="the board's run directories (default: baselines/evals/*)")  # fmt: skip
    parser.add_argument("--verify-run", type=Path, default=ROOT / "baselines/evals/ppo-breakout-1",
                        help="the run saber verify checks (default: %(default)s)")  # fmt: skip
    parser.add_argument("--sample", type=int, default=8, help="episodes played per run")
    parser.add_argument("--workers", type=int, default=0,
                        help="--workers of each command (default 0: one process, the steadiest "
                             "figures)")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true",
                        help="a check that it runs: 1 round, 2 runs, 1 episode each")  # fmt: skip
    add_options(parser, "board-versions")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.sample, args.runs = 1, 1, args.runs[:2]
    args.runs = [run.resolve() for run in args.runs]
    args.verify_run = args.verify_run.resolve()
    trees = {"this": ROOT, "other": args.other.resolve()}
    versions = {side: _version(tree) for side, tree in trees.items()}
    measurement = Measurement(
        args,
        page="board",
        order=20,
        title="saber verify and saber board against the previous version, side by side",
        benchmark=__file__,
        name="board-versions",
    )
    folder = Path(tempfile.mkdtemp(prefix="board-versions-"))
    try:
        found = interleaved(
            {side: lambda tree=tree, side=side: one_round(tree, args, folder / side)
             for side, tree in trees.items()},
            args.rounds,
        )  # fmt: skip
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    episodes = sum(
        len((run / "episodes.jsonl").read_text(encoding="utf-8").split("\n")) - 1
        for run in args.runs
    )
    measurement.text(
        f"{versions['this']} (this checkout) against {versions['other']} ({trees['other']}): "
        f"{args.rounds} round(s), each command in a fresh process, the versions' order "
        f"alternating; `saber verify` of {args.verify_run.name} and `saber board` of "
        f"{len(args.runs)} run(s) ({episodes:,} episodes with their replays), `--sample "
        f"{args.sample} --sample-seed 0 --workers {args.workers} --no-figures`; seconds "
        "(median of the rounds) and this version's over the other's, median [min-max]."
    )
    measurement.table(
        ["command", "figure", versions["other"], versions["this"], "this / other"],
        _rows(found),
    )
    measurement.data.update(versions=versions, rounds=found)
    measurement.write()


if __name__ == "__main__":
    if sys.argv[1:2] == ["versions"]:
        versions_main(sys.argv[2:])
    else:
        main()
