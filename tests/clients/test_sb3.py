"""Stable-Baselines3 on SABER envs: real ROMs through ale-py, real training, no mocks.

What an SB3 user does: ``check_env``, ``make_vec_env`` with ``DummyVecEnv`` and
``SubprocVecEnv``, PPO and DQN with ``CnnPolicy``, then ``saber.evaluate`` of the trained
model. Also, as documentation, the two SB3 Atari habits that break SABER: ``make_atari_env``
(its ``AtariWrapper`` re-does the preprocessing and adds life-loss episodes, FIRE resets,
no-op starts and clipping) and ``VecFrameStack`` (SABER already stacks 4 frames).

Marked ``sb3``: needs ``pip install torch==<cpu wheel> ".[test,sb3]"``; run with ``-m sb3``.
Training runs are a few thousand steps with tiny hyperparameters (seconds each on 2 cores);
evaluations cap episodes at 2,000 frames (not SABER, so ``allow_non_saber``).
"""

from __future__ import annotations

import inspect
import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import saber  # noqa: F401  (registers SABER/*)
from saber.replay import verify_run
from saber.training import TrainingRecorder, training_scores
from tests.clients.helpers import EVAL_FRAMES, evaluate_briefly
from tests.rundir.test_records import RECORD_FIELDS

try:
    import torch
    from stable_baselines3 import DQN, PPO
    from stable_baselines3.common.atari_wrappers import AtariWrapper
    from stable_baselines3.common.base_class import BaseAlgorithm
    from stable_baselines3.common.env_checker import check_env
    from stable_baselines3.common.env_util import make_atari_env, make_vec_env
    from stable_baselines3.common.preprocessing import (
        is_image_space,
        is_image_space_channels_first,
    )
    from stable_baselines3.common.vec_env import (
        DummyVecEnv,
        SubprocVecEnv,
        VecFrameStack,
        VecTransposeImage,
        is_vecenv_wrapped,
    )
except ImportError:  # deselected by default (-m 'not sb3'); selected, the fixture fails
    pass

pytestmark = [pytest.mark.sb3, pytest.mark.usefixtures("sb3_installed")]

RECORD_KEYS = {
    "game",
    "episode",
    "seed",
    "agent",
    *RECORD_FIELDS,
    "replay",  # replays are recorded by default (saber eval --no-replays turns them off)
    "replay_sha256",
}


@pytest.fixture(autouse=True)
def one_torch_thread() -> Iterator[None]:
    # On 2 shared cores, torch's second OpenMP thread made updates ~4x slower (measured).
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


class ModelPolicy:
    """A saber policy from a trained SB3 model (greedy: ``predict(deterministic=True)``)."""

    def __init__(self, model: BaseAlgorithm) -> None:
        self.model = model

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        actions, _ = self.model.predict(observations, deterministic=True)
        return actions


def assert_sane_records(records: list[dict[str, Any]], agent: str, episodes: int) -> None:
    assert [r["episode"] for r in records] == list(range(episodes))
    for record in records:
        assert set(record) == RECORD_KEYS, record
        assert (record["game"], record["agent"]) == ("pong", agent)
        # Capped at EVAL_FRAMES, below Pong's game over (21 points take longer).
        assert (record["frames"], record["steps"], record["end"]) == (
            EVAL_FRAMES,
            EVAL_FRAMES // 4,
            "time_cap",
        )
        assert -21 <= record["score"] <= 21 and record["score"] == int(record["score"])
        # Both checkpoints lie beyond the cap: the score at 5 and 30 minutes is the score.
        assert record["score_5min"] == record["score_30min"] == record["score"]
        assert record["rollovers"] == 0
    assert len({r["seed"] for r in records}) == episodes


def test_check_env_passes_without_warnings() -> None:
    env = gym.make("SABER/Pong")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning of the checker fails the test
        check_env(env, warn=True)
    env.close()


def test_sb3_sees_a_channels_first_image_and_adds_no_transpose() -> None:
    space = gym.make("SABER/Pong").observation_space
    assert is_image_space(space, check_channels=True)  # uint8, [0, 255], 4 channels
    assert is_image_space_channels_first(space)  # (4, 84, 84): smallest dimension first
    venv = make_vec_env("SABER/Pong", n_envs=1)
    model = PPO("CnnPolicy", venv, n_steps=8, batch_size=8, device="cpu")
    assert not is_vecenv_wrapped(model.get_env(), VecTransposeImage)
    assert model.policy.normalize_images  # CnnPolicy divides the uint8 pixels by 255
    assert model.observation_space.shape == (4, 84, 84)
    assert model.action_space.n == 18
    venv.close()


