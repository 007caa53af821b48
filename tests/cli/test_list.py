"""`saber list`: the games, the named sets and the built-in agents, as text and JSON."""

from __future__ import annotations

import json

from click.testing import CliRunner

from saber.cli import main


def test_list_prints_games_sets_and_agents_and_json() -> None:
    result = CliRunner().invoke(main, ["list"])
    assert result.exit_code == 0
    assert "ms_pacman" in result.output and "SABER/MsPacman" in result.output
    assert "290,090.0" in result.output  # Ms. Pac-Man's world record
    assert "atari5   battle_zone, double_dunk, name_this_game, phoenix, qbert" in result.output
    assert "epsilon-constant:K[:EPS]" in result.output
    listing = json.loads(CliRunner().invoke(main, ["list", "--json"]).output)
    assert len(listing["game_sets"]["all"]) == 61 and len(listing["game_sets"]["atari57"]) == 57
    pacman = next(g for g in listing["games"] if g["ale_id"] == "ms_pacman")
    assert pacman["world_record"] == 290090.0 and pacman["random"] is not None
    assert "random" in listing["agents"]
