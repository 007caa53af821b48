"""Write the results of ``docs/baselines.md`` from the shipped ``saber-ppo`` data.

Maintainers' tool, run after each baseline ships (``scripts/release/ship_trained_agent.py``)::

    python scripts/docs/baselines_page.py

Reads ``saber/data/saber_ppo_episodes.csv`` (the evaluations), the agents' provenance
(``saber/agents/data/ppo_*.json``: wall time, frames/s, where the time went) and
training logs, and writes, between the ``<!-- results`` markers of docs/baselines.md:

* per game: the raw score (mean of 100 evaluation episodes; over runs, the mean of the
  runs' means), at 5 and 30 minutes, world-record- and human-normalized, the class,
  episode lengths and how the episodes ended;
* the SABER report's summary of ``saber report --reference saber-ppo`` (median, IQM and
  mean over the games, the classes, the Atari-5 estimate of the 57-game median);
* per run: frames, wall time, frames/s and where the time went, and the training-time
  score (mean of the last 100 training episodes) at 5M and 10M frames beside Dopamine's
  sticky-action agents at 10M;
* the training curves beside Dopamine's up to 10M frames:
  ``docs/figures/baselines_training_<game>.png``.
"""

from __future__ import annotations

import csv
import dataclasses
import gzip
import math
import re
import statistics
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from saber.agents.pretrained import PRETRAINED, agent_provenance
from saber.games import get_game
from saber.reports.training import compare_training, training_curves
from saber.reports.training_log import training_scores
from saber.reports.training_plots import save_training_plots
from saber.scoring.normalize import human_normalize, world_record_normalize
from saber.scoring.rules import CLASS_NAMES, classify

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "baselines.md"
FIGURES = ROOT / "docs" / "figures"
EPISODES = ROOT / "saber" / "data" / "saber_ppo_episodes.csv"
AGENTS = ROOT / "saber" / "agents" / "data"
BEGIN = "<!-- results: made by scripts/docs/baselines_page.py -->"  # docs/baselines.md's marker
END = "<!-- end of results -->"
BUDGET = 10_000_000  # training frames of every run
FRAMES_PER_MINUTE = 3600  # 60 emulator frames a second
ENDS = {"game_over": "game over", "stuck_timeout": "stuck", "time_cap": "cap"}


def runs_by_game() -> dict[str, dict[int, list[dict[str, str]]]]:
    """``{game: {training_seed: episodes}}`` of the shipped evaluations."""
    games: dict[str, dict[int, list[dict[str, str]]]] = defaultdict(dict)
    with EPISODES.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            games[row["game"]].setdefault(int(row["training_seed"]), []).append(row)
    return dict(sorted(games.items(), key=lambda item: get_game(item[0]).title))


def _pct(value: float | None) -> str:
    return "–" if value is None or math.isnan(value) else f"{value:,.1f}%"


def score_table(games: dict[str, dict[int, list[dict[str, str]]]]) -> list[str]:
    header = (
        "| game | runs | score (SE) | at 5 min | at 30 min | % of world record | "
        "% of human | class | episode length, mean / max | ends |"
    )
    lines = [header, "|---|---:|---:|---:|---:|---:|---:|---|---:|---|"]
    for game, runs in games.items():
        info = get_game(game)
        means = {
            column: statistics.fmean(
                statistics.fmean(float(e[column]) for e in episodes) for episodes in runs.values()
            )
            for column in ("score", "score_5min", "score_30min")
        }
        episodes = [e for run in runs.values() for e in run]
        scores = [float(e["score"]) for e in episodes]
        # One run: the standard error over its episodes; several: over the runs' means.
        spread = (
            [statistics.fmean(float(e["score"]) for e in run) for run in runs.values()]
            if len(runs) > 1
            else scores
        )
        se = statistics.stdev(spread) / math.sqrt(len(spread)) if len(spread) > 1 else 0.0
        record = (
            None
            if info.world_record is None
            else float(world_record_normalize(means["score"], info.random, info.world_record))
        )
        human = float(human_normalize(means["score"], info.random, info.human))
        klass = "no record" if record is None else CLASS_NAMES[int(classify([record])[0])]
        frames = [int(e["frames"]) for e in episodes]
        ends = Counter(ENDS.get(e["end"], e["end"]) for e in episodes)
        length = (
            f"{statistics.fmean(frames) / FRAMES_PER_MINUTE:.1f} / "
            f"{max(frames) / FRAMES_PER_MINUTE:.1f} min"
        )
        lines.append(
            f"| {info.title} | {len(runs)} | {means['score']:,.1f} ({se:,.1f}) | "
            f"{means['score_5min']:,.1f} | {means['score_30min']:,.1f} | {_pct(record)} | "
            f"{_pct(human)} | {klass} | {length} | "
            + ", ".join(f"{count} {end}" for end, count in ends.most_common())
            + " |"
        )
    return lines


def report_summary() -> list[str]:
    """The Summary section of ``saber report --reference saber-ppo`` (its own words)."""
    done = subprocess.run(
        [sys.executable, "-m", "saber.cli", "report", "--reference", "saber-ppo"],
        capture_output=True,
        text=True,
        check=True,
    )
    text = done.stdout
    start = text.index("## Summary")
    end = text.index("\n## ", start + 1)
    return text[start:end].replace("## Summary", "### The SABER report").strip().splitlines()


