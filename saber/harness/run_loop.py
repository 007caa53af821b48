"""The main-process side of a run: stores records as they arrive, retries failed units,
counts, and stops on a failure that would fail every episode; the progress bar.

docs/harness.md ("Failures") gives the retry and stop rules.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Sequence

from saber.errors import (
    BackendError,
    PolicyOutputError,
    RepeatedFailureError,
    SaberError,
    counted,
)
from saber.harness.executor_base import Executor
from saber.harness.store import ResultsStore
from saber.harness.work import (
    EpisodeDone,
    Event,
    FramesPlayed,
    Job,
    UnitFailed,
    UnitFinished,
    WorkUnit,
)
from saber.rundir import FailedAttempt
from saber.stop_signals import stop_if_requested

REPEATED_FAILURES = 3  # the same failure ending this many units in a row stops the run
_POLL_SECONDS = 0.5


class Progress:
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


class RunLoop:
    """The main-process side of a run: stores records, retries, counts, stops."""

    def __init__(
        self, store: ResultsStore, backend: Executor, progress: Progress, job: Job
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
            line = event.record
            if (line.game, line.episode) not in self.store.finished:
                if event.replay is not None and line.replay is not None:
                    self.store.write_replay(line.replay, event.replay)  # then the line naming it
                self.store.write(line)
                self.frames += line.record.frames
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
        finished = len(self.store.finished)
        return (
            f"{counted(finished, 'finished episode')} {'is' if finished == 1 else 'are'} on "
            f"disk in {self.store.directory}" + (f", {failed} failed" if failed else "")
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
        game = failed[0][0].game
        if event.kind == "setup":
            # No episode started: nothing to record (a record would count as a failed
            # attempt in every later summary of the run); the run stops here.
            raise SaberError(
                f"A worker could not build the policy or the {game} env: {event.error}. "
                f"{self._on_disk()}; fix the cause and run the same command to resume."
            )
        for unit, unfinished in failed:
            for episode, seed in unfinished:  # every failed attempt stays in the history
                attempt = FailedAttempt(
                    unit.game, episode, seed, self.job.agent, event.error, event.kind,
                    unit.attempt, run=self.job.run,
                )  # fmt: skip
                self.store.write(attempt)
        if event.kind == "policy":
            raise PolicyOutputError(f"{event.error} (game {game}). {self._on_disk()}.")
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
        try:
            while self.outstanding:
                for event in self.backend.events(_POLL_SECONDS):
                    self.handle(event)
                stop_if_requested()
        except BackendError as error:
            raise BackendError(f"{str(error).rstrip('.')}. {self._on_disk()}.") from None

    def drain(self) -> None:
        """Store the records that already arrived (after Ctrl-C), without waiting; a
        backend that cannot go on (a lost scheduler) has nothing more to give."""
        with contextlib.suppress(BackendError):
            for event in self.backend.events(0):
                if isinstance(event, EpisodeDone):
                    self.handle(event)
