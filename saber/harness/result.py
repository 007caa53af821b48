"""What a call to :func:`saber.evaluate` returns: :class:`EvaluationResult`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from saber.rundir import StoreWriteError
from saber.rundir.durable import write_atomically
from saber.rundir.records import REPORT_FILES, FailureSummary

if TYPE_CHECKING:
    from saber.reports.model import Report, ReportLike


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
        """The full SABER report of the run directory (:func:`saber.reports.make_report`)."""
        return self.typed_report(seed=seed, n_resamples=n_resamples).to_dict()

    def typed_report(self, seed: int = 0, n_resamples: int = 2000) -> Report:
        """:meth:`report` as the typed :class:`saber.reports.model.Report`
        (:func:`saber.reports.make_report`), which the renderers read without converting."""
        from saber.reports import make_report
        from saber.scoring import read_scores

        return make_report(read_scores(self.directory), seed=seed, n_resamples=n_resamples)

    def write_report(
        self, seed: int = 0, n_resamples: int = 2000, report: ReportLike | None = None
    ) -> list[Path]:
        """Write ``report.json`` and ``report.md`` into the run directory; return their paths.

        ``report``: one already built (:meth:`typed_report` or :meth:`report`); built here
        when None. Each file is written atomically: whole or absent (or the previous one),
        never cut short.

        Raises:
            StoreWriteError: a file could not be written (disk full); the episodes are
                intact, and ``saber report DIR`` writes the report again.
        """
        from saber.reports import to_json, to_markdown
        from saber.reports.model import as_report

        # Typed once: each renderer would convert a JSON document again.
        if report is None:
            report = self.typed_report(seed=seed, n_resamples=n_resamples)
        report = as_report(report)
        json_path, markdown_path = (self.directory / name for name in REPORT_FILES)
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
