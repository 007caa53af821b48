"""examples/ppo_saber.py: a run killed at any moment resumes to the very log and network it
would have had, a damaged last checkpoint falls back to the one before it, a resume of
another script, other hyperparameters or another seed is refused in one line, and the
exported actor plays the same in numpy as in PyTorch.

Marked ``sb3`` (the stage with torch). The runs use a tiny network and short rollouts:
what is tested is the bookkeeping, not the learning (docs/baselines.md has that).
"""

from __future__ import annotations

import json
import os
import random
import shutil
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

SCRIPT = EXAMPLES / "ppo_saber.py"
# Breakout: random episodes last about 800 frames, so every iteration (4 envs x 32 steps,
# 512 frames) ends some, and the episodes in progress at a checkpoint are short to replay.
SMALL = [
    *("--game", "Breakout", "--num-envs", "4", "--num-steps", "32"),
    *("--channels", "4,8,8", "--hidden", "32"),
]
FRAMES = "32k"  # 63 iterations, about 40 episodes


def command(out: Path, *extra: str, script: Path = SCRIPT, frames: str = FRAMES) -> list[str]:
    return [
        sys.executable,
        str(script),
        *("--out", str(out), "--total-frames", frames),
        *("--checkpoint-frames", "0"),  # a checkpoint after every iteration
        *("--threads", "1"),
        *SMALL,
        *extra,
    ]


