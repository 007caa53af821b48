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
    games = gym.make_vec("SABER/Games", num_envs=2, games=["pong", "skiing"], **SHORT_CAP)
    games.unwrapped.seed_each_episode = True  # replays=True needs every episode seeded
    envs = VectorTrainingRecorder(games, log, replays=True)
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


def _recorded(path: Path, actions: np.ndarray, **resume: object) -> VectorTrainingRecorder:
    """A recorder on a fresh SABER/Games env, reset with seed 0, then ``actions`` played."""
    envs = VectorTrainingRecorder(
        gym.make_vec("SABER/Games", num_envs=4, games=GAMES, **SHORT_CAP), path, **resume
    )
    envs.reset(seed=0)
    for step_actions in actions:
        envs.step(step_actions)
    return envs


def _first_end_after(actions: np.ndarray, step: int) -> int:
    """The first step after ``step`` at which a sub-env's episode ends (seed 0)."""
    envs = gym.make_vec("SABER/Games", num_envs=4, games=GAMES, **SHORT_CAP)
    envs.reset(seed=0)
    for t, step_actions in enumerate(actions):
        _, _, terminated, truncated, _ = envs.step(step_actions)
        if t > step and (terminated | truncated).any():
            envs.close()
            return t + 1
    raise AssertionError("no episode ended")


@pytest.mark.parametrize("where", ["mid-episode", "at an end"])
def test_a_resumed_log_and_its_metrics_are_the_uninterrupted_ones(
    tmp_path: Path, where: str
) -> None:
    """Stopped after ``stop`` steps, then resumed as examples/ppo_multigame.py does: the
    episodes in progress played again (the same seeds and actions) unrecorded, and a new
    recorder given each game's frames and episodes so far, less the frames of those
    episodes (it counts them again from their first frame)."""
    actions = np.random.default_rng(2).integers(0, 18, (240, 4))
    stop = 150 if where == "mid-episode" else _first_end_after(actions, 110)
    whole = _recorded(tmp_path / "whole.jsonl", actions)
    expected = whole.metrics()
    whole.close()

    stopped = _recorded(tmp_path / "resumed.jsonl", actions[:stop])
    frames_by_game, episodes_by_game = stopped.log.frames_by_game, stopped.log.episodes_by_game
    stopped.close()
    assert all(episodes_by_game.values())  # every game has lines to read back

    envs = gym.make_vec("SABER/Games", num_envs=4, games=GAMES, **SHORT_CAP)
    envs.reset(seed=0)
    for step_actions in actions[:stop]:
        _, _, terminated, truncated, info = envs.step(step_actions)
    in_progress = np.where(terminated | truncated, 0, info["episode_frame_number"])
    if where == "mid-episode":
        assert (in_progress > 0).all()
    else:
        assert (terminated | truncated).any()
    rows = np.asarray(envs.unwrapped.row_games)
    start = {game: frames_by_game[game] - int(in_progress[rows == game].sum()) for game in GAMES}
    resumed = VectorTrainingRecorder(
        envs, tmp_path / "resumed.jsonl", start_frames=start, start_episodes=episodes_by_game
    )
    for step_actions in actions[stop:]:
        resumed.step(step_actions)
    metrics = resumed.metrics()
    resumed.close()

    assert (tmp_path / "resumed.jsonl").read_bytes() == (tmp_path / "whole.jsonl").read_bytes()
    assert metrics == expected


def test_a_resume_that_does_not_fit_is_refused_in_one_line(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    _recorded(log, np.zeros((101, 4), dtype=int)).close()  # each row ended one episode
    cases = [
        ({"start_frames": 1_000}, r"^A multi-game env's training recorder resumes game by game"),
        ({"start_frames": {"pong": 1}}, r"^Expect start_frames to give each game of the env once"),
        (
            {"start_frames": dict.fromkeys(GAMES, 480), "start_episodes": dict.fromkeys(GAMES, 5)},
            r"holds \{'breakout': 2, 'pong': 2\} episodes by game, the resume gives",
        ),
    ]
    for resume, message in cases:
        envs = gym.make_vec("SABER/Games", num_envs=4, games=GAMES, **SHORT_CAP)
        with pytest.raises(SaberError, match=message) as caught:
            VectorTrainingRecorder(envs, log, **resume)
        assert "\n" not in str(caught.value)
        envs.close()
