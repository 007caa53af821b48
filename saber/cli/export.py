"""``saber export``: a run's finished episodes as an offline-RL dataset."""

from __future__ import annotations

from pathlib import Path

import click

from saber.cli.errors import saber_errors_as_messages, writing_results
from saber.cli.options import force_option


@click.command("export")
@click.argument(
    "run_dir", metavar="RUN", type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@click.option(
    "--format",
    "kind",
    type=click.Choice(["minari"]),
    default="minari",
    show_default=True,
    help="The dataset format: Minari, Farama's offline-RL format (HDF5).",
)
@click.option(
    "--dataset-id",
    default=None,
    help="The dataset's id, for a run of one game (or one --games) "
    "[default: saber/<game>/<run or agent>-v0, one per game].",
)
@click.option("--games", default=None, help="Export these games (comma-separated) [default: all].")
@click.option("--author", default=None, help="The datasets' author, in their metadata.")
@force_option
@saber_errors_as_messages
def export_command(
    run_dir: Path,
    kind: str,
    dataset_id: str | None,
    games: str | None,
    author: str | None,
    force: bool,
) -> None:
    """Export the finished episodes of RUN as an offline-RL dataset, re-simulated from
    their replays (observations, actions, rewards, ends, seeds), one dataset per game.

    Minari writes where it keeps its datasets (MINARI_DATASETS_PATH, by default
    ~/.minari/datasets); needs pip install "saber-ale[minari]".
    """
    from saber.replay import export_minari

    wanted = None if games is None else [g.strip() for g in games.split(",") if g.strip()]
    # A run that cannot be read is a SaberError (one line, BAD_INPUT); an OSError here is a
    # dataset that could not be written.
    with writing_results():
        for identifier in export_minari(run_dir, dataset_id, wanted, author, replace=force):
            click.echo(f"wrote Minari dataset {identifier}: minari.load_dataset({identifier!r})")
