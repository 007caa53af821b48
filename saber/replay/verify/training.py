"""Verifying a training log recorded with ``replays=True`` (:mod:`saber.training.replays`):
each line's replay, played again from its seed with the settings in its header, must give
the line's results."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from saber.errors import RunDirectoryError
from saber.replay.verify.episode import Claims
from saber.replay.verify.result import VerifyResult, Wholeness
from saber.replay.verify.run import judged_by_headers, verify_records

# A training log is read whole into memory: no log of saber's comes near it.
MAX_LOG_BYTES = 1 << 30


def _read(log: Path) -> str:
    try:
        with log.open("rb") as handle:
            data = handle.read(MAX_LOG_BYTES + 1)
    except OSError as error:
        raise RunDirectoryError(f"Cannot read {log}: {error.strerror or error}") from None
    if len(data) > MAX_LOG_BYTES:
        raise RunDirectoryError(f"{log}: over {MAX_LOG_BYTES:,} bytes, not a training log")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise RunDirectoryError(f"{log}: not a training log (not UTF-8: {error.reason})") from None


def verify_training_log(
    log: str | Path,
    sample: int | None = None,
    seed: int = 0,
    workers: int | None = None,
    *,
    budget: int | None = None,
    progress: bool | None = None,
    say: Callable[[str], None] | None = None,
) -> VerifyResult:
    """Verify the episodes of a training log recorded with ``replays=True``
    (:mod:`saber.training.replays`): each line's replay, played again from its seed with
    the settings in its header, must give the line's ``score``, ``score_5min``,
    ``score_30min``, ``episode_frames``, ``steps`` and ``end`` (and ``rollovers`` and
    ``infinite`` if it has them). A line without a replay is a failure of its own; two
    lines of one episode are too. A torn last line (a training killed mid-write) is
    skipped.

    What it does not check besides what :func:`~saber.replay.verify_run` does not: the
    seeds (a training draws them from its first reset's seed; there is no base seed to
    hold them to), and the ``frames`` column (cumulative training frames, which the
    episodes alone do not fix).

    Args:
        log: the JSON-lines training log (``TrainingRecorder(..., replays=True)``).
        sample, seed, workers, budget, progress, say: as :func:`~saber.replay.verify_run`.

    Raises:
        RunDirectoryError: the log cannot be read.
    """
    log = Path(log)
    text = _read(log)
    records: dict[tuple[str, int], tuple[int, dict[str, Any]]] = {}
    numbers: dict[tuple[str, int], list[int]] = {}
    lines = text.split("\n")  # JSON Lines: not str.splitlines(), which splits at "\x0b" too
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            key = (str(entry["game"]), int(entry["episode"]))
            record = {**entry, "frames": entry["episode_frames"]}
        except (ValueError, KeyError, TypeError, ArithmeticError, RecursionError):
            if number == len(lines) and not text.endswith("\n"):
                continue  # a torn last line: that episode was never logged whole
            raise RunDirectoryError(
                f"{log}, line {number}: not a training log line (a JSON object with game, "
                "episode, score, episode_frames, end)"
            ) from None
        records.setdefault(key, (number, record))
        numbers.setdefault(key, []).append(number)
    duplicates = tuple((g, e, tuple(n)) for (g, e), n in sorted(numbers.items()) if len(n) > 1)
    wholeness = Wholeness(duplicates=duplicates)
    claims = Claims(training=True)
    draw = (sample, seed, workers, budget)
    result = verify_records(log.parent, records, claims, draw, progress, say)
    result = judged_by_headers(replace(result, directory=log, wholeness=wholeness))
    return replace(result, problems=(*result.problems, *wholeness.failures()))
