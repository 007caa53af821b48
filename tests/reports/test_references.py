"""Shipped references: the SABER paper's agents (a known-answer test) and the measured random agent."""

from __future__ import annotations

import csv
import gzip
import json
import math
import statistics
from importlib import resources

import pytest
from click.testing import CliRunner

from saber.cli import main
from saber.errors import ExitCode
from saber.reports import make_report
from saber.scoring import (
    UnknownReferenceError,
    list_references,
    merge_tables,
    read_scores,
    reference_table,
    training_reference,
)

DATA = resources.files("saber.data")


def _csv(name: str) -> list[dict[str, str]]:
    data = DATA.joinpath(name).read_bytes()
    text = (gzip.decompress(data) if name.endswith(".gz") else data).decode("utf-8")
    return list(csv.DictReader(text.splitlines()))


def paper_median(agent: str, time_limit: str) -> float:
    """The median world-record-normalized score, computed by hand from the shipped CSVs.

    SABER's rule: ``100 * (score - random) / |record - random|`` per game, games without a
    record left out, infinite gameplay above every finite score.
    """
    baselines = {r["game"]: r for r in _csv("saber_baselines.csv")}
    scores = []
    for row in _csv("saber_paper_agents.csv"):
        if (row["agent"], row["training_frames"], row["time_limit"]) != (agent, "200M", time_limit):
            continue
        base = baselines[row["game"]]
        if base["world_record"] == "NA":
            continue
        random, record = float(base["random"]), float(base["world_record"])
        score = float(row["score"])
        scores.append(
            math.inf if score == math.inf else 100 * (score - random) / abs(record - random)
        )
    assert len(scores) == 58
    return statistics.median(scores)


@pytest.fixture(scope="module")
def paper():
    return make_report(reference_table("saber-paper"), n_resamples=10)


# The SABER paper's Table 7 (200M frames), median world-record-normalized score over the 58
# games with a record, percent: the numbers `saber report --reference saber-paper` prints.
PAPER_MEDIANS = {
    ("rainbow", "5min"): 2.352,
    ("rainbow", "30min"): 2.608,
    ("rainbow", "saber"): 2.835,
    ("rainbow_iqn", "5min"): 2.606,
    ("rainbow_iqn", "30min"): 2.809,
    ("rainbow_iqn", "saber"): 3.127,
}


@pytest.mark.parametrize(("agent", "time_limit"), list(PAPER_MEDIANS))
def test_the_paper_table_alone_reproduces_its_medians(paper, agent, time_limit):
    name = {"rainbow": "rainbow@saber-paper", "rainbow_iqn": "rainbow-iqn@saber-paper"}[agent]
    section = paper.agents[name][time_limit]
    assert section.world_record.games == 58
    assert section.world_record.median == pytest.approx(paper_median(agent, time_limit), abs=1e-9)
    assert section.world_record.median == pytest.approx(PAPER_MEDIANS[agent, time_limit], abs=5e-4)


