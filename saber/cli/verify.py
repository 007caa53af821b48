"""``saber verify``: replay the recorded episodes of a run and check each record."""

from __future__ import annotations

from pathlib import Path

import click

from saber.cli.errors import saber_errors_as_messages
from saber.cli.options import renamed_seed, sample_option, workers_option


@click.command("verify")
@click.argument("run_dir", metavar="RUN", type=click.Path(exists=True, path_type=Path))
@sample_option(
    "Play N episodes drawn at random (the same --sample-seed draws the same ones); "
    "every replay is checked statically all the same [default: play every finished "
    "episode].",
)
@click.option("--sample-seed", default=0, show_default=True, help="Seed of the --sample draw.")
@renamed_seed("verify", "--sample-seed", "the seed of the --sample draw")
@workers_option("Worker processes [default: one per core]; 0 verifies in this process.")
@saber_errors_as_messages
def verify_command(
    run_dir: Path, sample: int | None, sample_seed: int, workers: int | None
) -> None:
    """Replay the recorded episodes of RUN (a saber eval directory, or a training log
    recorded with replays=True) and check each record against its replay.

    Every replay is checked first, sampled or not: a regular file inside RUN, its SHA-256
    the record's, its header naming the record's game, episode, seed, agent, run and
    steps. Each episode drawn is then played again from its seed and its recorded actions,
    without the policy, in a fresh env with the settings its replay's header records;
    its score, score_5min, score_30min, frames, steps, end, rollovers and infinite must
    equal the record's exactly. run.json must agree with the replays' headers (settings,
    agent, run name), and the records with its request: each episode once, none outside
    it (missing episodes are counted). Prints the work before playing, a progress bar on
    a terminal, one line per mismatch (naming its field), then a summary. Exit status 0
    only when nothing fails. It proves that the recorded play produces the scores; not
    that a given policy produced the play.
    """
    import sys

    from saber.errors import ExitCode
    from saber.replay import verify_run, verify_training_log

    def say(line: str) -> None:
        click.echo(line, err=True)

    if run_dir.is_file():
        result = verify_training_log(
            run_dir, sample=sample, seed=sample_seed, workers=workers, say=say
        )
    else:
        result = verify_run(run_dir, sample=sample, seed=sample_seed, workers=workers, say=say)
    for line in result.lines():
        click.echo(line)
    for note in result.versions:
        click.echo(f"note: {note}", err=True)
    click.echo(result.summary(), err=True)
    if not result.ok:
        sys.exit(ExitCode.FAILED)
