"""The ``saber`` command line: a thin layer over library calls.

Every command turns :class:`~saber.errors.SaberError` into a one-line message on stderr
and exit status 1, without a traceback.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import click

from saber.errors import OutputExistsError, SaberError, os_error_message

F = TypeVar("F", bound=Callable[..., Any])


@click.group()
@click.version_option(package_name="saber-ale")
def main() -> None:
    """The SABER Atari benchmark: evaluate agents and report world-record-normalized scores."""


def _saber_errors_as_messages(command: F) -> F:
    """Errors as one line on stderr and exit status 1, without a traceback: a
    :class:`SaberError` says its message; any other ``OSError`` (a read-only or full
    disk, a file where a directory should be, a missing file) names its path and what to
    do (:func:`saber.errors.os_error_message`), for every command."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except SaberError as error:
            raise click.ClickException(str(error)) from error
        except OSError as error:
            raise click.ClickException(os_error_message(error)) from error

    return wrapper  # type: ignore[return-value]


def _write(path: Path, text: str) -> Path:
    """Write a file whole or not at all (a full disk leaves no half file); a missing
    parent directory is created. An OSError becomes one line (_saber_errors_as_messages)."""
    from saber.protocol.rundir import write_atomically

    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, text)
    return path


def _force_option(command: F) -> F:
    """``--force``: the one flag, on every command that writes files it names, that lets
    it replace a file it did not make (:func:`_refuse_overwrite`)."""
    return click.option(
        "--force",
        is_flag=True,
        help="Replace output files that exist already (without it, an existing file is an "
        "error and nothing is written).",
    )(command)


def _refuse_overwrite(paths: Any, force: bool) -> None:
    """Refuse, before any work, to replace an existing file the user did not ask to replace.

    Raises:
        OutputExistsError: one of ``paths`` exists and ``force`` is False.
    """
    if force:
        return
    for path in paths:
        if path is not None and Path(path).exists():
            raise OutputExistsError(
                f"{path} exists already; pass --force to replace it, or choose another name"
            )


def _stops_cleanly_on_sigterm(command: F) -> F:
    """Ctrl-C and SIGTERM end the command with one line and 130 or 143 (128 + the signal).

    The SIGTERM handler stays for the whole command (the report included), not only while
    ``evaluate()`` runs, and it acts once (:func:`saber.harness.evaluate.terminate_once`):
    a second SIGTERM must not kill the process in the middle of its clean stop.
    """

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        import signal
        import sys

        from saber.harness.evaluate import Terminated, terminate_once

        previous = signal.signal(signal.SIGTERM, terminate_once())
        try:
            return command(*args, **kwargs)
        except KeyboardInterrupt as interrupt:
            terminated = isinstance(interrupt, Terminated)
            if terminated:
                previous = signal.SIG_IGN  # exiting: a later SIGTERM must not kill it halfway
            click.echo(
                f"\n{'Terminated (SIGTERM)' if terminated else 'Interrupted'}. Finished "
                f"episodes are in {kwargs['out'] / 'episodes.jsonl'}; run the same command "
                "to resume.",
                err=True,
            )
            sys.exit(143 if terminated else 130)
        finally:
            signal.signal(signal.SIGTERM, previous)

    return wrapper  # type: ignore[return-value]


def _output_file(flag: str, name: str, help: str) -> Callable[[F], F]:
    """A FILE option that a command writes to."""
    path = click.Path(dir_okay=False, writable=True, path_type=Path)
    return click.option(flag, name, type=path, help=help)


def _plot_options(what: str) -> Callable[[F], F]:
    """``--plots DIR``, ``--plot-format`` and ``--dpi``, for a command that draws ``what``."""
    options = [
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
    ]

    def apply(command: F) -> F:
        for option in reversed(options):  # as if written one above the other
            command = option(command)
        return command

    return apply


