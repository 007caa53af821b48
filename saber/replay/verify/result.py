"""What ``saber verify`` finds: typed, frozen results, for the CLI and the board alike.

Each episode's result carries the record rebuilt from its replay (:attr:`EpisodeCheck.proven`),
the claimed one, and each disagreement; a reader shows only the proven numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from saber.errors import shown

#: What became of one episode: ``"verified"`` (played, and its replay reproduces every
#: field of its record), ``"failed"`` (a failure of the static check or of the play),
#: ``"unplayed"`` (passed the static check, not played: outside the sample or past the
#: budget).
EpisodeStatus = Literal["verified", "failed", "unplayed"]


@dataclass(frozen=True)
class Failure:
    """One thing a record, its replay or its run directory claims that is not so.

    Attributes:
        field: what it is about: a record field (``score``, ``infinite``, ``seed``,
            ``agent``, ``run``, ``end``, ...), ``settings.<name>`` (a setting), ``replay``
            (the replay file: missing, outside the run directory, damaged, another
            episode's), ``record`` (the line as a whole: a duplicate, outside the
            request), ``run.json``.
        text: for people, one line (``score: 112.0 in the record, 12.0 replayed``).
    """

    field: str
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class EpisodeCheck:
    """The verification of one finished episode of a run.

    Attributes:
        game, episode: which (as the record says: the key of the run's records).
        line: the record's line number in ``episodes.jsonl`` (from 1; 0 in a training log
            read without line numbers).
        claimed: the record as submitted (its JSON object).
        proven: the record rebuilt from the replay: ``game``, ``episode``, ``seed``,
            ``agent`` and ``run`` from its header, and every result field the play makes
            (``score``, ``score_5min``, ``score_30min``, ``frames``, ``steps``, ``end``,
            ``rollovers``, ``infinite``); None when the episode was not played or its
            replay could not be played. ``seconds`` (wall-clock) is no part of it.
        drawn: the episode was chosen to be played (in the sample, within the budget).
        played: its replay was played (drawn, and it passed the static check).
        failures: every failure, static check and play; empty when verified (or when it
            passed the static check and was not played).
        steps: agent steps its replay's header declares (0 if unread).
        frames: emulator frames its play takes at most (the header's steps times its
            frame skip; 0 if unread): the work of playing it.
        settings: the settings its replay's header says it was played with (empty if
            unread).
        agent, run: the agent and run name its replay's header gives, if read.
        versions: package versions that recorded the replay (its header), if read.
        rom_sha256: the ROM the replay was recorded on, if read.
    """

    game: str
    episode: int
    line: int = 0
    claimed: Mapping[str, Any] = field(default_factory=dict, repr=False)
    proven: Mapping[str, Any] | None = field(default=None, repr=False)
    drawn: bool = False
    played: bool = False
    failures: tuple[Failure, ...] = ()
    steps: int = 0
    frames: int = 0
    settings: Mapping[str, Any] = field(default_factory=dict, repr=False)
    agent: str | None = None
    run: str | None = None
    versions: Mapping[str, str] = field(default_factory=dict)
    rom_sha256: str | None = None

    @property
    def status(self) -> EpisodeStatus:
        """``"verified"``, ``"failed"`` or ``"unplayed"`` (:data:`EpisodeStatus`)."""
        if self.failures:
            return "failed"
        return "verified" if self.played and self.proven is not None else "unplayed"

    @property
    def problems(self) -> tuple[str, ...]:
        """Each failure's text."""
        return tuple(failure.text for failure in self.failures)

    def lines(self) -> list[str]:
        """One line per failure: ``breakout episode 3: score: 12.0 in the record, ...``."""
        return [f"{shown(self.game)} episode {self.episode}: {text}" for text in self.problems]


@dataclass(frozen=True)
class Wholeness:
    """The run's finished records against what its request defines (``run.json``'s games
    x episodes, every seed from its base seed), each episode exactly once.

    Attributes:
        requested: episodes the request defines (games x episodes), or None (no request:
            a training log, or a ``run.json`` without games or episodes).
        games: the games of the request, in its order (empty without one).
        episodes: episodes per game of the request (0 without one).
        missing: ``(game, episode)`` of the request with no finished record, sorted.
        duplicates: ``(game, episode, line numbers)`` of episodes with two or more
            finished records (the first is the one checked; each is a failure).
        outside: ``(line, game, episode, why)`` of finished records outside the request
            (another game, an episode past the request's), each a failure.
    """

    requested: int | None = None
    games: tuple[str, ...] = ()
    episodes: int = 0
    missing: tuple[tuple[str, int], ...] = ()
    duplicates: tuple[tuple[str, int, tuple[int, ...]], ...] = ()
    outside: tuple[tuple[int, str, int, str], ...] = ()

    @property
    def whole(self) -> bool:
        """Every episode of the request finished, each exactly once, none outside it
        (False without a request: nothing says what whole is)."""
        return (
            self.requested is not None
            and not self.missing
            and not self.duplicates
            and not self.outside
        )

    def failures(self) -> tuple[Failure, ...]:
        """A duplicate or a record outside the request, one failure each (a missing
        episode is counted, not a failure: :meth:`VerifyResult.summary` says how many)."""
        found = [
            Failure(
                "record",
                f"{shown(game)} episode {episode}: {len(lines)} finished records (lines "
                f"{', '.join(map(str, lines))}); an episode is played once",
            )
            for game, episode, lines in self.duplicates
        ]
        found += [
            Failure("record", f"line {line}, {shown(game)} episode {episode}: outside the "
                    f"run's request ({why})")
            for line, game, episode, why in self.outside
        ]  # fmt: skip
        return tuple(found)


