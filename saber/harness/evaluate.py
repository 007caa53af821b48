"""``saber.evaluate``: run a policy for N episodes per game under the SABER protocol.

Every episode is fixed before the run (game, index, seed: :mod:`saber.harness.work`),
runs on a vector env with its own seeded reset (:mod:`saber.harness.runner`), on this
process, local processes or a Dask cluster (:mod:`saber.harness.backends`), and is stored
as soon as it ends (:mod:`saber.harness.store`). An episode counts only at its real end:
game over, the stuck timeout or the 100-hour cap; never "the first N to finish".

Failures: an exception while playing fails the unit; each of its unfinished episodes is
retried once, alone in a new unit, and recorded with ``error`` if it fails again. The
other units keep running. A policy that breaks the policy protocol (wrong shape, invalid
actions), or a worker that cannot build the policy or the env, stops the run with a clear
error: it would fail for every episode. Ctrl-C stops the workers; finished episodes are
on disk, and the same call resumes.

Costs worth knowing: each episode starts with a seeded reset, which reloads the ROM
(about 0.25 s in ale-py 0.12): the price of per-episode seeds. Worker processes are
started with ``spawn`` and import the calling script, so a script must call
:func:`evaluate` under ``if __name__ == "__main__":``. Each worker holds its own copy of
the policy (built from the spec or the policy class in the worker, or unpickled).
"""

from __future__ import annotations

import os
import pickle
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from saber.envs import SaberSettings
from saber.errors import ProtocolError, SaberError
from saber.games import resolve_games
from saber.harness.backends import Backend, DaskBackend, InlineBackend, LocalBackend
from saber.harness.policies import Policy, PolicyError, resolve_spec
from saber.harness.store import ResultsStore, provenance
from saber.harness.video import VideoRequest, add_videos_to_run, require_video_extra
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

__all__ = ["DEFAULT_ENVS_PER_WORKER", "EvaluationResult", "evaluate"]

DEFAULT_ENVS_PER_WORKER = 8
_POLL_SECONDS = 0.5


@dataclass
class EvaluationResult:
    """What a call to :func:`evaluate` left in its run directory.

    Attributes:
        directory: the run directory (``episodes.jsonl``, ``run.json``).
        records: records of the requested episodes, in (game, episode) order; failed
            episodes have ``error`` and no score.
        new_episodes: episodes that finished (or failed) during this call.
        frames: emulator frames of the episodes finished during this call.
        seconds: wall-clock duration of this call.
        non_saber: the settings broke the SABER protocol.
    """

    directory: Path
    records: list[dict[str, Any]]
    new_episodes: int
    frames: int
    seconds: float
    non_saber: bool = False
    failed: list[dict[str, Any]] = field(default_factory=list)

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

    def write_report(self, seed: int = 0, n_resamples: int = 2000) -> list[Path]:
        """Write ``report.json`` and ``report.md`` into the run directory; return their paths."""
        from saber.reports import to_json, to_markdown

        report = self.report(seed=seed, n_resamples=n_resamples)
        json_path, markdown_path = self.directory / "report.json", self.directory / "report.md"
        json_path.write_text(to_json(report), encoding="utf-8")
        markdown_path.write_text(to_markdown(report), encoding="utf-8")
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
    policy: str | Policy | Callable[..., Any], agent: str | None
) -> tuple[str, Any]:
    if isinstance(policy, str):
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


def _check_picklable(job: Job) -> None:
    try:
        pickle.dumps(job)
    except Exception as error:
        raise PolicyError(
            f"The policy cannot be sent to worker processes ({type(error).__name__}: {error}). "
            "Define it at module level and pass it as 'module:attr', or use workers=0 to "
            "run in this process."
        ) from None


def _make_backend(
    backend: str, job: Job, workers: int, address: str | None, dask_timeout: float
) -> Backend:
    if backend == "dask":
        return DaskBackend(job, address, workers, timeout=dask_timeout)
    if backend != "local":
        raise SaberError(f"Expect backend 'local' or 'dask', actually: {backend!r}")
    if address is not None:
        raise SaberError("An address is only used with backend='dask'")
    if workers == 0:
        return InlineBackend(job)
    _check_picklable(job)
    return LocalBackend(job, workers)


