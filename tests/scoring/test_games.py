"""saber.games: every single-player ROM of ale-py is a game; only the SABER table has scores."""

from __future__ import annotations

import gymnasium as gym
import pytest

from saber.envs.factory import resolve_rom_id
from saber.errors import UnknownGameError
from saber.games import get_game, resolve_games, supported_rom_ids


def test_every_registered_rom_is_a_game_in_any_spelling():
    roms = supported_rom_ids()
    assert len(roms) == 104
    for rom_id in roms:
        game = get_game(rom_id)
        assert game.ale_id == rom_id == resolve_rom_id(game.env_id)
        assert get_game(game.env_id) is game and get_game(game.env_name.lower()) is game
    outside = [rom_id for rom_id in roms if not get_game(rom_id).in_saber]
    assert len(outside) == 43 and "surround" in outside and "basic_math" in outside


def test_roms_outside_the_tables_have_no_reference_score():
    game = get_game("SABER/BasicMath")
    assert (game.ale_id, game.env_name, game.in_saber, game.in_atari57) == (
        "basic_math",
        "BasicMath",
        False,
        False,
    )
    assert game.random is game.human is game.world_record is game.atari57_human is None


def test_pacman_is_the_pac_man_rom_not_ms_pac_man():
    assert get_game("pacman").ale_id == get_game("SABER/Pacman").ale_id == "pacman"
    assert resolve_rom_id("Pacman") == "pacman"
    env = gym.make("SABER/Pacman")
    try:
        assert env.unwrapped.rom_id == "pacman"
    finally:
        env.close()


def test_named_selections_are_unchanged():
    assert len(resolve_games("all")) == 61 and all(g.in_saber for g in resolve_games("all"))
    assert len(resolve_games("atari57")) == 57
    assert len(resolve_games("atari5")) == 5 and len(resolve_games("atari10")) == 10
    assert [g.ale_id for g in resolve_games("pong, Basic Math,SABER/Tetris,pong")] == [
        "pong",
        "basic_math",
        "tetris",
    ]


def test_unknown_games_name_the_closest_roms():
    with pytest.raises(
        UnknownGameError, match=r"Unknown game 'basic_mat'\. Did you mean: basic_math"
    ):
        resolve_games("pong,basic_mat")
    with pytest.raises(UnknownGameError, match=r"Unknown game 'pongg'\. Did you mean: pong"):
        get_game("pongg")
