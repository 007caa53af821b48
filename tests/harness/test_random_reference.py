"""The shipped random-agent run (saber/data/saber_random_*) is reproducible by today's saber.

The data was produced by ``saber eval --agent random --games all --episodes 100 --seed 0``.
Replaying its first episodes of two short games with the same seeds must give the same
records: a change of the env, the seeds or the random policy that alters trajectories
fails here (and then the data must be re-made with scripts/release/ship_random_reference.py).
"""

from __future__ import annotations

import csv
import json
from importlib import resources

import pytest

import saber
from saber.harness import Inline
from saber.scoring.packaged import data_text

# Fields that the trajectory decides (``seconds`` is wall-clock time).
DETERMINED = ("score", "score_5min", "score_30min", "frames", "steps", "end", "rollovers")


def _shipped_episodes() -> list[dict[str, str]]:
    return list(csv.DictReader(data_text("saber_random_episodes.csv.gz").splitlines()))


@pytest.mark.parametrize("game", ["breakout", "berzerk"])
def test_replaying_shipped_episodes_gives_the_same_records(game: str) -> None:
    shipped = {int(row["episode"]): row for row in _shipped_episodes() if row["game"] == game}
    result = saber.evaluate("random", game, episodes=3, backend=Inline(), progress=False)
    assert len(result.records) == 3
    for record in result.records:
        expected = shipped[record["episode"]]
        assert record["seed"] == int(expected["seed"])
        for field in DETERMINED:
            value = record[field]
            # The CSV holds text: read it back as the type the harness wrote.
            assert value == type(value)(expected[field]), (game, record["episode"], field)


def test_provenance_names_versions_seeds_and_counts() -> None:
    meta = json.loads(
        resources.files("saber.data").joinpath("saber_random_provenance.json").read_text()
    )
    assert meta["agent"] == "random"
    assert meta["base_seed"] == 0
    assert meta["settings"] == saber.SaberSettings().as_dict()
    episodes = _shipped_episodes()
    assert meta["finished_episodes"] == len(episodes)
    assert {row["game"] for row in episodes} == set(meta["games"])


def test_the_shipped_run_is_the_whole_benchmark() -> None:
    """61 games x 100 episodes (episodes 0..99 each, with the harness's seeds), none failed,
    and the per-game summary agrees with the episodes it summarizes."""
    from collections import defaultdict

    from saber.games import saber_games
    from saber.protocol.seeds import episode_seed

    meta = json.loads(
        resources.files("saber.data").joinpath("saber_random_provenance.json").read_text()
    )
    assert meta["failed_attempts"] == 0 and meta["wall_seconds"] > 0
    by_game: dict[str, list[dict[str, str]]] = defaultdict(list)
    for row in _shipped_episodes():
        by_game[row["game"]].append(row)
    assert set(by_game) == {game.ale_id for game in saber_games()}
    with resources.files("saber.data").joinpath("saber_random_games.csv").open() as f:
        summary = {row["game"]: row for row in csv.DictReader(f)}
    for game, rows in by_game.items():
        assert sorted(int(row["episode"]) for row in rows) == list(range(100))
        assert all(int(row["seed"]) == episode_seed(0, game, int(row["episode"])) for row in rows)
        mean = sum(float(row["score"]) for row in rows) / 100
        assert float(summary[game]["mean"]) == pytest.approx(mean, rel=1e-5, abs=1e-6)
