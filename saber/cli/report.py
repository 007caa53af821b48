"""``saber report``: the SABER report of score files, run directories and references."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from saber.cli.errors import (
    refuse_overwrite,
    saber_errors_as_messages,
    write_whole,
    writing_results,
)
from saber.cli.options import (
    force_option,
    moved_to_training,
    output_file,
    plot_formats,
    plot_options,
    renamed_seed,
    stacked,
)
from saber.errors import SaberError


def _print_references(ctx: click.Context) -> None:
    """``saber report --list-references``: name, agents, what and where from; then exit."""
    from saber.scoring import list_references

    for info in list_references():
        click.echo(f"{info.name}: {', '.join(info.agents)}")
        click.echo(f"  {info.description}.")
        click.echo(f"  Source: {info.citation}.")
        if info.deviations:
            click.echo(f"  {info.deviations}.")
    ctx.exit(0)


_written_files = stacked(
    output_file("--json", "json_out", "Write the full report as JSON here."),
    output_file(
        "--markdown", "markdown_out", "Write the summary and per-game tables as Markdown here."
    ),
    output_file("--csv", "csv_out", "Write the per-game normalized scores as CSV here."),
    output_file(
        "--latex",
        "latex_out",
        "Write the tables as LaTeX here (booktabs; \\input it, the preamble needs "
        "\\usepackage{booktabs}).",
    ),
    output_file(
        "--html",
        "html_out",
        "Write one self-contained page here: summary, intervals, figures, per-game tables "
        "(needs matplotlib, as --plots).",
    ),
    plot_options("the figures"),
)

_references = stacked(
    click.option(
        "--reference",
        "references",
        multiple=True,
        metavar="NAME",
        help="Add a shipped reference's agents beside yours, e.g. saber-paper (the SABER "
        "paper's Rainbow and Rainbow-IQN), saber-ppo (saber's PPO baselines at 10M frames) "
        "or saber-random. Repeatable; see --list-references.",
    ),
    click.option(
        "--list-references",
        is_flag=True,
        is_eager=True,
        expose_value=False,
        callback=lambda ctx, _param, value: _print_references(ctx) if value else None,
        help="List the shipped references and exit.",
    ),
)

_bootstrap = stacked(
    click.option(
        "--bootstrap-seed",
        default=0,
        show_default=True,
        help="Seed of the bootstrap intervals.",
    ),
    renamed_seed("report", "--bootstrap-seed", "the seed of the bootstrap intervals"),
    click.option(
        "--resamples", default=2000, show_default=True, help="Bootstrap resamples per interval."
    ),
    click.option(
        "--training", hidden=True, expose_value=False, callback=moved_to_training, is_eager=True
    ),
    click.option(
        "--at", hidden=True, expose_value=False, callback=moved_to_training, is_eager=True
    ),
)


@click.command()
@click.argument("scores", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--games",
    "games_spec",
    default=None,
    metavar="LIST",
    help="Report only these games: comma-separated names, or all, atari57, atari5, atari10 "
    "(as in saber eval).",
)
@_written_files
@_references
@_bootstrap
@force_option
@saber_errors_as_messages
def report(
    scores: tuple[Path, ...],
    games_spec: str | None,
    json_out: Path | None,
    markdown_out: Path | None,
    csv_out: Path | None,
    latex_out: Path | None,
    html_out: Path | None,
    plots_dir: Path | None,
    plot_format: str | None,
    dpi: int | None,
    references: tuple[str, ...],
    bootstrap_seed: int,
    resamples: int,
    force: bool,
) -> None:
    """Report SABER scores of one or more agents: printed, or written where --json,
    --markdown, --csv, --latex, --html and --plots say (each writes only what it names).

    SCORES: CSV files with a header and at least the columns game,score (optional: agent,
    run, episode, time_limit as 5min/30min/saber, infinite; a score of inf marks infinite
    gameplay), or harness run directories / their episodes.jsonl. Several are merged:
    several runs (seeds) of one agent give intervals over runs. With --reference, SCORES
    may be left out: saber report --reference saber-paper reports the paper's agents.
    """
    from saber.reports import make_report, to_csv, to_json, to_markdown
    from saber.reports.latex import to_latex

    # Every check before any work, so a bad option never leaves half the files written.
    if not scores and not references:
        raise click.UsageError(
            "Missing argument 'SCORES...': score CSV files or result directories "
            "(or --reference NAME alone, to report a shipped reference)"
        )
    if resamples < 1:
        raise click.BadParameter(f"must be >= 1, got {resamples}", param_hint="--resamples")
    if bootstrap_seed < 0:
        raise click.BadParameter(
            f"must be >= 0, got {bootstrap_seed}", param_hint="--bootstrap-seed"
        )
    formats = plot_formats(plots_dir, plot_format, dpi)
    if html_out is not None:
        from saber.reports.figures.style import require_matplotlib

        require_matplotlib()  # the page's figures: fail before any file is written
    table = _score_table(scores, references, games_spec)
    result = make_report(table, seed=bootstrap_seed, n_resamples=resamples)  # typed, once
    outputs = {json_out: to_json, markdown_out: to_markdown, csv_out: to_csv, latex_out: to_latex}
    if html_out is not None:
        from saber.reports.html import to_html

        outputs[html_out] = to_html
    if plots_dir is None and not any(outputs):
        click.echo(to_markdown(result), nl=False)
        return
    for path in _write_report(result, outputs, plots_dir, formats, dpi, force):
        click.echo(f"wrote {path}")


def _score_table(
    scores: tuple[Path, ...], references: tuple[str, ...], games_spec: str | None
) -> Any:
    """The scores of ``SCORES`` and the ``--reference`` agents, as one table, kept to
    ``--games``; its warnings said on stderr."""
    from saber.scoring import merge_tables, read_scores, reference_table

    # References first: an unknown name fails before any file is read or written.
    extra = [reference_table(name) for name in references]
    tables = ([read_scores(*scores)] if scores else []) + extra
    table = tables[0] if len(tables) == 1 else merge_tables(tables)
    if games_spec is not None:
        table = _only_games(table, games_spec)
    for warning in table.warnings:
        click.echo(f"warning: {warning}", err=True)
    return table


def _write_report(
    result: Any,
    outputs: dict[Path | None, Any],
    plots_dir: Path | None,
    formats: tuple[str, ...],
    dpi: int | None,
    force: bool,
) -> list[Path]:
    """Write the report where ``outputs`` (path -> renderer) and ``--plots`` say: every
    file or none, when one exists already and ``force`` is False."""
    figures: dict[str, Any] = {}
    if plots_dir is not None:
        from saber.reports.figures.files import figure_paths
        from saber.reports.plots import report_figures

        figures = report_figures(result)
    # Before any file is written: one that exists stops them all (unless --force).
    refuse_overwrite(
        [*outputs, *(figure_paths(figures, plots_dir, formats) if plots_dir else [])], force
    )
    written = [write_whole(path, render(result)) for path, render in outputs.items() if path]
    if plots_dir is not None:
        from saber.reports.plots import save_figures

        with writing_results():
            written += save_figures(figures, plots_dir, formats=formats, dpi=dpi or 300)
    return written


def _only_games(table: Any, spec: str) -> Any:
    """The rows of ``table`` whose game is in ``--games`` (names and sets as saber eval)."""
    import dataclasses

    from saber.games import resolve_games

    try:
        wanted = [game.ale_id for game in resolve_games(spec)]
    except SaberError as error:
        raise click.BadParameter(str(error), param_hint="--games") from error
    records = [r for r in table.records if r.game in wanted]
    if not records:
        raise click.BadParameter(
            f"none of these games has a score in {', '.join(table.sources)}", param_hint="--games"
        )
    present = {r.game for r in records}
    absent = [g for g in wanted if g not in present]
    warnings = list(table.warnings)
    if absent:
        warnings.append(f"--games {spec}: no scores for {', '.join(absent)}")
    return dataclasses.replace(table, records=records, warnings=warnings)
