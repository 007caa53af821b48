"""Dopamine's training curves as shipped references: known answers from the JSON, layout, names.

The known answers were read by hand from google/dopamine ``baselines/atari/data/pong.json``
at commit 5873f5494ee0c2d7c016d0ab2ad530354fec59d0 (the one in
``saber/data/dopamine_provenance.json``): the file's "Rainbow" records start at record
1990 (0-based); run 1 is records 1990..2188 (iterations 0..198), run 2 starts at 2189,
and so on. Iteration 9 (frames 9M-10M, the 10M checkpoint) of the five runs is records
1999, 2198, 2397, 2596 and 2795.
"""

from __future__ import annotations

import csv
import gzip
import io
from importlib import resources

import numpy as np
import pytest

from saber.games import saber_games
from saber.reports import make_report
from saber.scoring import UnknownReferenceError, dopamine, list_references, reference_table

# pong.json, "Rainbow", iteration 9 of runs 1..5 (records 1999, 2198, 2397, 2596, 2795).
PONG_RAINBOW_10M = (
    17.21212121212121,  # 568 / 33: the mean of 33 training episodes
    12.626865671641792,
    14.907894736842104,
    15.680555555555555,
    15.571428571428571,
)
# By hand: 17.21212121 + 12.62686567 + 14.90789474 + 15.68055556 + 15.57142857 = 75.99886575,
# / 5 = 15.19977315.
PONG_RAINBOW_10M_MEAN = 15.19977315


def test_a_run_value_is_the_json_value():
    assert dopamine.checkpoint_scores()["rainbow"]["10M"]["pong"][0] == 17.21212121212121
    assert tuple(dopamine.checkpoint_scores()["rainbow"]["10M"]["pong"]) == PONG_RAINBOW_10M


def test_the_five_run_mean_in_the_report():
    report = make_report(reference_table("dopamine:rainbow@10M"), n_resamples=50)
    pong = report.agents["rainbow@dopamine-10M"]["30min"].per_game["pong"]
    assert pong.score == pytest.approx(PONG_RAINBOW_10M_MEAN, abs=1e-8)
    assert pong.runs == 5 and list(pong.run_scores.values()) == list(PONG_RAINBOW_10M)
    assert report.agents["rainbow@dopamine-10M"]["30min"].resampled == "runs"


def test_the_iteration_file_holds_the_same_numbers():
    values = dopamine.iteration_scores("pong", "rainbow")
    assert values.shape == (5, 199)
    assert tuple(values[:, 9]) == PONG_RAINBOW_10M
    for agent, by_checkpoint in dopamine.checkpoint_scores().items():
        for label, by_game in by_checkpoint.items():
            iteration = dopamine.CHECKPOINT_ITERATIONS[label]
            for game, runs in by_game.items():
                np.testing.assert_array_equal(
                    runs, dopamine.iteration_scores(game, agent)[:, iteration]
                )


def test_shipped_layout_and_game_names():
    raw = resources.files("saber.data").joinpath(dopamine.CHECKPOINT_FILE).read_bytes()
    rows = list(csv.DictReader(io.StringIO(gzip.decompress(raw).decode())))
    assert len(rows) == 60 * 6 * 5 * 4
    games = {g.ale_id for g in saber_games()}
    assert {r["game"] for r in rows} == games - {"defender"}
    for row in rows:
        first, last = dopamine.iteration_frames(int(row["iteration"]))
        assert (int(row["first_frame"]), int(row["last_frame"])) == (first, last)
    provenance = dopamine.dopamine_provenance()
    assert provenance["saber_games_not_in_dopamine"] == ["defender"]
    assert provenance["dopamine_games_not_in_saber"] == []
    assert provenance["licence"] == "Apache-2.0"
    assert provenance["games"]["mspacman"] == "ms_pacman"
    raw = resources.files("saber.data").joinpath(dopamine.ITERATION_FILE).read_bytes()
    assert len(gzip.decompress(raw).decode().splitlines()) == 1 + 60 * 6 * 199
    notice = resources.files("saber.data").joinpath(dopamine.LICENSE_FILE).read_text()
    assert "Copyright 2018 The Dopamine Authors" in notice and "Apache License" in notice
    assert dopamine.iteration_scores("defender", "dqn") is None


def test_checkpoints_and_iterations():
    assert dopamine.CHECKPOINT_ITERATIONS == {"10M": 9, "50M": 49, "100M": 99, "200M": 198}
    assert dopamine.iteration_for(1_000_000) == 0
    assert dopamine.iteration_for(199_000_000) == 198
    assert dopamine.iteration_for(200_000_000) == 198  # the last published stands for 200M
    assert dopamine.iteration_for(201_000_000) is None
    assert dopamine.iteration_for(0) is None
    assert dopamine.iteration_for(10_500_000) is None


def test_deviation_label_is_the_compact_deviations_form():
    label = dopamine.deviation_label()
    assert label.startswith("not SABER: sticky actions kept (repeat_action_probability=0.25)")
    assert "max_episode_frames=108000 (SABER: 21600000)" in label
    assert "action_set='minimal'" in label and "score='iteration mean'" in label


def test_references_listed_and_named():
    infos = {r.name: r for r in list_references()}
    assert infos["dopamine"].deviations == dopamine.deviation_label()
    assert infos["saber-paper"].deviations is None
    table = reference_table("dopamine")
    assert sorted(table.agents()) == sorted(f"{a}@dopamine-200M" for a in dopamine.AGENTS)
    assert {r.time_limit for r in table.records} == {"30min"}
    assert reference_table("Dopamine:QR-DQN@50m").agents() == ["qr-dqn@dopamine-50M"]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("dopamine@20M", "no checkpoint @20M; the Dopamine references have @10M, @50M"),
        ("saber-paper@10M", "only the Dopamine references take a checkpoint"),
        ("dopamine:ppo", "Unknown reference 'dopamine:ppo' for --reference"),
    ],
)
def test_bad_names(name, message):
    with pytest.raises(UnknownReferenceError, match=message):
        reference_table(name)


def test_run_band_is_the_mean_and_a_bootstrap_interval_over_runs():
    values = np.array(PONG_RAINBOW_10M)[:, None]
    mean, low, high = dopamine.run_band(values, n_resamples=4000)
    assert mean[0] == pytest.approx(PONG_RAINBOW_10M_MEAN, abs=1e-8)
    # A mean of 5 redrawn runs lies between the smallest and the largest run.
    assert min(PONG_RAINBOW_10M) <= low[0] < mean[0] < high[0] <= max(PONG_RAINBOW_10M)
