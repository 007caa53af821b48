"""``saber.evaluate``: run a policy for N episodes per game under the SABER protocol.

One straight line: check the request, open the run directory, start the backend, play
the episodes still to play, summarise. Episodes, failures, retries, resuming and the
worker processes' rules (``if __name__ == "__main__":``) are in docs/harness.md.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from saber.errors import SaberError, counted
from saber.games import resolve_games
from saber.harness.agent_forms import resolve_agent
from saber.harness.backends import Backend, backend_or_default, capped_to_work
from saber.harness.executor_base import Executor
from saber.harness.options import EnvOptions, Recording, check_count, check_episodes
from saber.harness.policies import Policy
from saber.harness.policy_process import remove_orphaned_blocks
from saber.harness.result import EvaluationResult
from saber.harness.run_loop import Progress, RunLoop
from saber.harness.store import ResultsStore, new_run
from saber.harness.work import Job, plan_units
from saber.protocol.seeds import SEED_SCHEME, episode_seed
from saber.stop_signals import stop_signals_as_interrupts

if TYPE_CHECKING:
    from saber.protocol.settings import SaberSettings
    from saber.rundir import RunFile

# Imported where used: saber.training.video (it loads Gymnasium and the envs), and the env
# stack (saber.envs, ale-py, OpenCV) not at all. This process plans, stores and reports;
# the workers play. Importing the emulator here would cost the main process CPU on every
# run, part of it before the workers are spawned.

#: (episode, seed) pairs to play, per game.
Pending = dict[str, list[tuple[int, int]]]


def _option(value: Any, kinds: tuple[type, ...], name: str, example: str) -> Any:
    """``value``, or the first of ``kinds`` made with no arguments for None; a
    :class:`SaberError` for anything that is none of ``kinds``."""
    if value is None:
        return kinds[0]()
    if not isinstance(value, kinds):
        raise SaberError(f"Expect `{name}` to be {example} (saber.harness), actually: {value!r}")
    return value


def _check_plain(episodes: object, base_seed: object, run: object) -> None:
    """Refuse a bad count, seed or run name in one line."""
    check_episodes(episodes)
    check_count("base_seed", base_seed, minimum=0)
    if run is not None and (not isinstance(run, str) or not run.strip()):
        raise SaberError(f"Expect `run` to be a non-empty name, actually: {run!r}")


def _options(
    backend: object, env_options: object, recording: object
) -> tuple[Backend, EnvOptions, SaberSettings, Recording]:
    """The three option objects checked (None: their defaults), a recording the backend
    cannot make refused before any episode runs, and the env's settings."""
    runs_on = backend_or_default(backend)
    env = _option(env_options, (EnvOptions,), "env_options", "EnvOptions(overrides, ...)")
    kept = _option(recording, (Recording,), "recording", "Recording(...)")
    runs_on.check_recording(kept)
    if kept.video:
        from saber.training.video_writer import require_video_extra

        require_video_extra()
    return runs_on, env, env.settings(), kept


@dataclass(frozen=True)
class _Request:
    """One call of :func:`evaluate`, checked: what it asks for, fixed before the run
    directory is read."""

    started: float  # time.monotonic() at the call
    game_ids: tuple[str, ...]
    episodes: int
    base_seed: int
    run: str | None
    agent: str  # the name written in the records
    policy: Any  # the spec, class, factory or object that acts
    directory: Path
    backend: Backend  # as asked for: _announce caps its workers to the work
    env: EnvOptions
    settings: SaberSettings
    recording: Recording
    progress: bool | None
    say: Callable[[str], None]

    @cached_property
    def requested(self) -> tuple[tuple[str, int], ...]:
        """(game, episode) of every episode asked for."""
        return tuple((game, index) for game in self.game_ids for index in range(self.episodes))

    def run_file(self) -> RunFile:
        """This session's ``run.json``, to resume the directory's or start it."""
        command = self.recording.command
        return new_run(
            settings=self.settings.as_dict(),
            deviations={name: list(pair) for name, pair in self.settings.deviations().items()},
            agent=self.agent,
            games=self.game_ids,
            episodes=self.episodes,
            base_seed=self.base_seed,
            seed_scheme=SEED_SCHEME,
            command=None if command is None else list(command),
            run=self.run,
        )

    def pending(self, store: ResultsStore) -> Pending:
        """(episode, seed) pairs to play per game: those not finished on disk."""
        pending: Pending = {}
        for game, index in self.requested:
            pairs = pending.setdefault(game, [])
            if (game, index) not in store.finished:
                pairs.append((index, episode_seed(self.base_seed, game, index)))
        return pending

    def job(self, runs_on: Backend) -> Job:
        """What every worker of ``runs_on`` needs besides its unit."""
        films = None
        if self.recording.video:
            from saber.training.video import VideoRequest

            films = VideoRequest(str(self.directory.resolve()), self.recording.video)
        overrides = dict(self.env.overrides)
        threads = runs_on.threads_per_env()
        envs = runs_on.envs_per_worker
        return Job(
            self.agent, self.policy, overrides, envs, threads, films, self.run,
            self.recording.replays,
        )  # fmt: skip


