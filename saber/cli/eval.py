"""``saber eval``: evaluate an agent under the SABER protocol (saber.harness.evaluate)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from saber.cli.errors import COMMAND_LINE, CommandLineError, saber_errors_as_messages, stop_said
from saber.cli.eval_options import EvalOptions, eval_options
from saber.cli.streams import prints_to_stderr
from saber.cli.user_code import import_from_working_directory

F = TypeVar("F", bound=Callable[..., Any])


def _says_where_the_episodes_are(command: F) -> F:
    """Ctrl-C and SIGTERM end the command with one line that says how many episodes are
    finished on disk, where, and the command that resumes the run, and 130 or 143 (128 +
    the signal). The signals' handlers are the ``saber`` group's
    (:mod:`saber.stop_signals`), installed for the whole command, the report included,
    not only while ``evaluate()`` runs."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        import sys

        try:
            return command(*args, **kwargs)
        except KeyboardInterrupt as interrupt:
            said, status = stop_said(interrupt)
            episodes = kwargs["out"] / "episodes.jsonl"
            click.echo(
                f"\n{said}. Finished episodes are in {episodes}: {_on_disk(episodes, kwargs)}; "
                f"run the same command to resume: {_this_command()}",
                err=True,
            )
            sys.exit(status)

    return wrapper  # type: ignore[return-value]


def _on_disk(episodes: Path, options: dict[str, Any]) -> str:
    """``12 of the 200 episodes asked for``: how many are finished on disk, read from
    the file itself: a stop can land anywhere, before the run directory was even read."""
    from saber.errors import SaberError, counted
    from saber.games import resolve_games
    from saber.rundir.reading import read_episode_lines

    try:
        finished = read_episode_lines(episodes).finished()
        games = [game.ale_id for game in resolve_games(options["games"])]
    except (SaberError, OSError, ValueError):
        return "how many cannot be read now"  # the resume reads the file and says
    count = sum(game in games and index < options["episodes"] for game, index in finished)
    return f"{count} of the {counted(len(games) * options['episodes'], 'episode')} asked for"


def _this_command() -> str:
    """The command line that ran, as a shell reads it: ``saber eval --agent random ...``.

    As the ``saber`` group read it, whether saber was started as the console script,
    ``python -m saber.cli`` or a test's runner; where this command runs outside that
    group, rebuilt from the options the user gave (click's record of where each value
    came from)."""
    import shlex

    from click.core import ParameterSource

    context = click.get_current_context()
    as_given = context.meta.get(COMMAND_LINE)
    if as_given:
        return shlex.join(as_given)
    given = (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)
    words = ["saber", "eval"]
    for parameter in context.command.params:
        name = parameter.name or ""
        if context.get_parameter_source(name) in given:
            words += _option_words(parameter, context.params[name])
    return shlex.join(words)


def _option_words(parameter: click.Parameter, value: Any) -> list[str]:
    """One option and its value as the command line gives it (each value of a repeated
    option; a flag by the name that gives its value)."""
    if not isinstance(parameter, click.Option):
        return [str(value)]
    if parameter.is_flag:
        if parameter.secondary_opts and not value:
            return [parameter.secondary_opts[0]]
        return [parameter.opts[0]] if value else []
    values = value if parameter.multiple else (value,)
    return [word for item in values for word in (parameter.opts[0], str(item))]


@click.command("eval")
@eval_options
@saber_errors_as_messages
@_says_where_the_episodes_are
def eval_command(**options: Any) -> None:
    """Evaluate an agent under the SABER protocol: --episodes per game, resumable.

    Each finished episode is appended to OUT/episodes.jsonl as it ends; OUT/run.json keeps
    the provenance. Ctrl-C or SIGTERM stops cleanly; the same command resumes. At the end the SABER
    report is written to OUT/report.json and OUT/report.md and printed. Exit status: 0
    when every episode finished; 1 when any ended as a failure, or a video asked for
    could not be made (the same command films it again); 2 for a command line that
    cannot be used; 3 for a refused agent, game or directory (nothing written); 4 when
    the run stopped before its end (the same command resumes); 130 on Ctrl-C, 143 on
    SIGTERM (docs/exit-codes.md).
    """
    _evaluate(EvalOptions(**options))


