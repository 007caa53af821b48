"""The records of a run directory's ``episodes.jsonl``, its file names and its errors.

>>> line = EpisodeLine("pong", 3, 7, "random", EpisodeRecord(-21.0, {"5min": -21.0, "30min": -21.0}, 3000, 760, "game_over"))
>>> EpisodeLine.from_dict(line.to_dict()) == line, list(line.to_dict())[:5]
(True, ['game', 'episode', 'seed', 'agent', 'score'])
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from saber.errors import (
    RunDirectoryError,
)
from saber.protocol.episode import EpisodeRecord

#: One JSON object per line: a finished episode or a failed attempt.
EPISODES_FILE = "episodes.jsonl"
#: The run's provenance and sessions.
RUN_FILE = "run.json"
LOCK_FILE = ".lock"
# What saber eval writes beside the records, made from them: stale once they change.
REPORT_FILES = ("report.json", "report.md")
RUN_FORMAT = "saber-run/1"  # additions (run names, failure records, sessions) keep version 1
TORN_ERROR = (
    "incomplete record: the process stopped in the middle of writing it (a crash or a "
    "power loss); the episode runs again"
)
# What makes two runs' episodes the same experiment. ale-py is the emulator: its version
# can change scores. Workers, envs per worker and backend cannot, so they may change.
# ``run`` is the run name (``--run``): absent for unnamed runs, as before names existed.
IDENTITY_KEYS = ("settings", "agent", "base_seed", "seed_scheme", "ale_py", "run")
# "repaired": a session of saber repair, which set damaged lines aside and played nothing.
SessionStatus = Literal["running", "finished", "interrupted", "failed", "repaired"]
SESSION_STATUSES: tuple[str, ...] = ("running", "finished", "interrupted", "failed", "repaired")


def repair_advice(directory: str | Path, what: str) -> str:
    """The one advice for a damaged run directory (one line), after ``what`` is wrong; the
    directory quoted as a shell needs it (a path with spaces), so the command can be
    copied."""
    return (
        f"{what}. Run saber repair {shlex.quote(str(directory))}: it keeps every intact "
        "episode, sets the damaged files aside (*.damaged-<time>) and says what it dropped; "
        "the run's saber eval command then re-runs the dropped episodes."
    )


def now() -> str:
    """The current UTC time as ``run.json`` writes it (ISO 8601, whole seconds)."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# --- the lines of episodes.jsonl ------------------------------------------------------


@dataclass(frozen=True)
class EpisodeLine:
    """The ``episodes.jsonl`` line of a finished episode.

    Attributes:
        game: ale id.
        episode: the episode's index in its game (0-based).
        seed: the seed of its reset.
        agent: the agent's name.
        record: the SABER result (:class:`~saber.protocol.EpisodeRecord`).
        run: the run name, or None (the line then has no ``run`` key).
        replay: the episode's replay file, relative to the run directory
            (:mod:`saber.protocol.replay`), or None (not recorded: no ``replay`` key).
        replay_sha256: the SHA-256 of that file's bytes (hex), which ties the record to
            the play that produced it.
    """

    game: str
    episode: int
    seed: int
    agent: str
    record: EpisodeRecord
    run: str | None = None
    replay: str | None = None
    replay_sha256: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON object: ``game``, ``episode``, ``seed``, ``agent``, the record's keys
        (``seconds`` rounded to milliseconds), then ``run``, ``replay`` and
        ``replay_sha256`` if any."""
        record = self.record.to_dict()
        record["seconds"] = round(record["seconds"], 3)
        line = {"game": self.game, "episode": self.episode, "seed": self.seed, "agent": self.agent}
        line = {**line, **record, **({} if self.run is None else {"run": self.run})}
        if self.replay is not None:
            line.update(replay=self.replay, replay_sha256=self.replay_sha256)
        return line

    @classmethod
    def from_dict(cls, line: Mapping[str, Any]) -> EpisodeLine:
        """The line of a dict written by :meth:`to_dict`."""
        return cls(
            game=str(line["game"]),
            episode=int(line["episode"]),
            seed=int(line["seed"]),
            agent=str(line["agent"]),
            record=EpisodeRecord.from_dict(line),
            run=None if line.get("run") is None else str(line["run"]),
            replay=None if line.get("replay") is None else str(line["replay"]),
            replay_sha256=(
                None if line.get("replay_sha256") is None else str(line["replay_sha256"])
            ),
        )


@dataclass(frozen=True)
class FailedAttempt:
    """The ``episodes.jsonl`` line of an episode attempt that failed (it keeps the history:
    a retry that finishes appends an :class:`EpisodeLine` after it).

    Attributes:
        game, episode, seed, agent, run: as in :class:`EpisodeLine`.
        error: why, for people (``RuntimeError: boom (at agent.py:12)``).
        kind: ``"episode"``, ``"worker"``, ``"timeout"``, ``"policy"`` or ``"setup"``.
        attempt: 0 for the first try, 1 for the retry alone in its unit.
    """

    game: str
    episode: int
    seed: int
    agent: str
    error: str
    kind: str
    attempt: int
    run: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON object."""
        return {
            "game": self.game,
            "episode": self.episode,
            "seed": self.seed,
            "agent": self.agent,
            **({} if self.run is None else {"run": self.run}),
            "error": self.error,
            "kind": self.kind,
            "attempt": self.attempt,
        }