def _announce(request: _Request, work: int) -> Backend:
    """Say what was cleaned and what will run; the backend capped to the ``work``."""
    orphans = remove_orphaned_blocks()
    if orphans:
        request.say(
            f"removed {len(orphans)} folder(s) of a policy process whose run was killed "
            f"outright: {', '.join(map(str, orphans))}"
        )
    runs_on, capped = capped_to_work(request.backend, work)
    for line in (capped, runs_on.workers_line() if work else None):
        if line:
            request.say(line)
    return runs_on


@contextlib.contextmanager
def _workers_starting(runs_on: Backend, job: Job, work: int) -> Iterator[Executor | None]:
    """The executor started now if its backend starts before the quick probe (local
    worker processes, this process), closed on the way out; None for the others (Dask
    starts with the session), and when there is no ``work``: no episode to play.

    Started before the quick probe and the session's start in ``run.json``, a worker's
    start-up (a new interpreter importing saber and the agent's module) runs while this
    process works, not after it (benchmarks/eval_speed.py least-work measures the whole run).
    Everything that can refuse the run without playing
    (games, the agent spec, the directory's lock and its run) is checked before.
    """
    started = runs_on.starts_before_probe and work > 0
    backend = runs_on.start(job) if started else None
    try:
        yield backend
    finally:
        if backend is not None:
            backend.close()


def _session(request: _Request, store: ResultsStore) -> EvaluationResult:
    """Everything after the directory is read: what to play, the workers, the quick
    probe, the policy's check, then the session.

    The directory is locked and read (every check of the run) before any worker starts,
    and written only once the quick probe has passed (:func:`_play`: ``store.begin``).
    """
    pending = request.pending(store)
    work = sum(len(pairs) for pairs in pending.values())
    runs_on = _announce(request, work)
    job = request.job(runs_on)
    with _workers_starting(runs_on, job, work) as started:
        if not request.env.allow_non_saber:  # behaviour, beyond the settings: the quick probe
            from saber.check.gate import require_saber_env

            require_saber_env(dict(request.env.overrides))
        if started is not None:
            # Before the session writes anything: the first local worker's verdict (it
            # builds the policy at its start), or this process's own build. Dask's workers
            # build it as its executor starts, before the first unit.
            started.check_policy()
        return _play(request, store, job, pending, runs_on, started)


def _resume_message(store: ResultsStore, requested: Sequence[tuple[str, int]]) -> str | None:
    """``resuming: 60 of 120 episodes already done`` when the directory holds some."""
    done = sum(key in store.finished for key in requested)
    unresolved = store.log.unresolved()
    failed = sum(key in unresolved for key in requested)
    if not done and not failed:
        return None
    again = f"; {failed} that failed before run again" if failed else ""
    return f"resuming: {done} of {counted(len(requested), 'episode')} already done{again}"


def _play(
    request: _Request,
    store: ResultsStore,
    job: Job,
    pending: Pending,
    runs_on: Backend,
    started: Executor | None,
) -> EvaluationResult:
    """The session: play the ``pending`` episodes (on ``started``, or on ``runs_on``
    started here), film what is missing, and record in ``run.json`` how it ended."""
    store.begin()
    for line in (store.recovered, _resume_message(store, request.requested)):
        if line:
            request.say(line)
    units = plan_units(pending, runs_on.parallelism, job.envs_per_worker)
    earlier = [key for key in request.requested if key in store.finished]  # not played again
    bar = Progress(sum(len(unit.episodes) for unit in units), request.progress, job.agent)
    video = request.recording.video
    loop: RunLoop | None = None
    status = "failed"  # unless it finishes, or is interrupted
    try:
        if units:
            executor = started or runs_on.start(job)
            loop = RunLoop(store, executor, bar, job)
            try:
                loop.submit(units)
                loop.run()
            except KeyboardInterrupt:
                loop.drain()
                raise
            finally:
                executor.close()
        if video:  # videos an earlier session could not make (a full disk)
            from saber.training.video import film_missing

            film_missing(store.directory, earlier, video)
        status = "finished"
    except KeyboardInterrupt:
        status = "interrupted"
        raise
    finally:
        bar.close()
        result = _result(request, store, loop)
        films_made = None
        if video:
            from saber.training.video import video_entries

            films_made = video_entries(store.directory)
        problem = store.end_session(result.summary(), status, films_made)
        if problem:
            request.say(f"warning: {problem}")
    return result