def _evaluate(options: EvalOptions) -> None:
    """``saber eval`` once its options are read: check, play, report, exit status."""
    import sys

    from saber.errors import ExitCode
    from saber.harness import EnvOptions, Recording, evaluate

    runs_on = _where_it_runs(options)
    # What runs (Backend.workers_line), as capped to the episodes to play, is said by
    # evaluate() through on_message: after every check, so an error comes first.
    if options.write_report:
        _import_in_background("saber.reports")
    with prints_to_stderr():  # stdout carries only the report: saber eval ... > report.md
        result = evaluate(
            options.agent,
            options.games,
            options.episodes,
            out=options.out,
            backend=runs_on,
            env_options=EnvOptions(env_options(options.env_option), options.allow_non_saber),
            recording=Recording(options.replays, options.video, sys.argv),
            base_seed=options.base_seed,
            agent=options.agent_name,  # docs/cli-and-api.md: --agent-name is agent=
            run=options.run_name,
            progress=options.progress,
            on_message=lambda message: click.echo(message, err=True),
        )
    _finish_eval(result, options.out, options.write_report)
    if result.failed or _missing_videos(result.records, options.out, options.video):
        sys.exit(ExitCode.FAILED)


def _where_it_runs(options: EvalOptions) -> Any:
    """The backend that ``--backend``, ``--workers``, ``--address`` and their kin ask for,
    after every check of the options that go together (each a one-line error)."""
    from saber.harness.backends import backend_for

    dask = options.backend == "dask"
    if dask and options.workers == 0:
        raise CommandLineError("--workers must be >= 1 with --backend dask, actually: 0")
    if options.policy_process and (dask or options.workers == 0):
        raise CommandLineError(
            "--policy-process needs local worker processes (--workers 1 or more, no --backend dask)"
        )
    tls = {
        name: value
        for name, value in (
            ("tls_ca_file", options.tls_ca_file),
            ("tls_client_cert", options.tls_cert),
            ("tls_client_key", options.tls_key),
        )
        if value
    }
    if tls and not dask:
        raise CommandLineError("--tls-ca-file, --tls-cert and --tls-key need --backend dask")
    if options.run_name is not None and not options.run_name.strip():
        raise CommandLineError("--run must be a non-empty name")
    if options.agent_name is not None and not options.agent_name.strip():
        raise CommandLineError("--agent-name must be a non-empty name")
    import_from_working_directory(options.agent)
    if options.address is not None and not dask:
        raise CommandLineError("--address needs --backend dask")
    return backend_for(
        options.backend,
        options.workers,
        policy_process=options.policy_process,
        address=options.address,
        timeout=options.dask_timeout,
        security=tls or None,
        envs_per_worker=options.envs_per_worker,
        unit_timeout=options.unit_timeout,
    )


def env_options(pairs: tuple[str, ...]) -> dict[str, Any]:
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
    from saber.errors import counted

    rate = result.frames / result.seconds if result.seconds else 0.0
    click.echo(
        f"{counted(result.new_episodes, 'new episode')} in {result.seconds:,.1f} s "
        f"({rate:,.0f} frames/s); {counted(len(result.records), 'episode')} in {out}",
        err=True,
    )
    if write_report and result.finished:
        from saber.reports import to_markdown

        report = result.typed_report()  # one report for both files and the print
        paths = result.write_report(report=report)
        click.echo(to_markdown(report))
        for path in paths:
            click.echo(f"wrote {path}", err=True)
    for reason, count in result.failure_reasons.items():
        click.echo(f"failed {count} time(s): {reason}", err=True)
    summary = result.summary()
    recovered = f" ({summary['recovered']} after a retry)" if summary["recovered"] else ""
    click.echo(f"{result.finished} finished{recovered}, {len(result.failed)} failed", err=True)


def _missing_videos(records: list[dict[str, Any]], out: Path, video: int) -> bool:
    """Say which videos asked for (the first ``video`` finished episodes of every game)
    are not there, one line each, with why where the note says; True if any.

    A missing video makes the exit status 1, as a failed episode does: something asked
    for is not there. The records and the report are whole; the same command films the
    missing videos again from the replays (:func:`saber.training.video.film_missing`).
    """
    if not video:
        return False  # and the emulator's modules stay out of this process
    from saber.training.video import list_video_errors, video_path

    why = {error["video"]: error["error"] for error in list_video_errors(out)}
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
