"""``run.json``, typed: the run's provenance (:class:`RunFile`) and its sessions
(:class:`Session`), and what it says the run asked for, read leniently
(:class:`RunRequest`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from saber.errors import counted
from saber.protocol.seeds import SEED_SCHEME, episode_seed
from saber.rundir.records import IDENTITY_KEYS, RUN_FORMAT, SESSION_STATUSES, SessionStatus


@dataclass
class Session:
    """One ``saber eval`` (or ``evaluate()`` call) on the directory, in ``run.json``.

    Attributes:
        command: its command line.
        started: when it started (ISO 8601, UTC).
        versions: package versions it ran with (``saber``, ``ale_py``, ...).
        ended: when it ended; None while it runs (or if it was killed outright).
        status: ``"finished"``, ``"interrupted"`` (Ctrl-C, SIGTERM), ``"failed"`` (an
            error stopped it), ``"running"`` (written as no ``status``: the session runs,
            or was killed outright), ``"repaired"`` (``saber repair``).
        counts: what it did: ``episodes_finished`` and ``attempts_failed`` (this
            session's lines); empty while it runs.
        summary: the run's counts when it ended (``finished``, ``failed``, ...).
        episodes_log: what ``episodes.jsonl`` held when the session last wrote
            ``run.json``: ``{"bytes": N, "sha256": hex of its first N bytes}``
            (:func:`~saber.rundir.reading.episodes_log_checkpoint`). The file is
            append-only, so its first N bytes never change: a ``run.json`` whose
            checkpoint does not match them belongs to another directory
            (:func:`~saber.rundir.reading.check_episodes_log`). None until the session
            begins (every session in a ``run.json`` has one).
        extra: keys this version does not know, kept as they were.
    """

    command: list[str]
    started: str
    versions: dict[str, str] = field(default_factory=dict)
    ended: str | None = None
    status: SessionStatus = "running"
    counts: dict[str, int] = field(default_factory=dict)
    summary: dict[str, Any] | None = None
    episodes_log: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    _KNOWN = ("command", "started", "ended", "status", "counts", "summary", "episodes_log")

    def to_dict(self) -> dict[str, Any]:
        """The JSON object (a running session has no ``status`` nor ``counts``)."""
        session: dict[str, Any] = {"command": self.command, "started": self.started}
        session.update(self.versions)
        session.update(self.extra)
        if self.ended is not None:
            session["ended"] = self.ended
        if self.status != "running":
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
        """The session of a ``run.json`` entry; ``version_keys`` are the package names.

        Raises:
            ValueError: a status that is none of :data:`~saber.rundir.records.SESSION_STATUSES`.
        """
        ended = session.get("ended")
        status = session.get("status", "running")
        if status not in SESSION_STATUSES:
            raise ValueError(f"a session's status {status!r} is none of {SESSION_STATUSES}")
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
        seed_scheme: how episode seeds are derived (``saber.protocol.seeds.SEED_SCHEME``).
        command: the first session's command line.
        started: when the first session started.
        versions: package versions of the first session (``saber``, ``ale_py``,
            ``gymnasium``, ``numpy``, ``python``).
        platform: the first session's platform string.
        run: the run name (``saber eval --run``), or None.
        run_id: a random id (32 hex digits) made when the run started, kept by every
            resume and by any copy of the directory: two directories with one ``run_id``
            hold one run (:func:`~saber.rundir.reading.run_key`).
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
        the record out, so the two count the same episodes (:meth:`RunRequest.foreign`)."""
        seeds = {"base_seed": self.base_seed, "seed_scheme": self.seed_scheme}
        return RunRequest.of({"agent": self.agent, **seeds}).foreign(record)

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
            f"the directory holds a run of {counted(self.episodes, 'episode')} per game of "
            f"{', '.join(self.games)}; this call asks for {session.episodes} of "
            f"{', '.join(session.games)}. A call's result and the directory's report cover "
            f"the whole run, so ask for all of it (--games {games} --episodes "
            f"{max(self.episodes, session.episodes)}, or more to extend it), or use another "
            "directory (saber report reads the run as it is)"
        )

    def resumed_by(self, session: RunFile) -> RunFile:
        """This run with a new session's games, episodes and session added (its
        ``run_id`` stays the run's)."""
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
        """The JSON object, keys in the order saber writes them."""
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
        """The run of a ``run.json`` object.

        Raises:
            KeyError, TypeError, ValueError: a key missing or of the wrong type.
        """
        versions = {k: run[k] for k in cls.VERSION_KEYS if k in run}
        return cls(
            settings=dict(run["settings"]),
            deviations=dict(run["deviations"]),
            agent=str(run["agent"]),
            games=[str(game) for game in run["games"]],
            episodes=int(run["episodes"]),
            base_seed=int(run["base_seed"]),
            seed_scheme=str(run["seed_scheme"]),
            command=list(run["command"]),
            started=str(run["started"]),
            versions=versions,
            platform=str(run["platform"]),
            run=None if run.get("run") is None else str(run["run"]),
            run_id=str(run["run_id"]),
            sessions=[Session.from_dict(session, cls.VERSION_KEYS) for session in run["sessions"]],
            format=str(run["format"]),
            extra={
                k: v for k, v in run.items() if k not in cls._KNOWN and k not in cls.VERSION_KEYS
            },
        )


