"""The time-limit registry and the episode record: one definition, read everywhere.

The "1 hour" test adds one :class:`ScoreTimeLimit` to the registry (what a one-line edit of
``saber/protocol/limits.py`` does) and checks that env records, harness records, score
files and report tables all carry the new column, with nothing else changed.
"""

from __future__ import annotations

import json
import math

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from saber.envs import SaberVectorEnv
from saber.harness.runner import run_episodes
from saber.protocol import EpisodeEnd, EpisodeRecord, ScoreTimeLimit, limits, time_limit
from saber.protocol.limits import checkpoint_limits
from saber.reports import make_report, to_markdown
from saber.rundir import EpisodeLine
from saber.scoring import read_harness_results

ONE_HOUR = ScoreTimeLimit("1h", 216_000, "1 hour", "score_1h")  # the one line
# An episode record's keys, in the order saber writes them (the file's identity keys,
# game, episode, seed and agent, come first): the format, written out once for the tests.
RECORD_FIELDS = (
    "score",
    "score_5min",
    "score_30min",
    "frames",
    "steps",
    "end",
    "rollovers",
    "infinite",
    "seconds",
)


@pytest.fixture
def one_hour(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry with a 1-hour limit between 30 minutes and SABER's own end."""
    five, thirty, saber = limits.TIME_LIMITS
    monkeypatch.setattr(limits, "TIME_LIMITS", (five, thirty, ONE_HOUR, saber))


def test_registry_names_frames_titles_and_fields() -> None:
    assert [(t.name, t.frames, t.title, t.record_field) for t in limits.TIME_LIMITS] == [
        ("5min", 18_000, "5 minutes", "score_5min"),
        ("30min", 108_000, "30 minutes", "score_30min"),
        ("saber", None, "SABER (unlimited)", "score"),
    ]
    assert [t.name for t in checkpoint_limits()] == ["5min", "30min"]


@pytest.mark.parametrize(
    ("spelling", "name"),
    [
        ("5min", "5min"),
        ("5m", "5min"),
        ("5 minutes", "5min"),
        ("score_5min", "5min"),
        ("30M", "30min"),
        ("30_min", "30min"),
        ("saber", "saber"),
        ("Unlimited", "saber"),
        ("SABER (unlimited)", "saber"),
    ],
)
def test_time_limit_spellings(spelling: str, name: str) -> None:
    assert time_limit(spelling).name == name


def test_unknown_time_limit_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown time limit '1h'; expected one of 5min, 30min"):
        time_limit("1h")


def test_record_dict_has_the_saber_0_1_keys_and_round_trips() -> None:
    record = EpisodeRecord(
        score=120.0,
        checkpoints={"5min": 40.0, "30min": 120.0},
        frames=21_600_000,
        steps=5_400_000,
        end=EpisodeEnd.TIME_CAP,
        rollovers=2,
        infinite=True,
        seconds=1.25,
    )
    as_dict = record.to_dict()
    assert tuple(as_dict) == RECORD_FIELDS
    assert as_dict["end"] == "time_cap" and type(as_dict["end"]) is str
    assert json.loads(json.dumps(as_dict)) == as_dict
    assert EpisodeRecord.from_dict(as_dict) == record
    assert record.score_at("5m") == 40.0 and record.score_at("unlimited") == 120.0


def test_one_hour_column_is_one_registry_line(one_hour: None, tmp_path) -> None:
    assert time_limit("60 minutes") is ONE_HOUR and time_limit("1h") is ONE_HOUR
    # Single env: info["saber"] has score_1h (the score at frame 216,000 = the score here).
    env = gym.make("SABER/Breakout", max_frames_without_reward=400)
    env.reset(seed=0)
    truncated = False
    while not truncated:
        _, _, _, truncated, info = env.step(0)
    assert info["saber"]["score_1h"] == info["saber"]["score"] == 0.0
    assert list(info["saber"])[:4] == ["score", "score_5min", "score_30min", "score_1h"]
    # Vector env and harness: the same key, from the same registry.
    vector = SaberVectorEnv(
        "breakout", 1, autoreset_mode=AutoresetMode.DISABLED, max_frames_without_reward=400
    )
    lines = [
        item.to_dict()
        for item in run_episodes(
            vector, lambda obs: np.zeros(len(obs), dtype=np.int64), [(0, 7)], "noop"
        )
        if isinstance(item, EpisodeLine)
    ]
    vector.close()
    assert len(lines) == 1 and lines[0]["score_1h"] == 0.0
    # Score files and report tables: a "1h" column titled "1 hour".
    (tmp_path / "episodes.jsonl").write_text(json.dumps(lines[0] | {"game": "breakout"}) + "\n")
    table = read_harness_results(tmp_path)
    assert table.time_limits() == ["5min", "30min", "1h", "saber"]
    text = to_markdown(make_report(table, n_resamples=10).to_dict())
    assert "1 hour" in text


def test_custom_checkpoints_outside_the_registry_are_score_fields() -> None:
    record = EpisodeRecord(1.0, {"early": 0.0}, 10, 3, "truncated")
    assert record.to_dict()["score_early"] == 0.0
    assert math.isnan(EpisodeRecord.from_dict(record.to_dict()).checkpoints["5min"])
