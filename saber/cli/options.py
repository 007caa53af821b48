"""Options and checks that several ``saber`` commands share: files they write, ``--force``,
the figure options, ``--sample`` and ``--workers``, number bounds, and flags that moved or
were renamed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from saber.cli.errors import CommandLineError, RenamedOptionError

F = TypeVar("F", bound=Callable[..., Any])


def stacked(*options: Callable[[F], F]) -> Callable[[F], F]:
    """One decorator of several options, in the order written (as if one above the other)."""

    def apply(command: F) -> F:
        for option in reversed(options):
            command = option(command)
        return command

    return apply


def output_file(flag: str, name: str, help: str) -> Callable[[F], F]:
    """A FILE option that a command writes to."""
    path = click.Path(dir_okay=False, writable=True, path_type=Path)
    return click.option(flag, name, type=path, help=help)


def force_option(command: F) -> F:
    """``--force``: the one flag, on every command that writes files it names, that lets
    it replace a file it did not make (:func:`saber.cli.errors.refuse_overwrite`)."""
    return click.option(
        "--force",
        is_flag=True,
        help="Replace output files that exist already (without it, an existing file is an "
        "error and nothing is written).",
    )(command)


def sample_option(help: str) -> Callable[[F], F]:
    """``--sample N``: play N episodes of a run drawn at random (None: every one)."""
    return click.option("--sample", type=click.IntRange(min=1), default=None, help=help)


def workers_option(help: str) -> Callable[[F], F]:
    """``--workers N``: worker processes that verify runs, 0 for none (all in this
    process); None: one per core."""
    return click.option("--workers", type=click.IntRange(min=0), default=None, help=help)


def plot_options(what: str) -> Callable[[F], F]:
    """``--plots DIR``, ``--plot-format`` and ``--dpi``, for a command that draws ``what``."""
    return stacked(
        click.option(
            "--plots",
            "plots_dir",
            type=click.Path(file_okay=False, path_type=Path),
            help=f"Write {what} into this directory (needs matplotlib: pip install "
            '"saber-ale[plots]", or from a checkout pip install ".[plots]").',
        ),
        click.option(
            "--plot-format",
            "plot_format",
            default=None,
            metavar="png,pdf,svg",
            help="With --plots: figure formats, comma-separated [default: png].",
        ),
        click.option(
            "--dpi",
            type=int,
            default=None,
            help="With --plots: resolution of PNG figures in dots per inch [default: 300].",
        ),
    )


def plot_formats(
    plots_dir: Path | None, plot_format: str | None, dpi: int | None
) -> tuple[str, ...]:
    """The figure formats of ``--plot-format`` (png when not given), each once, in the
    order given, once the figure options are checked: --plot-format and --dpi need
    --plots, and with --plots matplotlib must be there."""
    from saber.reports.figures.style import FORMATS, require_matplotlib

    if plots_dir is None and (plot_format is not None or dpi is not None):
        flag = "--plot-format" if plot_format is not None else "--dpi"
        raise click.UsageError(f"{flag} needs --plots DIRECTORY")
    if dpi is not None and dpi < 1:
        raise click.BadParameter(f"must be >= 1, got {dpi}", param_hint="--dpi")
    if plots_dir is not None:
        require_matplotlib()
    text = plot_format or "png"
    formats = tuple(dict.fromkeys(part.strip().lower() for part in text.split(",") if part.strip()))
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise click.BadParameter(
            f"{', '.join(unknown) or 'nothing'} is not a figure format; use one or more of "
            f"{','.join(FORMATS)}, comma-separated",
            param_hint="--plot-format",
        )
    return formats


def at_least(minimum: float, *, above: bool = False) -> Callable[[Any, Any, Any], Any]:
    """A click callback: ``--episodes must be >= 1, actually: 0`` (one line, ExitCode.USAGE)."""

    def check(context: Any, parameter: Any, value: Any) -> Any:
        if value is not None and (value <= minimum if above else value < minimum):
            relation = ">" if above else ">="
            raise CommandLineError(
                f"{parameter.opts[0]} must be {relation} {minimum:g}, actually: {value:g}"
            )
        return value

    return check


def bounded_number(
    *names: str, default: float, minimum: float, help: str, above: bool = False
) -> Callable[[F], F]:
    """A number option with a default (shown in help) and a lower bound (:func:`at_least`,
    ``above``: the bound itself is refused); the number's type is the default's."""
    return click.option(
        *names,
        default=default,
        show_default=True,
        callback=at_least(minimum, above=above),
        help=help,
    )


def moved_to_training(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    """The callback of ``saber report --training`` and ``--at``: they moved to a command."""
    if value is not None:
        raise click.UsageError(
            f"{param.opts[0]} moved to its own command: saber training LOG --at 10M,50M,100M,200M",
            ctx=ctx,
        )


def renamed_seed(command: str, new_flag: str, what: str) -> Callable[[F], F]:
    """The old ``--seed`` of ``command``, hidden: given, it says ``new_flag`` in one line
    and exits with status 2, before any work (docs/cli-and-api.md says why).

    ``--seed`` means the episode base seed in ``saber eval``; a command where it meant
    another seed (``what``) now names that seed instead.
    """

    def renamed(ctx: click.Context, param: click.Parameter, value: Any) -> None:
        if value is not None:
            raise RenamedOptionError(
                f"saber {command} --seed is now {new_flag} ({what}); --seed is the episode "
                "base seed of saber eval only"
            )

    return click.option("--seed", hidden=True, expose_value=False, is_eager=True, callback=renamed)
