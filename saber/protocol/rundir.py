"""The run directory: its files, typed records of their contents, the one reader and writer.

Layout of a run directory (``saber eval --out DIR``):

* ``episodes.jsonl``: one JSON object per line, appended, flushed and fsynced as it is
  written, and never rewritten: an :class:`EpisodeLine` per finished episode, and a
  :class:`FailedAttempt` per episode attempt that failed;
* ``run.json``: the run's provenance (:class:`RunFile`), rewritten atomically; it keeps
  one :class:`Session` per ``saber eval`` that opened the directory;
* ``.lock``: held while a run writes, so two runs cannot interleave in one directory;
* ``videos/``: films of episodes, when asked for (:mod:`saber.training.video`).

Everything that reads or writes these files goes through this module: the harness's
store, the score-file reader, the shipped references and the video lister. The JSON keys
are those of saber 0.2 (and 0.1), so old directories read; ``sessions`` entries gain
``status`` and ``counts``.

>>> line = EpisodeLine("pong", 3, 7, "random", EpisodeRecord(-21.0, {"5min": -21.0, "30min": -21.0}, 3000, 760, "game_over"))
>>> EpisodeLine.from_dict(line.to_dict()) == line, list(line.to_dict())[:5]
(True, ['game', 'episode', 'seed', 'agent', 'score'])
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from saber.errors import SaberError, ScoreFileError, os_error_message, shown
from saber.protocol.episode import EpisodeRecord
from saber.protocol.seeds import SEED_SCHEME, episode_seed
from saber.version import __version__

__all__ = [
    "EPISODES_FILE",
    "IDENTITY_KEYS",
    "LOCK_FILE",
    "RUN_FILE",
    "RUN_FORMAT",
    "SESSION_STATUSES",
    "TORN_ERROR",
    "EpisodeAppender",
    "EpisodeLine",
    "EpisodeLines",
    "FailedAttempt",
    "FailureSummary",
    "RunDamageError",
    "RunDirectoryError",
    "RunFile",
    "Session",
    "StoreWriteError",
    "append_whole",
    "check_episodes_log",
    "checkpoint_of",
    "complete_torn_line",
    "counts_of",
    "episode_key",
    "episodes_log_checkpoint",
    "is_failure",
    "is_torn",
    "lock_directory",
    "now",
    "parse_run_file",
    "read_episode_lines",
    "read_episodes_bytes",
    "read_run_file",
    "read_run_json",
    "repair_advice",
    "run_key",
    "write_atomically",
    "write_run_file",
    "writing_atomically",
]

EPISODES_FILE = "episodes.jsonl"
RUN_FILE = "run.json"
LOCK_FILE = ".lock"
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


class RunDirectoryError(ScoreFileError):
    """A run directory whose files cannot be read: a damaged line or ``run.json``, or a
    format of another saber version. A :class:`~saber.errors.ScoreFileError` too, since
    reports read run directories as score files."""


class RunDamageError(RunDirectoryError):
    """A run directory whose files are damaged (a cut, a torn line, NUL bytes, a line that
    is not JSON, records no session wrote, a ``run.json`` cut short): the message is
    :func:`repair_advice`, the same from every command that reads the directory."""


def repair_advice(directory: str | Path, what: str) -> str:
    """The one advice for a damaged run directory (one line), after ``what`` is wrong."""
    return (
        f"{what}. Run saber repair {directory}: it keeps every intact episode, sets the "
        "damaged files aside (*.damaged-<time>) and says what it dropped; the run's saber "
        "eval command then re-runs the dropped episodes."
    )


class StoreWriteError(SaberError, OSError):
    """Results could not be written (disk full, permissions); what is on disk is intact."""


def now() -> str:
    """The current UTC time as ``run.json`` writes it (ISO 8601, whole seconds)."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# --- typed records ------------------------------------------------------------------------


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
        """The line of a dict written by :meth:`to_dict` (or by saber 0.1)."""
        return cls(
            game=str(line["game"]),
            episode=int(line["episode"]),
            seed=int(line.get("seed", -1)),
            agent=str(line.get("agent", "")),
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
        """The JSON object (keys as written since saber 0.2)."""
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


@dataclass
class Session:
    """One ``saber eval`` (or ``evaluate()`` call) on the directory, in ``run.json``.

    Attributes:
        command: its command line.
        started: when it started (ISO 8601, UTC).
        versions: package versions it ran with (``saber``, ``ale_py``, ...).
        ended: when it ended; None while it runs (or if it was killed outright).
        status: ``"finished"``, ``"interrupted"`` (Ctrl-C, SIGTERM), ``"failed"`` (an
            error stopped it), ``"running"``, ``"repaired"`` (``saber repair``); None for a
            session of saber 0.2, which did not say (its history is kept as it was written).
        counts: what it did: ``episodes_finished`` and ``attempts_failed`` (this
            session's lines); empty for a session of saber 0.2.
        summary: the run's counts when it ended (``finished``, ``failed``, ...).
        episodes_log: what ``episodes.jsonl`` held when the session last wrote
            ``run.json``: ``{"bytes": N, "sha256": hex of its first N bytes}``
            (:func:`episodes_log_checkpoint`). The file is append-only, so its first N
            bytes never change: a ``run.json`` whose checkpoint does not match them
            belongs to another directory (:func:`check_episodes_log`). None: saber 0.3
            and older did not write it.
        extra: keys this version does not know, kept as they were.
    """

    command: list[str]
    started: str
    versions: dict[str, str] = field(default_factory=dict)
    ended: str | None = None
    status: SessionStatus | None = "running"
    counts: dict[str, int] = field(default_factory=dict)
    summary: dict[str, Any] | None = None
    episodes_log: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    _KNOWN = ("command", "started", "ended", "status", "counts", "summary", "episodes_log")

    def to_dict(self) -> dict[str, Any]:
        """The JSON object (a session of saber 0.2 had no ``status`` nor ``counts``)."""
        session: dict[str, Any] = {"command": self.command, "started": self.started}
        session.update(self.versions)
        session.update(self.extra)
        if self.ended is not None:
            session["ended"] = self.ended
        if self.status is not None and self.status != "running":
            session["status"] = self.status
        if self.counts:
            session["counts"] = dict(self.counts)
        if self.summary is not None:
            session["summary"] = self.summary
        if self.episodes_log is not None:
            session["episodes_log"] = dict(self.episodes_log)
        return session

    @classmethod
    def from_dict(cls, session: Mapping[str, Any], version_keys: tuple[str, ...]) -> Session:
        """The session of a ``run.json`` entry; ``version_keys`` are the package names."""
        ended = session.get("ended")
        status = session.get("status")
        if status not in SESSION_STATUSES:
            status = None  # saber 0.2 did not say
        known = set(cls._KNOWN) | set(version_keys)
        return cls(
            command=list(session.get("command", [])),
            started=str(session.get("started", "")),
            versions={k: session[k] for k in version_keys if k in session},
            ended=ended,
            status=status,
            counts=dict(session.get("counts", {})),
            summary=session.get("summary"),
            episodes_log=(
                dict(session["episodes_log"])
                if isinstance(session.get("episodes_log"), dict)
                else None
            ),
            extra={k: v for k, v in session.items() if k not in known},
        )


@dataclass
class RunFile:
    """The content of ``run.json``: what defines the run, where it ran, its sessions.

    Attributes:
        settings: the env settings (:meth:`~saber.protocol.SaberSettings.as_dict`).
        deviations: settings that break the protocol, ``{name: [saber, actual]}``.
        agent: the agent's name.
        games: ale ids of every game asked for, over all sessions.
        episodes: episodes per game (the largest asked for).
        base_seed: the seed all episode seeds derive from.
        seed_scheme: how episode seeds are derived (``saber.harness.work.SEED_SCHEME``).
        command: the first session's command line.
        started: when the first session started.
        versions: package versions of the first session (``saber``, ``ale_py``,
            ``gymnasium``, ``numpy``, ``python``).
        platform: the first session's platform string.
        run: the run name (``saber eval --run``), or None.
        run_id: a random id (32 hex digits) made when the run started, kept by every
            resume and by any copy of the directory: two directories with one ``run_id``
            hold one run (:func:`run_key`). None: runs of saber 0.3 and older.
        sessions: every session, oldest first.
        format: :data:`RUN_FORMAT`.
        extra: other keys (``videos``, ``video_errors``, keys of newer versions), in order.
    """

    settings: dict[str, Any]
    deviations: dict[str, Any]
    agent: str
    games: list[str]
    episodes: int
    base_seed: int
    seed_scheme: str
    command: list[str]
    started: str
    versions: dict[str, str] = field(default_factory=dict)
    platform: str = ""
    run: str | None = None
    run_id: str | None = None
    sessions: list[Session] = field(default_factory=list)
    format: str = RUN_FORMAT
    extra: dict[str, Any] = field(default_factory=dict)

    VERSION_KEYS = ("saber", "ale_py", "gymnasium", "numpy", "python")
    _KNOWN = (
        "format", "platform", "settings", "non_saber", "deviations", "agent", "run", "games",
        "episodes", "base_seed", "seed_scheme", "command", "started", "sessions", "run_id",
    )  # fmt: skip

    @property
    def non_saber(self) -> bool:
        """The settings break the SABER protocol."""
        return bool(self.deviations)

    def identity(self) -> dict[str, Any]:
        """What makes two runs' episodes the same experiment: the :data:`IDENTITY_KEYS`
        of ``run.json`` (see :meth:`differences`)."""
        run = self.to_dict()
        return {key: run.get(key) for key in IDENTITY_KEYS}

    def differences(self, other: RunFile) -> list[str]:
        """Each difference of :meth:`identity`, for people: ``agent: 'a' in the directory,
        'b' now`` (``self`` is on disk, ``other`` the new session)."""
        differences = []
        mine, theirs = self.identity(), other.identity()
        for key in mine:
            old, new = mine[key], theirs[key]
            if isinstance(old, dict) and isinstance(new, dict):
                differences += [
                    f"{key}.{name}: {old.get(name)!r} in the directory, {new.get(name)!r} now"
                    for name in sorted(old.keys() | new.keys())
                    if old.get(name) != new.get(name)
                ]
            elif old != new:
                differences.append(f"{key}: {old!r} in the directory, {new!r} now")
        return differences

    def foreign(self, record: Mapping[str, Any]) -> str | None:
        """Why an ``episodes.jsonl`` record is not this run's, or None: another agent, or
        a seed that is not its episode's under the run's base seed (a line pasted in from
        elsewhere, or edited). The store plays such an episode again and reports leave
        the record out, so the two count the same episodes."""
        if "agent" in record and str(record["agent"]) != self.agent:
            return f"agent {record['agent']!r}, the run's is {self.agent!r}"
        seed, game, episode = record.get("seed"), record.get("game"), record.get("episode")
        if (
            self.seed_scheme == SEED_SCHEME
            and isinstance(game, str)
            and all(isinstance(n, int) and not isinstance(n, bool) for n in (seed, episode))
            and episode >= 0
            and seed != episode_seed(self.base_seed, game, episode)
        ):
            return f"seed {seed} is not that episode's seed under the run's base seed"
        return None

    def uncovered(self, session: RunFile) -> str | None:
        """What of this run a new session does not ask for (for people), or None.

        A session's result and the directory's report must be one answer, so a session
        asks for the whole run: every game of it and at least its episodes per game (more
        extends the run). ``self`` is on disk, ``session`` the new session.
        """
        missing = [game for game in self.games if game not in session.games]
        if not missing and session.episodes >= self.episodes:
            return None
        games = ",".join(dict.fromkeys([*self.games, *session.games]))
        return (
            f"the directory holds a run of {self.episodes} episodes per game of "
            f"{', '.join(self.games)}; this call asks for {session.episodes} of "
            f"{', '.join(session.games)}. A call's result and the directory's report cover "
            f"the whole run, so ask for all of it (--games {games} --episodes "
            f"{max(self.episodes, session.episodes)}, or more to extend it), or use another "
            "directory (saber report reads the run as it is)"
        )

    def resumed_by(self, session: RunFile) -> RunFile:
        """This run with a new session's games, episodes and session added (its
        ``run_id`` stays the run's: a run of saber 0.3 keeps having none)."""
        return RunFile(
            **{
                **self.__dict__,
                "games": list(dict.fromkeys([*self.games, *session.games])),
                "episodes": max(self.episodes, session.episodes),
                "sessions": [*self.sessions, *session.sessions],
                "extra": dict(self.extra),
            }
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON object, keys in the order saber 0.2 wrote them."""
        run: dict[str, Any] = {"format": self.format, **self.versions, "platform": self.platform}
        run.update(
            settings=self.settings,
            non_saber=self.non_saber,
            deviations=self.deviations,
            agent=self.agent,
        )
        if self.run is not None:
            run["run"] = self.run
        if self.run_id is not None:
            run["run_id"] = self.run_id
        run.update(
            games=list(self.games),
            episodes=self.episodes,
            base_seed=self.base_seed,
            seed_scheme=self.seed_scheme,
            command=self.command,
            started=self.started,
            sessions=[session.to_dict() for session in self.sessions],
        )
        run.update(self.extra)
        return run

    @classmethod
    def from_dict(cls, run: Mapping[str, Any]) -> RunFile:
        """The run of a ``run.json`` object (saber 0.1 and 0.2 included).

        Raises:
            KeyError, TypeError, ValueError: a key missing or of the wrong type.
        """
        versions = {k: run[k] for k in cls.VERSION_KEYS if k in run}
        return cls(
            settings=dict(run["settings"]),
            deviations=dict(run.get("deviations", {})),
            agent=str(run["agent"]),
            games=[str(game) for game in run.get("games", [])],
            episodes=int(run.get("episodes", 0)),
            base_seed=int(run.get("base_seed", 0)),
            seed_scheme=str(run.get("seed_scheme", "")),
            command=list(run.get("command", [])),
            started=str(run.get("started", "")),
            versions=versions,
            platform=str(run.get("platform", "")),
            run=None if run.get("run") is None else str(run["run"]),
            run_id=None if run.get("run_id") is None else str(run["run_id"]),
            sessions=[
                Session.from_dict(session, cls.VERSION_KEYS) for session in run.get("sessions", [])
            ],
            format=str(run["format"]),
            extra={
                k: v for k, v in run.items() if k not in cls._KNOWN and k not in cls.VERSION_KEYS
            },
        )


# --- the reader ---------------------------------------------------------------------------


@dataclass
class EpisodeLines:
    """What :func:`read_episode_lines` found.

    Attributes:
        lines: ``(line number, object)`` of every whole line, in file order (blank lines
            skipped); a last line without its newline counts if it is a whole object.
        unterminated: the text of a last line without a newline, or None: a line cut short
            by a crash (not an object: readers of results leave it out) or one written by
            hand. The store completes it on resume, by appending only.
        count: lines in the file (blank ones included).
    """

    lines: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    unterminated: str | None = None
    count: int = 0


def read_episode_lines(path: str | Path) -> EpisodeLines:
    """Read an ``episodes.jsonl``: its whole lines as JSON objects, and a torn last line.

    A missing file reads as empty. Lines are UTF-8 (the harness writes ASCII); a line cut
    short inside a character is a torn line like any other.

    Raises:
        RunDirectoryError: a whole line that is not a JSON object or not UTF-8 text
            (naming file and line), or a file that cannot be read.
    """
    path = Path(path)
    found = EpisodeLines()
    if not path.exists():
        return found
    try:
        data = path.read_bytes()
    except OSError as error:
        raise RunDirectoryError(f"Cannot read {path}: {error.strerror or error}") from error
    lines = data.splitlines(keepends=True)
    found.count = len(lines)
    for number, raw in enumerate(lines, start=1):
        if number == len(lines) and not raw.endswith(b"\n"):
            # Cut short by a crash: possibly inside a character, so decode leniently.
            found.unterminated = line = raw.decode("utf-8", errors="replace")
            with contextlib.suppress(ValueError, RecursionError):
                record = json.loads(line)
                if isinstance(record, dict):
                    found.lines.append((number, record))
            break
        if not raw.strip():
            continue
        found.lines.append((number, _parse_line(path, number, raw)))
    return found


def _parse_line(path: Path, number: int, raw: bytes) -> dict[str, Any]:
    """One whole line of ``episodes.jsonl`` as its JSON object.

    A torn line completed on resume may hold half a character (the cut fell inside it):
    it is read with that character replaced, since nothing of a torn line is trusted.
    """
    where = f"{path}:{number}"
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.decode("utf-8", errors="replace")
        with contextlib.suppress(ValueError, RecursionError):
            record = json.loads(line)
            if isinstance(record, dict) and is_torn(record):
                return record
        raise RunDirectoryError(
            f"{where}: not UTF-8 text (byte 0x{raw[error.start]:02x} at column "
            f"{error.start + 1}); the file was changed by hand or damaged. Fix or remove "
            "that line."
        ) from None
    try:
        record = json.loads(line)
    except (ValueError, RecursionError) as error:  # RecursionError: nested thousands deep
        raise RunDirectoryError(
            f"{where}: not an episode record (not a JSON object: {error}); the file was "
            "changed by hand or damaged. Fix or remove that line."
        ) from None
    if not isinstance(record, dict):
        raise RunDirectoryError(
            f"{where}: not an episode record (not a JSON object); the file was changed by "
            "hand or damaged. Fix or remove that line."
        )
    return record


def episodes_log_checkpoint(path: str | Path) -> dict[str, Any]:
    """``{"bytes": N, "sha256": hex}`` of a whole ``episodes.jsonl`` as it is now (an
    absent file: 0 bytes), for :attr:`Session.episodes_log`."""
    return checkpoint_of(read_episodes_bytes(path))


def read_episodes_bytes(path: str | Path) -> bytes:
    """The bytes of an ``episodes.jsonl`` (an absent file: none).

    Raises:
        RunDirectoryError: it exists but cannot be read.
    """
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        return b""
    except OSError as error:
        raise RunDirectoryError(f"Cannot read {path}: {error.strerror or error}") from error


def checkpoint_of(data: bytes) -> dict[str, Any]:
    """``{"bytes": N, "sha256": hex}`` of an ``episodes.jsonl``'s bytes."""
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def counts_of(appended: bytes) -> dict[str, int]:
    """A session's :attr:`Session.counts` from the bytes it appended to ``episodes.jsonl``.

    Counted from the file, not from counters kept beside the writes: a Ctrl-C or SIGTERM
    lands between two Python statements, so it can stop a session after a record is on
    disk and before a counter saw it. A last line without its line end (a write cut
    short) is not counted: the next session completes it as a torn record.
    """
    finished = failed = 0
    for raw in appended.split(b"\n")[:-1]:
        try:
            line = json.loads(raw)
        except (ValueError, RecursionError):
            continue  # not this session's to judge; check_episodes_log and resume report it
        if not isinstance(line, dict) or is_torn(line):
            continue
        if is_failure(line):
            failed += 1
        else:
            finished += 1
    return {"episodes_finished": finished, "attempts_failed": failed}


def check_episodes_log(run: Mapping[str, Any], path: str | Path) -> None:
    """Check that ``run.json`` (its JSON object ``run``) belongs to this ``episodes.jsonl``.

    The newest session that recorded a checkpoint (:attr:`Session.episodes_log`) says how
    many bytes the file held then and their SHA-256; the file only grows, so its first
    bytes must still hash to that. A ``run.json`` of saber 0.3 or older has no checkpoint
    and is not checked.

    Raises:
        RunDirectoryError: the checkpoint does not match (a ``run.json`` copied from
            another run, or an ``episodes.jsonl`` rewritten or replaced).
    """
    sessions = run.get("sessions")
    checkpoints = [
        session["episodes_log"]
        for session in (sessions if isinstance(sessions, list) else [])
        if isinstance(session, dict) and isinstance(session.get("episodes_log"), dict)
    ]
    if not checkpoints:
        return
    expected = checkpoints[-1]
    path = Path(path)
    size, digest = expected.get("bytes"), expected.get("sha256")
    if (
        isinstance(size, bool)
        or not isinstance(size, int)
        or size < 0
        or not isinstance(digest, str)
    ):
        raise RunDirectoryError(
            f"{path.with_name(RUN_FILE)}: a session's episodes_log is damaged; restore "
            "run.json from a backup, or use another directory."
        ) from None
    try:
        with path.open("rb") as handle:
            # Never more than the file holds: read(2**40) would allocate a TB first.
            prefix = handle.read(min(size, os.fstat(handle.fileno()).st_size))
    except FileNotFoundError:
        prefix = b""
    except OSError as error:
        raise RunDirectoryError(f"Cannot read {path}: {error.strerror or error}") from error
    if len(prefix) < size or hashlib.sha256(prefix).hexdigest() != digest:
        found = "differ" if len(prefix) == size else f"are only {len(prefix)} bytes"
        raise RunDirectoryError(
            f"{path.with_name(RUN_FILE)} does not belong to {path}: it was written when that "
            f"file began with {size} bytes of SHA-256 {digest[:12]}..., and this file's first "
            f"bytes {found}. A run.json copied from another run, or an episodes.jsonl "
            "rewritten or replaced: put the directory's own files back, or use another "
            "directory."
        )


def run_key(run: Mapping[str, Any] | None, episodes_path: str | Path) -> str:
    """What identifies a run in any copy of its directory: ``run_id:<id>`` from
    ``run.json``; for a run of saber 0.3 and older (no ``run_id``), or an
    ``episodes.jsonl`` without ``run.json``, ``content:<SHA-256>`` of what every copy of
    the run keeps: the keys of ``run.json`` that no resume changes (``started``, agent,
    run name, seeds, settings, the first command) and the first line of
    ``episodes.jsonl`` (append-only, so a copy taken at any time has it; a record holds
    its own wall time, ``seconds``, so two runs' first lines differ). Without a
    ``started`` (a ``run.json`` written by hand, or none), the whole ``episodes.jsonl``
    instead of its first line: only identical copies are then one run.

    Args:
        run: the ``run.json`` object, or None without one.
        episodes_path: the run's ``episodes.jsonl``.
    """
    run = run or {}
    if isinstance(run.get("run_id"), str) and run["run_id"]:
        return f"run_id:{run['run_id']}"
    stable = ("started", "agent", "run", "base_seed", "seed_scheme", "settings", "command")
    digest = hashlib.sha256(
        json.dumps({key: run.get(key) for key in stable}, sort_keys=True, default=repr).encode()
    )
    try:
        with Path(episodes_path).open("rb") as handle:
            digest.update(handle.readline() if run.get("started") else handle.read())
    except OSError:
        pass  # no file: the readers say so
    return f"content:{digest.hexdigest()}"


def read_run_json(path: str | Path) -> dict[str, Any]:
    """The JSON object of ``run.json`` (a directory or the file itself) as it is, unchecked
    beyond being JSON: for readers that take what they find (a report reads a hand-made
    ``{"non_saber": true}`` too). :func:`read_run_file` checks it.

    Raises:
        FileNotFoundError: there is no such file.
        RunDirectoryError: it cannot be read or is not valid JSON.
    """
    path = Path(path)
    run_file = path / RUN_FILE if path.is_dir() else path
    try:
        return json.loads(run_file.read_text(encoding="utf-8"))  # type: ignore[no-any-return]
    except FileNotFoundError:
        raise
    except UnicodeDecodeError as error:
        why = f"not UTF-8 text: byte 0x{error.object[error.start]:02x} at offset {error.start}"
        raise _run_json_damage(run_file, why) from None
    except OSError as error:
        raise RunDirectoryError(f"Cannot read {run_file}: {error.strerror or error}") from None
    except (ValueError, RecursionError) as error:
        # JSONDecodeError; ValueError: an integer of over 4300 digits; RecursionError: arrays
        # or objects nested thousands deep.
        why = (
            f"not valid JSON: {error.msg}, line {error.lineno}"
            if isinstance(error, json.JSONDecodeError)
            else f"not valid JSON: {type(error).__name__}: {error}"
        )
        raise _run_json_damage(run_file, why) from None


def _run_json_damage(run_file: Path, why: str) -> RunDamageError:
    """The error of a ``run.json`` that is not valid JSON or not text (``why``)."""
    return RunDamageError(
        repair_advice(
            run_file.parent,
            f"{run_file} is damaged ({why}); the episodes in {run_file.with_name(EPISODES_FILE)} "
            "are intact",
        )
    )


def read_run_file(path: str | Path) -> RunFile:
    """Read and check ``run.json`` (a directory or the file itself).

    Raises:
        RunDirectoryError: the file cannot be read, is damaged, is not the provenance of
            a saber run, or was written by another format version; the message says what
            to do. ``FileNotFoundError`` if there is no such file.
    """
    path = Path(path)
    run_file = path / RUN_FILE if path.is_dir() else path
    return parse_run_file(read_run_json(run_file), run_file)


def parse_run_file(on_disk: Any, run_file: str | Path) -> RunFile:
    """Check the JSON object of ``run.json`` (``run_file``, named in errors) and type it.

    Raises:
        RunDirectoryError: as :func:`read_run_file`.
    """
    if not isinstance(on_disk, dict) or "format" not in on_disk:
        raise RunDirectoryError(
            f"{run_file} is not the provenance of a saber run (no 'format' key); use "
            "another directory."
        )
    if on_disk["format"] != RUN_FORMAT:
        raise RunDirectoryError(
            f"{run_file} was written by another version of saber (format "
            f"{on_disk['format']!r}, saber {shown(on_disk.get('saber', '?'))}); saber "
            f"{__version__} reads {RUN_FORMAT!r}. Resume it with that version, or "
            "use another directory."
        )
    try:
        return RunFile.from_dict(on_disk)
    # AttributeError: a session that is not an object; ArithmeticError: "episodes": Infinity.
    except (KeyError, TypeError, ValueError, AttributeError, ArithmeticError) as error:
        raise RunDirectoryError(
            f"{run_file}: not the provenance of a saber run ({type(error).__name__}: "
            f"{error}); use another directory."
        ) from None


# --- the writer ---------------------------------------------------------------------------


def _write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd``: the one place where this module writes file
    contents (``episodes.jsonl``, ``run.json``, replays, reports), so that a test can make
    the disk fill up at any write of a run."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write_atomically(path: str | Path, data: str | bytes) -> None:
    """Replace a file's content at once (write a temporary file, fsync, rename): a crash or
    a full disk leaves the old content or the new, never half of one (the temporary file
    of a failed write is removed).

    Args:
        path: the file.
        data: its content; text is written as UTF-8.

    Raises:
        OSError: the file could not be written; its ``filename`` is ``path`` (not the
            temporary file), so a message names the file the user asked for.
    """
    content = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    with writing_atomically(path) as temporary:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            _write_all(fd, content)
        finally:
            os.close(fd)


@contextlib.contextmanager
def writing_atomically(path: str | Path) -> Iterator[Path]:
    """The one way saber writes a file of record: yields a temporary path beside ``path``
    for the caller (or a library: matplotlib, ffmpeg) to write; when the block ends
    without an error, the temporary file is fsynced and renamed to ``path`` (and the
    directory fsynced), else removed. So ``path`` holds its old content or the whole new
    one, never part of one: a full disk, a crash or a failed encoder leaves nothing new
    under the final name.

    The temporary file is ``<name>.tmp``: a writer that infers the format from the file
    name must be told the format.

    Raises:
        OSError: the file could not be written, with ``filename`` set to ``path``.
    """
    path = Path(path)
    temporary = path.with_name(path.name + ".tmp")
    try:
        yield temporary
        fd = os.open(temporary, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
        _fsync_directory(path.parent)
    except BaseException as error:
        with contextlib.suppress(OSError):
            temporary.unlink()
        unnamed = isinstance(error, OSError) and error.filename in (None, str(temporary), temporary)
        if unnamed and error.errno is not None and not isinstance(error, SaberError):
            raise OSError(error.errno, error.strerror, str(path)) from error
        raise


def append_whole(fd: int, data: bytes, path: str | Path) -> None:
    """Append ``data`` to the file open as ``fd`` (``O_APPEND``) whole or not at all: a
    write that fails part-way (a full disk) is cut off again, so a log of lines never
    ends in half of one. For a file with one writer (a training log): the cut would
    also take another writer's line written meanwhile.

    Raises:
        OSError: the write failed; ``filename`` is ``path``.
    """
    size = os.fstat(fd).st_size
    try:
        _write_all(fd, data)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, size)
        raise OSError(error.errno, error.strerror, str(path)) from error


def _fsync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable (where directories can be opened: POSIX)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return  # Windows: a directory cannot be opened; its renames are durable enough
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def write_run_file(directory: str | Path, run: RunFile) -> None:
    """Write ``run.json`` atomically.

    Raises:
        StoreWriteError: it could not be written.
    """
    path = Path(directory) / RUN_FILE
    try:
        write_atomically(path, json.dumps(run.to_dict(), indent=2) + "\n")
    except OSError as error:
        raise StoreWriteError(os_error_message(error)) from error  # names path, says what to do


def lock_directory(directory: str | Path) -> Any:
    """An exclusive advisory lock on the directory (close the returned handle to release
    it), or None where there are no advisory locks (Windows: one run per directory is on you).

    Raises:
        SaberError: another run holds it.
    """
    try:
        import fcntl
    except ImportError:
        return None
    directory = Path(directory)
    handle = (directory / LOCK_FILE).open("a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise SaberError(
            f"{directory} is used by another saber run right now; wait for it to "
            "end or use another directory."
        ) from None
    return handle


class EpisodeAppender:
    """Appends lines to a directory's ``episodes.jsonl``, each durable before it returns."""

    def __init__(self, directory: str | Path) -> None:
        self.path = Path(directory) / EPISODES_FILE
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def append(self, line: Mapping[str, Any], on_disk: str = "") -> None:
        """Append one JSON object as a line, flushed and fsynced.

        Args:
            line: the object (``EpisodeLine.to_dict()``, ``FailedAttempt.to_dict()``).
            on_disk: what is safely on disk, said in the error message.

        Raises:
            StoreWriteError: the write failed (disk full...). The partial line is removed,
                so every line on disk stays whole.
        """
        if self._fd is None:
            raise SaberError(f"{self.path} is closed")
        data = (json.dumps(dict(line), allow_nan=False) + "\n").encode("utf-8")
        size = os.fstat(self._fd).st_size
        try:
            _write_all(self._fd, data)
            os.fsync(self._fd)
        except OSError as error:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, size)  # only this writer's own partial line
            raise StoreWriteError(
                f"Cannot write to {self.path}: {error.strerror or error}. {on_disk}Free some "
                "space and run the same command again to resume."
            ) from error

    def size(self) -> int:
        """The file's size now, in bytes."""
        if self._fd is None:
            raise SaberError(f"{self.path} is closed")
        return os.fstat(self._fd).st_size

    def complete_torn(self, fragment: str) -> dict[str, Any]:
        """Append what makes a torn last line (``fragment``) one whole object; return it.

        Raises:
            ValueError: the fragment is not the start of a JSON object.
            StoreWriteError: the file could not be written.
        """
        ending = complete_torn_line(fragment)
        if self._fd is None:
            raise SaberError(f"{self.path} is closed")
        try:
            _write_all(self._fd, ending.encode("utf-8"))
            os.fsync(self._fd)
        except OSError as error:
            raise StoreWriteError(f"Cannot write {self.path}: {error.strerror or error}") from error
        return dict(json.loads(fragment + ending))

    def close(self) -> None:
        """Close the file."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


# Endings that finish a token cut short (a string, an escape, a number, a literal), then
# endings that close the object with the torn marker. Each candidate is checked by parsing.
_TOKEN_ENDINGS = ("", '"', '\\"', '0"', '00"', '000"', '0000"', "0", "e", "ue", "rue",
                  "se", "lse", "alse", "l", "ll", "ull")  # fmt: skip
_TORN_FIELDS = f'"error": {json.dumps(TORN_ERROR)}, "torn": true}}'
_CLOSINGS = (f", {_TORN_FIELDS}", f": null, {_TORN_FIELDS}", f"null, {_TORN_FIELDS}", _TORN_FIELDS)


def complete_torn_line(fragment: str) -> str:
    """What to append to a line cut short so that it becomes one whole JSON object.

    Lines are flat objects (strings, numbers, booleans, null), as the harness writes them.
    The object keeps the fields the fragment holds and gains ``"error"`` (why) and
    ``"torn": true``; a fragment that is already a whole object only needs its newline.
    Appending (never truncating) keeps ``episodes.jsonl`` append-only.

    Example:
        >>> fragment = '{"game": "pong", "episode": 3, "sc'
        >>> record = json.loads(fragment + complete_torn_line(fragment))
        >>> record["game"], record["episode"], record["torn"]
        ('pong', 3, True)

    Raises:
        ValueError: the fragment is not the start of a JSON object (zeros, garbage).
    """
    with contextlib.suppress(ValueError, RecursionError):
        if isinstance(json.loads(fragment), dict):
            return "\n"
    if fragment.lstrip().startswith("{"):
        for ending in _TOKEN_ENDINGS:
            for closing in _CLOSINGS:
                try:
                    record = json.loads(fragment + ending + closing)
                except (ValueError, RecursionError):
                    continue
                if isinstance(record, dict) and record.get("torn") is True:
                    return ending + closing + "\n"
    raise ValueError(f"not the start of a JSON object: {fragment[:40]!r}")