@pytest.mark.parametrize("vec_env_cls", ["dummy", "subproc"])
def test_make_vec_env_steps_like_gymnasium_make(vec_env_cls: str) -> None:
    cls = {"dummy": DummyVecEnv, "subproc": SubprocVecEnv}[vec_env_cls]
    # SubprocVecEnv's workers (forkserver) have not imported saber, and Gymnasium 1.x loads
    # no entry-point plugins: "SABER/Pong" alone raises NamespaceNotFound there. The
    # "module:id" form makes gym.make import saber first.
    venv = make_vec_env("saber:SABER/Pong", n_envs=2, seed=7, vec_env_cls=cls)
    actions = np.random.default_rng(0).integers(0, 18, (60, 2))
    observations = [venv.reset()]
    for step_actions in actions:
        obs, _, dones, _ = venv.step(step_actions)
        observations.append(obs)
        assert not dones.any()  # a Pong game lasts far longer
    venv.close()
    assert observations[0].shape == (2, 4, 84, 84) and observations[0].dtype == np.uint8
    # make_vec_env seeds sub-env i with seed + i: the same frames as gymnasium.make.
    for row in range(2):
        env = gym.make("SABER/Pong")
        expected = [env.reset(seed=7 + row)[0]]
        expected += [env.step(int(a))[0] for a in actions[:, row]]
        env.close()
        np.testing.assert_array_equal(np.stack(observations)[:, row], np.stack(expected))


def test_make_vec_env_monitor_keeps_saber_record(tmp_path: Path) -> None:
    # SB3's Monitor (which make_vec_env always adds) writes its own info["episode"]
    # (r / l / t; its r sums the rewards it sees: clipped ones under clip_rewards=True).
    # SABER's record is in info["saber"], so both reach the user, and a TrainingRecorder
    # above or below Monitor logs the raw score.
    log = tmp_path / "training.jsonl"

    def make() -> gym.Env:
        env = gym.make("SABER/SpaceInvaders", clip_rewards=True, max_episode_frames=3_000)
        return TrainingRecorder(env, log)

    venv = make_vec_env(make, n_envs=1, seed=3)
    venv.reset()
    rng = np.random.default_rng(0)
    clipped_sum, steps = 0.0, 0
    while True:
        _, rewards, dones, infos = venv.step(rng.integers(0, 18, 1))
        clipped_sum, steps = clipped_sum + float(rewards[0]), steps + 1
        if dones[0]:
            break
    venv.close()
    episode, saber_record = infos[0]["episode"], infos[0]["saber"]
    assert set(episode) == {"r", "l", "t"}
    assert (episode["r"], episode["l"]) == (clipped_sum, steps)
    assert saber_record["steps"] == steps
    logged = [line for line in log.read_text().splitlines() if line]
    assert len(logged) == 1
    raw_score = json.loads(logged[0])["score"]
    assert raw_score == saber_record["score"]
    # Space Invaders pays 5 to 30 points per alien: the raw score exceeds the clipped sum.
    assert raw_score > clipped_sum > 0


def _wrapper_names(env: gym.Env) -> list[str]:
    names = []
    while isinstance(env, gym.Wrapper):
        names.append(type(env).__name__)
        env = env.env
    return [*names, type(env).__name__]


def test_make_atari_env_would_break_the_protocol() -> None:
    # The installed SB3's AtariWrapper defaults: each one is something SABER forbids or
    # already does. (Checked on stable-baselines3 2.9.2.)
    defaults = {
        name: parameter.default
        for name, parameter in inspect.signature(AtariWrapper.__init__).parameters.items()
        if parameter.default is not inspect.Parameter.empty
    }
    assert defaults == {
        "noop_max": 30,  # random no-op starts (SABER: the game's own start)
        "frame_skip": 4,  # a second 4-frame repeat on top of SABER's (16 frames per step)
        "screen_size": 84,  # a second resize of an already 84x84 stack
        "terminal_on_life_loss": True,  # an episode per life (SABER: no life signal)
        "clip_reward": True,  # sign-clipping inside the env (SABER: the agent's choice)
        "action_repeat_probability": 0.0,
    }
    venv = make_atari_env("SABER/Pong", n_envs=1, seed=0)
    ours = _wrapper_names(gym.make("SABER/Pong"))
    theirs = _wrapper_names(venv.envs[0])
    assert theirs[: -len(ours)] == [
        "AtariWrapper",
        "ClipRewardEnv",
        "WarpFrame",
        "FireResetEnv",  # Pong has FIRE: presses it at every reset (SABER: never)
        "EpisodicLifeEnv",  # reads env.unwrapped.ale.lives(): SABER's info has no lives
        "MaxAndSkipEnv",
        "NoopResetEnv",
        "Monitor",
    ]
    assert theirs[-len(ours) :] == ours
    assert "SaberAtariEnv" in ours
    # And it does not even run: WarpFrame converts an RGB frame, and gets a 4x84x84 stack.
    with pytest.raises(Exception, match="channels"):
        venv.reset()
    venv.close()