def budget_frames(name: str) -> int:
    """The frames of the updates a run made (agent steps x 4, as CleanRL counts them): its
    log counts the frames the emulator played, a little fewer (the autoreset step after
    each episode plays none), so the log alone ends just short of the budget."""
    training = agent_provenance(name)["training"]
    args = training["args"]
    return int(training["iterations"]) * int(args["num_envs"]) * int(args["num_steps"]) * 4


def training_table(logs: dict[str, Path]) -> list[str]:
    lines = [
        "| agent | frames | wall time | frames/s | learning / acting / emulation | "
        "score at 5M | at 10M | Dopamine at 10M: DQN / Rainbow / IQN ‡ |",
        "|---|---:|---:|---:|---|---:|---:|---|",
    ]
    for name, log in logs.items():
        training = agent_provenance(name)["training"]
        seconds = training["seconds"]
        total = sum(seconds[key] for key in ("learning", "acting", "emulation"))
        split = " / ".join(
            f"{100 * seconds[key] / total:.0f}%" for key in ("learning", "acting", "emulation")
        )
        scores = training_scores(log, (5_000_000, BUDGET), trained_frames=budget_frames(name))
        own = {s.at_frames: s.mean for s in scores}
        rows = compare_training(scores, "dopamine")
        at_budget = next(row for row in rows if row.at_frames == BUDGET)
        dopamine = " / ".join(
            "–" if cell is None else f"{cell.score:,.1f}"
            for cell in (
                at_budget.references.get(f"{agent}@dopamine") for agent in ("dqn", "rainbow", "iqn")
            )
        )
        hours, rest = divmod(int(training["wall_seconds"]), 3600)
        lines.append(
            f"| {name} | {training['frames']:,} | {hours} h {rest // 60:02d} min | "
            f"{training['frames_per_second']:,.0f} | {split} | {own[5_000_000]:,.1f} | "
            f"{own[BUDGET]:,.1f} | {dopamine} |"
        )
    lines += [
        "",
        "‡ Dopamine: 5 runs (mean), sticky actions but the minimal action set and a "
        "108,000-frame cap; the mean training return of the 1M-frame iteration ending at 10M.",
    ]
    return lines


def training_figures(logs: dict[str, Path]) -> list[str]:
    """One figure per game (its first seed's run), Dopamine's curves cut at 10M frames."""
    lines, seen = [], set()
    for name, log in logs.items():
        game = PRETRAINED[name].game
        if game in seen:
            continue
        seen.add(game)
        (curve,) = training_curves(
            log, "dopamine", checkpoints=(5_000_000, BUDGET), trained_frames=budget_frames(name)
        )
        references = []
        for reference in curve.references:
            keep = reference.frames <= BUDGET
            references.append(
                dataclasses.replace(
                    reference,
                    frames=reference.frames[keep],
                    mean=reference.mean[keep],
                    low=reference.low[keep],
                    high=reference.high[keep],
                    checkpoints={f: c for f, c in reference.checkpoints.items() if f <= BUDGET},
                )
            )
        curve = dataclasses.replace(curve, references=references)
        with tempfile.TemporaryDirectory() as folder:
            (path,) = save_training_plots([curve], folder, dpi=150, agent=name)
            target = FIGURES / f"baselines_training_{game}.png"
            target.write_bytes(path.read_bytes())
        lines.append(f"![{name}'s training curve beside Dopamine's](figures/{target.name})")
        lines.append("")
    return lines


def decompressed_logs(folder: Path) -> dict[str, Path]:
    """Each saber-ppo agent's training log, decompressed into ``folder``."""
    logs = {}
    for name in sorted(PRETRAINED, key=lambda n: (PRETRAINED[n].game, n)):
        record = agent_provenance(name)
        if record.get("reference") != "saber-ppo":
            continue
        path = folder / f"{name}.jsonl"
        path.write_bytes(gzip.decompress((AGENTS / record["training_log"]).read_bytes()))
        logs[name] = path
    return logs


def results() -> str:
    games = runs_by_game()
    with tempfile.TemporaryDirectory() as folder:
        logs = decompressed_logs(Path(folder))
        parts = [
            "### Per game (100 evaluation episodes per run)",
            "",
            *score_table(games),
            "",
            "Normalized scores: 0% is the random agent, 100% the human world record (or the "
            "beginner human of Mnih et al. 2015); classes as the SABER paper's. Episode "
            "lengths in minutes of play at 60 frames a second; `stuck`: the 5-minute "
            "no-reward timeout.",
            "",
            *report_summary(),
            "",
            "### Training",
            "",
            *training_table(logs),
            "",
            *training_figures(logs),
        ]
    return "\n".join(parts).rstrip() + "\n"


def main() -> None:
    page = PAGE.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.DOTALL)
    if not pattern.search(page):
        raise SystemExit(f"baselines_page.py: {PAGE} has no {BEGIN} ... {END} markers")
    PAGE.write_text(pattern.sub(lambda _: f"{BEGIN}\n{results()}{END}", page), encoding="utf-8")
    print(f"wrote the results of {PAGE} and its figures in {FIGURES}")


if __name__ == "__main__":
    np.seterr(invalid="ignore")  # a game without a world record normalizes to NaN
    main()
