"""examples/ppo_saber.py: resumes after kill -9 and SIGTERM with a whole log, refuses bad
checkpoints in one line, and its exported actor plays the same in numpy as in PyTorch.

Marked ``sb3`` (the stage with torch). The runs use a tiny network and short rollouts:
what is tested is the bookkeeping, not the learning (docs/trained-agent.md has that).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from saber.agents import read_policy_file
from tests.clients.test_examples import EXAMPLES, sb3

# 4 envs x 32 steps = 512 frames an iteration; random Pong games last about 3,300 frames,
# so 48k frames end about a dozen episodes.
SMALL = ["--num-envs", "4", "--num-steps", "32", "--channels", "4,8,8", "--hidden", "32"]
FRAMES = "48k"


def command(out: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        str(EXAMPLES / "ppo_saber.py"),
        "--out",
        str(out),
        "--total-frames",
        FRAMES,
        "--checkpoint-every",
        "0",  # a checkpoint after every iteration: kill -9 anywhere loses at most one
        "--threads",
        "1",
        *SMALL,
        *extra,
    ]


def start(out: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        command(out, *extra), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def wait_for_episodes(out: Path, count: int, process: subprocess.Popen[str]) -> None:
    """Until the log holds ``count`` episodes and a checkpoint exists (or fail)."""
    log, deadline = out / "training.jsonl", time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()[0]
        ready = (out / "checkpoint.pt").exists() and log.exists()
        if ready and log.read_text().count("\n") >= count:
            return
        time.sleep(0.2)
    pytest.fail(f"no {count} episodes logged in 120 s")


def finish(out: Path) -> str:
    done = subprocess.run(command(out), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def log_lines(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "training.jsonl").read_text().splitlines()]


def assert_whole(lines: list[dict[str, Any]]) -> None:
    """Episodes numbered 0..n-1 once each, frames never decreasing."""
    assert [line["episode"] for line in lines] == list(range(len(lines)))
    frames = [line["frames"] for line in lines]
    assert frames == sorted(frames)


@sb3
def test_kill_9_then_resume_keeps_every_episode_once(tmp_path: Path) -> None:
    process = start(tmp_path)
    wait_for_episodes(tmp_path, 3, process)
    process.kill()  # SIGKILL: no handler runs
    process.wait()
    import torch

    saved = torch.load(tmp_path / "checkpoint.pt", weights_only=True)["progress"]["episodes"]
    before = (tmp_path / "training.jsonl").read_text().splitlines()
    assert saved >= 1
    stdout = finish(tmp_path)
    assert "Resuming" in stdout
    after = log_lines(tmp_path)
    assert_whole(after)
    # What the killed run logged up to its last checkpoint is kept as it was; what it
    # logged after it was played again by the resumed run, and logged once.
    assert [json.dumps(line) for line in after[:saved]] == before[:saved]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["resumes"] == 1 and summary["frames"] >= 48_000
    assert summary["episodes"] == len(after)


@sb3
def test_sigterm_checkpoints_and_exits_143(tmp_path: Path) -> None:
    process = start(tmp_path)
    wait_for_episodes(tmp_path, 2, process)
    process.send_signal(signal.SIGTERM)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 128 + signal.SIGTERM, output
    assert "SIGTERM: saving a checkpoint" in output and "Traceback" not in output
    stopped = log_lines(tmp_path)
    finish(tmp_path)
    after = log_lines(tmp_path)
    assert_whole(after)
    assert after[: len(stopped)] == stopped  # a clean stop drops nothing


@sb3
def test_bad_checkpoints_are_refused_in_one_line(tmp_path: Path) -> None:
    finish(tmp_path)
    changed = subprocess.run(
        command(tmp_path, "--learning-rate", "0.001"), capture_output=True, text=True
    )
    assert changed.returncode == 2
    assert changed.stderr.count("\n") == 1 and "Traceback" not in changed.stderr
    assert "learning_rate=0.00025 in the checkpoint, 0.001 now" in changed.stderr

    (tmp_path / "checkpoint.pt").write_bytes(b"not a checkpoint at all")
    corrupt = subprocess.run(command(tmp_path), capture_output=True, text=True)
    assert corrupt.returncode == 2 and corrupt.stderr.count("\n") == 1
    assert f"{tmp_path / 'checkpoint.pt'}: not a readable checkpoint" in corrupt.stderr

    import torch

    torch.save({"format": "someone-else/1"}, tmp_path / "checkpoint.pt")
    foreign = subprocess.run(command(tmp_path), capture_output=True, text=True)
    assert (
        foreign.returncode == 2 and "not a saber-examples/ppo-saber/1 checkpoint" in foreign.stderr
    )


@sb3
def test_the_numpy_actor_equals_the_torch_actor_on_real_observations(tmp_path: Path) -> None:
    import torch

    sys.path.insert(0, str(EXAMPLES))
    try:
        from ppo_saber import Agent, actor_layers
    finally:
        sys.path.remove(str(EXAMPLES))
    from saber.agents.convnet import write_policy_file

    torch.manual_seed(0)
    agent = Agent((16, 32, 32), 256, 18)
    for parameter in agent.parameters():  # larger than the initialization: every unit alive
        parameter.data.normal_(0.0, 0.05)
    write_policy_file(tmp_path / "policy.npz", actor_layers(agent), {"test": True})
    actor = read_policy_file(tmp_path / "policy.npz")

    envs = gym.make_vec("SABER/Pong", num_envs=4)
    observations, _ = envs.reset(seed=3)
    batches = [observations]
    for _ in range(60):
        observations, *_ = envs.step(np.random.default_rng(0).integers(18, size=4))
        batches.append(observations)
    envs.close()
    batch = np.concatenate(batches)
    with torch.no_grad():
        expected, _ = agent(torch.from_numpy(batch))
    np.testing.assert_allclose(actor.logits(batch), expected.numpy(), rtol=1e-4, atol=1e-4)
    assert (actor.logits(batch).argmax(1) == expected.numpy().argmax(1)).all()
    assert os.path.getsize(tmp_path / "policy.npz") < 2_000_000  # ships inside the package