def _result(request: _Request, store: ResultsStore, loop: RunLoop | None) -> EvaluationResult:
    """The result of the requested episodes, read from the store's state."""
    unresolved = store.log.unresolved()
    wanted = set(request.requested)
    records = [
        store.finished.get(key) or unresolved[key]
        for key in request.requested
        if key in store.finished or key in unresolved
    ]
    return EvaluationResult(
        directory=store.directory,
        records=records,
        new_episodes=store.new_finished + (loop.final_failures if loop else 0),
        frames=loop.frames if loop else 0,
        seconds=time.monotonic() - request.started,
        non_saber=not request.settings.is_compliant,
        failed=[record for record in records if "error" in record],
        failures=[
            record
            for record in store.log.failures
            if (record.get("game"), record.get("episode")) in wanted
        ],
    )


def evaluate(
    policy: str | Policy | Callable[..., Any],
    games: str | Sequence[str],
    episodes: int = 100,
    *,
    out: str | Path | None = None,
    base_seed: int = 0,
    agent: str | None = None,
    run: str | None = None,
    backend: Backend | None = None,
    env_options: EnvOptions | None = None,
    recording: Recording | None = None,
    progress: bool | None = None,
    on_message: Callable[[str], None] | None = None,
) -> EvaluationResult:
    """Evaluate a policy on games under the SABER protocol; resumable.

    Args:
        policy: an agent spec (``"random"``, ``"noop"``, ``"constant:K"``,
            ``"epsilon-constant:K"``, ``"module:attr"``: :mod:`saber.harness.policies`), a
            policy class or factory (no required parameters; built once in each worker), or
            a policy object (``uint8`` (n, 4, 84, 84) to n actions), told apart as ``saber
            eval --agent`` tells them (:mod:`saber.harness.agent_forms`); objects, classes
            and factories must pickle (module level) unless ``Inline()``.
        games: any single-player ROM of ale-py in any spelling (no baseline beyond the 61
            SABER games: not in the aggregates), or ``all``, ``atari57``, ``atari5``, ``atari10``.
        episodes: episodes per game (the protocol: 100; at most
            :data:`~saber.harness.options.MAX_EPISODES`: all are planned before any plays).
        out: the run directory: created, or resumed if it holds the same run asked for whole
            (every game of it, at least its episodes; more extends it); None: a temporary one.
        base_seed: the seed all episode seeds derive from (non-negative).
        agent: the name written in the records (default: the spec, or module:qualname).
        run: the run name (one training seed, say), written in ``run.json`` and every
            record; None writes no ``run`` key. A directory holds one run.
        backend: where episodes run, and how fast (never what they score): ``Inline()``,
            ``Processes()`` (the default: one worker per usable core) or ``Dask(...)``
            (:mod:`saber.harness.backends`); never more workers than episodes to play.
        env_options: ``EnvOptions(overrides, allow_non_saber=False)``; None: SABER's.
        recording: ``Recording(replays=True, video=0, command=None)``: what the directory
            keeps besides the records; None: those.
        progress: show a progress bar on stderr (default: when stderr is a terminal).
        on_message: called with each line for the user (``resuming: 60 of 120 episodes
            already done``); None: silent.

    Returns:
        An :class:`EvaluationResult`; ``.report()`` gives the SABER report.

    Raises:
        ProtocolError: settings that break SABER without ``allow_non_saber``.
        PolicyError: a bad agent spec, a callable of neither form, a policy that cannot
            be built (before anything is stored), or one that breaks the policy protocol.
        RepeatedFailureError: the same failure ended several units in a row.
        RunMismatchError: ``out`` holds a different run, or more than this call asks for.
        StoreWriteError: results cannot be written (disk full); finished episodes are kept.
        BackendError: Dask is missing or its scheduler cannot be reached.
        KeyboardInterrupt: after stopping the workers and storing what had finished (on
            SIGTERM: :class:`Terminated`, a KeyboardInterrupt).

    Example:
        >>> import tempfile, saber
        >>> from saber.harness import EnvOptions, Inline
        >>> with tempfile.TemporaryDirectory() as out:
        ...     result = saber.evaluate("noop", "pong", episodes=1, out=out, progress=False,
        ...         backend=Inline(envs_per_worker=1),
        ...         env_options=EnvOptions({"max_episode_frames": 400}, allow_non_saber=True))
        >>> result.finished, result.non_saber
        (1, True)
    """
    started = time.monotonic()
    _check_plain(episodes, base_seed, run)
    runs_on, env, settings, recording = _options(backend, env_options, recording)
    game_ids = tuple(game.ale_id for game in resolve_games(games))
    resolved = resolve_agent(policy, agent, import_module=runs_on.imports_the_agent)
    directory = Path(tempfile.mkdtemp(prefix="saber-eval-") if out is None else out)
    request = _Request(
        started, game_ids, episodes, base_seed, run, resolved.name, resolved.policy, directory,
        runs_on, env, settings, recording, progress, on_message or (lambda message: None),
    )  # fmt: skip
    with stop_signals_as_interrupts(), ResultsStore.read(directory, request.run_file()) as store:
        return _session(request, store)
