"""The options of ``saber eval``, in four groups, and :class:`EvalOptions`, their values.

Help lists them in the order written here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from saber.cli.errors import CommandLineError
from saber.cli.options import at_least, bounded_number, stacked

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class EvalOptions:
    """The values of ``saber eval``'s options, one field per option (named as its value)."""

    agent: str
    agent_name: str | None
    games: str
    episodes: int
    out: Path
    run_name: str | None
    workers: int | None
    envs_per_worker: int
    policy_process: bool
    base_seed: int
    unit_timeout: float  # seconds
    backend: str
    address: str | None
    dask_timeout: float  # seconds
    tls_ca_file: str | None
    tls_cert: str | None
    tls_key: str | None
    env_option: tuple[str, ...]
    allow_non_saber: bool
    progress: bool | None
    write_report: bool
    video: int
    replays: bool


def _episodes_in_bounds(context: click.Context, parameter: click.Parameter, value: int) -> int:
    """``--episodes`` from 1 to :data:`~saber.harness.options.MAX_EPISODES`, else one line
    (``ExitCode.USAGE``) before anything is planned."""
    from saber.harness.options import MAX_EPISODES, MAX_EPISODES_WHY  # loads numpy: here

    at_least(1)(context, parameter, value)
    if value > MAX_EPISODES:
        raise CommandLineError(
            f"--episodes must be <= {MAX_EPISODES:,} ({MAX_EPISODES_WHY}), actually: {value:,}"
        )
    return value


_what_to_play = stacked(
    click.option(
        "--agent",
        required=True,
        help="random, noop, constant:K, epsilon-constant:K[:EPS], a trained agent saber ships "
        "(ppo-pong, ppo-breakout, ppo-qbert and more: saber list names every one), "
        "conv-actor:PATH, or module:attr (a policy, a policy class, or a factory; the module "
        "may be in the current directory).",
    ),
    click.option(
        "--agent-name",
        default=None,
        metavar="NAME",
        help="The agent's name in the records and reports [default: the --agent spec].",
    ),
    click.option(
        "--games",
        required=True,
        help="Comma-separated game names (any single-player ROM of ale-py; outside the 61 SABER "
        "games, no SABER baseline), or all (the 61), atari57, atari5, atari10. See saber list.",
    ),
    click.option(
        "--episodes",
        default=100,
        show_default=True,
        callback=_episodes_in_bounds,
        # The bound is saber.harness.options.MAX_EPISODES (a test holds the two together).
        help="Episodes per game, 1 to 10,000 (every episode is planned in memory before "
        "any plays).",
    ),
    click.option(
        "--out",
        "out",
        required=True,
        metavar="OUT",
        type=click.Path(file_okay=False, path_type=Path),
        help="Run directory; running the same command again resumes it (a call asks for the "
        "whole run: every game of it and at least its episodes; more extends it).",
    ),
    click.option(
        "--run",
        "run_name",
        default=None,
        help="Run name (e.g. the training seed), written in OUT/run.json and every record; "
        "reports tell runs of one agent apart by it. Default: no name.",
    ),
)

_how_it_plays = stacked(
    click.option(
        "--workers",
        type=int,
        default=None,
        callback=at_least(0),
        help="Worker processes [default: one per usable core, measured best with real policies], never more than the episodes to play; 0 runs in this process. With --backend dask and no --address: local cluster size.",
    ),
    bounded_number(
        "--envs-per-worker",
        default=8,
        minimum=1,
        help="Envs per worker's vector env: the policy's batch size (8: within 2% of 16 with real policies, filled by half the episodes).",
    ),
    click.option(
        "--policy-process",
        is_flag=True,
        help="Build the policy once, in a process of its own that acts for every worker on batches of workers x envs-per-worker (a policy on a GPU: one model, one CUDA context), instead of once per worker.",
    ),
    bounded_number(
        "--seed",
        "base_seed",
        default=0,
        minimum=0,
        help="Base seed; every episode's seed derives from it, the game and the episode index.",
    ),
    bounded_number(
        "--unit-timeout",
        default=300.0,
        minimum=0,
        help="Seconds a work unit may go without frame progress before its worker is stopped; "
        "the unit is retried once, then its episodes are recorded as failed. Not with --workers 0.",
        above=True,
    ),
)


def _pem_file(flag: str, what: str) -> Callable[[F], F]:
    """A PEM file of the TLS connection to a Dask scheduler."""
    return click.option(
        flag,
        type=click.Path(exists=True, dir_okay=False),
        help=f"With a tls:// --address: {what}.",
    )


_dask = stacked(
    click.option(
        "--backend",
        type=click.Choice(["processes", "dask"]),
        default="processes",
        show_default=True,
        help="Where episodes run: local worker processes (Inline with --workers 0) or a "
        "Dask cluster.",
    ),
    click.option(
        "--address",
        default=None,
        help="Dask scheduler address (tcp://host:8786 or tls://host:8786); needs "
        'pip install "saber-ale[dask]", or from a checkout pip install ".[dask]".',
    ),
    bounded_number(
        "--dask-timeout",
        default=10.0,
        minimum=0,
        help="Seconds to wait for the Dask scheduler (and, beyond --unit-timeout, for a "
        "worker in place of one that the run stopped).",
        above=True,
    ),
    _pem_file("--tls-ca-file", "the CA certificate (PEM) that signed the cluster's"),
    _pem_file("--tls-cert", "this client's certificate (PEM)"),
    _pem_file("--tls-key", "this client's private key (PEM)"),
)

_settings_and_outputs = stacked(
    click.option(
        "--env-option",
        "env_option",
        multiple=True,
        metavar="KEY=VALUE",
        help="Override a SABER setting (value read as JSON), e.g. max_frames_without_reward=400. Repeatable.",
    ),
    click.option(
        "--allow-non-saber",
        is_flag=True,
        help="Run with --env-option values that break the protocol; the results are marked as not SABER.",
    ),
    click.option(
        "--progress/--no-progress",
        default=None,
        help="Progress bar on stderr [default: when stderr is a terminal].",
    ),
    click.option(
        "--report/--no-report",
        "write_report",
        default=True,
        show_default=True,
        help="Write DIR/report.json and DIR/report.md at the end.",
    ),
    click.option(
        "--video",
        type=click.IntRange(min=0),
        default=0,
        show_default=True,
        help="Film the first K episodes of every game: OUT/videos/<game>/episode-<n>.mp4, "
        'every frame in colour (needs pip install "saber-ale[video]", or from a checkout '
        'pip install ".[video]").',
    ),
    click.option(
        "--replays/--no-replays",
        default=True,
        show_default=True,
        help="Record each episode's replay (OUT/replays/, a few kB per episode) so that saber "
        "verify can check every score and saber replay film any episode.",
    ),
)

eval_options = stacked(_what_to_play, _how_it_plays, _dask, _settings_and_outputs)
"""Every option of ``saber eval``, in the order ``saber eval --help`` lists them."""
