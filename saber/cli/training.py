"""``saber training``: training-time scores of a training log at checkpoints."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from saber.cli.errors import (
    Refused,
    refuse_overwrite,
    saber_errors_as_messages,
    write_whole,
    writing_results,
)
from saber.cli.options import (
    force_option,
    output_file,
    plot_formats,
    plot_options,
)
from saber.errors import SaberError


@click.command()
@click.argument("log", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--at",
    "at_frames",
    default="10M,50M,100M,200M",
    show_default=True,
    metavar="FRAMES",
    help="Checkpoints in training frames; at each one the log reached, the mean of the 100 "
    "consecutive episodes that ended last (one the log did not reach: not reached).",
)
@output_file("--json", "json_out", "Also write the scores as JSON here.")
@output_file("--csv", "csv_out", "Also write the scores as CSV here.")
@click.option(
    "--reference",
    default=None,
    metavar="NAME",
    help="Show a reference's training-time scores at the same checkpoints: saber-paper "
    "(Rainbow-IQN at 10M, 50M, 100M, 200M frames), saber-ppo (saber's PPO baselines, 10M "
    "frames under SABER), dopamine or dopamine:<agent> (Dopamine's 5 runs per agent, every "
    "1M-frame iteration; not SABER, labelled so).",
)
@plot_options("the training-curve figure of each game")
@force_option
@saber_errors_as_messages
def training(
    log: Path,
    at_frames: str,
    json_out: Path | None,
    csv_out: Path | None,
    reference: str | None,
    plots_dir: Path | None,
    plot_format: str | None,
    dpi: int | None,
    force: bool,
) -> None:
    """Training-time scores from LOG, the log of a saber.training recorder (.jsonl, or
    .jsonl.gz): a Markdown table on stdout (game, checkpoint, mean of 100 episodes; a
    checkpoint past the log's last frames reads "not reached"); for a log of several games,
    a second table of the median and mean over games of the world-record-normalized
    scores. With --plots, an ``updates.jsonl`` beside LOG (a trainer's per-update
    diagnostics, as examples/ppo_saber.py writes) is drawn too."""
    import json

    from saber.reports.training import (
        check_training_reference,
        compare_training,
        format_training_comparison,
        training_csv,
    )
    from saber.reports.training_log import (
        format_over_games,
        format_training_scores,
        training_scores,
    )

    if reference is not None:
        check_training_reference(reference)  # an unknown name fails before any work
    formats = plot_formats(plots_dir, plot_format, dpi)
    checkpoints = _checkpoints(at_frames)
    scores = training_scores(log, checkpoints)
    if not scores:
        raise Refused(
            f"{log}: no episodes in this training log; a TrainingRecorder writes one line per "
            "finished training episode"
        )
    compared = None if reference is None else compare_training(scores, reference)
    curves: list[Any] = []
    diagnostics = None
    if plots_dir is not None:
        from saber.reports.training import training_curves
        from saber.reports.training_diagnostics import read_updates, updates_beside

        curves = training_curves(log, reference, checkpoints)
        updates = updates_beside(log)
        diagnostics = None if updates is None else read_updates(updates)
    figures = [plots_dir / f"training_{c.game}.{fmt}" for c in curves for fmt in formats]
    if diagnostics is not None:
        figures += [plots_dir / f"training_diagnostics.{fmt}" for fmt in formats]
    refuse_overwrite([json_out, csv_out, *figures], force)  # before any file is written
    click.echo(
        format_training_scores(scores)
        if compared is None
        else format_training_comparison(compared),
        nl=False,
    )
    over_games = format_over_games(scores)  # a log of many games (a multi-game env's)
    if over_games:
        click.echo("\n" + over_games, nl=False)
    rows = compared or scores
    if json_out is not None:
        text = json.dumps([row.as_dict() for row in rows], indent=2) + "\n"
        click.echo(f"wrote {write_whole(json_out, text)}")
    if csv_out is not None:
        click.echo(f"wrote {write_whole(csv_out, training_csv(rows))}")
    if plots_dir is not None:
        _write_plots(log, scores, curves, diagnostics, plots_dir, formats, dpi or 300)


def _write_plots(
    log: Path,
    scores: list[Any],
    curves: list[Any],
    diagnostics: Any,
    plots_dir: Path,
    formats: tuple[str, ...],
    dpi: int,
) -> None:
    """The training curves, and the diagnostics of ``updates.jsonl`` when there is one."""
    from saber.reports.training_plots import save_training_plots

    with writing_results():
        for path in save_training_plots(curves, plots_dir, formats, dpi):
            click.echo(f"wrote {path}")
    if diagnostics is not None:
        from saber.games import game_title
        from saber.reports.training_diagnostics import save_diagnostics_plot

        games = ", ".join(sorted({game_title(score.game) for score in scores}))
        title = f"{games}: diagnostics of each update ({log.parent.name})"
        with writing_results():
            for path in save_diagnostics_plot(diagnostics, title, plots_dir, formats, dpi):
                click.echo(f"wrote {path}")


def _checkpoints(at_frames: str) -> list[int]:
    """The checkpoints of ``--at`` in frames (``10M,50M``), at least one."""
    from saber.protocol.training import parse_frames

    try:
        checkpoints = [parse_frames(part) for part in at_frames.split(",") if part.strip()]
    except SaberError as error:
        raise click.BadParameter(str(error), param_hint="--at") from error
    if not checkpoints:
        raise click.BadParameter("give one checkpoint or more, e.g. 10M,50M", param_hint="--at")
    return checkpoints
