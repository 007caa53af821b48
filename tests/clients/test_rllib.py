"""Ray RLlib (new API stack) on SABER envs: PPO in an EnvRunner worker, then saber.evaluate.

What an RLlib user does: an env creator registered with ``tune.register_env`` that makes
``"saber:SABER/<Game>"`` (the ``saber:`` prefix imports saber in each EnvRunner process,
which is what registers the ids there), a few PPO iterations, then ``saber.evaluate`` of
the trained RLModule. RLlib's default CNN encoder reads images channels-last and as
floats, so the creator transposes SABER's uint8 (4, 84, 84) stack to float (84, 84, 4)
in [0, 1]: the same pixels, no second preprocessing (not ``wrap_atari_for_new_api_stack``,
whose frame stack and resize SABER already did).

Marked ``rllib``: needs ``pip install torch==<cpu wheel> ".[test,rllib]"``; run with
``-m rllib``. Slow to start (Ray, one EnvRunner process): about a minute on 2 cores.
"""

from __future__ import annotations

import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from tests.clients.helpers import EVAL_FRAMES, evaluate_briefly

try:
    import ray
    import torch
    from ray import cloudpickle, tune
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.columns import Columns
except ImportError:  # deselected by default (-m 'not rllib'); selected, the fixture fails
    pass

pytestmark = [pytest.mark.rllib, pytest.mark.usefixtures("rllib_installed")]


class ChannelsLast(gym.ObservationWrapper):
    """SABER's uint8 (4, 84, 84) as float32 (84, 84, 4) in [0, 1], for RLlib's CNN encoder."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.observation_space = gym.spaces.Box(0.0, 1.0, (84, 84, 4), np.float32)

    def observation(self, observation: np.ndarray) -> np.ndarray:
        return to_rllib(observation)


def to_rllib(observations: np.ndarray) -> np.ndarray:
    """(..., 4, 84, 84) uint8 -> (..., 84, 84, 4) float32 in [0, 1]."""
    return np.moveaxis(observations, -3, -1).astype(np.float32) / 255.0


def make_saber_env(config: dict) -> gym.Env:
    """RLlib's env creator; it runs in every EnvRunner process."""
    return ChannelsLast(gym.make(f"saber:SABER/{config['game']}", clip_rewards=True))


class ModulePolicy:
    """A saber policy from RLlib's trained RLModule: the most likely action (greedy)."""

    def __init__(self, module: object) -> None:
        self.module = module

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            batch = {Columns.OBS: torch.from_numpy(to_rllib(observations))}
            logits = self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
        return logits.argmax(-1).numpy()


@pytest.fixture(scope="module")
def ray_cluster():
    # A script's creator lives in __main__ and is pickled by value to the workers; this test
    # module is imported from the checkout, which Ray workers cannot import: same effect.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def test_ppo_trains_in_a_worker_then_saber_evaluates(ray_cluster: None, tmp_path: Path) -> None:
    tune.register_env("saber", make_saber_env)
    config = (
        PPOConfig()
        .environment("saber", env_config={"game": "Pong"})
        .env_runners(num_env_runners=1, num_envs_per_env_runner=1, rollout_fragment_length=128)
        .training(train_batch_size_per_learner=128, minibatch_size=64, num_epochs=1)
        .learners(num_learners=0)
        .framework("torch")
        .debugging(seed=0)
    )
    algo = config.build_algo()
    try:
        for iteration in range(1, 3):
            result = algo.train()
            # Sampled in the EnvRunner process, which made SABER/Pong via the saber: prefix.
            assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 128 * iteration
        module = algo.get_module()
    finally:
        algo.stop()
    assert module.observation_space.shape == (84, 84, 4)
    assert module.action_space.n == 18

    result = evaluate_briefly(ModulePolicy(module), "pong", tmp_path / "eval", "rllib-ppo")
    for record in result.records:
        assert (record["agent"], record["frames"], record["end"]) == (
            "rllib-ppo",
            EVAL_FRAMES,
            "time_cap",
        )
        assert -21 <= record["score"] <= 21