def test_vec_frame_stack_would_stack_stacks() -> None:
    venv = VecFrameStack(make_vec_env("SABER/Pong", n_envs=1), n_stack=4)
    assert venv.observation_space.shape == (16, 84, 84)  # 4 stacks of 4 frames
    venv.close()


def test_ppo_trains_then_saber_evaluates_it(tmp_path: Path) -> None:
    venv = make_vec_env("SABER/Pong", n_envs=2, seed=0, env_kwargs={"clip_rewards": True})
    model = PPO("CnnPolicy", venv, n_steps=128, batch_size=128, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=2_048)
    assert model.num_timesteps == 2_048
    model.save(tmp_path / "ppo.zip")
    venv.close()

    loaded = PPO.load(tmp_path / "ppo.zip", device="cpu")
    result = evaluate_briefly(ModelPolicy(loaded), "pong", tmp_path / "eval", "sb3-ppo")
    assert_sane_records(result.records, "sb3-ppo", 2)
    assert (tmp_path / "eval" / "episodes.jsonl").read_text().count("\n") == 2
    # The trained model's play, replayed from its seeds without the model, gives its records.
    verified = verify_run(tmp_path / "eval", workers=0)
    assert verified.ok and len(verified.checks) == 2, verified.lines()


def test_dqn_trains_then_saber_evaluates_it(tmp_path: Path) -> None:
    venv = make_vec_env("SABER/Pong", n_envs=1, seed=0, env_kwargs={"clip_rewards": True})
    model = DQN(
        "CnnPolicy",
        venv,
        buffer_size=2_000,
        learning_starts=1_000,
        batch_size=16,
        train_freq=4,
        target_update_interval=250,
        seed=0,
        device="cpu",
    )
    model.learn(total_timesteps=2_000)
    assert model.num_timesteps == 2_000 and model._n_updates == 250
    venv.close()

    result = evaluate_briefly(
        ModelPolicy(model), "pong", tmp_path / "eval", "sb3-dqn", envs_per_worker=1
    )
    assert_sane_records(result.records, "sb3-dqn", 2)


def test_metrics_callback_reaches_tensorboard(tmp_path: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from saber.training.sb3 import SaberMetricsCallback

    # Breakout with a 400-frame stuck timeout: random-ish episodes end within ~100 steps.
    def make() -> gym.Env:
        return gym.make("SABER/Breakout", clip_rewards=True, max_frames_without_reward=400)

    venv = DummyVecEnv([make, make])
    venv.seed(0)
    model = PPO(
        "CnnPolicy",
        venv,
        n_steps=128,
        batch_size=128,
        n_epochs=1,
        seed=0,
        device="cpu",
        tensorboard_log=str(tmp_path / "tb"),
    )
    callback = SaberMetricsCallback(tmp_path / "training.jsonl", checkpoints=(2_000,))
    model.learn(total_timesteps=1_024, callback=callback, tb_log_name="ppo")
    venv.close()
    final = callback.metrics()

    [run] = (tmp_path / "tb").iterdir()
    events = EventAccumulator(str(run))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {
        "saber/frames",
        "saber/episodes",
        "saber/mean_score",
        "saber/mean_score_wr_normalized",
        "saber/mean_score_5min",
        "saber/mean_score_30min",
        "saber/score_at_2k",
        "saber/stuck_episodes",
        "saber/infinite_episodes",
    } <= tags
    last = {tag: events.Scalars(tag)[-1] for tag in tags if tag.startswith("saber/")}
    # PPO dumps after each of its 4 rollouts of 2 x 128 steps: the last one holds the end.
    assert len(events.Scalars("saber/frames")) == 4
    assert last["saber/frames"].step == 1_024
    lines = [json.loads(line) for line in (tmp_path / "training.jsonl").read_text().splitlines()]
    scores = [line["score"] for line in lines]
    assert last["saber/episodes"].value == len(lines) == final["saber/episodes"] > 2
    assert last["saber/mean_score"].value == pytest.approx(np.mean(scores))  # raw, not clipped
    assert last["saber/stuck_episodes"].value == sum(ln["end"] == "stuck_timeout" for ln in lines)
    assert last["saber/frames"].value == final["saber/frames"]
    # 1,024 steps of 4 frames, less the frames cut short by game overs.
    assert 4 * 1_024 - 3 * len(lines) <= final["saber/frames"] <= 4 * 1_024
    assert last["saber/score_at_2k"].value == pytest.approx(
        training_scores(tmp_path / "training.jsonl", [2_000])[0].mean
    )
