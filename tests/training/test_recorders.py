"""The training-time protocol: the recorder's log and the scores at checkpoints."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from click.testing import CliRunner

from saber.cli import main
from saber.errors import SaberError
from saber.protocol.training import parse_frames
from saber.training import (
    TrainingRecorder,
    VectorTrainingRecorder,
    training_scores,
)


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_single_env_recorder_counts_cumulative_frames(tmp_path: Path) -> None:
    log = tmp_path / "train.jsonl"
    env = TrainingRecorder(gym.make("SABER/Breakout"), log)
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    ended = 0
    while ended < 3:
        *_, terminated, truncated, _ = env.step(int(rng.integers(18)))
        if terminated or truncated:
            ended += 1
            env.reset()
    for _ in range(10):  # frames of an unfinished episode count too
        env.step(0)
    env.close()
    lines = _lines(log)
    assert [line["episode"] for line in lines] == [0, 1, 2]
    assert [line["frames"] for line in lines] == list(
        np.cumsum([line["episode_frames"] for line in lines])
    )
    assert env.total_frames == lines[-1]["frames"] + 40
    assert {line["game"] for line in lines} == {"breakout"}


def test_vector_recorder_counts_every_sub_env(tmp_path: Path) -> None:
    log = tmp_path / "train.jsonl"
    env = VectorTrainingRecorder(gym.make_vec("SABER/Breakout", 2), log)
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    steps = 0
    while len(log.read_text().splitlines()) < 4:
        env.step(rng.integers(0, 18, 2))
        steps += 1
    lines = _lines(log)
    assert [line["episode"] for line in lines] == list(range(len(lines)))
    assert {line["env"] for line in lines} == {0, 1}
    assert all(a["frames"] <= b["frames"] for a, b in itertools.pairwise(lines))
    # Each autoreset step plays no frame; every other step plays 4 per sub-env.
    assert env.total_frames <= 8 * steps and env.total_frames >= lines[-1]["frames"]
    env.close()


@pytest.mark.parametrize("kind", ["saber", "sync"])
def test_vector_recorder_counts_frames_across_partial_resets(tmp_path: Path, kind: str) -> None:
    """With autoreset disabled, ended rows are reset alone (``reset_mask``); the others'
    frames are neither lost nor counted twice."""
    kwargs = {"max_frames_without_reward": 200}  # Breakout idles: rows end by stuck timeouts
    disabled = gym.vector.AutoresetMode.DISABLED
    if kind == "saber":
        vector = gym.make_vec("SABER/Breakout", 2, autoreset_mode=disabled, **kwargs)
    else:
        vector = gym.vector.SyncVectorEnv(
            [lambda: gym.make("SABER/Breakout", **kwargs)] * 2, autoreset_mode=disabled
        )
    env = VectorTrainingRecorder(vector, tmp_path / "train.jsonl")
    env.reset(seed=[1, 2])
    played = 0
    for step in range(150):
        actions = np.array([0, 1 if step % 2 else 0])  # row 1 presses FIRE: ends later
        *_, terminated, truncated, _ = env.step(actions)
        played += 4 * 2
        ended = terminated | truncated
        if ended.any():
            env.reset(options={"reset_mask": ended})
    lines = _lines(tmp_path / "train.jsonl")
    assert len(lines) >= 3 and {line["env"] for line in lines} == {0, 1}
    assert env.total_frames == played
    env.close()


@pytest.fixture
def hand_log(tmp_path: Path) -> Path:
    """250 episodes: episode i scores i and ends at cumulative frame (i + 1) * 1000."""
    log = tmp_path / "hand.jsonl"
    log.write_text(
        "".join(
            json.dumps({"game": "pong", "episode": i, "frames": (i + 1) * 1000, "score": i}) + "\n"
            for i in range(250)
        )
    )
    return log


def test_training_scores_average_the_last_100_episodes(hand_log: Path) -> None:
    scores = training_scores(hand_log, ["500", "50k", 100_000, "150k", "250k", "250001", "1M"])
    assert [(s.at_frames, s.mean, s.episodes, s.reached) for s in scores] == [
        (500, None, 0, True),  # reached, but no episode had ended
        (50_000, 24.5, 50, True),  # episodes 0..49: fewer than 100 had ended
        (100_000, 49.5, 100, True),  # 0..99
        (150_000, 99.5, 100, True),  # 50..149
        (250_000, 199.5, 100, True),  # 150..249: the log's last line is at 250,000
        (250_001, None, 0, False),  # past the log's end: not reached, no score
        (1_000_000, None, 0, False),
    ]
    assert (scores[3].first_episode, scores[3].last_episode) == (50, 149)
    assert {s.log_frames for s in scores} == {250_000}


def test_report_training_cli(hand_log: Path, tmp_path: Path) -> None:
    out = tmp_path / "training.json"
    result = CliRunner().invoke(
        main, ["training", str(hand_log), "--at", "100k,150k", "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "| pong | 100,000 | 49.5 | 100 |" in result.output
    assert "| pong | 150,000 | 99.5 | 100 |" in result.output
    assert [row["mean"] for row in json.loads(out.read_text())] == [49.5, 99.5]


@pytest.mark.parametrize(
    ("text", "frames"),
    [
        ("10M", 10_000_000),
        ("50m", 50_000_000),
        ("1.5e6", 1_500_000),
        ("200000000", 200_000_000),
        ("500k", 500_000),
    ],
)
def test_parse_frames(text: str, frames: int) -> None:
    assert parse_frames(text) == frames


@pytest.mark.parametrize("text", ["ten", "-5", "1.5", ""])
def test_parse_frames_rejects(text: str) -> None:
    with pytest.raises(SaberError, match="Expect"):
        parse_frames(text)


def test_metrics_hook_matches_the_log_and_the_checkpoint_rule(tmp_path: Path) -> None:
    log = tmp_path / "train.jsonl"
    checkpoints = (2_000, 5_000, 10**12)
    env = VectorTrainingRecorder(
        gym.make_vec("SABER/Breakout", 2, max_frames_without_reward=400), log, 0, checkpoints
    )
    assert env.metrics() == {
        "saber/frames": 0.0,
        "saber/episodes": 0.0,
        "saber/infinite_episodes": 0.0,
        "saber/stuck_episodes": 0.0,
    }
    env.reset(seed=2)
    rng = np.random.default_rng(0)
    while len(log.read_text().splitlines()) < 8:
        env.step(rng.integers(0, 18, 2))
    metrics = env.metrics()
    env.close()
    lines = _lines(log)
    scores = [line["score"] for line in lines]
    assert metrics["saber/frames"] == env.total_frames > lines[-1]["frames"] - 8
    assert metrics["saber/episodes"] == 8
    assert metrics["saber/mean_score"] == pytest.approx(np.mean(scores))
    # Episodes shorter than 5 minutes: their 5- and 30-minute scores are their scores.
    assert metrics["saber/mean_score_5min"] == metrics["saber/mean_score_30min"]
    assert metrics["saber/mean_score_5min"] == pytest.approx(np.mean(scores))
    assert [line["score_5min"] for line in lines] == scores
    # Breakout: random 1.5, world record 864 (saber/data/saber_baselines.csv).
    assert metrics["saber/mean_score_wr_normalized"] == pytest.approx(
        100 * (np.mean(scores) - 1.5) / (864 - 1.5)
    )
    assert metrics["saber/stuck_episodes"] == sum(line["end"] == "stuck_timeout" for line in lines)
    assert metrics["saber/infinite_episodes"] == 0
    # The checkpoints passed, by the same rule as training_scores on the log.
    expected = {score.at_frames: score.mean for score in training_scores(log, [2_000, 5_000])}
    assert metrics["saber/score_at_2k"] == pytest.approx(expected[2_000])
    assert metrics["saber/score_at_5k"] == pytest.approx(expected[5_000])
    assert "saber/score_at_1000B" not in metrics and len(metrics) == 10


def test_metrics_count_infinite_and_stuck_episodes() -> None:
    from saber.training.metrics import TrainingMetrics

    metrics = TrainingMetrics("pong", checkpoints=(100,))
    metrics.advance(50)
    metrics.add({"score": 1.0, "end": "stuck_timeout", "infinite": False})
    metrics.advance(100)
    metrics.add({"score": 3.0, "end": "time_cap", "infinite": True})  # ends at 100: counts
    metrics.advance(150)
    metrics.add({"score": 8.0, "end": "game_over", "infinite": False})
    numbers = metrics.as_dict()
    assert numbers["saber/score_at_100"] == 2.0  # (1 + 3) / 2
    assert numbers["saber/mean_score"] == 4.0
    assert (numbers["saber/stuck_episodes"], numbers["saber/infinite_episodes"]) == (1, 1)
    # Pong: random -20.34, world record 21 -> 100 * (4 + 20.34) / 41.34.
    assert numbers["saber/mean_score_wr_normalized"] == pytest.approx(100 * 24.34 / 41.34)
