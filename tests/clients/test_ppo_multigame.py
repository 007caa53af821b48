"""examples/ppo_multigame.py: one PPO agent trains on SABER/Atari5, ``saber training``
gives each game's curve and the aggregates over games from its one log, and ``saber
eval`` plays the exported actor on the same games.

Marked ``sb3`` (the stage with torch): a tiny network, a short run, episodes capped at
1,000 frames (not SABER); what is tested is the plumbing, not the learning.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from saber.cli import main as saber_cli
from saber.games import game_sets
from tests.clients.test_examples import CAP, EXAMPLES, read_lines, run_example, sb3

ATARI5 = [game.ale_id for game in game_sets()["atari5"]]


@sb3
def test_one_agent_trains_on_atari5_and_is_evaluated_on_its_games(tmp_path: Path) -> None:
    out = run_example(
        "ppo_multigame.py",
        *("--games", "SABER/Atari5", "--envs-per-game", "1", "--num-steps", "32"),
        *("--total-frames", "12k", "--max-episode-frames", str(CAP)),
        *("--channels", "4,8,8", "--hidden", "32", "--threads", "1", "--out", "run"),
        cwd=tmp_path,
        timeout=600,
    )
    assert "PPO on SABER/Atari5: 5 envs" in out
    lines = read_lines(tmp_path / "run" / "training.jsonl")
    assert {line["game"] for line in lines} == set(ATARI5)  # every game ended episodes
    assert all(line["env"] == ATARI5.index(line["game"]) for line in lines)

    result = CliRunner().invoke(
        saber_cli, ["training", str(tmp_path / "run" / "training.jsonl"), "--at", "2000"]
    )
    assert result.exit_code == 0, result.output
    assert "| frames | games | median WR-normalized | mean WR-normalized |" in result.output
    assert "| 2,000 | 4 |" in result.output  # Double Dunk has no world record
    assert "without a world record (left out): double_dunk." in result.output

    result = CliRunner().invoke(
        saber_cli,
        [
            "eval",
            *("--agent", f"conv-actor:{tmp_path / 'run' / 'policy.npz'}"),
            *("--games", "atari5", "--episodes", "1", "--workers", "1", "--no-progress"),
            *("--env-option", f"max_episode_frames={CAP}", "--allow-non-saber"),
            *("--out", str(tmp_path / "eval")),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "5 finished, 0 failed" in result.output


RESUMED = (
    *("--games", "pong,breakout", "--envs-per-game", "1", "--num-steps", "32"),
    *("--total-frames", "6k", "--max-episode-frames", "400", "--checkpoint-frames", "0"),
    *("--channels", "4,8,8", "--hidden", "32", "--threads", "1"),
)


@sb3
def test_a_run_killed_and_resumed_ends_as_an_uninterrupted_one(tmp_path: Path) -> None:
    """kill -9 after the second checkpoint (lines the log holds past it are cut back),
    then the same command: the same log, byte for byte (each game's curve, hence the
    median and mean over games), and the same network, bit for bit."""
    run_example("ppo_multigame.py", *RESUMED, "--out", "whole", cwd=tmp_path, timeout=600)
    command = [sys.executable, str(EXAMPLES / "ppo_multigame.py"), *RESUMED, "--out", "parts"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    process = subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    parts, deadline = tmp_path / "parts", time.monotonic() + 300
    while not (parts / "checkpoint.previous.pt").exists():
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.05)
    process.kill()  # SIGKILL: no handler runs
    process.wait()
    assert not (parts / "policy.npz").exists()  # it stopped before the end
    out = run_example("ppo_multigame.py", *RESUMED, "--out", "parts", cwd=tmp_path, timeout=600)
    assert "Resuming at iteration" in out

    whole = tmp_path / "whole"
    lines = read_lines(whole / "training.jsonl")
    assert {line["game"] for line in lines} == {"pong", "breakout"}
    assert (parts / "training.jsonl").read_bytes() == (whole / "training.jsonl").read_bytes()
    with np.load(whole / "policy.npz") as a, np.load(parts / "policy.npz") as b:
        layers = [key for key in a.files if key.endswith(("weight", "bias"))]
        assert layers and all(np.array_equal(a[key], b[key]) for key in layers)
