"""The ``saber`` command line: a thin layer over library calls.

Every command turns :class:`~saber.errors.SaberError` into a one-line message on stderr
and exit status 1, without a traceback.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from saber.errors import SaberError

F = TypeVar("F", bound=Callable[..., Any])


@click.group()
@click.version_option(package_name="saber-ale")
def main() -> None:
    """The SABER Atari benchmark: evaluate agents and report world-record-normalized scores."""


def _saber_errors_as_messages(command: F) -> F:
    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except SaberError as error:
            raise click.ClickException(str(error)) from error

    return wrapper  # type: ignore[return-value]


def _write(path: Path, text: str) -> Path:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise click.ClickException(f"Cannot write {path}: {error.strerror}") from error
    return path


@main.command()
@click.argument("scores", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--json",
    "json_out",
    required=True,
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Write the full report as JSON here.",
)
@click.option(
    "--markdown",
    "markdown_out",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Also write the summary and per-game tables as Markdown.",
)
@click.option(
    "--csv",
    "csv_out",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Also write the per-game normalized scores as CSV.",
)
@click.option(
    "--plots",
    "plots_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help='Also write PNG figures into this directory (needs pip install "saber-ale[plots]").',
)
@click.option("--seed", default=0, show_default=True, help="Seed of the bootstrap intervals.")
@click.option(
    "--resamples", default=2000, show_default=True, help="Bootstrap resamples per interval."
)
@_saber_errors_as_messages
def report(
    scores: tuple[Path, ...],
    json_out: Path,
    markdown_out: Path | None,
    csv_out: Path | None,
    plots_dir: Path | None,
    seed: int,
    resamples: int,
) -> None:
    """Report SABER scores of one or more agents.

    SCORES: CSV files with a header and at least the columns game,score (optional: agent,
    episode, time_limit as 5min/30min/saber, infinite; a score of inf marks infinite
    gameplay), or harness run directories / their episodes.jsonl. Several are merged.
    """
    from saber.reports import build_report, to_csv, to_json, to_markdown
    from saber.scoring import read_scores

    if resamples < 1:
        raise click.BadParameter(
            f"Expect a positive number, actually: {resamples}", param_hint="--resamples"
        )
    table = read_scores(*scores)
    for warning in table.warnings:
        click.echo(f"warning: {warning}", err=True)
    result = build_report(table, seed=seed, n_resamples=resamples)
    outputs = {json_out: to_json, markdown_out: to_markdown, csv_out: to_csv}
    written = [_write(path, render(result)) for path, render in outputs.items() if path]
    if plots_dir is not None:
        from saber.reports.plots import save_plots

        written += save_plots(result, plots_dir)
    for path in written:
        click.echo(f"wrote {path}")