class _Progress:
    """A tqdm bar on stderr: episodes done / total, frames per second, time left."""

    def __init__(self, total: int, enabled: bool | None, agent: str) -> None:
        from tqdm.auto import tqdm

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
    """The main-process side of a run: stores records, retries, counts."""

    def __init__(self, store: ResultsStore, backend: Backend, progress: _Progress) -> None:
        self.store = store
        self.backend = backend
        self.progress = progress
        self.outstanding: dict[int, WorkUnit] = {}
        self.next_unit_id = 0
        self.frames = 0
        self.failed: list[dict[str, Any]] = []

    def submit(self, units: Sequence[WorkUnit]) -> None:
        for unit in units:
            self.outstanding[unit.unit_id] = unit
            self.next_unit_id = max(self.next_unit_id, unit.unit_id + 1)
            self.backend.submit(unit)

    def handle(self, event: Event) -> None:
        if isinstance(event, EpisodeDone):
            record = event.record
            if (record["game"], record["episode"]) not in self.store.finished:
                self.store.write(record)
                self.frames += record["frames"]
                self.progress.bar.update(1)
        elif isinstance(event, FramesPlayed):
            self.progress.add_frames(event.frames)
        elif isinstance(event, UnitFinished):
            self.outstanding.pop(event.unit_id, None)
        elif isinstance(event, UnitFailed):
            self._failed(event)

    def _failed(self, event: UnitFailed) -> None:
        unit = self.outstanding.pop(event.unit_id, None)
        if unit is None:
            return
        on_disk = (
            f"{len(self.store.finished)} finished episodes are on disk in {self.store.directory}"
        )
        if event.kind == "policy":
            raise PolicyError(f"{event.error} (game {unit.game}). {on_disk}.")
        if event.kind == "setup":
            raise SaberError(
                f"A worker could not build the policy or the {unit.game} env: {event.error}. "
                f"{on_disk}; fix the cause and run the same command to resume."
            )
        unfinished = [
            item for item in unit.episodes if (unit.game, item[0]) not in self.store.finished
        ]
        if unit.attempt == 0:
            # Alone in its unit, an episode that fails again is the one that fails.
            self.submit(
                [
                    WorkUnit(self.next_unit_id + i, unit.game, (item,), attempt=1)
                    for i, item in enumerate(unfinished)
                ]
            )
            return
        for episode, seed in unfinished:
            record = {"game": unit.game, "episode": episode, "seed": seed, "error": event.error}
            self.store.write(record)
            self.failed.append(record)
            self.progress.bar.update(1)

    def run(self) -> None:
        while self.outstanding:
            for event in self.backend.events(_POLL_SECONDS):
                self.handle(event)

    def drain(self) -> None:
        """Store the records that already arrived (after Ctrl-C), without waiting."""
        for event in self.backend.events(0):
            if isinstance(event, EpisodeDone):
                self.handle(event)


