"""``saber repair``: make a damaged run directory whole again."""

from __future__ import annotations

from pathlib import Path

import click

from saber.cli.errors import saber_errors_as_messages


@click.command("repair")
@click.argument(
    "run_dir", metavar="RUN", type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@saber_errors_as_messages
def repair_command(run_dir: Path) -> None:
    """Make a damaged run directory (saber eval --out RUN) whole again.

    Keeps every intact record of RUN/episodes.jsonl and drops the damaged lines (a cut,
    a torn line, NUL bytes, lines that are not JSON, records written after the run ended);
    rebuilds a run.json cut short from its whole part. Each damaged original is kept as
    <name>.damaged-<UTC time>. The run's report.json and report.md, made from the records
    it drops, are removed (it prints the saber report command that makes them again), and
    so are the temporary files a repair killed mid-write left. Prints one line per kind
    of damage it dropped, with counts. A record that run.json no longer attests (a cut,
    or an edit that shortened the file, broke its checkpoint) is kept only when its replay,
    played again, reproduces it, and dropped with the reason otherwise.
    Running the run's saber eval command again then plays the dropped episodes. Exit
    status 0 when RUN is whole afterwards (or was already).
    """
    import sys

    from saber.replay.verify import why_unproven
    from saber.rundir.repair import repair_run

    for line in repair_run(run_dir, command=sys.argv, prove=why_unproven).lines():
        click.echo(line)
