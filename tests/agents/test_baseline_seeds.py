"""The saber-ppo baselines were evaluated on episodes they never trained on.

``examples/ppo_saber.py`` seeds every training episode (``seed_each_episode``): sub-env
``i`` starts from seed ``10,000 * seed + i``, and each later episode's seed is the second
draw of the stream of the seed before it (the first is the episode's ALE seed), so the
seeds of every training episode follow from the shipped training log alone (its ``env``
column counts each sub-env's episodes). ``saber eval`` seeds its episodes from its base
seed (``saber.protocol.seeds.episode_seed``). An evaluation episode whose seed a training
episode had would start the same game the agent already played in training.
"""

from __future__ import annotations

import csv
import gzip
import json
from collections import Counter
from importlib import resources

import gymnasium
import numpy as np
import pytest

from saber.agents.pretrained import PRETRAINED, agent_provenance
from saber.envs.emulator import SeedStream

SABER_PPO = sorted(
    name for name in PRETRAINED if agent_provenance(name).get("reference") == "saber-ppo"
)


def next_episode_seed(seed: int) -> int:
    """The seed of the episode a sub-env starts after the one it started from ``seed``."""
    stream = SeedStream(seed)
    stream.next_ale_seed()  # the episode's own ALE seed
    return stream.next_ale_seed()


def training_seeds(name: str) -> set[int]:
    """The seed of every episode a shipped saber-ppo agent was trained on, the episodes in
    progress when the training ended included."""
    provenance = agent_provenance(name)
    args = provenance["training"]["args"]
    log = (resources.files("saber.agents") / "data" / provenance["training_log"]).read_bytes()
    finished = Counter(json.loads(line)["env"] for line in gzip.decompress(log).splitlines())
    seeds = set()
    for env in range(int(args["num_envs"])):
        seed = 10_000 * int(args["seed"]) + env
        seeds.add(seed)
        for _ in range(finished[env]):
            seed = next_episode_seed(seed)
            seeds.add(seed)
    return seeds


def evaluation_seeds() -> dict[str, set[int]]:
    """``{game: seeds}`` of the shipped saber-ppo evaluation episodes."""
    games: dict[str, set[int]] = {}
    path = resources.files("saber") / "data" / "saber_ppo_episodes.csv"
    for row in csv.DictReader(path.read_text(encoding="utf-8").splitlines()):
        games.setdefault(row["game"], set()).add(int(row["seed"]))
    return games


def test_the_vector_env_seeds_each_episode_by_the_rule() -> None:
    # The training's own env: two sub-envs whose episodes end at 400 frames (100 steps),
    # three episodes each.
    envs = gymnasium.make_vec("SABER/Pong", 2, max_episode_frames=400)
    envs.unwrapped.seed_each_episode = True
    envs.reset(seed=20_000)
    expected = [20_000, 20_001]
    assert list(envs.unwrapped.episode_seeds) == expected
    for _ in range(2):
        for _ in range(101):  # 100 steps to the truncation, then the autoreset step
            envs.step(np.zeros(2, dtype=np.int64))
        expected = [next_episode_seed(seed) for seed in expected]
        assert list(envs.unwrapped.episode_seeds) == expected
    envs.close()


def test_the_training_seeds_of_a_run_are_distinct() -> None:
    # Every episode's seed differs from every other's, and a run's episodes number what
    # its provenance says (its log is whole).
    for name in SABER_PPO:
        episodes = agent_provenance(name)["training"]["episodes"]
        num_envs = int(agent_provenance(name)["training"]["args"]["num_envs"])
        assert len(training_seeds(name)) == episodes + num_envs, name


@pytest.mark.parametrize("name", SABER_PPO)
def test_no_evaluation_episode_was_seeded_as_a_training_episode(name: str) -> None:
    game = PRETRAINED[name].game
    evaluated = evaluation_seeds()[game]
    assert len(evaluated) == 100, "a SABER evaluation: 100 episodes of distinct seeds"
    trained_on = set().union(*(training_seeds(n) for n in SABER_PPO if PRETRAINED[n].game == game))
    assert not evaluated & trained_on
