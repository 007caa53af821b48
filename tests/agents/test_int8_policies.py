"""What storing a shipped policy in int8 changes: how far its action distribution moves.

A shipped agent samples its actions, so the measure is the total variation distance between
the action distributions of its file and of the same network written with
``write_policy_file(dtype=np.int8)``, on the observations of its own play: the chance, per
step, that the two would draw different actions from the same random number.

Measure (writes the table of docs/trained-agent.md, "The policy file"; about a minute)::

    python tests/agents/test_int8_policies.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import gymnasium as gym
import numpy as np

from saber.agents import read_policy_file
from saber.agents.convnet import ConvActor, _quantized, write_policy_file
from saber.agents.pretrained import PRETRAINED
from saber.games import get_game

SEED = 20_261_202  # not a training seed (those are 10_000 * seed + 100 * resumes + row)
# Measured (python tests/agents/test_int8_policies.py): a mean distance of 3e-4 for this
# agent with int8 dense weights, 2e-3 with every weight in int8, which the test refuses.
AGENT, STEPS, MEAN_LIMIT = "ppo-breakout-seed3", 400, 1e-3


def probabilities(actor: ConvActor, observations: np.ndarray) -> np.ndarray:
    logits = actor.logits(observations).astype(np.float64)
    exp = np.exp(logits - logits.max(axis=1, keepdims=True))
    return exp / exp.sum(axis=1, keepdims=True)


def own_play(actor: ConvActor, game: str, steps: int) -> np.ndarray:
    """The observations of ``steps`` steps of its own play on ``game`` (an ale id): uint8,
    (steps, 4, 84, 84)."""
    rng = np.random.default_rng(SEED)
    env = gym.make(get_game(game).env_id)
    observation, _ = env.reset(seed=SEED)
    seen = []
    for step in range(steps):
        seen.append(observation)
        action = rng.choice(18, p=probabilities(actor, observation[None])[0])
        observation, _, terminated, truncated, _ = env.step(int(action))
        if terminated or truncated:
            observation, _ = env.reset(seed=SEED + step)
    env.close()
    return np.stack(seen)


def every_weight_int8(layers: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every weight through the int8 file's rounding (the convolutions too), for comparison."""
    quantized = dict(layers)
    for name, weight in layers.items():
        if name.endswith(".weight"):
            rows, scale = _quantized(weight)  # rows in the weight's shape, a scale a row
            quantized[name] = rows * scale.reshape(-1, *[1] * (weight.ndim - 1))
    return quantized


def distances(name: str, steps: int) -> dict[str, tuple[float, float]]:
    """The mean and largest per-step distance of int8 dense weights, and of every weight."""
    agent = PRETRAINED[name]
    shipped = read_policy_file(agent.path)
    observations = own_play(shipped, agent.game, steps)
    with tempfile.TemporaryDirectory() as folder:
        path = write_policy_file(Path(folder) / "int8.npz", shipped.layers, {}, np.int8)
        int8 = read_policy_file(path)
    reference = probabilities(shipped, observations)
    results = {}
    for label, actor in (
        ("int8 dense weights", int8),
        ("every weight int8", ConvActor(every_weight_int8(shipped.layers), {})),
    ):
        distance = 0.5 * np.abs(probabilities(actor, observations) - reference).sum(axis=1)
        results[label] = (float(distance.mean()), float(distance.max()))
    return results


def test_int8_moves_a_shipped_policy_little() -> None:
    mean, _ = distances(AGENT, STEPS)["int8 dense weights"]
    assert mean < MEAN_LIMIT


def main() -> int:
    names = ["ppo-breakout-seed3", "ppo-qbert-seed2", "ppo-phoenix-seed2", "ppo-battle-zone-seed2"]
    print("| agent | int8 dense weights: mean, largest | every weight int8: mean, largest |")
    print("|---|---:|---:|")
    for name in names:
        cells = [f"{mean:.1e}, {largest:.1e}" for mean, largest in distances(name, 1500).values()]
        print(f"| {name} | {' | '.join(cells)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