@dataclass(frozen=True)
class RunRequest:
    """What ``run.json`` says the run was asked to play, read leniently from its JSON
    object (a ``run.json`` written by hand, or by an old saber, may lack any key): the one
    rule of which records are the run's. Records outside it (a line pasted in from
    elsewhere, or edited) are left out of reports, and the damage check does not count
    them (:mod:`saber.rundir.damage`).

    Attributes:
        games: ale ids of the games asked for, or None (no list of games: any game).
        episodes: episodes per game asked for (an integer > 0), or None (any episode).
        agent: the agent's name, or None (any agent).
        base_seed: the base seed episode seeds derive from (an integer >= 0), or None.
        checks_seeds: the seed scheme is :data:`~saber.protocol.seeds.SEED_SCHEME` and
            there is a base seed, so each record's seed can be checked.

    >>> request = RunRequest.of({"games": ["pong"], "episodes": 2, "agent": "random"})
    >>> request.outside({"episode": 2}, "pong"), request.outside({"episode": 0}, "breakout")
    ('the run asked for episodes 0..1', 'a game the run did not ask for')
    """

    games: frozenset[str] | None
    episodes: int | None
    agent: str | None
    base_seed: int | None
    checks_seeds: bool

    @classmethod
    def of(cls, run: Mapping[str, Any], game_id: Callable[[str], str] = str) -> RunRequest:
        """The request of ``run.json``'s object ``run``; ``game_id`` turns a name of its
        ``games`` into the ale id records are compared with (it may raise for an unknown
        name)."""
        games, episodes, base_seed = run.get("games"), run.get("episodes"), run.get("base_seed")
        # A base seed episode seeds derive from: an integer >= 0 (not a bool, not -1).
        seeds_checkable = (
            isinstance(base_seed, int) and not isinstance(base_seed, bool) and base_seed >= 0
        )
        return cls(
            games=(
                frozenset(game_id(str(game)) for game in games)
                if isinstance(games, list) and games
                else None
            ),
            episodes=(
                episodes
                if isinstance(episodes, int) and not isinstance(episodes, bool) and episodes > 0
                else None
            ),
            agent=str(run["agent"]) if run.get("agent") is not None else None,
            base_seed=base_seed if seeds_checkable else None,
            checks_seeds=run.get("seed_scheme") == SEED_SCHEME and seeds_checkable,
        )

    def outside(self, record: Mapping[str, Any], game: str) -> str | None:
        """Why ``record`` (of ``game``, an ale id) is not one the run asked for, or None:
        a game or an episode it did not ask for, or :meth:`foreign`."""
        episode = record.get("episode")
        if self.games is not None and game not in self.games:
            return "a game the run did not ask for"
        if self.episodes is not None and isinstance(episode, int) and episode >= self.episodes:
            return f"the run asked for episodes 0..{self.episodes - 1}"
        return self.foreign(record, game)

    def foreign(self, record: Mapping[str, Any], game: str | None = None) -> str | None:
        """Why ``record`` is not this run's whatever it asked for, or None: another agent,
        or a seed that is not its episode's under the run's base seed. ``game``: its ale
        id (default: its ``game`` as written)."""
        if self.agent is not None and "agent" in record and str(record["agent"]) != self.agent:
            return f"agent {record['agent']!r}, the run's is {self.agent!r}"
        game = record.get("game") if game is None else game
        seed, episode = record.get("seed"), record.get("episode")
        if (
            self.checks_seeds
            and isinstance(game, str)
            and isinstance(seed, int)
            and isinstance(episode, int)
            and episode >= 0
            and seed != episode_seed(self.base_seed or 0, game, episode)
        ):
            return f"seed {seed} is not that episode's seed under the run's base seed"
        return None

    def count(self) -> int | None:
        """Episodes the run asked for, when ``run.json`` says."""
        if self.games is None or self.episodes is None:
            return None
        return len(self.games) * self.episodes
