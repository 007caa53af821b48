"""``saber board``: the SABER board, a static site of verified results (:mod:`saber.board`)."""

from __future__ import annotations

from pathlib import Path

import click

from saber.cli.errors import saber_errors_as_messages, writing_results
from saber.cli.options import sample_option, workers_option
from saber.errors import ExitCode

DEFAULT_BUDGET = 20_000_000  # saber.board.status.DEFAULT_BUDGET (not imported: a fast --help)


@click.command("board")
@click.argument("entries", nargs=-1, metavar="ENTRY...")
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The site's folder: new, empty, or a site saber board wrote (replaced whole).",
)
@click.option(
    "--shipped",
    is_flag=True,
    help="Add the entries saber ships: the SABER paper's agents, its random agent, its "
    "trained agents.",
)
@sample_option(
    "Play N episodes of each run again, drawn at random with --sample-seed; every "
    "replay's file, hash and header is checked whatever N is; each entry's page shows the "
    "sample, its seed, the command that repeats it and the one that checks every replay "
    "[default: every episode].",
)
@click.option(
    "--sample-seed",
    type=int,
    default=None,
    help="Seed of the --sample draw [default: drawn at build time, which no submitter can "
    "know in advance; shown on each entry's page].",
)
@click.option(
    "--budget",
    type=click.IntRange(min=0),
    default=DEFAULT_BUDGET,
    show_default=True,
    help="Agent steps of play each run may cost (0: no limit); a run that needs more is "
    "shown 'not verified within the budget', with the saber verify that finishes the job.",
)
@workers_option(
    "Worker processes that verify runs, compute reports and draw figures [default: one "
    "per core]; 0 does it all in this process.",
)
@click.option(
    "--resamples", type=click.IntRange(min=1), default=2000, show_default=True,
    help="Bootstrap resamples per interval.",
)  # fmt: skip
@click.option(
    "--figures/--no-figures",
    default=None,
    help="Draw each entry's figures on its report page [default: when matplotlib is installed].",
)
@click.option(
    "--cache",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Keep verifications and reports here, by the entries' content, so that a second "
    "build verifies only new runs [default: $SABER_CACHE_DIR/board, else "
    "~/.cache/saber/board; SABER_CACHE_DIR=off keeps none].",
)
@saber_errors_as_messages
def board_command(
    entries: tuple[str, ...],
    out: Path,
    shipped: bool,
    sample: int | None,
    sample_seed: int | None,
    budget: int,
    workers: int | None,
    resamples: int,
    figures: bool | None,
    cache: Path | None,
) -> None:
    """Build the SABER board into --out: a static site that ranks the entries like for like,
    each with its status decided now.

    ENTRY: a run directory of saber eval (or a folder holding several), a score table
    (CSV) with its citation in NAME.board.json beside it, or the name of a shipped
    reference (saber report --list-references) or agent (saber list). A run is verified by
    playing its replays again (saber verify) and ranked only when whole; a run whose replays
    were played with settings that are not SABER's, a damaged one, copies of one run that
    differ, a table without a citation or a path that does not exist is shown with its
    status and reason, never ranked. Prints one line per entry, then what it wrote.

    Exits 0 when every entry is verified, published, or not SABER; 1 when any other (a
    failed entry, a path that names nothing, ...), after writing the site whole; 130 or
    143 on Ctrl-C or SIGTERM, the site not written.
    """
    from saber.board import build_board

    if not entries and not shipped:
        raise click.UsageError(
            "Missing argument 'ENTRY...': run directories, score tables or shipped names "
            "(or --shipped alone, for the entries saber ships)"
        )
    options = {} if cache is None else {"cache": cache}
    with writing_results(out):  # an entry that cannot be read is an entry's failure
        board = build_board(
            entries,
            out,
            shipped=shipped,
            sample=sample,
            sample_seed=sample_seed,
            budget=budget or None,
            workers=workers,
            resamples=resamples,
            figures=figures,
            **options,
        )
    for line in board.lines():
        click.echo(line, err=True)
    click.echo(board.summary())
    if not board.passed:
        raise SystemExit(ExitCode.FAILED)