def is_failure(line: Mapping[str, Any]) -> bool:
    """Whether an ``episodes.jsonl`` object is a failed attempt (or a completed torn line)."""
    return "error" in line


def is_torn(line: Mapping[str, Any]) -> bool:
    """Whether an ``episodes.jsonl`` object is a line cut short by a crash and completed on
    resume. Its fields cannot be trusted (a cut inside ``"episode": 12`` reads as episode
    1), so readers count it as no episode's record: neither finished nor failed."""
    return line.get("torn") is True


def episode_key(line: Mapping[str, Any], where: str) -> tuple[str, int]:
    """``(game, episode)`` of a finished episode's ``episodes.jsonl`` object.

    Raises:
        RunDirectoryError: no game name or no episode index (an integer >= 0); ``where``
            (``file:line``) names the line.
    """
    game, episode = line.get("game"), line.get("episode")
    if (
        not isinstance(game, str)
        or isinstance(episode, bool)
        or not isinstance(episode, int)
        or episode < 0
    ):
        raise RunDirectoryError(
            f"{where}: not an episode record (game {game!r}, episode {episode!r}); the file "
            "was changed by hand or damaged. Fix or remove that line."
        )
    return game, episode


@dataclass(frozen=True)
class FailureSummary:
    """What failed in a run: the one summary that ``run.json``, ``saber eval`` and reports
    give (the append-only file keeps every failed attempt, retried or not).

    Attributes:
        attempts: failed attempts (``error`` lines).
        reasons: attempts per ``error`` text, most frequent first (ties by text, so the
            order never depends on the order of the lines).
        recovered: ``(game, episode)`` of episodes that failed, then finished, sorted.
        lost: ``(game, episode)`` of episodes that failed and never finished, sorted.

    >>> failures = [{"game": "pong", "episode": 1, "error": "boom"}, {"game": "pong", "episode": 2, "error": "boom"}]
    >>> summary = FailureSummary.of(failures, finished=[("pong", 1)])
    >>> summary.attempts, summary.reasons, summary.recovered, summary.lost
    (2, {'boom': 2}, (('pong', 1),), (('pong', 2),))
    """

    attempts: int
    reasons: dict[str, int]
    recovered: tuple[tuple[str, Any], ...]
    lost: tuple[tuple[str, Any], ...]

    @classmethod
    def of(
        cls, failures: Iterable[Mapping[str, Any]], finished: Iterable[tuple[str, Any]]
    ) -> FailureSummary:
        """The summary of ``failures`` (``error`` lines) given the ``(game, episode)`` keys
        that finished."""
        failures = [line for line in failures if is_failure(line) and not is_torn(line)]
        counts: dict[str, int] = {}
        for line in failures:
            counts[str(line["error"])] = counts.get(str(line["error"]), 0) + 1
        attempted = {(line["game"], line.get("episode")) for line in failures if "game" in line}
        done = set(finished)
        return cls(
            attempts=len(failures),
            reasons=dict(sorted(counts.items(), key=lambda item: (-item[1], item[0]))),
            recovered=tuple(sorted(attempted & done, key=str)),
            lost=tuple(sorted(attempted - done, key=str)),
        )

    def describe(self, shown: int = 10) -> str:
        """One line for people: ``3 failed attempt(s) (2x boom; 1x hang); 1 episode(s)
        finished on a retry; 1 failed episode(s) skipped: pong episode 2``."""
        why = "; ".join(f"{count}x {reason}" for reason, count in list(self.reasons.items())[:5])
        text = (
            f"{self.attempts} failed attempt(s) ({why}); "
            f"{len(self.recovered)} episode(s) finished on a retry"
        )
        if self.lost:
            names = ", ".join(f"{game} episode {episode}" for game, episode in self.lost[:shown])
            more = f" and {len(self.lost) - shown} more" if len(self.lost) > shown else ""
            text += f"; {len(self.lost)} failed episode(s) skipped: {names}{more}"
        return text
