"""The examples run as written: ``python examples/<script>.py`` with small flags, real ROMs.

Each runs in a subprocess from a temporary directory (outputs go to relative paths there),
must exit 0 and leave its outputs. ``evaluate_random.py`` needs no torch and runs in the
default suite; the others are marked ``sb3`` (torch, stable-baselines3). Episodes are
capped at 1,000 frames with ``--max-episode-frames`` (not SABER) to keep each run short.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from saber.cli import main as saber_cli
from tests.script_modules import load_script

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CAP = 1_000  # frames per episode in these runs: 250 agent steps


def sb3(test: Any) -> Any:
    """Marked sb3 (deselected by default); fails where torch or SB3 is not installed."""
    return pytest.mark.sb3(pytest.mark.usefixtures("sb3_installed")(test))


def run_example(script: str, *args: str, cwd: Path, timeout: float = 180) -> str:
    """Run ``examples/<script>`` like a user would; return its stdout, fail with its output."""
    # One torch thread: on 2 cores the emulator threads (and other jobs) need the other.
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    process = subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert process.returncode == 0, f"{script} failed:\n{process.stdout}\n{process.stderr}"
    return process.stdout


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def check_training_log(log: Path, num_envs: int, episodes: int) -> list[dict[str, Any]]:
    """Episodes of ``num_envs`` sub-envs, all capped at CAP frames, in lockstep."""
    lines = read_lines(log)
    assert len(lines) == episodes
    assert [line["episode"] for line in lines] == list(range(episodes))
    assert {line["game"] for line in lines} == {"pong"}
    assert {(line["episode_frames"], line["end"]) for line in lines} == {(CAP, "time_cap")}
    # All sub-envs end together, so the cumulative training frames step by num_envs * CAP.
    assert [line["frames"] for line in lines] == [
        num_envs * CAP * (1 + i // num_envs) for i in range(episodes)
    ]
    # Raw scores (the agent learned from clipped ones): whole Pong points.
    assert all(-21 <= line["score"] <= 21 and line["score"] == int(line["score"]) for line in lines)
    return lines


def comparable(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in ("seconds", "agent")} for r in records]


def test_evaluate_random(tmp_path: Path) -> None:
    stdout = run_example("evaluate_random.py", "runs/random", cwd=tmp_path)
    episodes = tmp_path / "runs" / "random" / "episodes.jsonl"
    records = read_lines(episodes)
    assert sorted((r["game"], r["episode"]) for r in records) == [
        (game, i) for game in ("breakout", "pong") for i in range(4)
    ]
    assert all(r["agent"] == "random" and "error" not in r for r in records)
    assert "# SABER report" in stdout and "8 finished, 0 failed, in runs/random" in stdout
    # The same command again resumes: nothing more to run, the same records.
    run_example("evaluate_random.py", "runs/random", cwd=tmp_path)
    assert read_lines(episodes) == records


@sb3
def test_evaluate_torch_policy_says_how_to_get_a_checkpoint(tmp_path: Path) -> None:
    process = subprocess.run(
        [sys.executable, str(EXAMPLES / "evaluate_torch_policy.py"), "missing.pt"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert process.returncode == 1
    assert "dqn_vector.py" in process.stderr and "--init-random" in process.stderr
    assert not (tmp_path / "runs").exists()


@sb3
def test_evaluate_torch_policy_random_network_same_in_workers_and_inline(tmp_path: Path) -> None:
    common = ["--games", "pong", "--episodes", "2", "--envs-per-worker", "1"]
    common += ["--epsilon", "0.5", "--max-episode-frames", str(CAP)]
    worker_args = ("net.pt", "--init-random", "--workers", "2", "--out", "workers")
    stdout = run_example("evaluate_torch_policy.py", *worker_args, *common, cwd=tmp_path)
    assert "wrote a randomly initialized network to net.pt" in stdout
    assert "# SABER report" in stdout
    inline_args = ("net.pt", "--workers", "0", "--out", "inline")
    run_example("evaluate_torch_policy.py", *inline_args, *common, cwd=tmp_path)
    in_workers = read_lines(tmp_path / "workers" / "episodes.jsonl")
    inline = read_lines(tmp_path / "inline" / "episodes.jsonl")
    assert len(in_workers) == 2 and all(r["frames"] == CAP for r in in_workers)
    assert {r["agent"] for r in in_workers} == {"nature-cnn:net.pt:epsilon=0.5"}
    # Exploration is seeded per episode: the scores do not depend on the workers.
    key = lambda r: r["episode"]  # noqa: E731
    assert comparable(sorted(in_workers, key=key)) == comparable(sorted(inline, key=key))
    assert (tmp_path / "workers" / "report.md").is_file()


@sb3
def test_dqn_vector_then_evaluate_its_checkpoint(tmp_path: Path) -> None:
    stdout = run_example(
        "dqn_vector.py",
        *("--game", "Pong", "--num-envs", "2", "--total-steps", "1200"),
        *("--learning-starts", "800", "--batch-size", "8", "--buffer-size", "2000"),
        *("--target-network-frequency", "200", "--max-episode-frames", str(CAP)),
        *("--log", "dqn/training.jsonl", "--checkpoint", "dqn/net.pt", "--tensorboard", "tb"),
        cwd=tmp_path,
    )
    # 600 real steps per sub-env: two 250-step episodes each (the autoreset steps between
    # them are not transitions, and not agent steps).
    lines = check_training_log(tmp_path / "dqn" / "training.jsonl", num_envs=2, episodes=4)
    # The metrics hook through TensorBoard's SummaryWriter: the last values are the log's.
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(tmp_path / "tb"))
    events.Reload()
    assert events.Scalars("saber/episodes")[-1].value == 4
    assert events.Scalars("saber/frames")[-1].value == events.Scalars("saber/frames")[-1].step
    assert events.Scalars("saber/mean_score")[-1].value == pytest.approx(
        sum(line["score"] for line in lines) / 4
    )
    assert "saber/mean_score_wr_normalized" in events.Tags()["scalars"]
    # Updates start at 800 steps, one per 4 steps: 1200 // 4 - 798 // 4 (2 steps per call).
    assert "1,200 agent steps, 4,800 frames, 4 episodes, 101 updates" in stdout
    stdout = run_example(
        "evaluate_torch_policy.py",
        "dqn/net.pt",
        *("--games", "pong", "--episodes", "1", "--workers", "0"),
        *("--max-episode-frames", str(CAP), "--out", "eval"),
        cwd=tmp_path,
    )
    assert "'agent_steps': 1200" in stdout  # the checkpoint's metadata
    (record,) = read_lines(tmp_path / "eval" / "episodes.jsonl")
    assert (record["game"], record["frames"], record["end"]) == ("pong", CAP, "time_cap")


@sb3
def test_train_sb3_ppo(tmp_path: Path) -> None:
    stdout = run_example(
        "train_sb3_ppo.py",
        *("--game", "Pong", "--total-steps", "512", "--num-envs", "2", "--n-steps", "128"),
        *("--batch-size", "64", "--n-epochs", "1", "--max-episode-frames", str(CAP)),
        *("--eval-episodes", "2", "--eval-workers", "2", "--out", "ppo"),
        cwd=tmp_path,
    )
    out = tmp_path / "ppo"
    assert (out / "model.zip").is_file()
    lines = check_training_log(out / "training.jsonl", num_envs=2, episodes=2)
    assert "2,048 training frames, 2 episodes" in stdout  # 512 steps x 4 frames
    records = read_lines(out / "eval" / "episodes.jsonl")
    assert sorted(r["episode"] for r in records) == [0, 1]
    assert all(r["frames"] == CAP and r["agent"] == "sb3-ppo:ppo:sampled" for r in records)
    assert "# SABER report" in stdout and (out / "eval" / "report.json").is_file()
    # What `saber training LOG --at ...` makes of the recorder's log.
    result = CliRunner().invoke(saber_cli, ["training", str(out / "training.jsonl"), "--at", "2k"])
    assert result.exit_code == 0, result.output
    mean = sum(line["score"] for line in lines) / 2
    assert f"| pong | 2,000 | {mean:,.1f} | 2 (fewer than 100) |" in result.output


@sb3
def test_dqn_replay_buffer_skips_autoreset_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    # dqn_vector's rule on the real vector env: a row's step right after its episode ended
    # (NEXT_STEP: the reset observation, reward 0, action ignored) is not stored; every
    # stored next observation, rebuilt from the observation and one frame, is the real one.
    import gymnasium as gym
    import numpy as np

    monkeypatch.syspath_prepend(str(EXAMPLES))  # dqn_vector imports nature_cnn
    dqn_vector = load_script("dqn_vector", EXAMPLES / "dqn_vector.py", monkeypatch)

    steps, num_envs = 300, 2
    envs = gym.make_vec("SABER/Pong", num_envs=num_envs, max_episode_frames=400)
    buffer = dqn_vector.ReplayBuffer(steps * num_envs, envs.single_observation_space.shape)
    obs, _ = envs.reset(seed=0)
    autoreset = np.zeros(num_envs, dtype=bool)
    stored_next, resets = [], 0
    rng = np.random.default_rng(0)
    for _ in range(steps):
        next_obs, rewards, terminated, truncated, _ = envs.step(rng.integers(0, 18, num_envs))
        assert not rewards[autoreset].any()  # the autoreset step: reward 0
        resets += int(autoreset.sum())
        real = ~autoreset
        buffer.add(
            obs[real], next_obs[real], np.zeros(int(real.sum())), rewards[real], terminated[real]
        )
        stored_next.extend(next_obs[real])
        autoreset = terminated | truncated
        obs = next_obs
    envs.close()
    assert resets == 2 * (steps // 101)  # 100-step episodes, then one autoreset step
    assert buffer.size == steps * num_envs - resets
    rebuilt = np.concatenate([buffer.obs[:, 1:], buffer.next_frames[:, None]], axis=1)
    np.testing.assert_array_equal(rebuilt[: buffer.size], np.stack(stored_next))