@dataclass(frozen=True)
class VerifyResult:
    """What :func:`~saber.replay.verify_run` (or
    :func:`~saber.replay.verify_training_log`) found.

    Attributes:
        directory: the run directory (or the training log).
        episodes: every finished episode of the request that was found, by game and
            episode, each statically checked (its replay's presence, type, size, hash and
            header against its record) and, when drawn and within the budget, played.
        wholeness: the records against the request (:class:`Wholeness`).
        settings: the settings the replays were played with, read from their headers
            (when every header read agrees; empty when none was read or they disagree,
            which is a failure of :attr:`problems`).
        deviations: the settings of :attr:`settings` that break the SABER protocol,
            ``{name: (saber's, the replays')}``: a run with any is not SABER, whatever
            ``run.json`` says.
        agent, run: the agent and run name the replays' headers give (None if they
            disagree or none was read).
        problems: failures of the run as a whole (``run.json`` against the replays, a
            ``run.json`` of another run, headers that disagree, duplicates, records
            outside the request).
        versions: differences between the versions that recorded the run and these
            (``ale-py: 0.11.0 recorded, 0.12.1 here``): stated, not failures.
        sample: episodes asked to be played (None: all); seed: the seed of the draw.
        budget: emulator frames the play was allowed (None: no limit).
        steps_played, frames_played: agent steps and emulator frames (at most) of the
            episodes played.
        steps_total, frames_total: the same of every episode's replay (the work of a
            full check).
        finished: finished episodes found in the run's request.
    """

    directory: Path
    episodes: tuple[EpisodeCheck, ...] = ()
    wholeness: Wholeness = field(default_factory=Wholeness)
    settings: Mapping[str, Any] = field(default_factory=dict)
    deviations: Mapping[str, tuple[Any, Any]] = field(default_factory=dict)
    agent: str | None = None
    run: str | None = None
    problems: tuple[Failure, ...] = ()
    versions: tuple[str, ...] = ()
    sample: int | None = None
    seed: int = 0
    budget: int | None = None
    steps_played: int = 0
    steps_total: int = 0
    frames_played: int = 0
    frames_total: int = 0
    finished: int = 0

    @property
    def checks(self) -> list[EpisodeCheck]:
        """The episodes drawn to be played (all of them without a sample or a budget),
        played or failed before."""
        return [check for check in self.episodes if check.drawn]

    @property
    def unplayed(self) -> list[EpisodeCheck]:
        """Episodes that passed the static check and were not played (outside the sample,
        or past the budget)."""
        return [check for check in self.episodes if check.status == "unplayed"]

    @property
    def failed(self) -> list[EpisodeCheck]:
        """Episodes with a failure."""
        return [check for check in self.episodes if check.failures]

    @property
    def ok(self) -> bool:
        """No failure anywhere (the run, the static check of every episode, the play of
        those drawn), and at least one episode found. A missing episode is no failure
        (:attr:`Wholeness.whole` says whether the run is whole), nor an episode not drawn
        (:attr:`verified` asks for every one)."""
        return bool(self.episodes) and not self.problems and not self.failed

    @property
    def verified(self) -> bool:
        """:attr:`ok`, every episode played, and the run whole: every number of the run
        is proven."""
        return self.ok and not self.unplayed and self.wholeness.whole

    def proven_records(self) -> list[dict[str, Any]]:
        """The rebuilt record of each verified episode (``episodes.jsonl``'s keys, as
        :func:`saber.scoring.runscores.add_harness_record` reads them), by game and
        episode: what a score computed from verified play is computed from."""
        return [dict(c.proven) for c in self.episodes if c.status == "verified" and c.proven]

    def lines(self) -> list[str]:
        """One line per failure of the run, then one per failure of an episode, by game
        and episode."""
        return [
            *(failure.text for failure in self.problems),
            *(line for check in self.episodes for line in check.lines()),
        ]

    def summary(self) -> str:
        """One line: how many episodes were played and how many match, what is missing."""
        played = self.checks
        bad = self.failed
        if not self.episodes:
            return f"{shown(self.directory)}: no finished episode to verify" + self._missing()
        if not played:
            return self._statically(bad)
        games = len({check.game for check in played})
        of = (
            f" (a sample of {len(played)} of {self.finished})"
            if len(played) < self.finished
            else ""
        )
        head = f"{shown(self.directory)}: verified {len(played)} episode(s) of {games} game(s){of}"
        if not bad and not self.problems:
            return f"{head}: every replay reproduces its record" + self._missing()
        if not bad:
            return (
                f"{head}: every replay reproduces its record, but the run fails "
                f"{len(self.problems)} check(s) of its own{self._missing()}; exit status 1"
            )
        count = sum(len(check.failures) for check in bad)
        return (
            f"{head}: {len(bad)} do not match ({count} mismatch(es)){self._missing()}; "
            "exit status 1"
        )

    def _statically(self, bad: list[EpisodeCheck]) -> str:
        head = f"{shown(self.directory)}: checked {len(self.episodes)} replay(s) statically, played none"
        if not bad and not self.problems:
            return f"{head}: every replay is the one its record names{self._missing()}"
        count = sum(len(check.failures) for check in bad) + len(self.problems)
        return f"{head}: {count} failure(s){self._missing()}; exit status 1"

    def _missing(self) -> str:
        whole = self.wholeness
        if not whole.missing or whole.requested is None:
            return ""
        return f"; {len(whole.missing)} of the {whole.requested} episodes of the request missing"
