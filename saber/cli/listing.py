"""``saber list``: the games, game sets and built-in agents."""

from __future__ import annotations

from typing import Any

import click


@click.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
def list_command(as_json: bool) -> None:
    """List the games (ale-py names, world record, random score), game sets and agents."""
    import json

    from saber.games import all_games, atari57_games, saber_games, subset_games
    from saber.harness.policies import BUILTIN_AGENTS

    games = all_games()
    sets = {
        "all": [game.ale_id for game in saber_games()],
        "atari57": [game.ale_id for game in atari57_games()],
        "atari5": [game.ale_id for game in subset_games("atari5")],
        "atari10": [game.ale_id for game in subset_games("atari10")],
    }
    if as_json:
        listing = {
            "games": [
                {
                    "ale_id": game.ale_id,
                    "env_id": game.env_id,
                    "in_saber": game.in_saber,
                    "world_record": game.world_record,
                    "random": game.random,
                    "human": game.human,
                }
                for game in games
            ],
            "game_sets": sets,
            "agents": BUILTIN_AGENTS,
        }
        click.echo(json.dumps(listing, indent=2))
        return
    _print_tables(games, sets, BUILTIN_AGENTS)


def _print_tables(games: list[Any], sets: dict[str, list[str]], agents: dict[str, str]) -> None:
    """The listing as text tables: games, game sets, agents."""

    def number(value: float | None) -> str:
        return "n/a" if value is None else f"{value:,.1f}"

    click.echo(
        "Games (--games; any other single-player ROM of ale-py works too, without a baseline):"
    )
    click.echo(f"  {'ale-py name':<22} {'env id':<26} {'world record':>14} {'random':>10}")
    for game in games:
        note = "" if game.in_saber else "  (not a SABER game)"
        click.echo(
            f"  {game.ale_id:<22} {game.env_id:<26} {number(game.world_record):>14} "
            f"{number(game.random):>10}{note}"
        )
    click.echo("\nGame sets (--games):")
    for name, members in sets.items():
        shown = ", ".join(members) if len(members) <= 10 else f"{len(members)} games"
        click.echo(f"  {name:<8} {shown}")
    click.echo("\nAgents (--agent):")
    for spec, description in agents.items():
        click.echo(f"  {spec:<26} {description}")
