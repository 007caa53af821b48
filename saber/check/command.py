"""The ``saber check TARGET`` command: a thin call into :func:`saber.check.check_target`.

Importing this module imports only click: the probe loads when the command runs.
"""

from __future__ import annotations

import click

__all__ = ["check_command"]


@click.command("check")
@click.argument("target")
@click.option(
    "--game", default=None, help="Game passed to a module:factory target (factory(game))."
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the result as JSON instead of a table."
)
@click.option(
    "--quick", is_flag=True, help="Only the cheap probes (what saber eval runs before a run)."
)
def check_command(target: str, game: str | None, as_json: bool, quick: bool) -> None:
    """Is TARGET SABER? Probe its behaviour rule by rule.

    TARGET is a registered env id (SABER/Pong, ALE/Pong-v5, BreakoutNoFrameskip-v4) or
    module:factory, a callable returning a Gymnasium env or vector env (with --game, it is
    called with the game). Exit status: 0 when every rule passes, 1 when any fails, 2 when
    none fails but some could not be measured (unknown is never a pass).
    """
    import json
    import os
    import sys

    from saber.check.api import check_target
    from saber.check.table import format_table
    from saber.errors import SaberError

    if os.getcwd() not in sys.path:  # module:factory from the working directory
        sys.path.insert(0, os.getcwd())
    try:
        result = check_target(target, game, quick=quick)
    except SaberError as error:
        raise click.ClickException(str(error)) from error
    click.echo(json.dumps(result.to_dict(), indent=2) if as_json else format_table(result))
    sys.exit(result.exit_code)
