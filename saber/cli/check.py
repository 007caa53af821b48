"""``saber check``: is an env SABER? Its behaviour probed rule by rule."""

from __future__ import annotations

import click

from saber.cli.errors import saber_errors_as_messages
from saber.cli.user_code import working_directory_first


@click.command("check")
@click.argument("target")
@click.option(
    "--game", default=None, help="Game passed to a module:factory target (factory(game))."
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the result as JSON instead of a table."
)
@click.option(
    "--quick",
    is_flag=True,
    help="Only the cheap probes (what saber eval runs before a run); the rules left out "
    "are listed as not probed, and the exit status is 4 (no verdict) at best.",
)
@saber_errors_as_messages
def check_command(target: str, game: str | None, as_json: bool, quick: bool) -> None:
    """Is TARGET SABER? Probe its behaviour rule by rule.

    TARGET is a registered env id (SABER/Pong, ALE/Pong-v5, BreakoutNoFrameskip-v4) or
    module:factory, a callable returning a Gymnasium env or vector env (with --game, it is
    called with the game). Exit status: 0 when every rule passes, 1 when any fails, 4 when
    none fails but some could not be measured or were not probed (--quick): unknown and
    not probed are never a pass; 3 for a target that cannot be loaded (docs/exit-codes.md).
    """
    import json
    import sys

    from saber.check.api import check_target
    from saber.check.table import format_table

    working_directory_first()  # module:factory from the working directory
    result = check_target(target, game, quick=quick)
    click.echo(json.dumps(result.to_dict(), indent=2) if as_json else format_table(result))
    sys.exit(result.exit_code)
