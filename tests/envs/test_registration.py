"""Every registered SABER id builds, exposes all 18 actions, and the emulator takes each one."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.spaces import Box, Discrete

from saber.envs import make_env
from saber.errors import UnknownGameError
from saber.games import saber_games, supported_rom_ids
from saber.registration import env_id

SABER_IDS = [game.env_id for game in saber_games()]
ALL_IDS = [env_id(rom_id) for rom_id in supported_rom_ids()]


def test_the_61_saber_games_are_registered_under_ale_py_names() -> None:
    assert len(SABER_IDS) == 61
    assert {"SABER/Pong", "SABER/MsPacman", "SABER/MontezumaRevenge", "SABER/Skiing"} <= set(
        SABER_IDS
    )
    assert set(SABER_IDS) <= set(gym.registry)


@pytest.mark.parametrize("env_name", ALL_IDS, ids=ALL_IDS)
def test_every_registered_game_has_18_actions_that_all_reach_the_emulator(env_name: str) -> None:
    env = gym.make(env_name)
    assert env.action_space == Discrete(18)
    assert env.observation_space == Box(0, 255, (4, 84, 84), dtype=np.uint8)
    obs, info = env.reset(seed=0)
    assert obs.shape == (4, 84, 84) and obs.dtype == np.uint8
    assert info["episode_frame_number"] == 0
    for action in range(18):
        obs, _reward, terminated, truncated, info = env.step(action)
        assert env.observation_space.contains(obs)
        if terminated or truncated:
            env.reset()
    env.close()


def test_unknown_game_names_the_closest_games() -> None:
    with pytest.raises(UnknownGameError, match=r"Unknown game 'pongg'\. Did you mean: pong"):
        make_env("pongg")
    with pytest.raises(gym.error.NameNotFound, match="Pong"):
        gym.make("SABER/Pongg")


def test_any_spelling_of_a_game_makes_the_same_env() -> None:
    for spelling in ("ms_pacman", "MsPacman", "ms pacman", "SABER/MsPacman", "ALE/MsPacman-v5"):
        assert make_env(spelling).unwrapped.rom_id == "ms_pacman"
