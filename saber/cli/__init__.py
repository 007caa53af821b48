"""The ``saber`` command line: a thin layer over library calls, one module a command.

Every command fails in one line with an exit status of :class:`saber.errors.ExitCode`
(docs/exit-codes.md), stops cleanly on Ctrl-C and SIGTERM (:mod:`saber.stop_signals`) and
shows no ale-py banner; ``main`` is the console script, ``python -m saber.cli`` runs it too.
"""

from __future__ import annotations

from typing import Any

import click

from saber.cli.ale_banner import silence_ale_banner
from saber.cli.board import board_command
from saber.cli.check import check_command
from saber.cli.eval import eval_command
from saber.cli.export import export_command
from saber.cli.listing import list_command
from saber.cli.repair import repair_command
from saber.cli.replay import replay_command
from saber.cli.report import report
from saber.cli.training import training
from saber.cli.verify import verify_command
from saber.errors import ExitCode

__all__ = ["ExitCode", "main"]


class _Commands(click.Group):
    """The ``saber`` group: what happens around every command."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        from saber.cli.errors import COMMAND_LINE

        # The command line as given, for a command that says how to run it again
        # (saber eval's "To resume, run the same command: ...").
        ctx.meta[COMMAND_LINE] = ["saber", *args]
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        from saber.cli.errors import stop_said
        from saber.stop_signals import stop_signals_as_interrupts

        try:
            with stop_signals_as_interrupts(exiting=True):
                return super().invoke(ctx)
        except KeyboardInterrupt as stop:  # click's own handling would exit 1, a failing verdict's
            said, status = stop_said(stop)
            click.echo(f"\n{said}.", err=True)
            ctx.exit(status)


@click.group(cls=_Commands)
@click.version_option(package_name="saber-ale")
def main() -> None:
    """The SABER Atari benchmark: evaluate agents and report world-record-normalized scores.

    Exit status of every command: 0 done (a verdict that passes), 1 a verdict that fails,
    2 a command line that cannot be used, 3 refused input, 4 no verdict reached or a run
    stopped before its end, 130 Ctrl-C, 143 SIGTERM (docs/exit-codes.md).
    """
    silence_ale_banner()


for _command in (
    report,
    training,
    eval_command,
    verify_command,
    board_command,
    repair_command,
    replay_command,
    export_command,
    list_command,
    check_command,
):
    main.add_command(_command)
