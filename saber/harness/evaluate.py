"""``saber.evaluate``: run a policy for N episodes per game under the SABER protocol.

Every episode is fixed before the run (game, index, seed: :mod:`saber.harness.work`),
runs on a vector env with its own seeded reset (:mod:`saber.harness.runner`), on this
process, local processes or a Dask cluster (:mod:`saber.harness.backends`), and is stored
as soon as it ends (:mod:`saber.harness.store`). An episode counts only at its real end:
game over, the stuck timeout or the 100-hour cap; never "the first N to finish".

Failures: an exception while playing, a worker that dies, or a unit that makes no frame
progress for ``unit_timeout`` seconds (its worker is stopped) fails the unit: each of its
unfinished episodes gets an ``error`` record for that attempt, is retried once alone in a
new unit, and ends as a failure if that fails too (a failure that ends several units
sharing one vector env fails each of them, and counts once). The other units keep
running. The same failure ending :data:`REPEATED_FAILURES` units in a row, with no
episode finishing in between, stops the run (:class:`RepeatedFailureError`): it would fail every episode. A
policy that breaks the policy protocol (wrong shape, invalid actions), or a worker that
cannot build the policy or the env, stops the run at once. Ctrl-C or SIGTERM stops the
workers; finished episodes are on disk, and the same call resumes. ``run.json`` records
each session and how it ended: finished, interrupted (Ctrl-C, SIGTERM) or failed. Every failed attempt stays in
``episodes.jsonl``: :attr:`EvaluationResult.failures` and the ``summary`` in ``run.json``
count them even after a successful retry.

Costs worth knowing: each episode starts with a seeded reset, which reloads the ROM
(about 0.08 s of CPU in ale-py 0.12): the price of per-episode seeds. Worker processes are
started with ``spawn`` and import the calling script, so a script must call
:func:`evaluate` under ``if __name__ == "__main__":``. Each worker holds its own copy of
the policy (built from the spec or the policy class in the worker, or unpickled).
"""

from __future__ import annotations

import contextlib
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from saber.errors import ProtocolError, SaberError
from saber.games import resolve_games
from saber.harness.backends import (
    Backend,
    Dask,
    Inline,
    LocalBackend,
    Processes,
    RunsOn,
    capped_to_work,
    workers_line,
)
from saber.harness.policies import (
    Policy,
    PolicyError,
    check_agent_module,
    is_builtin_spec,
    resolve_spec,
)
from saber.harness.policy_process import remove_orphaned_blocks
from saber.harness.store import ResultsStore, provenance
from saber.harness.work import (
    SEED_SCHEME,
    EpisodeDone,
    Event,
    FramesPlayed,
    Job,
    UnitFailed,
    UnitFinished,
    WorkUnit,
    episode_seed,
    plan_units,
)
from saber.protocol.rundir import (
    FailedAttempt,
    FailureSummary,
    StoreWriteError,
    write_atomically,
)
from saber.protocol.settings import SaberSettings

# Imported where used: saber.training.video (it loads Gymnasium and the envs), and the env
# stack (saber.envs, ale-py, OpenCV) not at all. This process plans, stores and reports;
# the workers play. Importing the emulator here cost the main process about 0.2 s of CPU
# a run on 2 cores, 0.05-0.1 s of it before the workers were spawned (docs/harness.md).

__all__ = [
    "DEFAULT_ENVS_PER_WORKER",
    "DEFAULT_UNIT_TIMEOUT",
    "REPEATED_FAILURES",
    "EvaluationResult",
    "RepeatedFailureError",
    "Terminated",
    "evaluate",
    "terminate_once",
]

# The policy's batch. Measured with real policies (python benchmarks/eval_defaults.py, 2
# workers on 2 cores, Freeway, 32 episodes): ppo-pong ran at 8,431 / 8,569 / 8,561
# frames/s with 4 / 8 / 16 envs; a PyTorch NatureCNN used 76.0 / 70.3 / 68.8 CPU seconds.
# 8 is within 2% of 16, and fills every row with half the episodes (16 on 2 cores) and
# leaves fewer rows idle at a game's end.
DEFAULT_ENVS_PER_WORKER = 8
# Seconds without frame progress before a unit's worker is stopped: far above a seeded
# reset (0.25 s) or a policy's batch, short enough that a hang costs minutes, not hours.
DEFAULT_UNIT_TIMEOUT = 300.0
REPEATED_FAILURES = 3  # the same failure ending this many units in a row stops the run
_POLL_SECONDS = 0.5


