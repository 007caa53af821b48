"""A training recorder over a multi-game env: one log, each game's own curve."""

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
from saber.replay import verify_training_log
from saber.training import VectorTrainingRecorder

GAMES = ["breakout", "pong"]
SHORT_CAP = {"max_episode_frames": 400}  # 100 steps: every sub-env ends often (non-SABER)


def test_each_game_logs_its_own_frames_and_episodes(tmp_path: Path) -> None:
    log = tmp_path / "training.jsonl"
    envs = VectorTrainingRecorder(
        gym.make_vec("SABER/Games", num_envs=4, games=GAMES, **SHORT_CAP), log
    )
    envs.reset(seed=0)
    ended = dict.fromkeys(GAMES, 0)
    actions = np.random.default_rng(0).integers(0, 18, (330, 4))
    for step_actions in actions:
        _, _, terminated, truncated, info = envs.step(step_actions)
        for row, game in enumerate(info["game"]):
            ended[game] += int(terminated[row] or truncated[row])
    metrics = envs.metrics()
    envs.close()

    lines = [json.loads(line) for line in log.read_text().splitlines()]
    for game in GAMES:
        mine = [line for line in lines if line["game"] == game]
        assert len(mine) == ended[game] >= 6
        assert [line["episode"] for line in mine] == list(range(len(mine)))
        assert {line["env"] % 2 for line in mine} == {GAMES.index(game)}
        # frames: the game's own cumulative frames; its two rows end at 400 frames or sooner
        assert all(b["frames"] >= a["frames"] for a, b in itertools.pairwise(mine))
        assert mine[-1]["frames"] <= 2 * 330 * 4
        assert metrics[f"saber/{game}/episodes"] == len(mine)
    assert (
        metrics["saber/frames"] == metrics["saber/breakout/frames"] + metrics["saber/pong/frames"]
    )
    assert {"saber/median_wr_normalized", "saber/mean_wr_normalized"} <= set(metrics)

    result = CliRunner().invoke(main, ["training", str(log), "--at", "400,1000"])
    assert result.exit_code == 0, result.output
    assert "| breakout | 400 |" in result.output and "| pong | 1,000 |" in result.output
    assert "| frames | games | median WR-normalized | mean WR-normalized |" in result.output
    assert "| 1,000 | 2 |" in result.output


def test_each_games_episodes_replay_and_verify(tmp_path: Path) -> None:
    log = tmp_path / "training.jsonl"
    envs = VectorTrainingRecorder(
        gym.make_vec("SABER/Games", num_envs=2, games=["pong", "skiing"], **SHORT_CAP),
        log,
        replays=True,
    )
    envs.reset(seed=3)
    for actions in np.random.default_rng(1).integers(0, 18, (230, 2)):
        envs.step(actions)
    envs.close()
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert {(line["game"], line["episode"]) for line in lines} == {
        (game, episode) for game in ("pong", "skiing") for episode in (0, 1)
    }
    assert all(line["replay"].startswith(f"training.replays/{line['game']}/") for line in lines)
    result = verify_training_log(log, workers=1)
    assert result.ok and len(result.checks) == 4, result.lines()


def test_resuming_is_refused_in_one_line(tmp_path: Path) -> None:
    envs = gym.make_vec("SABER/Games", num_envs=2, games=GAMES)
    with pytest.raises(SaberError, match=r"^A multi-game env's training recorder does not"):
        VectorTrainingRecorder(envs, tmp_path / "log.jsonl", start_frames=1_000)
    envs.close()
