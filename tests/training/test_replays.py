"""Replays of training episodes (``replays=True`` on the training recorders), checked by
``saber verify LOG``: single env, vector env in both autoreset modes, game overs and
truncations (a 400-frame stuck timeout), real Breakout play through ale-py."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from click.testing import CliRunner
from gymnasium.vector import AutoresetMode

from saber.cli import main
from saber.envs.vector import SaberVectorEnv
from saber.errors import ExitCode, SaberError
from saber.replay import verify_training_log
from saber.training import TrainingRecorder, VectorTrainingRecorder
from tests.harness.helpers import short_settings


def _seeded(env: Any) -> Any:
    """``env`` seeding every episode, as ``replays=True`` needs."""
    env.unwrapped.seed_each_episode = True
    return env


def _lines(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def _play_vector(env: VectorTrainingRecorder, episodes: int, seed: int) -> None:
    """Rows 0 and 1 never FIRE (so they hit the stuck timeout), the others act at random."""
    rng = np.random.default_rng(seed)
    while env.log.episodes < episodes:
        actions = rng.integers(0, 18, env.num_envs)
        actions[:2] = 0
        env.step(actions)


def _cli_verify(log: Path, *options: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["verify", str(log), "--workers", "0", *options])
    assert "Traceback" not in result.output
    return result.exit_code, result.output


def test_single_env_episodes_replay_from_their_seeds(tmp_path: Path) -> None:
    log = tmp_path / "training.jsonl"
    env = TrainingRecorder(
        _seeded(gym.make("SABER/Breakout", **short_settings())), log, replays=True
    )
    rng = np.random.default_rng(1)
    env.reset(seed=3)
    while env.log.episodes < 4:
        _, _, terminated, truncated, _ = env.step(int(rng.integers(18)))
        if terminated or truncated:
            env.reset()
    env.close()
    lines = _lines(log)
    assert lines[0]["seed"] == 3  # the first reset's seed, then drawn ones
    assert len({line["seed"] for line in lines}) == 4
    for line in lines:
        assert (tmp_path / line["replay"]).is_file()
        assert line["replay"].startswith("training.replays/breakout/")
    result = verify_training_log(log, workers=0)
    assert result.ok, result.lines()
    assert len(result.checks) == 4


@pytest.fixture(scope="module")
def next_step_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """12 episodes of 4 Breakout sub-envs in NEXT_STEP autoreset, replays recorded."""
    log = tmp_path_factory.mktemp("training") / "training.jsonl"
    env = VectorTrainingRecorder(
        _seeded(gym.make_vec("SABER/Breakout", 4, **short_settings())), log, replays=True
    )
    env.reset(seed=10)
    _play_vector(env, 12, seed=2)
    env.close()
    return log


def _first_seeds(lines: list[dict]) -> dict[int, int]:
    first: dict[int, int] = {}
    for line in lines:
        first.setdefault(line["env"], line["seed"])
    return first


def test_vector_env_next_step_episodes_replay_from_their_seeds(next_step_log: Path) -> None:
    lines = _lines(next_step_log)
    assert {line["end"] for line in lines} >= {"game_over", "stuck_timeout"}
    assert _first_seeds(lines) == {row: 10 + row for row in range(4)}  # reset(seed=10)
    assert len({line["seed"] for line in lines}) == len(lines)
    code, output = _cli_verify(next_step_log)
    assert code == 0, output
    assert "verified 12 episode(s) of 1 game(s): every replay reproduces its record" in output


def test_vector_env_disabled_autoreset_replays_with_the_users_seeds(tmp_path: Path) -> None:
    log = tmp_path / "training.jsonl"
    inner = SaberVectorEnv("breakout", 4, autoreset_mode=AutoresetMode.DISABLED, **short_settings())
    env = VectorTrainingRecorder(_seeded(inner), log, replays=True)
    env.reset(seed=10)
    rng = np.random.default_rng(2)
    given = iter(range(1000, 2000))
    while env.log.episodes < 8:  # the user resets ended rows: odd rows with seeds of their own
        actions = rng.integers(0, 18, 4)
        actions[:2] = 0
        _, _, terminated, truncated, _ = env.step(actions)
        for row in np.flatnonzero(terminated | truncated).tolist():
            mask = np.arange(4) == row
            env.reset(seed=[next(given)] if row % 2 else None, options={"reset_mask": mask})
    env.close()
    lines = _lines(log)
    assert {line["end"] for line in lines} >= {"game_over", "stuck_timeout"}
    assert any(1000 <= line["seed"] < 2000 for line in lines)
    result = verify_training_log(log, workers=0)
    assert result.ok, result.lines()
    assert len(result.checks) == len(lines) >= 8


def test_verify_names_an_edited_training_line_and_a_changed_replay(
    next_step_log: Path, tmp_path: Path
) -> None:
    shutil.copytree(next_step_log.parent, tmp_path / "copy")
    log = tmp_path / "copy" / next_step_log.name
    lines = _lines(log)
    lines[1]["score"] += 5
    (log.parent / lines[2]["replay"]).write_bytes(b"SABERRPL not a replay")
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    code, output = _cli_verify(log)
    assert code == 1
    assert f"breakout episode 1: score: {lines[1]['score']!r} in the record" in output
    assert "breakout episode 2: replay file " in output
    assert "verified 12 episode(s) of 1 game(s): 2 do not match" in output


def test_a_torn_last_line_is_skipped_and_a_foreign_file_is_one_line(
    next_step_log: Path, tmp_path: Path
) -> None:
    shutil.copytree(next_step_log.parent, tmp_path / "copy")
    log = tmp_path / "copy" / next_step_log.name
    with log.open("a") as handle:
        handle.write('{"game": "breakout", "epis')  # a training killed mid-write
    code, output = _cli_verify(log, "--sample", "2")
    assert code == 0 and "verified 2 episode(s) of 1 game(s) (a sample of 2 of 12)" in output
    log.write_text('{"x": 1}\n' + log.read_text())
    code, output = _cli_verify(log)
    assert (
        code == ExitCode.BAD_INPUT and f"Error: {log}, line 1: not a training log line" in output
    ), output
    log.write_bytes(b"\xff\xfe")
    code, output = _cli_verify(log)
    assert code == ExitCode.BAD_INPUT and "not a training log (not UTF-8" in output, output


def test_a_training_log_without_replays_is_named_per_episode(tmp_path: Path) -> None:
    log = tmp_path / "training.jsonl"
    env = VectorTrainingRecorder(gym.make_vec("SABER/Breakout", 2, **short_settings()), log)
    env.reset(seed=0)
    _play_vector(env, 2, seed=4)
    env.close()
    code, output = _cli_verify(log)
    assert code == 1
    assert "breakout episode 0: no replay recorded" in output


def test_replays_need_a_log_to_sit_beside(tmp_path: Path) -> None:
    with pytest.raises(SaberError, match="needs a log path"):
        TrainingRecorder(_seeded(gym.make("SABER/Breakout")), None, replays=True)


def test_replays_need_every_episode_seeded_and_the_env_is_left_as_given(tmp_path: Path) -> None:
    env = gym.make("SABER/Breakout")
    message = (
        "Recording training replays needs every episode seeded, so that each replays: "
        "set env.unwrapped.seed_each_episode = True before the recorder"
    )
    with pytest.raises(SaberError, match=re.escape(message)):
        TrainingRecorder(env, tmp_path / "training.jsonl", replays=True)
    venv = gym.make_vec("SABER/Breakout", 2)
    with pytest.raises(SaberError, match=re.escape(message)):
        VectorTrainingRecorder(venv, tmp_path / "training.jsonl", replays=True)
    assert not env.unwrapped.seed_each_episode and not venv.unwrapped.seed_each_episode