class RepeatedFailureError(SaberError):
    """The same failure ended several work units in a row: the run was stopped."""


class Terminated(KeyboardInterrupt):
    """The process was sent SIGTERM (``kill PID``, a batch system's stop): handled as
    Ctrl-C is (the workers are stopped, finished episodes are on disk, the same call
    resumes), and a ``KeyboardInterrupt`` to code that catches that."""


def terminate_once() -> Callable[[int, object], None]:
    """A SIGTERM handler that raises :class:`Terminated` the first time and ignores every
    later SIGTERM: a batch system or a user that sends two in a row (50 ms apart, or to
    the whole process group) still gets the clean stop, with the session recorded as
    interrupted and exit status 143, not a death by the signal halfway through it.
    ``saber eval`` installs it for its whole life; :func:`evaluate` while it runs."""
    sent = False

    def terminated(signum: int, frame: object) -> None:
        nonlocal sent
        if not sent:
            sent = True
            raise Terminated()

    return terminated


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """While running, SIGTERM raises :class:`Terminated` in the main thread (once: see
    :func:`terminate_once`), unless the program installed a SIGTERM handler of its own
    (which is then left alone)."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    ):
        yield
        return
    signal.signal(signal.SIGTERM, terminate_once())
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


@dataclass
class EvaluationResult:
    """What a call to :func:`evaluate` left in its run directory.

    Attributes:
        directory: the run directory (``episodes.jsonl``, ``run.json``).
        records: one record per requested episode, in (game, episode) order: its finished
            record, or for an episode that ended as a failure its last ``error`` record
            (no score); episodes never run (a stopped run) are missing.
        new_episodes: episodes that finished (or failed) during this call.
        frames: emulator frames of the episodes finished during this call.
        seconds: wall-clock duration of this call.
        non_saber: the settings broke the SABER protocol.
        failed: the records of requested episodes that ended as failures.
        failures: every failed attempt of a requested episode (``error`` records, this
            call's and earlier sessions', retried ones included), in file order.
    """

    directory: Path
    records: list[dict[str, Any]]
    new_episodes: int
    frames: int
    seconds: float
    non_saber: bool = False
    failed: list[dict[str, Any]] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)

    @property
    def finished(self) -> int:
        """Requested episodes with a score."""
        return sum("error" not in record for record in self.records)

    @property
    def failure_reasons(self) -> dict[str, int]:
        """Failed attempts per reason (``error`` text), most frequent first."""
        return FailureSummary.of(self.failures, finished=()).reasons

    def summary(self) -> dict[str, Any]:
        """Counts for people and scripts: ``finished``, ``failed`` (episodes that ended as
        failures), ``failed_attempts``, ``recovered`` (failed at least once, then
        finished), and ``failure_reasons`` (attempts per reason)."""
        failures = FailureSummary.of(
            self.failures, [(r["game"], r["episode"]) for r in self.records if "error" not in r]
        )
        return {
            "finished": self.finished,
            "failed": len(self.failed),
            "failed_attempts": failures.attempts,
            "recovered": len(failures.recovered),
            "failure_reasons": failures.reasons,
        }

    def mean_scores(self, key: str = "score") -> dict[str, float]:
        """Mean score per game (ale id) over the finished episodes; ``key`` may be
        ``score_5min`` or ``score_30min``."""
        by_game: dict[str, list[float]] = {}
        for record in self.records:
            if "error" not in record:
                by_game.setdefault(record["game"], []).append(record[key])
        return {game: float(np.mean(scores)) for game, scores in by_game.items()}

    def report(self, seed: int = 0, n_resamples: int = 2000) -> dict[str, Any]:
        """The full SABER report of the run directory (:func:`saber.reports.build_report`)."""
        from saber.reports import build_report
        from saber.scoring import read_scores

        return build_report(read_scores(self.directory), seed=seed, n_resamples=n_resamples)

    def write_report(
        self, seed: int = 0, n_resamples: int = 2000, report: dict[str, Any] | None = None
    ) -> list[Path]:
        """Write ``report.json`` and ``report.md`` into the run directory; return their paths.

        ``report``: an already built :meth:`report` (built here when None). Each file is
        written atomically: whole or absent (or the previous one), never cut short.

        Raises:
            StoreWriteError: a file could not be written (disk full); the episodes are
                intact, and ``saber report DIR`` writes the report again.
        """
        from saber.reports import to_json, to_markdown

        if report is None:
            report = self.report(seed=seed, n_resamples=n_resamples)
        json_path, markdown_path = self.directory / "report.json", self.directory / "report.md"
        for path, text in ((json_path, to_json(report)), (markdown_path, to_markdown(report))):
            try:
                write_atomically(path, text)
            except OSError as error:
                raise StoreWriteError(
                    f"Cannot write {path}: {error.strerror or error}. The episodes are "
                    f"intact in {self.directory}; free some space and run saber report "
                    f"{self.directory} --json {json_path} --markdown {markdown_path}."
                ) from error
        return [json_path, markdown_path]


def _check_positive(name: str, value: int, minimum: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise SaberError(f"Expect `{name}` to be an integer >= {minimum}, actually: {value!r}")


def _settings(overrides: dict[str, Any] | None, allow_non_saber: bool) -> SaberSettings:
    settings = SaberSettings.from_overrides(**(overrides or {}))
    if not settings.is_compliant and not allow_non_saber:
        changes = ", ".join(
            f"{name}={actual!r} (SABER: {saber!r})"
            for name, (saber, actual) in settings.deviations().items()
        )
        raise ProtocolError(
            f"These settings break the SABER protocol: {changes}. Pass allow_non_saber=True "
            "(--allow-non-saber) to run anyway; the results are then marked as not SABER."
        )
    return settings


def _agent_and_policy(
    policy: str | Policy | Callable[..., Any], agent: str | None, check_spec: bool = True
) -> tuple[str, Any]:
    if isinstance(policy, str):
        if check_spec:
            resolve_spec(policy)  # fails here, in the main process, on a bad spec
        return agent or policy.strip(), policy.strip()
    if not callable(policy):
        raise PolicyError(
            f"Expect a policy (a callable mapping observations (n, 4, 84, 84) to n actions), "
            f"a policy class or an agent spec string, actually: {type(policy).__name__}"
        )
    # A class is a factory, as in a "module:Class" spec (the runner builds it per worker).
    name = getattr(policy, "__qualname__", None) or type(policy).__qualname__
    module = getattr(policy, "__module__", None) or type(policy).__module__
    return agent or f"{module}:{name}", policy


class _Progress:
    """A tqdm bar on stderr: episodes done / total, frames per second, time left."""

    def __init__(self, total: int, enabled: bool | None, agent: str) -> None:
        # tqdm.auto's notebook check imports asyncio (about 30 ms): only where IPython runs.
        if "IPython" in sys.modules:
            from tqdm.auto import tqdm
        else:
            from tqdm import tqdm

        self.start = time.monotonic()
        self.frames = 0
        self.bar = tqdm(
            total=total,
            desc=f"saber eval {agent}",
            unit="episode",
            file=sys.stderr,
            disable=not (sys.stderr.isatty() if enabled is None else enabled),
            dynamic_ncols=True,
        )

    def add_frames(self, frames: int) -> None:
        self.frames += frames
        elapsed = max(time.monotonic() - self.start, 1e-9)
        self.bar.set_postfix_str(f"{self.frames / elapsed:,.0f} frames/s", refresh=False)

    def close(self) -> None:
        self.bar.close()


class _Run:
    """The main-process side of a run: stores records, retries, counts, stops."""

    def __init__(
        self, store: ResultsStore, backend: Backend, progress: _Progress, job: Job
    ) -> None:
        self.store = store
        self.backend = backend
        self.progress = progress
        self.job = job
        self.outstanding: dict[int, WorkUnit] = {}
        self.next_unit_id = 0
        self.frames = 0
        self.final_failures = 0  # episodes that ended as failures during this call
        self._streak: tuple[str, int] = ("", 0)  # (failure, units it ended in a row)

    def submit(self, units: Sequence[WorkUnit]) -> None:
        for unit in units:
            self.outstanding[unit.unit_id] = unit
            self.next_unit_id = max(self.next_unit_id, unit.unit_id + 1)
            self.backend.submit(unit)

    def handle(self, event: Event) -> None:
        if isinstance(event, EpisodeDone):
            record = event.record
            if (record["game"], record["episode"]) not in self.store.finished:
                if event.replay is not None:  # first the replay, then the record naming it
                    self.store.write_replay(record["replay"], event.replay)
                self.store.write(record)
                self.frames += record["frames"]
                self.progress.bar.update(1)
                self._streak = ("", 0)
        elif isinstance(event, FramesPlayed):
            self.progress.add_frames(event.frames)
        elif isinstance(event, UnitFinished):
            self.outstanding.pop(event.unit_id, None)
        elif isinstance(event, UnitFailed):
            self._failed(event)

    def _on_disk(self) -> str:
        failed = len(self.store.log.unresolved())
        return (
            f"{len(self.store.finished)} finished episodes are on disk in "
            f"{self.store.directory}" + (f", {failed} failed" if failed else "")
        )

    def _failed(self, event: UnitFailed) -> None:
        # One failure may end several units (units sharing a worker's vector env): each
        # unit's unfinished episodes are recorded and retried, the failure counted once.
        units = [self.outstanding.pop(unit_id, None) for unit_id in (event.unit_id, *event.also)]
        failed = [
            (
                unit,
                [item for item in unit.episodes if (unit.game, item[0]) not in self.store.finished],
            )
            for unit in units
            if unit is not None
        ]
        if not failed:
            return
        for unit, unfinished in failed:
            for episode, seed in unfinished:  # every failed attempt stays in the history
                attempt = FailedAttempt(
                    unit.game, episode, seed, self.job.agent, event.error, event.kind,
                    unit.attempt, run=self.job.run,
                )  # fmt: skip
                self.store.write(attempt.to_dict())
        game = failed[0][0].game
        if event.kind == "policy":
            raise PolicyError(f"{event.error} (game {game}). {self._on_disk()}.")
        if event.kind == "setup":
            raise SaberError(
                f"A worker could not build the policy or the {game} env: {event.error}. "
                f"{self._on_disk()}; fix the cause and run the same command to resume."
            )
        error, count = self._streak
        self._streak = (event.error, count + 1 if error == event.error else 1)
        if self._streak[1] >= REPEATED_FAILURES:
            raise RepeatedFailureError(
                f"Stopped: the same failure ended {self._streak[1]} work units in a row, with "
                f"no episode finishing in between: {event.error}. {self._on_disk()}. Fix "
                "the cause (the policy, or what hangs: see --unit-timeout) and run the same "
                "command to resume; failed episodes run again."
            )
        for unit, unfinished in failed:
            if unit.attempt == 0:
                # Alone in its unit, an episode that fails again is the one that fails.
                self.submit(
                    [
                        WorkUnit(self.next_unit_id + i, unit.game, (item,), attempt=1)
                        for i, item in enumerate(unfinished)
                    ]
                )
                continue
            self.final_failures += len(unfinished)
            self.progress.bar.update(len(unfinished))

    def run(self) -> None:
        while self.outstanding:
            for event in self.backend.events(_POLL_SECONDS):
                self.handle(event)

    def drain(self) -> None:
        """Store the records that already arrived (after Ctrl-C), without waiting."""
        for event in self.backend.events(0):
            if isinstance(event, EpisodeDone):
                self.handle(event)


@contextlib.contextmanager
def _workers_starting(
    runs_on: RunsOn, job: Job, unit_timeout: float | None, work: int
) -> Iterator[Backend | None]:
    """Local worker processes started now, closed on the way out (None for the others,
    and when there is no ``work``: no episode to play).

    Started before the quick probe and the session's start in ``run.json``, a worker's
    start-up (a new interpreter importing saber and the agent's module) runs while this
    process works, not after it: about 0.5 s of wall time a run on 2 cores
    (benchmarks/eval_least_work.py). Everything that can refuse the run without playing
    (games, the agent spec, the directory's lock and its run) is checked before.
    """
    started = isinstance(runs_on, Processes) and work > 0
    backend = runs_on.start(job, unit_timeout) if started else None
    try:
        yield backend
    finally:
        if backend is not None:
            backend.close()


def _resume_message(store: ResultsStore, requested: Iterable[tuple[str, int]]) -> str | None:
    """``resuming: 60 of 120 episodes already done`` when the directory holds some."""
    requested = list(requested)
    done = sum(key in store.finished for key in requested)
    unresolved = store.log.unresolved()
    failed = sum(key in unresolved for key in requested)
    if not done and not failed:
        return None
    again = f"; {failed} that failed before run again" if failed else ""
    return f"resuming: {done} of {len(requested)} episodes already done{again}"


def evaluate(
    policy: str | Policy | Callable[..., Any],
    games: str | Sequence[str],
    episodes: int = 100,
    *,
    out: str | Path | None = None,
    backend: RunsOn | None = None,
    envs_per_worker: int = DEFAULT_ENVS_PER_WORKER,
    base_seed: int = 0,
    agent: str | None = None,
    run: str | None = None,
    env_options: dict[str, Any] | None = None,
    allow_non_saber: bool = False,
    progress: bool | None = None,
    command: list[str] | None = None,
    unit_timeout: float | None = DEFAULT_UNIT_TIMEOUT,
    on_message: Callable[[str], None] | None = None,
    emulation_threads: int | None = None,
    video: int = 0,
    replays: bool = True,
) -> EvaluationResult:
    """Evaluate a policy on games under the SABER protocol; resumable.

    Args:
        policy: an agent spec (``"random"``, ``"noop"``, ``"constant:K"``,
            ``"epsilon-constant:K"``, ``"module:attr"``; see :mod:`saber.harness.policies`),
            a policy class, or a policy object: a callable mapping ``uint8``
            (n, 4, 84, 84) to n actions. A class is a factory, as in a ``"module:Class"``
            spec: it is instantiated without arguments once in each worker (once in this
            process with ``Inline()``), never called on observations. Objects and classes
            must be picklable (classes: defined at module level) unless ``Inline()``.
        games: names of any single-player ROM of ale-py, in any spelling (games outside
            the 61 SABER games have no SABER baseline: reports leave them out of the
            aggregates), or ``all`` (the 61 SABER games), ``atari57``, ``atari5``,
            ``atari10``.
        episodes: episodes per game (the protocol: 100).
        out: the run directory; created, or resumed when it holds the same run (asked for
            whole: every game of it and at least its episodes; more extends it). None: a
            new temporary directory.
        backend: where the episodes run (never more workers than episodes to play:
            ``Processes(500)`` for 2 episodes starts 2, and ``on_message`` says so):
            ``Inline()`` (this process),
            ``Processes(workers=N)`` (local worker processes; the default, one per usable core)
            or ``Dask(address=..., workers=N, timeout=..., security=...)`` (a Dask
            cluster; extra ``dask``), from :mod:`saber.harness`.
        envs_per_worker: sub-envs of each worker's vector env: the policy's batch size.
        base_seed: the seed all episode seeds derive from (non-negative).
        agent: the name written in the records (default: the spec, or module:qualname).
        run: the run name (one training seed of the agent, say), written in ``run.json``
            and in every record as ``run``; None (the default) writes no ``run`` key.
            Part of what defines the run: a directory holds one run.
        env_options: overrides of :class:`~saber.envs.SaberSettings`.
        allow_non_saber: run even when ``env_options`` break the protocol (the run is
            then marked ``non_saber``, and so is its report).
        progress: show a progress bar on stderr (default: when stderr is a terminal).
        command: the command line recorded in ``run.json`` (default: ``sys.argv``).
        unit_timeout: seconds a unit may go without frame progress before its worker is
            stopped and the unit fails (retried once, then recorded); None: no deadline.
            Worker processes and Dask only: ``Inline()`` cannot stop itself.
        on_message: called with each line for the user (``resuming: 60 of 120 episodes
            already done``); None: silent.
        emulation_threads: threads of each worker's vector env; None: one per core with
            a single local worker (or ``Inline()``), else 1 (W processes use W cores).
        video: film the first ``video`` episodes of every game played in this call, as
            ``out/videos/<game>/episode-<n>.mp4`` (every frame, in colour; listed in
            ``run.json``); needs the ``video`` extra. The records are the same either way.
        replays: record each episode's replay, ``out/replays/<game>/episode-<n>.saber-replay``
            (a few kilobytes), named in its record with its SHA-256, so that ``saber
            verify`` can check every score and ``saber replay`` film any episode later
            (:mod:`saber.replay`). False records none (the records then have no
            ``replay`` key, as before saber 0.4).

    Returns:
        An :class:`EvaluationResult`; ``.report()`` gives the SABER report.

    Raises:
        ProtocolError: settings that break SABER without ``allow_non_saber``.
        PolicyError: a bad agent spec, or a policy that breaks the policy protocol.
        RepeatedFailureError: the same failure ended several units in a row.
        RunMismatchError: ``out`` holds a run with different settings, or more than this
            call asks for (fewer episodes or not every game: a call asks for the whole
            run, so that its result and the directory's report are one answer).
        StoreWriteError: results cannot be written (disk full); finished episodes are kept.
        BackendError: Dask is missing or its scheduler cannot be reached.
        KeyboardInterrupt: after stopping the workers and storing what had finished (on
            SIGTERM: :class:`Terminated`, a KeyboardInterrupt).
    """
    started = time.monotonic()
    _check_positive("episodes", episodes)
    _check_positive("envs_per_worker", envs_per_worker)
    _check_positive("base_seed", base_seed, minimum=0)
    _check_positive("video", video, minimum=0)
    if emulation_threads is not None:
        _check_positive("emulation_threads", emulation_threads)
    runs_on = Processes() if backend is None else backend
    if not isinstance(runs_on, Inline | Processes | Dask):
        raise SaberError(
            "Expect `backend` to be Inline(), Processes(workers=N) or Dask(address=...) "
            f"(saber.harness), actually: {backend!r}"
        )
    if video and isinstance(runs_on, Processes) and runs_on.policy_process:
        # Filming an episode takes minutes, during which, in lockstep, every other worker
        # would wait for this one (and could reach its unit deadline).
        raise SaberError(
            "Cannot film episodes (video) with one policy process for every worker "
            "(policy_process, --policy-process): run the videos separately, or without it"
        )
    if video:
        from saber.training.video import require_video_extra

        require_video_extra()  # here, before any episode runs
    if unit_timeout is not None and not unit_timeout > 0:
        raise SaberError(
            f"Expect `unit_timeout` to be positive or None, actually: {unit_timeout!r}"
        )
    if run is not None and (not isinstance(run, str) or not run.strip()):
        raise SaberError(f"Expect `run` to be a non-empty name, actually: {run!r}")
    settings = _settings(env_options, allow_non_saber)
    game_ids = [game.ale_id for game in resolve_games(games)]
    # A module:attr spec for local workers is checked by the first worker that imports it
    # (before the store opens, as here): this process need not import PyTorch, say, too
    # (about 1.5 s of CPU on the run's critical path).
    in_worker = (
        isinstance(policy, str) and not is_builtin_spec(policy) and isinstance(runs_on, Processes)
    )
    agent_name, policy_or_spec = _agent_and_policy(policy, agent, check_spec=not in_worker)
    if in_worker:
        # Without importing it: a module that is not there fails here, before any worker
        # starts; one that fails while importing fails in the first worker (check_spec).
        check_agent_module(policy_or_spec)
    directory = Path(tempfile.mkdtemp(prefix="saber-eval-") if out is None else out)
    say = on_message or (lambda message: None)
    run_info = provenance(
        settings=settings.as_dict(),
        deviations={name: list(pair) for name, pair in settings.deviations().items()},
        agent=agent_name,
        games=game_ids,
        episodes=episodes,
        base_seed=base_seed,
        seed_scheme=SEED_SCHEME,
        command=command,
        run=run,
    )
    requested = [(game, index) for game in game_ids for index in range(episodes)]
    # The directory is locked and read (every check of the run) before any worker starts,
    # and written only once the quick probe has passed (ResultsStore.begin).
    with _sigterm_as_interrupt(), ResultsStore.read(directory, run_info) as store:
        pending: dict[str, list[tuple[int, int]]] = {game: [] for game in game_ids}
        for game, index in requested:
            if (game, index) not in store.finished:
                pending[game].append((index, episode_seed(base_seed, game, index)))
        work = sum(len(items) for items in pending.values())
        orphans = remove_orphaned_blocks()
        if orphans:
            say(
                f"removed {len(orphans)} folder(s) of a policy process whose run was killed "
                f"outright: {', '.join(map(str, orphans))}"
            )
        runs_on, capped = capped_to_work(runs_on, work)
        if capped:
            say(capped)
        if work:
            line = workers_line(runs_on, envs_per_worker)
            if line:
                say(line)
        overrides = dict(env_options or {})
        # Several processes: one emulation thread each, so W processes use W cores.
        threads = runs_on.emulation_threads() if emulation_threads is None else emulation_threads
        films = None
        if video:
            from saber.training.video import VideoRequest

            films = VideoRequest(str(directory.resolve()), video)
        job = Job(
            agent_name, policy_or_spec, overrides, envs_per_worker, threads, films, run, replays
        )
        with _workers_starting(runs_on, job, unit_timeout, work) as started_backend:
            if not allow_non_saber:  # behaviour, beyond the settings: the quick probe
                from saber.check.gate import require_saber_env

                require_saber_env(env_options)
            if in_worker and isinstance(started_backend, LocalBackend):
                started_backend.check_spec()  # PolicyError: as resolve_spec raises it here
            store.begin()
            if store.recovered:
                say(store.recovered)
            message = _resume_message(store, requested)
            if message:
                say(message)
            units = plan_units(pending, runs_on.parallelism, envs_per_worker)
            earlier = [key for key in requested if key in store.finished]  # not played again
            bar = _Progress(sum(len(unit.episodes) for unit in units), progress, agent_name)
            runner: _Run | None = None
            status = "failed"  # unless it finishes, or is interrupted
            try:
                if units:
                    runner_backend = started_backend or runs_on.start(job, unit_timeout)
                    runner = _Run(store, runner_backend, bar, job)
                    try:
                        runner.submit(units)
                        runner.run()
                    except KeyboardInterrupt:
                        runner.drain()
                        raise
                    finally:
                        runner_backend.close()
                if video:  # videos an earlier session could not make (a full disk, say)
                    from saber.training.video import film_missing

                    film_missing(directory, earlier, video)
                status = "finished"
            except KeyboardInterrupt:
                status = "interrupted"
                raise
            finally:
                bar.close()
                result = _result(store, requested, started, runner, settings.is_compliant)
                films_made = None
                if video:
                    from saber.training.video import video_entries

                    films_made = video_entries(directory)
                problem = store.end_session(result.summary(), status, films_made)
                if problem:
                    say(f"warning: {problem}")
    return result


def _result(
    store: ResultsStore,
    requested: list[tuple[str, int]],
    started: float,
    runner: _Run | None,
    compliant: bool,
) -> EvaluationResult:
    """The result of the requested episodes, read from the store's state."""
    unresolved = store.log.unresolved()
    wanted = set(requested)
    records = [
        store.finished.get(key) or unresolved[key]
        for key in requested
        if key in store.finished or key in unresolved
    ]
    return EvaluationResult(
        directory=store.directory,
        records=records,
        new_episodes=store.new_finished + (runner.final_failures if runner else 0),
        frames=runner.frames if runner else 0,
        seconds=time.monotonic() - started,
        non_saber=not compliant,
        failed=[record for record in records if "error" in record],
        failures=[
            record
            for record in store.log.failures
            if (record.get("game"), record.get("episode")) in wanted
        ],
    )