def evaluate(
    policy: str | Policy | Callable[..., Any],
    games: str | Sequence[str],
    episodes: int = 100,
    *,
    out: str | Path | None = None,
    workers: int | None = None,
    envs_per_worker: int = DEFAULT_ENVS_PER_WORKER,
    base_seed: int = 0,
    backend: str = "local",
    address: str | None = None,
    agent: str | None = None,
    env_options: dict[str, Any] | None = None,
    allow_non_saber: bool = False,
    progress: bool | None = None,
    command: list[str] | None = None,
    dask_timeout: float = 10.0,
    video: int = 0,
) -> EvaluationResult:
    """Evaluate a policy on games under the SABER protocol; resumable.

    Args:
        policy: an agent spec (``"random"``, ``"noop"``, ``"constant:K"``,
            ``"epsilon-constant:K"``, ``"module:attr"``; see :mod:`saber.harness.policies`),
            a policy class, or a policy object: a callable mapping ``uint8``
            (n, 4, 84, 84) to n actions. A class is a factory, as in a ``"module:Class"``
            spec: it is instantiated without arguments once in each worker (once in this
            process with ``workers=0``), never called on observations. Objects and classes
            must be picklable (classes: defined at module level) unless ``workers=0``.
        games: names of any single-player ROM of ale-py, in any spelling (games outside
            the 61 SABER games have no SABER baseline: reports leave them out of the
            aggregates), or ``all`` (the 61 SABER games), ``atari57``, ``atari5``,
            ``atari10``.
        episodes: episodes per game (the protocol: 100).
        out: the run directory; created, or resumed when it holds the same run. None: a
            new temporary directory.
        workers: local worker processes (default: one per core); 0 runs in this process.
            With ``backend="dask"`` and no address, the size of the local Dask cluster.
        envs_per_worker: sub-envs of each worker's vector env: the policy's batch size.
        base_seed: the seed all episode seeds derive from (non-negative).
        backend: ``"local"`` or ``"dask"``.
        address: Dask scheduler address (``tcp://host:8786``); None starts a local cluster.
        agent: the name written in the records (default: the spec, or module:qualname).
        env_options: overrides of :class:`~saber.envs.SaberSettings`.
        allow_non_saber: run even when ``env_options`` break the protocol (the run is
            then marked ``non_saber``, and so is its report).
        progress: show a progress bar on stderr (default: when stderr is a terminal).
        command: the command line recorded in ``run.json`` (default: ``sys.argv``).
        dask_timeout: seconds to wait for the Dask scheduler.
        video: film the first ``video`` episodes of every game played in this call, as
            ``out/videos/<game>/episode-<n>.mp4`` (every frame, in colour; listed in
            ``run.json``); needs the ``video`` extra. The records are the same either way.

    Returns:
        An :class:`EvaluationResult`; ``.report()`` gives the SABER report.

    Raises:
        ProtocolError: settings that break SABER without ``allow_non_saber``.
        PolicyError: a bad agent spec, or a policy that breaks the policy protocol.
        RunMismatchError: ``out`` holds a run with different settings.
        StoreWriteError: results cannot be written (disk full); finished episodes are kept.
        BackendError: Dask is missing or its scheduler cannot be reached.
        KeyboardInterrupt: after stopping the workers and storing what had finished.
    """
    started = time.monotonic()
    _check_positive("episodes", episodes)
    _check_positive("envs_per_worker", envs_per_worker)
    _check_positive("base_seed", base_seed, minimum=0)
    _check_positive("video", video, minimum=0)
    if video:
        require_video_extra()  # here, before any episode runs
    workers = (os.cpu_count() or 1) if workers is None else workers
    _check_positive("workers", workers, minimum=0 if backend == "local" else 1)
    settings = _settings(env_options, allow_non_saber)
    game_ids = [game.ale_id for game in resolve_games(games)]
    agent_name, policy_or_spec = _agent_and_policy(policy, agent)
    directory = Path(tempfile.mkdtemp(prefix="saber-eval-") if out is None else out)

    run_info = provenance(
        settings=settings.as_dict(),
        deviations={name: list(pair) for name, pair in settings.deviations().items()},
        agent=agent_name,
        games=game_ids,
        episodes=episodes,
        base_seed=base_seed,
        seed_scheme=SEED_SCHEME,
        command=command,
    )
    overrides = dict(env_options or {})
    # Several processes: one emulation thread each, so W processes use W cores.
    threads = 0 if backend == "local" and workers <= 1 else 1
    films = VideoRequest(str(directory.resolve()), video) if video else None
    job = Job(agent_name, policy_or_spec, overrides, envs_per_worker, threads, films)
    with ResultsStore.open(directory, run_info) as store:
        pending = {
            game: [
                (index, episode_seed(base_seed, game, index))
                for index in range(episodes)
                if (game, index) not in store.finished
            ]
            for game in game_ids
        }
        units = plan_units(pending, max(workers, 1), envs_per_worker)
        bar = _Progress(sum(len(unit.episodes) for unit in units), progress, agent_name)
        run: _Run | None = None
        try:
            if units:
                runner_backend = _make_backend(backend, job, workers, address, dask_timeout)
                run = _Run(store, runner_backend, bar)
                try:
                    run.submit(units)
                    run.run()
                except KeyboardInterrupt:
                    run.drain()
                    raise
                finally:
                    runner_backend.close()
        finally:
            bar.close()
            if video:
                add_videos_to_run(directory)
        records = [
            store.finished.get((game, index)) or _failed_record(run, game, index)
            for game in game_ids
            for index in range(episodes)
        ]
    return EvaluationResult(
        directory=directory,
        records=[record for record in records if record is not None],
        new_episodes=store.written,
        frames=run.frames if run else 0,
        seconds=time.monotonic() - started,
        non_saber=not settings.is_compliant,
        failed=run.failed if run else [],
    )


def _failed_record(run: _Run | None, game: str, index: int) -> dict[str, Any] | None:
    if run is None:
        return None
    return next((r for r in run.failed if r["game"] == game and r["episode"] == index), None)