def start(out: Path, *extra: str, frames: str = FRAMES) -> subprocess.Popen[str]:
    return subprocess.Popen(
        command(out, *extra, frames=frames),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def wait_for_episodes(out: Path, count: int, process: subprocess.Popen[str]) -> None:
    """Until the log holds ``count`` episodes and a checkpoint exists (or fail)."""
    log, deadline = out / "training.jsonl", time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()[0]
        ready = (out / "checkpoint.pt").exists() and log.exists()
        if ready and log.read_text().count("\n") >= count:
            return
        time.sleep(0.05)
    pytest.fail(f"no {count} episodes logged in 120 s")


def finish(out: Path, *extra: str, frames: str = FRAMES) -> str:
    done = subprocess.run(
        command(out, *extra, frames=frames), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def refused(out: Path, *extra: str, script: Path = SCRIPT) -> str:
    """The one line a refused resume prints (exit 2, no traceback)."""
    done = subprocess.run(command(out, *extra, script=script), capture_output=True, text=True)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    return done.stderr


def log_lines(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "training.jsonl").read_text().splitlines()]


def weights(out: Path) -> dict[str, np.ndarray]:
    return read_policy_file(out / "policy.npz").layers


def assert_same_training(out: Path, expected: Path) -> None:
    """The same logs, byte for byte, and the same network, bit for bit."""
    assert (out / "training.jsonl").read_bytes() == (expected / "training.jsonl").read_bytes()
    assert (out / "updates.jsonl").read_bytes() == (expected / "updates.jsonl").read_bytes()
    for name, array in weights(expected).items():
        np.testing.assert_array_equal(weights(out)[name], array, err_msg=name)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run of FRAMES in one go: what every interrupted run must end as."""
    out = tmp_path_factory.mktemp("uninterrupted")
    finish(out)
    return out


@sb3
def test_kill_9_at_any_moment_resumes_to_the_same_log_and_network(
    tmp_path: Path, uninterrupted: Path
) -> None:
    process = start(tmp_path)
    wait_for_episodes(tmp_path, random.Random().randint(3, 20), process)
    time.sleep(random.Random().uniform(0.0, 1.0))  # anywhere: in a rollout, a save, a write
    process.kill()  # SIGKILL: no handler runs
    process.wait()
    stdout = finish(tmp_path)
    assert "Resuming at" in stdout
    assert_same_training(tmp_path, uninterrupted)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["resumes"] == 1 and summary["frames"] >= 32_000
    assert summary["episodes"] == len(log_lines(tmp_path))
    assert summary["seconds"]["restoring"] > 0  # the episodes in progress were replayed


@sb3
def test_the_diagnostics_change_nothing_that_is_learned(
    tmp_path: Path, uninterrupted: Path
) -> None:
    finish(tmp_path, "--diagnostics", "0")
    assert not (tmp_path / "updates.jsonl").exists()
    assert (tmp_path / "training.jsonl").read_bytes() == (
        uninterrupted / "training.jsonl"
    ).read_bytes()
    for name, array in weights(uninterrupted).items():
        np.testing.assert_array_equal(weights(tmp_path)[name], array, err_msg=name)


@sb3
def test_each_update_logs_what_ppo_users_read(uninterrupted: Path) -> None:
    lines = [
        json.loads(line) for line in (uninterrupted / "updates.jsonl").read_text().splitlines()
    ]
    assert [line["update"] for line in lines] == list(range(1, 64))  # 32k frames: 63 updates
    frames = [line["frames"] for line in lines]
    assert frames == sorted(frames) and 31_000 < frames[-1] <= 32_256
    for line in lines:
        assert len(line["actions"]) == 18
        # 4 envs x 32 steps, less the autoreset steps (masked out of the loss)
        assert 4 * 32 - 4 <= sum(line["actions"]) <= 4 * 32
        assert 0.0 <= line["clip_fraction"] <= 1.0 and line["approx_kl"] >= 0.0
        assert 0.0 < line["entropy"] <= np.log(18) + 1e-9 and line["grad_norm"] > 0.0
        assert line["value_loss"] >= 0.0 and np.isfinite(line["policy_loss"])
        assert line["explained_variance"] is None or line["explained_variance"] <= 1.0
    assert lines[0]["learning_rate"] == 2.5e-4 > lines[-1]["learning_rate"] > 0.0


@sb3
def test_a_damaged_last_checkpoint_falls_back_to_the_one_before(
    tmp_path: Path, uninterrupted: Path
) -> None:
    shutil.copytree(uninterrupted, tmp_path, dirs_exist_ok=True)
    (tmp_path / "checkpoint.pt").write_bytes(b"\x00" * 100)  # a disk's garbage
    stdout = finish(tmp_path)
    assert f"{tmp_path / 'checkpoint.pt'}: not a readable checkpoint" in stdout
    assert f"falling back to the checkpoint before it, {tmp_path / 'checkpoint.previous.pt'}" in (
        stdout
    )
    assert_same_training(tmp_path, uninterrupted)  # the last iteration played again, the same


@sb3
def test_running_a_finished_training_again_changes_nothing(
    tmp_path: Path, uninterrupted: Path
) -> None:
    shutil.copytree(uninterrupted, tmp_path, dirs_exist_ok=True)
    before = json.loads((tmp_path / "summary.json").read_text())
    assert "Resuming at" in finish(tmp_path)
    after = json.loads((tmp_path / "summary.json").read_text())
    assert (after["frames"], after["episodes"]) == (before["frames"], before["episodes"])
    assert after["resumes"] == before["resumes"] + 1
    assert_same_training(tmp_path, uninterrupted)


@sb3
def test_sigterm_checkpoints_and_exits_143(tmp_path: Path, uninterrupted: Path) -> None:
    process = start(tmp_path)
    wait_for_episodes(tmp_path, 2, process)
    process.send_signal(signal.SIGTERM)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 128 + signal.SIGTERM, output
    assert "SIGTERM: saving a checkpoint" in output and "Traceback" not in output
    finish(tmp_path)
    assert_same_training(tmp_path, uninterrupted)


@sb3
def test_resumes_of_other_settings_or_damaged_checkpoints_are_refused_in_one_line(
    tmp_path: Path, uninterrupted: Path
) -> None:
    shutil.copytree(uninterrupted, tmp_path, dirs_exist_ok=True)
    assert "learning_rate=0.00025 in the checkpoint, 0.001 now" in refused(
        tmp_path, "--learning-rate", "0.001"
    )
    assert "seed=1 in the checkpoint, 2 now" in refused(tmp_path, "--seed", "2")
    edited = tmp_path / "edited" / "ppo_saber.py"
    edited.parent.mkdir()
    edited.write_text(SCRIPT.read_text() + "# an edit\n")
    assert "refusing to resume a training of another script" in refused(tmp_path, script=edited)

    (tmp_path / "checkpoint.pt").write_bytes(b"not a checkpoint at all")
    (tmp_path / "checkpoint.previous.pt").write_bytes(b"nor this")
    assert "and the last one too; delete both to start afresh" in refused(tmp_path)

    import torch

    torch.save({"format": "someone-else/1"}, tmp_path / "checkpoint.pt")
    os.remove(tmp_path / "checkpoint.previous.pt")
    assert "not a saber-examples/ppo-saber/1 checkpoint" in refused(tmp_path)


CLEANRL = ("--setup", "cleanrl", "--allow-non-saber")


@sb3
def test_a_setup_other_than_sabers_is_refused_without_allow_non_saber(tmp_path: Path) -> None:
    assert "--setup lifeloss is not SABER (a life lost ends the learner's episode): add " in (
        refused(tmp_path, "--setup", "lifeloss")
    )
    line = refused(tmp_path, "--setup", "cleanrl")
    for deviation in (
        "repeat_action_probability=0.0",
        "max_episode_frames=108000",
        "the minimal action set (4 of 18)",
        "FIRE after each start and life lost",
        "1 to 30 no-op frames at each start",
    ):
        assert deviation in line
    assert "--setup 'usual': choose one of saber, lifeloss, cleanrl" in refused(
        tmp_path, "--setup", "usual"
    )
    assert not (tmp_path / "training.jsonl").exists()


@sb3
def test_the_cleanrl_setup_forces_its_steps_resumes_exactly_and_plays_under_saber(
    tmp_path: Path,
) -> None:
    """CleanRL's setup on Breakout: the policy chooses among the 4 minimal actions; no-ops
    and FIRE (after each start and each life lost: the life-loss signal at work) are forced
    and masked out of the loss; a SIGTERM resume ends as the run in one go; the policy file
    has 18 logits, and the 14 others are never drawn under SABER; examples/evaluate_setup.py
    scores it under its own setup, the same on every run."""
    whole, resumed = tmp_path / "whole", tmp_path / "resumed"
    finish(whole, *CLEANRL, frames="4k")
    process = start(resumed, *CLEANRL, frames="4k")
    wait_for_episodes(resumed, 3, process)
    process.send_signal(signal.SIGTERM)
    assert process.communicate(timeout=60)[0] and process.returncode == 128 + signal.SIGTERM
    finish(resumed, *CLEANRL, frames="4k")
    assert_same_training(resumed, whole)

    summary = json.loads((whole / "summary.json").read_text())
    assert summary["setup"] == "cleanrl" and summary["action_ids"] == [0, 1, 3, 4]
    assert "a life lost ends the learner's episode" in summary["deviations"]
    updates = [json.loads(line) for line in (whole / "updates.jsonl").read_text().splitlines()]
    assert all(len(line["actions"]) == 4 for line in updates)
    masked = sum(4 * 32 - sum(line["actions"]) for line in updates)
    # Each finished game: its autoreset step, at least one no-op and FIRE twice at its
    # start, and NOOP, FIRE, RIGHT after each of its 4 lives lost before the last: >= 16.
    assert masked >= 16 * summary["episodes"] > 0

    actor = read_policy_file(whole / "policy.npz")
    assert actor.provenance["setup"] == "cleanrl"
    # What saber report and the board label it by, once shipped: the provenance it carries.
    from saber.agents.pretrained import provenance_deviations

    assert provenance_deviations(actor.provenance) == tuple(summary["deviations"])
    outside = [action for action in range(18) if action not in (0, 1, 3, 4)]
    assert (actor.layers["policy.bias"][outside] == -1e4).all()
    from saber.agents.convnet import ConvActorPolicy

    policy = ConvActorPolicy(whole / "policy.npz")
    envs = gym.make_vec("SABER/Breakout", num_envs=4)
    observations, _ = envs.reset(seed=0)
    policy.start_episodes(np.arange(4), np.arange(4))
    drawn = set()
    for _ in range(50):
        actions = policy(observations)
        drawn.update(actions.tolist())
        observations, *_ = envs.step(actions)
    envs.close()
    assert drawn <= {0, 1, 3, 4} and len(drawn) > 1

    own = [tmp_path / "own-1.json", tmp_path / "own-2.json"]
    for out in own:  # under its own setup, twice: the same episodes
        subprocess.run(
            [
                *(sys.executable, str(EXAMPLES / "evaluate_setup.py"), str(whole / "policy.npz")),
                *("--game", "Breakout", "--setup", "cleanrl", "--episodes", "2", "--out", str(out)),
            ],
            check=True,
            capture_output=True,
        )
    first, second = (json.loads(out.read_text()) for out in own)
    assert first["episodes"] == second["episodes"] and len(first["episodes"]) == 2
    assert first["setup"] == "cleanrl" and first["provenance"]["setup"] == "cleanrl"
    assert all(episode["end"] == "game_over" for episode in first["episodes"])


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
    every = list(range(18))
    write_policy_file(tmp_path / "policy.npz", actor_layers(agent, every), {"test": True})
    write_policy_file(tmp_path / "half.npz", actor_layers(agent, every), {"test": True}, np.float16)
    actor = read_policy_file(tmp_path / "policy.npz")
    half = read_policy_file(tmp_path / "half.npz")

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
    # float16 storage (the shipped baselines): the weights rounded to 11 bits of mantissa.
    np.testing.assert_allclose(half.logits(batch), expected.numpy(), rtol=2e-2, atol=2e-2)
    assert os.path.getsize(tmp_path / "policy.npz") < 2_000_000  # ships inside the package
    assert os.path.getsize(tmp_path / "half.npz") < 0.55 * os.path.getsize(tmp_path / "policy.npz")
