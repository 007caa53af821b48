"""examples/ppo_multigame.py: one PPO agent trains on SABER/Atari5, ``saber training``
gives each game's curve and the aggregates over games from its one log, and ``saber
eval`` plays the exported actor on the same games.

Marked ``sb3`` (the stage with torch): a tiny network, a short run, episodes capped at
1,000 frames (not SABER); what is tested is the plumbing, not the learning.
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from saber.cli import main as saber_cli
from saber.games import game_sets
from tests.clients.test_examples import CAP, read_lines, run_example, sb3

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
