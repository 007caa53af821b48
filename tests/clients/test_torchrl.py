"""TorchRL on SABER envs: GymEnv, serial and parallel envs, a collector, DQN, then saber.evaluate.

Real ROMs, real training (a few thousand agent steps, tiny network). Marked ``torchrl``:
needs ``pip install torch==<cpu wheel> ".[test,torchrl]"``; run with ``-m torchrl``.
TorchRL counts agent steps as "frames": one step is 4 emulator frames.
"""

from __future__ import annotations

import functools
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import saber  # noqa: F401  (registers SABER/*)
from tests.clients.helpers import EVAL_FRAMES, evaluate_briefly

try:
    import torch
    from tensordict.nn import TensorDictModule, TensorDictSequential
    from torch import nn
    from torchrl.collectors import Collector
    from torchrl.data import LazyTensorStorage, ReplayBuffer
    from torchrl.envs import GymEnv, ParallelEnv, SerialEnv
    from torchrl.modules import EGreedyModule, QValueActor
    from torchrl.objectives import DQNLoss, SoftUpdate
except ImportError:  # deselected by default (-m 'not torchrl'); selected, the fixture fails
    pass

pytestmark = [pytest.mark.torchrl, pytest.mark.usefixtures("torchrl_installed")]


@pytest.fixture(autouse=True)
def one_torch_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def q_network() -> torch.nn.Module:
    """A small convolutional Q-network on SABER's uint8 (..., 4, 84, 84) observations."""

    class QNetwork(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layers = nn.Sequential(
                nn.Conv2d(4, 16, 8, stride=4),
                nn.ReLU(),
                nn.Conv2d(16, 32, 4, stride=2),
                nn.ReLU(),
                nn.Flatten(),
                nn.Linear(32 * 9 * 9, 18),
            )

        def forward(self, observation: torch.Tensor) -> torch.Tensor:
            batch = observation.shape[:-3]
            x = observation.reshape(-1, 4, 84, 84).float() / 255.0  # SABER gives raw pixels
            return self.layers(x).reshape(*batch, 18)

    return QNetwork()


class GreedyPolicy:
    """A saber policy from the trained Q-network: argmax over the 18 actions."""

    def __init__(self, network: torch.nn.Module) -> None:
        self.network = network

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return self.network(torch.from_numpy(observations)).argmax(-1).numpy()


def test_gym_env_sees_saber_as_it_is() -> None:
    env = GymEnv("SABER/Pong")  # TorchRL passes frameskip=1; saber refuses it as a TypeError
    spec = env.observation_spec["observation"]
    assert spec.shape == (4, 84, 84) and spec.dtype == torch.uint8
    assert env.action_spec.shape == (18,)  # one-hot over the 18 actions
    assert (env.frame_skip, env.wrapper_frame_skip) == (1, 1)  # no second action repeat
    env.set_seed(7)
    rollout = env.rollout(20, break_when_any_done=False)
    env.close()
    assert rollout["next", "observation"].shape == (20, 4, 84, 84)
    # The same frames as gymnasium.make for the same seed and actions. TorchRL's set_seed
    # resets with the seed; rollout() then resets again, without one.
    actions = rollout["action"].argmax(-1).tolist()
    reference = gym.make("SABER/Pong")
    reference.reset(seed=7)
    expected = [reference.reset()[0]] + [reference.step(a)[0] for a in actions]
    np.testing.assert_array_equal(rollout["observation"][0].numpy(), expected[0])
    np.testing.assert_array_equal(rollout["next", "observation"].numpy(), np.stack(expected[1:]))


def test_serial_and_parallel_envs_play_the_same_frames() -> None:
    make = functools.partial(GymEnv, "saber:SABER/Pong")  # workers import saber themselves
    actions = torch.nn.functional.one_hot(torch.randint(0, 18, (2,)), 18)
    observations = []
    for cls in (SerialEnv, ParallelEnv):
        env = cls(2, make)
        env.set_seed(3)
        td = env.reset()
        for _ in range(10):
            td["action"] = actions
            td = env.step(td)["next"]
        observations.append(td["observation"].clone())
        env.close()
    assert observations[0].shape == (2, 4, 84, 84)
    torch.testing.assert_close(observations[0], observations[1])


def test_dqn_collects_trains_then_saber_evaluates(tmp_path: Path) -> None:
    torch.manual_seed(0)
    env = SerialEnv(2, functools.partial(GymEnv, "saber:SABER/Breakout", clip_rewards=True))
    env.set_seed(0)
    network = q_network()
    actor = QValueActor(network, in_keys=["observation"], spec=env.action_spec)
    explore = EGreedyModule(env.action_spec, eps_init=1.0, eps_end=0.1, annealing_num_steps=2_000)
    policy = TensorDictSequential(actor, explore)
    assert isinstance(actor, TensorDictModule)
    loss = DQNLoss(actor, action_space=env.action_spec, delay_value=True)
    loss.make_value_estimator(gamma=0.99)
    target = SoftUpdate(loss, eps=0.99)
    optimizer = torch.optim.Adam(loss.parameters(), lr=1e-4)
    buffer = ReplayBuffer(storage=LazyTensorStorage(4_096), batch_size=32)
    collector = Collector(env, policy, frames_per_batch=256, total_frames=2_048)
    collected, updates = 0, 0
    for batch in collector:
        collected += batch.numel()
        buffer.extend(batch.reshape(-1))
        explore.step(batch.numel())
        for _ in range(4):
            values = loss(buffer.sample())
            optimizer.zero_grad()
            values["loss"].backward()
            optimizer.step()
            target.step()
            updates += 1
    collector.shutdown()
    assert (collected, updates) == (2_048, 32)
    # Rewards the agent saw are clipped; episodes ended at game over (no life-loss ends).
    assert buffer[:]["next", "reward"].abs().max() <= 1

    result = evaluate_briefly(GreedyPolicy(network), "breakout", tmp_path / "eval", "torchrl-dqn")
    for record in result.records:
        assert record["agent"] == "torchrl-dqn" and record["frames"] <= EVAL_FRAMES
        assert record["end"] in {"game_over", "time_cap", "stuck_timeout"}


def test_torchrl_image_transforms_that_break_saber() -> None:
    # ToTensorImage expects (H, W, C) and moves the last axis first: SABER's (4, 84, 84)
    # becomes (84, 4, 84). CatFrames stacks stacks: 16 frames.
    from torchrl.envs import CatFrames, ToTensorImage, TransformedEnv

    env = TransformedEnv(GymEnv("SABER/Pong"), ToTensorImage(in_keys=["observation"]))
    assert env.reset()["observation"].shape == (84, 4, 84)
    env.close()
    env = TransformedEnv(
        GymEnv("SABER/Pong"), ToTensorImage(in_keys=["observation"], shape_tolerant=True)
    )
    observation = env.reset()["observation"]
    assert observation.shape == (4, 84, 84) and observation.dtype == torch.float32
    assert observation.max() <= 1.0  # scaled only: the one safe use
    env.close()
    env = TransformedEnv(GymEnv("SABER/Pong"), CatFrames(N=4, dim=-3, in_keys=["observation"]))
    assert env.reset()["observation"].shape == (16, 84, 84)
    env.close()