def _check_plot_options(plots_dir: Path | None, plot_format: str | None, dpi: int | None) -> None:
    """--plot-format and --dpi need --plots; with --plots, matplotlib must be there."""
    if plots_dir is None and (plot_format is not None or dpi is not None):
        flag = "--plot-format" if plot_format is not None else "--dpi"
        raise click.UsageError(f"{flag} needs --plots DIRECTORY")
    if dpi is not None and dpi < 1:
        raise click.BadParameter(f"must be >= 1, got {dpi}", param_hint="--dpi")
    if plots_dir is not None:
        from saber.reports.plots import require_matplotlib

        require_matplotlib()


def _plot_formats(text: str) -> tuple[str, ...]:
    from saber.reports.plots import FORMATS  # matplotlib itself is imported only to draw

    formats = tuple(dict.fromkeys(part.strip().lower() for part in text.split(",") if part.strip()))
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise click.BadParameter(
            f"{', '.join(unknown) or 'nothing'} is not a figure format; use one or more of "
            f"{','.join(FORMATS)}, comma-separated",
            param_hint="--plot-format",
        )
    return formats


def _moved_to_training(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    if value is not None:
        raise click.UsageError(
            f"{param.opts[0]} moved to its own command: saber training LOG --at 10M,50M,100M,200M",
            ctx=ctx,
        )


@main.command()
@click.argument("scores", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--games",
    "games_spec",
    default=None,
    metavar="LIST",
    help="Report only these games: comma-separated names, or all, atari57, atari5, atari10 "
    "(as in saber eval).",
)
@_output_file("--json", "json_out", "Write the full report as JSON here.")
@_output_file(
    "--markdown", "markdown_out", "Write the summary and per-game tables as Markdown here."
)
@_output_file("--csv", "csv_out", "Write the per-game normalized scores as CSV here.")
@_output_file(
    "--latex",
    "latex_out",
    "Write the tables as LaTeX here (booktabs; \\input it, the preamble needs "
    "\\usepackage{booktabs}).",
)
@_output_file(
    "--html",
    "html_out",
    "Write one self-contained page here: summary, intervals, figures, per-game tables "
    "(needs matplotlib, as --plots).",
)
@_plot_options("the figures")
@click.option(
    "--reference",
    "references",
    multiple=True,
    metavar="NAME",
    help="Add a shipped reference's agents beside yours, e.g. saber-paper (the SABER paper's "
    "Rainbow and Rainbow-IQN) or saber-random. Repeatable; see --list-references.",
)
@click.option(
    "--list-references",
    is_flag=True,
    is_eager=True,
    expose_value=False,
    callback=lambda ctx, _param, value: _print_references(ctx) if value else None,
    help="List the shipped references and exit.",
)
@click.option("--seed", default=0, show_default=True, help="Seed of the bootstrap intervals.")
@click.option(
    "--resamples", default=2000, show_default=True, help="Bootstrap resamples per interval."
)
@click.option(
    "--training", hidden=True, expose_value=False, callback=_moved_to_training, is_eager=True
)
@click.option("--at", hidden=True, expose_value=False, callback=_moved_to_training, is_eager=True)
@_force_option
@_saber_errors_as_messages
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
    seed: int,
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
    from saber.reports import build_report, to_csv, to_json, to_markdown
    from saber.reports.latex import to_latex
    from saber.scoring import merge_tables, read_scores, reference_table

    # Every check before any work, so a bad option never leaves half the files written.
    if not scores and not references:
        raise click.UsageError(
            "Missing argument 'SCORES...': score CSV files or result directories "
            "(or --reference NAME alone, to report a shipped reference)"
        )
    if resamples < 1:
        raise click.BadParameter(f"must be >= 1, got {resamples}", param_hint="--resamples")
    if seed < 0:
        raise click.BadParameter(f"must be >= 0, got {seed}", param_hint="--seed")
    _check_plot_options(plots_dir, plot_format, dpi)
    formats = _plot_formats(plot_format or "png")
    if html_out is not None:
        from saber.reports.plots import require_matplotlib

        require_matplotlib()  # the page's figures: fail before any file is written
    # References first: an unknown name fails before any file is read or written.
    extra = [reference_table(name) for name in references]
    tables = ([read_scores(*scores)] if scores else []) + extra
    table = tables[0] if len(tables) == 1 else merge_tables(tables)
    if games_spec is not None:
        table = _only_games(table, games_spec)
    for warning in table.warnings:
        click.echo(f"warning: {warning}", err=True)
    result = build_report(table, seed=seed, n_resamples=resamples)
    outputs = {json_out: to_json, markdown_out: to_markdown, csv_out: to_csv, latex_out: to_latex}
    if html_out is not None:
        from saber.reports.html import to_html

        outputs[html_out] = to_html
    if plots_dir is None and not any(outputs):
        click.echo(to_markdown(result), nl=False)
        return
    figures: dict[str, Any] = {}
    if plots_dir is not None:
        from saber.reports.plots import figure_paths, report_figures

        figures = report_figures(result)
    # Before any file is written: one that exists stops them all (unless --force).
    _refuse_overwrite(
        [*outputs, *(figure_paths(figures, plots_dir, formats) if plots_dir else [])], force
    )
    written = [_write(path, render(result)) for path, render in outputs.items() if path]
    if plots_dir is not None:
        from saber.reports.plots import save_figures

        written += save_figures(figures, plots_dir, formats=formats, dpi=dpi or 300)
    for path in written:
        click.echo(f"wrote {path}")


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


@main.command()
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
@_output_file("--json", "json_out", "Also write the scores as JSON here.")
@_output_file("--csv", "csv_out", "Also write the scores as CSV here.")
@click.option(
    "--reference",
    default=None,
    metavar="NAME",
    help="Show a reference's training-time scores at the same checkpoints: saber-paper "
    "(Rainbow-IQN at 10M, 50M, 100M, 200M frames), dopamine or dopamine:<agent> (Dopamine's "
    "5 runs per agent, every 1M-frame iteration; not SABER, labelled so).",
)
@_plot_options("the training-curve figure of each game")
@_force_option
@_saber_errors_as_messages
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
    checkpoint past the log's last frames reads "not reached")."""
    import json

    from saber.protocol.training import parse_frames
    from saber.reports.training import (
        check_training_reference,
        compare_training,
        format_training_comparison,
        training_csv,
    )
    from saber.reports.training_log import format_training_scores, training_scores

    if reference is not None:
        check_training_reference(reference)  # an unknown name fails before any work
    _check_plot_options(plots_dir, plot_format, dpi)
    formats = _plot_formats(plot_format or "png")
    try:
        checkpoints = [parse_frames(part) for part in at_frames.split(",") if part.strip()]
    except SaberError as error:
        raise click.BadParameter(str(error), param_hint="--at") from error
    if not checkpoints:
        raise click.BadParameter("give one checkpoint or more, e.g. 10M,50M", param_hint="--at")
    scores = training_scores(log, checkpoints)
    if not scores:
        raise click.ClickException(
            f"{log}: no episodes in this training log; a TrainingRecorder writes one line per "
            "finished training episode"
        )
    compared = None if reference is None else compare_training(scores, reference)
    curves: list[Any] = []
    if plots_dir is not None:
        from saber.reports.training import training_curves

        curves = training_curves(log, reference, checkpoints)
    figures = [plots_dir / f"training_{c.game}.{fmt}" for c in curves for fmt in formats]
    _refuse_overwrite([json_out, csv_out, *figures], force)  # before any file is written
    click.echo(
        format_training_scores(scores)
        if compared is None
        else format_training_comparison(compared),
        nl=False,
    )
    rows = compared or scores
    if json_out is not None:
        text = json.dumps([row.as_dict() for row in rows], indent=2) + "\n"
        click.echo(f"wrote {_write(json_out, text)}")
    if csv_out is not None:
        click.echo(f"wrote {_write(csv_out, training_csv(rows))}")
    if plots_dir is not None:
        from saber.reports.training_plots import save_training_plots

        for path in save_training_plots(curves, plots_dir, formats, dpi or 300):
            click.echo(f"wrote {path}")


def _env_options(pairs: tuple[str, ...]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs; values are read as JSON (``400``, ``null``, ``0.0``), else text."""
    import json

    options: dict[str, Any] = {}
    for pair in pairs:
        key, separator, text = pair.partition("=")
        if not separator or not key.strip():
            raise click.BadParameter(
                f"Expect KEY=VALUE, actually: {pair!r}", param_hint="--env-option"
            )
        try:
            options[key.strip()] = json.loads(text)
        except (ValueError, RecursionError):  # not JSON (or 5000 digits, nested 1000s deep)
            options[key.strip()] = text
    return options


def _import_from_working_directory(agent: str) -> None:
    """Put the working directory first on ``sys.path`` for a ``module:attr`` agent.

    ``python -m saber.cli`` does so, the ``saber`` console script does not: without this,
    ``saber eval --agent mymodule:policy`` could not import ``./mymodule.py``. It is done
    for the whole process on purpose: local worker processes are started with ``spawn``,
    which gives them this process's ``sys.path``, and they import the module again.
    """
    from saber.harness.policies import is_builtin_spec

    if not is_builtin_spec(agent):
        _working_directory_first()


def _working_directory_first() -> None:
    """``sys.path`` with the working directory first, for ``module:attr`` specs."""
    import os
    import sys

    cwd = os.getcwd()
    if cwd in sys.path:
        sys.path.remove(cwd)
    sys.path.insert(0, cwd)


def _at_least(minimum: float, *, above: bool = False) -> Callable[[Any, Any, Any], Any]:
    """A click callback: ``--episodes must be >= 1, actually: 0`` (one line, exit 1)."""

    def check(context: Any, parameter: Any, value: Any) -> Any:
        if value is not None and (value <= minimum if above else value < minimum):
            relation = ">" if above else ">="
            raise click.ClickException(
                f"{parameter.opts[0]} must be {relation} {minimum:g}, actually: {value:g}"
            )
        return value

    return check


@main.command("eval")
@click.option(
    "--agent",
    required=True,
    help="random, noop, constant:K, epsilon-constant:K[:EPS], ppo-pong (the shipped trained "
    "agent), conv-actor:PATH, or module:attr (a policy, a policy class, or a factory; the "
    "module may be in the current directory). See saber list.",
)
@click.option(
    "--agent-name",
    default=None,
    metavar="NAME",
    help="The agent's name in the records and reports [default: the --agent spec].",
)
@click.option(
    "--games",
    required=True,
    help="Comma-separated game names (any single-player ROM of ale-py; outside the 61 SABER "
    "games, no SABER baseline), or all (the 61), atari57, atari5, atari10. See saber list.",
)
@click.option(
    "--episodes", default=100, show_default=True, callback=_at_least(1), help="Episodes per game."
)
@click.option(
    "--out",
    "out",
    required=True,
    metavar="OUT",
    type=click.Path(file_okay=False, path_type=Path),
    help="Run directory; running the same command again resumes it (a call asks for the whole "
    "run: every game of it and at least its episodes; more extends it).",
)
@click.option(
    "--run",
    "run_name",
    default=None,
    help="Run name (e.g. the training seed), written in OUT/run.json and every record; "
    "reports tell runs of one agent apart by it. Default: no name.",
)
@click.option(
    "--workers",
    type=int,
    default=None,
    callback=_at_least(0),
    help="Worker processes [default: one per usable core, measured best with real policies], never more than the episodes to play; 0 runs in this process. With --backend dask and no --address: local cluster size.",
)
@click.option(
    "--envs-per-worker",
    default=8,
    show_default=True,
    callback=_at_least(1),
    help="Envs per worker's vector env: the policy's batch size (8: within 2% of 16 with real policies, filled by half the episodes).",
)
@click.option(
    "--policy-process",
    is_flag=True,
    help="Build the policy once, in a process of its own that acts for every worker on batches of workers x envs-per-worker (a policy on a GPU: one model, one CUDA context), instead of once per worker.",
)
@click.option(
    "--seed",
    "base_seed",
    default=0,
    show_default=True,
    callback=_at_least(0),
    help="Base seed; every episode's seed derives from it, the game and the episode index.",
)
@click.option(
    "--unit-timeout",
    default=300.0,
    show_default=True,
    callback=_at_least(0, above=True),
    help="Seconds a work unit may go without frame progress before its worker is stopped; "
    "the unit is retried once, then its episodes are recorded as failed. Not with --workers 0.",
)
@click.option("--backend", type=click.Choice(["local", "dask"]), default="local", show_default=True)
@click.option(
    "--address",
    default=None,
    help="Dask scheduler address (tcp://host:8786 or tls://host:8786); needs "
    'pip install "saber-ale[dask]", or from a checkout pip install ".[dask]".',
)
@click.option(
    "--dask-timeout",
    default=10.0,
    show_default=True,
    callback=_at_least(0, above=True),
    help="Seconds to wait for the Dask scheduler.",
)
@click.option(
    "--tls-ca-file",
    type=click.Path(exists=True, dir_okay=False),
    help="With a tls:// --address: the CA certificate (PEM) that signed the cluster's.",
)
@click.option(
    "--tls-cert",
    type=click.Path(exists=True, dir_okay=False),
    help="With a tls:// --address: this client's certificate (PEM).",
)
@click.option(
    "--tls-key",
    type=click.Path(exists=True, dir_okay=False),
    help="With a tls:// --address: this client's private key (PEM).",
)
@click.option(
    "--env-option",
    "env_option",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a SABER setting (value read as JSON), e.g. max_frames_without_reward=400. Repeatable.",
)
@click.option(
    "--allow-non-saber",
    is_flag=True,
    help="Run with --env-option values that break the protocol; the results are marked as not SABER.",
)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Progress bar on stderr [default: when stderr is a terminal].",
)
@click.option(
    "--report/--no-report",
    "write_report",
    default=True,
    show_default=True,
    help="Write DIR/report.json and DIR/report.md at the end.",
)
@click.option(
    "--video",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Film the first K episodes of every game: OUT/videos/<game>/episode-<n>.mp4, "
    'every frame in colour (needs pip install "saber-ale[video]", or from a checkout '
    'pip install ".[video]").',
)
@click.option(
    "--replays/--no-replays",
    default=True,
    show_default=True,
    help="Record each episode's replay (OUT/replays/, a few kB per episode) so that saber "
    "verify can check every score and saber replay film any episode.",
)
@_saber_errors_as_messages
@_stops_cleanly_on_sigterm
def eval_command(
    agent: str,
    agent_name: str | None,
    games: str,
    episodes: int,
    out: Path,
    run_name: str | None,
    workers: int | None,
    envs_per_worker: int,
    policy_process: bool,
    base_seed: int,
    unit_timeout: float,
    backend: str,
    address: str | None,
    dask_timeout: float,
    tls_ca_file: str | None,
    tls_cert: str | None,
    tls_key: str | None,
    env_option: tuple[str, ...],
    allow_non_saber: bool,
    progress: bool | None,
    write_report: bool,
    video: int,
    replays: bool,
) -> None:
    """Evaluate an agent under the SABER protocol: --episodes per game, resumable.

    Each finished episode is appended to OUT/episodes.jsonl as it ends; OUT/run.json keeps
    the provenance. Ctrl-C or SIGTERM stops cleanly; the same command resumes. At the end the SABER
    report is written to OUT/report.json and OUT/report.md and printed. The exit status
    is 1 when any episode ended as a failure, or a video asked for could not be made
    (the same command films it again).
    """
    import sys

    from saber.harness import EnvOptions, Recording, evaluate
    from saber.harness.backends import backend_for

    if backend == "dask" and workers == 0:
        raise click.ClickException("--workers must be >= 1 with --backend dask, actually: 0")
    if policy_process and (backend == "dask" or workers == 0):
        raise click.ClickException(
            "--policy-process needs local worker processes (--workers 1 or more, no --backend dask)"
        )
    tls = {
        name: value
        for name, value in (
            ("tls_ca_file", tls_ca_file),
            ("tls_client_cert", tls_cert),
            ("tls_client_key", tls_key),
        )
        if value
    }
    if tls and backend != "dask":
        raise click.ClickException("--tls-ca-file, --tls-cert and --tls-key need --backend dask")
    if run_name is not None and not run_name.strip():
        raise click.ClickException("--run must be a non-empty name")
    if agent_name is not None and not agent_name.strip():
        raise click.ClickException("--agent-name must be a non-empty name")
    _import_from_working_directory(agent)
    if address is not None and backend != "dask":
        raise click.ClickException("--address needs --backend dask")
    runs_on = backend_for(
        backend,
        workers,
        policy_process=policy_process,
        address=address,
        timeout=dask_timeout,
        security=tls or None,
        envs_per_worker=envs_per_worker,
        unit_timeout=unit_timeout,
    )
    # What runs (saber.harness.workers_line), as capped to the episodes to play, is said by
    # evaluate() through on_message: after every check, so an error comes first.
    if write_report:
        _import_in_background("saber.reports")
    with _prints_to_stderr():  # stdout carries only the report: saber eval ... > report.md
        result = evaluate(
            agent,
            games,
            episodes,
            out=out,
            backend=runs_on,
            base_seed=base_seed,
            agent=agent_name,
            run=run_name,
            env_options=EnvOptions(_env_options(env_option), allow_non_saber),
            recording=Recording(replays, video, sys.argv),
            progress=progress,
            on_message=lambda message: click.echo(message, err=True),
        )
    _finish_eval(result, out, write_report)
    if result.failed or _missing_videos(result.records, out, video):
        sys.exit(1)


@contextlib.contextmanager
def _prints_to_stderr() -> Iterator[None]:
    """While the agent is imported, built and run: its prints go to stderr, so that stdout
    carries only the report.

    Python's ``sys.stdout`` is redirected for this process, and file descriptor 1 as well:
    the worker processes and the policy process started meanwhile inherit it (their
    ``print`` writes to it), and so does C code writing to fd 1 directly. Where fd 1 is
    closed, only ``sys.stdout`` is redirected.
    """
    import os
    import sys

    sys.stdout.flush()
    try:
        saved: int | None = os.dup(1)
    except OSError:
        saved = None
    else:
        os.dup2(2, 1)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)


def _missing_videos(records: list[dict[str, Any]], out: Path, video: int) -> bool:
    """Say which videos asked for (the first ``video`` finished episodes of every game)
    are not there, one line each, with why where the note says; True if any.

    A missing video makes the exit status 1, as a failed episode does: something asked
    for is not there. The records and the report are whole; the same command films the
    missing videos again from the replays (:func:`saber.training.video.film_missing`).
    """
    from saber.training.video import list_video_errors, video_path

    why = {error["video"]: error["error"] for error in list_video_errors(out)} if video else {}
    missing = [
        video_path(out, record["game"], record["episode"])
        for record in records
        if "error" not in record and record["episode"] < video
    ]
    missing = [path for path in missing if not path.exists()]
    for path in missing:
        reason = why.get(path.relative_to(out).as_posix(), "see the warnings above")
        click.echo(
            f"no video {path}: {reason}; mend that and run the same command again to film it",
            err=True,
        )
    return bool(missing)


def _import_in_background(module: str) -> None:
    """Import ``module`` in a thread while the episodes play: the report's imports (SciPy)
    take about 0.7 s of CPU, which after the last episode would be 0.7 s more of wall
    time for every run. Not a daemon thread: the interpreter waits for it at exit."""
    import importlib
    import threading

    threading.Thread(
        target=importlib.import_module, args=(module,), name=f"saber-import-{module}"
    ).start()


def _finish_eval(result: Any, out: Path, write_report: bool) -> None:
    """What ``saber eval`` says and writes once the episodes are done."""
    rate = result.frames / result.seconds if result.seconds else 0.0
    click.echo(
        f"{result.new_episodes} new episodes in {result.seconds:,.1f} s ({rate:,.0f} frames/s); "
        f"{len(result.records)} episodes in {out}",
        err=True,
    )
    if write_report and result.finished:
        from saber.reports import to_markdown

        report = result.report()
        paths = result.write_report(report=report)
        click.echo(to_markdown(report))
        for path in paths:
            click.echo(f"wrote {path}", err=True)
    for reason, count in result.failure_reasons.items():
        click.echo(f"failed {count} time(s): {reason}", err=True)
    summary = result.summary()
    recovered = f" ({summary['recovered']} after a retry)" if summary["recovered"] else ""
    click.echo(f"{result.finished} finished{recovered}, {len(result.failed)} failed", err=True)


@main.command("verify")
@click.argument("run_dir", metavar="RUN", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--sample",
    type=click.IntRange(min=1),
    default=None,
    help="Verify N episodes drawn at random (the same --seed draws the same ones) "
    "[default: every finished episode].",
)
@click.option("--seed", default=0, show_default=True, help="Seed of the --sample draw.")
@click.option(
    "--workers",
    type=click.IntRange(min=0),
    default=None,
    help="Worker processes [default: one per core]; 0 verifies in this process.",
)
@_saber_errors_as_messages
def verify_command(run_dir: Path, sample: int | None, seed: int, workers: int | None) -> None:
    """Replay the recorded episodes of RUN (a saber eval directory, or a training log
    recorded with replays=True) and check each record.

    Each episode is played again from its seed and its recorded actions, without the
    policy, in a fresh env with the run's settings; its score, score_5min, score_30min,
    frames, steps and end must equal the record's exactly. Prints one line per mismatch
    (game, episode, field), then a summary. Exit status 0 only when every checked
    episode matches. It proves that the recorded play produces the scores; not that a
    given policy produced the play.
    """
    import sys

    from saber.replay import verify_run, verify_training_log

    verify = verify_training_log if run_dir.is_file() else verify_run
    result = verify(run_dir, sample=sample, seed=seed, workers=workers)
    for line in result.lines():
        click.echo(line)
    for note in result.versions:
        click.echo(f"note: {note}", err=True)
    click.echo(result.summary(), err=True)
    if not result.ok:
        sys.exit(1)


@main.command("repair")
@click.argument(
    "run_dir", metavar="RUN", type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@_saber_errors_as_messages
def repair_command(run_dir: Path) -> None:
    """Make a damaged run directory (saber eval --out RUN) whole again.

    Keeps every intact record of RUN/episodes.jsonl and drops the damaged lines (a cut,
    a torn line, NUL bytes, lines that are not JSON, records written after the run ended);
    rebuilds a run.json cut short from its whole part. Each damaged original is kept as
    <name>.damaged-<UTC time>. Prints one line per kind of damage it dropped, with counts.
    Running the run's saber eval command again then plays the dropped episodes. Exit
    status 0 when RUN is whole afterwards (or was already).
    """
    import sys

    from saber.protocol.repair import repair_run

    for line in repair_run(run_dir, command=sys.argv).lines():
        click.echo(line)


@main.command("replay")
@click.argument(
    "run_dir", metavar="RUN", type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@click.option("--game", required=True, help="The game (any spelling).")
@click.option("--episode", required=True, type=click.IntRange(min=0), help="The episode's index.")
@_output_file(
    "--video",
    "video_out",
    "Film the episode into this MP4 file: every emulator frame in colour, 60 fps "
    '(needs pip install "saber-ale[video]").',
)
@_force_option
@_saber_errors_as_messages
def replay_command(
    run_dir: Path, game: str, episode: int, video_out: Path | None, force: bool
) -> None:
    """Play a recorded episode of RUN again from its replay; with --video, film it.

    Without --video, prints the episode's record and what its replay holds. The replay
    must reproduce the record (as saber verify checks), or nothing is written.
    """
    from saber.replay import recorded_episode

    _refuse_overwrite([video_out], force)
    recorded = recorded_episode(run_dir, game, episode)
    header = recorded.replay.header
    record = recorded.record
    click.echo(
        f"{header.game} episode {header.episode}: seed {header.seed}, {header.steps} steps, "
        f"score {record.get('score')}, {record.get('frames')} frames, end {record.get('end')} "
        f"(recorded with saber {header.versions.get('saber', '?')}, ale-py "
        f"{header.versions.get('ale_py', '?')})"
    )
    if video_out is None:
        return
    from saber.training.video import film_replay, require_video_extra

    require_video_extra()
    for _ in film_replay(recorded.replay, video_out, record):
        pass  # a failure leaves no file under video_out (VideoWriter)
    click.echo(f"wrote {video_out}", err=True)


@main.command("export")
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
@_force_option
@_saber_errors_as_messages
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
    for identifier in export_minari(run_dir, dataset_id, wanted, author, replace=force):
        click.echo(f"wrote Minari dataset {identifier}: minari.load_dataset({identifier!r})")


@main.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
def list_command(as_json: bool) -> None:
    """List the games (ale-py names, world record, random score), game sets and agents."""
    import json

    from saber.games import all_games, atari57_games, saber_games, subset_games
    from saber.harness.policies import BUILTIN_AGENTS

    games = all_games()
    sets = {
        "all": [game.ale_id for game in saber_games()],
        "atari57": [game.ale_id for game in atari57_games()],
        "atari5": [game.ale_id for game in subset_games("atari5")],
        "atari10": [game.ale_id for game in subset_games("atari10")],
    }
    if as_json:
        listing = {
            "games": [
                {
                    "ale_id": game.ale_id,
                    "env_id": game.env_id,
                    "in_saber": game.in_saber,
                    "world_record": game.world_record,
                    "random": game.random,
                    "human": game.human,
                }
                for game in games
            ],
            "game_sets": sets,
            "agents": BUILTIN_AGENTS,
        }
        click.echo(json.dumps(listing, indent=2))
        return

    def number(value: float | None) -> str:
        return "n/a" if value is None else f"{value:,.1f}"

    click.echo(
        "Games (--games; any other single-player ROM of ale-py works too, without a baseline):"
    )
    click.echo(f"  {'ale-py name':<22} {'env id':<26} {'world record':>14} {'random':>10}")
    for game in games:
        note = "" if game.in_saber else "  (not a SABER game)"
        click.echo(
            f"  {game.ale_id:<22} {game.env_id:<26} {number(game.world_record):>14} "
            f"{number(game.random):>10}{note}"
        )
    click.echo("\nGame sets (--games):")
    for name, members in sets.items():
        shown = ", ".join(members) if len(members) <= 10 else f"{len(members)} games"
        click.echo(f"  {name:<8} {shown}")
    click.echo("\nAgents (--agent):")
    for spec, description in BUILTIN_AGENTS.items():
        click.echo(f"  {spec:<26} {description}")


@main.command("check")
@click.argument("target")
@click.option(
    "--game", default=None, help="Game passed to a module:factory target (factory(game))."
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the result as JSON instead of a table."
)
@click.option(
    "--quick",
    is_flag=True,
    help="Only the cheap probes (what saber eval runs before a run); the rules left out "
    "are listed as not probed, and the exit status is 2 at best.",
)
@_saber_errors_as_messages
def check_command(target: str, game: str | None, as_json: bool, quick: bool) -> None:
    """Is TARGET SABER? Probe its behaviour rule by rule.

    TARGET is a registered env id (SABER/Pong, ALE/Pong-v5, BreakoutNoFrameskip-v4) or
    module:factory, a callable returning a Gymnasium env or vector env (with --game, it is
    called with the game). Exit status: 0 when every rule passes, 1 when any fails, 2 when
    none fails but some could not be measured or were not probed (--quick): unknown and
    not probed are never a pass.
    """
    import json
    import sys

    from saber.check.api import check_target
    from saber.check.table import format_table

    _working_directory_first()  # module:factory from the working directory
    result = check_target(target, game, quick=quick)
    click.echo(json.dumps(result.to_dict(), indent=2) if as_json else format_table(result))
    sys.exit(result.exit_code)


if __name__ == "__main__":  # python -m saber.cli
    main()