def test_saber_report_on_the_shipped_reference_alone_prints_the_papers_medians(tmp_path):
    out = tmp_path / "paper.json"
    args = ["report", "--reference", "saber-paper", "--resamples", "10", "--json", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    agents = json.loads(out.read_text())["agents"]
    for (agent, time_limit), median in PAPER_MEDIANS.items():
        name = {"rainbow": "rainbow@saber-paper", "rainbow_iqn": "rainbow-iqn@saber-paper"}[agent]
        block = agents[name][time_limit]["world_record"]
        assert block["games"] == 58 and block["median"] == pytest.approx(median, abs=5e-4)
    printed = CliRunner().invoke(main, ["report", "--reference", "saber-paper"])
    assert printed.exit_code == 0, printed.output
    row = next(line for line in printed.output.splitlines() if "rainbow-iqn@saber-paper" in line)
    assert [cell.strip() for cell in row.strip("|").split("|")][:4] == [
        "rainbow-iqn@saber-paper",
        "5 minutes",
        "58",
        "2.6% †",
    ]


def test_reading_the_shipped_file_as_scores_points_to_the_reference(tmp_path):
    path = tmp_path / "saber_paper_agents.csv"
    path.write_text(DATA.joinpath("saber_paper_agents.csv").read_text(encoding="utf-8"))
    result = CliRunner().invoke(main, ["report", str(path)])
    assert result.exit_code == ExitCode.BAD_INPUT and "Traceback" not in result.output
    # Rainbow-IQN's Air Raid under SABER at 200M (line 7) and 10M (line 8) training frames.
    assert "saber_paper_agents.csv:8: game air_raid given twice" in result.output
    assert "keep the rows of one training checkpoint" in result.output
    assert "saber report --reference saber-paper" in result.output


def test_paper_agents_are_one_run_of_means_without_intervals(paper):
    section = paper.agents["rainbow-iqn@saber-paper"]["saber"]
    assert section.mean_only and section.reference == "saber-paper"
    assert section.resampled is None and "published per-game means" in section.interval_note
    assert section.world_record.median_ci == (None, None)
    assert section.runs == ["paper"] and section.episodes == 61
    # Rainbow-IQN plays Asteroids, Atlantis and Defender forever under SABER.
    assert section.world_record.infinite == ["asteroids", "atlantis", "defender"]
    assert section.per_game["atlantis"].infinite and section.per_game["atlantis"].score is None
    assert [r.name for r in paper.references] == ["saber-paper"]


def test_comparisons_with_a_mean_only_reference_are_skipped_with_the_reason(tmp_path):
    (tmp_path / "s.csv").write_text("game,episode,score\npong,0,20\npong,1,21\nbreakout,0,30\n")
    table = merge_tables([read_scores(tmp_path / "s.csv"), reference_table("saber-paper")])
    report = make_report(table, n_resamples=10)
    assert list(report.agents) == ["agent", "rainbow@saber-paper", "rainbow-iqn@saber-paper"]
    pair = report.comparisons["saber"].pairs[0]
    assert (pair.x, pair.y) == ("agent", "rainbow@saber-paper")
    assert pair.probability_of_improvement is None and pair.welch == {}
    assert pair.skipped.startswith("rainbow@saber-paper: published per-game means only")
    # Inter-algorithm normalization needs only means: it includes the references.
    assert set(report.comparisons["saber"].inter_algorithm.mean) == set(report.agents)


def test_random_reference_reads_the_shipped_episodes_like_harness_records():
    rows = _csv("saber_random_episodes.csv.gz")
    table = reference_table("saber-random")
    assert table.agents() == ["random@saber"]
    assert len(table.records) == 3 * len(rows)  # one row per time limit
    section = make_report(table, n_resamples=10).agents["random@saber"]["saber"]
    assert section.resampled == "episodes" and section.reference == "saber-random"
    game = rows[0]["game"]
    expected = statistics.fmean(float(r["score"]) for r in rows if r["game"] == game)
    assert section.per_game[game].score == pytest.approx(expected)


def test_list_and_unknown_references():
    dopamine = ["dopamine", *(f"dopamine:{a}" for a in ("dqn", "c51", "rainbow", "iqn"))]
    dopamine += ["dopamine:qr-dqn", "dopamine:dqn-adam-mse"]
    assert [r.name for r in list_references()] == [
        *("saber-paper", "saber-random", "saber-ppo"),
        *dopamine,
    ]
    with pytest.raises(UnknownReferenceError, match="shipped: saber-paper, saber-random, saber"):
        reference_table("saber-papers")


def test_training_reference_has_table_6_and_7():
    scores = training_reference("saber-paper")["rainbow-iqn@saber-paper"]
    assert sorted(scores) == [10_000_000, 50_000_000, 100_000_000, 200_000_000]
    assert scores[10_000_000]["air_raid"] == 7765.25
    assert scores[200_000_000]["atlantis"] == math.inf
    with pytest.raises(UnknownReferenceError):
        training_reference("saber-random")


def test_cli_reference_and_list(tmp_path):
    runner = CliRunner()
    listed = runner.invoke(main, ["report", "--list-references"])
    assert listed.exit_code == 0 and "rainbow-iqn@saber-paper" in listed.output
    (tmp_path / "s.csv").write_text("game,score\npong,20\n")
    out = tmp_path / "r.json"
    bad = runner.invoke(
        main, ["report", str(tmp_path / "s.csv"), "--json", str(out), "--reference", "nope"]
    )
    assert (
        bad.exit_code == ExitCode.BAD_INPUT
        and "Unknown reference 'nope' for --reference" in bad.output
    )
    assert not out.exists()
    good = runner.invoke(
        main, ["report", str(tmp_path / "s.csv"), "--json", str(out), "--reference", "saber-paper"]
    )
    assert good.exit_code == 0, good.output
    assert "rainbow@saber-paper" in out.read_text()


def test_training_report_shows_rainbow_iqn_at_the_same_checkpoints(tmp_path):
    # 250 Pong episodes ending every 100,000 frames, scores 0..249: at 10M (episode 99 ends
    # at frame 10,000,000) the last 100 are episodes 0..99, mean 49.5; at 20M, 100..199,
    # mean 149.5 (the log reaches 25M frames: both checkpoints are reached).
    lines = [
        json.dumps({"game": "pong", "episode": i, "frames": (i + 1) * 100_000, "score": float(i)})
        for i in range(250)
    ]
    (tmp_path / "t.jsonl").write_text("\n".join(lines) + "\n")
    out = tmp_path / "t.json"
    args = ["training", str(tmp_path / "t.jsonl"), "--at", "10M,20M", "--reference", "saber-paper"]
    result = CliRunner().invoke(main, [*args, "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "| pong | 10,000,000 | 49.5 | 100 | 6.8 |" in result.output  # Table 6: 6.76
    assert "| pong | 20,000,000 | 149.5 | 100 | not published |" in result.output
    rows = json.loads(out.read_text())
    assert rows[0]["references"]["rainbow-iqn@saber-paper"] == {
        "score": 6.76,
        "infinite": False,
        "low": None,
        "high": None,
        "runs": 1,
        "iteration": None,
    }
    assert rows[1]["references"]["rainbow-iqn@saber-paper"] is None
    bad = CliRunner().invoke(main, ["training", str(tmp_path / "t.jsonl"), "--reference", "x"])
    assert bad.exit_code == ExitCode.BAD_INPUT and "Unknown reference 'x'" in bad.output


def _ppo_seeds() -> dict[str, dict[str, list[float]]]:
    """``{game: {training_seed: scores}}`` of the shipped saber-ppo evaluations."""
    games: dict[str, dict[str, list[float]]] = {}
    for row in _csv("saber_ppo_episodes.csv"):
        games.setdefault(row["game"], {}).setdefault(row["training_seed"], [])
        games[row["game"]][row["training_seed"]].append(float(row["score"]))
    return games


def test_ppo_reference_is_the_shipped_evaluations_one_run_per_training_seed():
    rows = _csv("saber_ppo_episodes.csv")
    table = reference_table("saber-ppo")
    assert table.agents() == ["ppo@saber"]
    assert len(table.records) == 3 * len(rows)  # one row per time limit
    assert set(table.runs("ppo@saber", "saber")) == {f"seed{r['training_seed']}" for r in rows}
    games = _ppo_seeds()
    assert all(len(scores) == 100 for runs in games.values() for scores in runs.values())
    # Over all its games, a seed trained on some of them only is named and left out: the
    # aggregates need the same runs on every game, and the per-game scores are over the
    # runs the aggregates count, so that the two agree.
    seeds = {seed for runs in games.values() for seed in runs}
    complete = {seed for seed in seeds if all(seed in runs for runs in games.values())}
    section = make_report(table, n_resamples=10).agents["ppo@saber"]["saber"]
    assert section.reference == "saber-ppo"
    assert set(section.runs) == {f"seed{seed}" for seed in complete}
    assert section.runs_incomplete == {
        f"seed{seed}": sorted(g for g, runs in games.items() if seed not in runs)
        for seed in seeds - complete
    }
    for game, runs in games.items():
        expected = statistics.fmean(statistics.fmean(runs[seed]) for seed in complete)
        assert section.per_game[game].score == pytest.approx(expected)
        assert section.per_game[game].runs == len(runs)


def test_ppo_reference_on_a_game_trained_with_several_seeds_has_intervals_over_them(tmp_path):
    # Like for like on such a game (a user's agent evaluated on it), every seed counts.
    several = {game: runs for game, runs in _ppo_seeds().items() if len(runs) > 1}
    assert several, "three seeds on two games: at least one game has several by now"
    for game, runs in several.items():
        out = tmp_path / f"{game}.json"
        args = ["report", "--reference", "saber-ppo", "--games", game, "--json", str(out)]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == ExitCode.OK, result.output
        section = json.loads(out.read_text())["agents"]["ppo@saber"]["saber"]
        assert section["resampled"] == "runs" and section["runs_incomplete"] == {}
        assert section["runs"] == sorted(f"seed{seed}" for seed in runs)
        means = [statistics.fmean(scores) for scores in runs.values()]
        assert section["per_game"][game]["score"] == pytest.approx(statistics.fmean(means))


def test_ppo_reference_is_listed_with_its_budget_script_and_seeds():
    (info,) = [r for r in list_references() if r.name == "saber-ppo"]
    assert info.agents == ("ppo@saber",) and info.deviations is None
    for words in ("10M frames", "examples/ppo_saber.py", "100 episodes", "(seed 1)"):
        assert words in info.description


def test_training_against_saber_ppo_puts_its_score_at_the_same_checkpoint(tmp_path):
    # The user's log is one run of a shipped baseline's own training: at 9M frames it is
    # the mean of that run's last 100 training episodes ending at or before 9M, and the
    # reference's is the mean over the game's runs of the same mean of each, computed
    # here. At 10M the user's log is not reached (it counts the frames the emulator played,
    # 0.3% short of the budget's updates); the reference's is each run's last 100 episodes.
    training = _csv("saber_ppo_training.csv.gz")
    agent, game, seed = training[0]["agent"], training[0]["game"], training[0]["training_seed"]
    runs = sorted({r["training_seed"] for r in training if r["game"] == game})
    of_run = {
        run: [r for r in training if r["game"] == game and r["training_seed"] == run]
        for run in runs
    }
    episodes = [r for r in training if (r["agent"], r["training_seed"]) == (agent, seed)]
    lines = [
        json.dumps(
            {"game": game, "episode": i, "frames": int(r["frames"]), "score": float(r["score"])}
        )
        for i, r in enumerate(episodes)
    ]
    (tmp_path / "t.jsonl").write_text("\n".join(lines) + "\n")

    def at_9m_of(rows: list[dict[str, str]]) -> float:
        return statistics.fmean(
            [float(r["score"]) for r in rows if int(r["frames"]) <= 9_000_000][-100:]
        )

    at_9m = at_9m_of(episodes)
    reference_9m = statistics.fmean(at_9m_of(rows) for rows in of_run.values())
    last = statistics.fmean(
        statistics.fmean(float(r["score"]) for r in rows[-100:]) for rows in of_run.values()
    )
    args = ["training", str(tmp_path / "t.jsonl"), "--at", "9M,10M", "--reference", "saber-ppo"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    # With several runs the reference's cell is followed by its interval over runs.
    after = " |" if len(runs) == 1 else " ["
    assert (
        f"| {game} | 9,000,000 | {at_9m:,.1f} | 100 | {reference_9m:,.1f}{after}" in result.output
    )
    assert f"| {game} | 10,000,000 | not reached | - | {last:,.1f}{after}" in result.output
