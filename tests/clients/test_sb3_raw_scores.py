"""``saber.training.sb3``: SB3's logs hold SABER's raw scores under ``clip_rewards=True``.

Issue 34's cases: SB3's own ``make_vec_env("SABER/<Game>", env_kwargs={"clip_rewards":
True})`` puts ``Monitor`` above the clipping, so ``Monitor``, ``ep_rew_mean`` and
``evaluate_policy`` sum clipped rewards; ``VecFrameStack`` and ``AtariWrapper`` over SABER
passed without a word. Space Invaders pays 5 to 30 points an alien, so a raw score and a
clipped sum differ; episodes are capped at a few thousand frames (non-SABER, short).

Marked ``sb3``: run with ``python -m pytest -m sb3 tests/clients/test_sb3_raw_scores.py``.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import saber  # noqa: F401  (registers SABER/*)
from saber.envs import ClipRewardKeepRaw
from saber.errors import SaberError
from saber.training.sb3 import SaberMetricsCallback, SaberVecEnv, check_sb3_env, make_sb3_vec_env
from tests.clients.helpers import documented_change

try:
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common import env_util
    from stable_baselines3.common.atari_wrappers import AtariWrapper, EpisodicLifeEnv
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import VecFrameStack
except ImportError:  # deselected by default (-m 'not sb3'); selected, the fixture fails
    pass

pytestmark = [pytest.mark.sb3, pytest.mark.usefixtures("sb3_installed")]

GAME = "SABER/SpaceInvaders"
CLIPPED = {"clip_rewards": True, "max_episode_frames": 2_000}


class RandomPolicy:
    """What ``evaluate_policy`` calls: ``predict`` (random actions, seeded)."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def predict(self, observations: np.ndarray, *_: Any, **__: Any) -> tuple[np.ndarray, None]:
        return self.rng.integers(0, 18, len(observations)), None


def play_one_episode(venv: Any) -> tuple[dict[str, Any], float]:
    """Random actions until sub-env 0 ends: its last info and the rewards the agent got."""
    venv.reset()
    rng, agent_sum = np.random.default_rng(0), 0.0
    while True:
        _, rewards, dones, infos = venv.step(rng.integers(0, 18, venv.num_envs))
        agent_sum += float(rewards[0])
        if dones[0]:
            return infos[0], agent_sum


def test_the_documented_change_runs() -> None:
    code = documented_change("-from stable_baselines3.common.env_util import make_atari_env")
    assert code.count("total_timesteps=25_000") == 1
    code = code.replace("total_timesteps=25_000", "total_timesteps=400")  # a short look
    namespace: dict[str, Any] = {}
    exec(compile(code, "docs/rl-libraries.md, the SB3 diff", "exec"), namespace)
    model, venv = namespace["model"], namespace["vec_env"]
    assert model.num_timesteps == 400 and model.n_envs == 4
    assert isinstance(venv.envs[0], ClipRewardKeepRaw)  # above Monitor
    venv.close()


def test_monitor_sums_raw_scores_while_the_agent_gets_clipped_rewards() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning: Monitor sees the raw rewards
        venv = make_sb3_vec_env(GAME, n_envs=1, seed=3, env_kwargs=CLIPPED)
    info, agent_sum = play_one_episode(venv)
    venv.close()
    assert info["episode"]["r"] == info["saber"]["score"] > agent_sum > 0
    assert "raw_reward" in info
    # The issue's case: SB3's make_vec_env puts Monitor above the clipping.
    theirs = env_util.make_vec_env(GAME, n_envs=1, seed=3, env_kwargs=CLIPPED)
    with pytest.warns(UserWarning, match=r"^SB3's Monitor over [^\n]*clipped"):
        check_sb3_env(theirs)  # and SaberMetricsCallback, at the start of training
    info, agent_sum = play_one_episode(theirs)
    theirs.close()
    assert info["episode"]["r"] == agent_sum < info["saber"]["score"]


def test_evaluate_policy_reports_raw_scores() -> None:
    venv = make_sb3_vec_env(GAME, n_envs=2, seed=5, env_kwargs=CLIPPED)
    scores: list[float] = []

    def keep_scores(local: dict[str, Any], _: dict[str, Any]) -> None:
        if local["done"]:
            scores.append(local["info"]["saber"]["score"])

    rewards, _ = evaluate_policy(
        RandomPolicy(0), venv, n_eval_episodes=4, return_episode_rewards=True, callback=keep_scores
    )
    venv.close()
    assert sorted(rewards) == sorted(scores) and min(scores) > 10  # clipped sums stay near 10


