"""The ``saber`` command line: a thin layer over library calls.

Every command turns :class:`~saber.errors.SaberError` into a one-line message on stderr
and exit status 1, without a traceback (:mod:`saber.cli.errors`). One module a command;
the options they share are in :mod:`saber.cli.options`. ``main`` is the console script
(pyproject's ``[project.scripts]``); ``python -m saber.cli`` runs it too.
"""

from __future__ import annotations

import click

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

__all__ = ["main"]


@click.group()
@click.version_option(package_name="saber-ale")
def main() -> None:
    """The SABER Atari benchmark: evaluate agents and report world-record-normalized scores."""


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