def test_ep_rew_mean_holds_the_scores_of_saber_s_training_log(tmp_path: Path) -> None:
    venv = make_sb3_vec_env(GAME, n_envs=2, seed=0, env_kwargs=CLIPPED)
    model = PPO("CnnPolicy", venv, n_steps=128, batch_size=128, n_epochs=1, seed=0, device="cpu")
    torch.set_num_threads(1)
    callback = SaberMetricsCallback(tmp_path / "training.jsonl")
    model.learn(total_timesteps=1_024, callback=callback)
    callback.close()
    venv.close()
    logged = [json.loads(line)["score"] for line in (tmp_path / "training.jsonl").open()]
    # ep_rew_mean is the mean of ep_info_buffer: Monitor's raw episode sums, in end order.
    assert [info["r"] for info in model.ep_info_buffer] == logged and len(logged) == 2


def test_the_rewards_probe_passes_on_its_envs_and_fails_on_sb3_s() -> None:
    from saber.check import Status
    from saber.check.probes.rewards import probe_rewards
    from saber.check.subject import subject_of

    ours = make_sb3_vec_env("SABER/Pong", env_kwargs={"clip_rewards": True})
    [raw, _] = probe_rewards(subject_of(ours.envs[0]))
    assert raw.status is Status.PASS, raw
    theirs = env_util.make_vec_env("SABER/Pong", env_kwargs={"clip_rewards": True})
    [raw, _] = probe_rewards(subject_of(theirs.envs[0]))
    assert raw.status is Status.FAIL and 'info["episode"]["r"]' in raw.measured, raw


def test_user_wrapper_goes_above_the_clipping() -> None:
    seen: list[float] = []

    class RewardSpy(gym.Wrapper):
        def step(self, action: Any) -> Any:
            result = self.env.step(action)
            seen.append(float(result[1]))
            return result

    venv = make_sb3_vec_env(GAME, seed=1, env_kwargs=CLIPPED, wrapper_class=RewardSpy)
    play_one_episode(venv)
    venv.close()
    assert set(seen) <= {0.0, 1.0} and 1.0 in seen


@pytest.mark.parametrize("wrapper", ["AtariWrapper", "EpisodicLifeEnv"])
def test_atari_wrappers_are_refused_in_one_line(wrapper: str) -> None:
    wrapper_class = {"AtariWrapper": AtariWrapper, "EpisodicLifeEnv": EpisodicLifeEnv}[wrapper]
    with pytest.raises(SaberError, match=f"^SB3's {wrapper} over a SABER env [^\n]*$"):
        make_sb3_vec_env("SABER/Pong", wrapper_class=wrapper_class)


def test_vec_frame_stack_is_refused_in_one_line() -> None:
    venv = VecFrameStack(make_sb3_vec_env("SABER/Pong"), n_stack=4)
    with pytest.raises(SaberError, match=r"^VecFrameStack [^\n]*\(16, 84, 84\): remove it"):
        check_sb3_env(venv)
    model = PPO("CnnPolicy", venv, n_steps=8, batch_size=8, device="cpu")
    with pytest.raises(SaberError, match=r"^VecFrameStack"):  # at the start of training
        model.learn(total_timesteps=8, callback=SaberMetricsCallback())
    venv.close()


def test_saber_vec_env_gives_monitor_s_raw_episode_and_frame_numbers() -> None:
    envs = gym.make_vec(GAME, num_envs=2, autoreset_mode=AutoresetMode.DISABLED, **CLIPPED)
    venv = SaberVecEnv(envs)
    assert venv.env_is_wrapped(Monitor) == [True, True]  # it writes Monitor's info
    assert venv.env_is_wrapped(AtariWrapper) == [False, False]
    info, agent_sum = play_one_episode(venv)
    assert info["episode"]["r"] == info["saber"]["score"] > agent_sum > 0
    assert {"episode_frame_number", "raw_reward", "terminal_observation"} <= set(info)
    rewards, _ = evaluate_policy(RandomPolicy(1), venv, n_eval_episodes=2, warn=True)
    venv.close()
    assert rewards > 10  # raw: evaluate_policy read info["episode"] (no Monitor warning)


def test_other_envs_pass_through_without_a_word() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        venv = make_sb3_vec_env("CartPole-v1", n_envs=2, seed=0)
    assert venv.reset().shape == (2, 4)
    venv.close()
