"""Verifying one episode: the static check of its replay against its record (the file,
its hash, its header), then its play under the settings its own header records.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from saber.errors import ReplayError, RunDirectoryError, SaberError, shown
from saber.protocol.limits import TIME_LIMITS
from saber.protocol.replay import (
    MAX_REPLAY_BYTES,
    Replay,
    ReplayHeader,
    decode_replay,
    decode_replay_header,
    frame_skip,
    sha256_of,
)
from saber.protocol.seeds import SEED_SCHEME, episode_seed
from saber.replay.simulate import Resimulation
from saber.replay.verify.pool import REPORT_STEPS, report
from saber.replay.verify.result import EpisodeCheck, Failure
from saber.rundir.contained import read_contained
from saber.rundir.records import is_failure, is_torn

# The result fields a record of a run must hold as its replay's play makes them: the score
# at each time limit of the registry, the length, how it ended, the rollovers and the
# infinite flag (which the aggregates read); ``seconds`` is wall-clock, no result.
CHECKED_FIELDS: tuple[str, ...] = (
    *dict.fromkeys(
        ["score", *(limit.record_field for limit in TIME_LIMITS if limit.frames is not None)]
    ),
    "frames",
    "steps",
    "end",
    "rollovers",
    "infinite",
)
# A training log's line holds fewer (no rollovers, no infinite flag unless it says one).
TRAINING_FIELDS = CHECKED_FIELDS[:-2]


@dataclass(frozen=True)
class Claims:
    """What a run says besides each record, to hold each record to.

    Attributes:
        base_seed: the base seed every record's seed must derive from, or None (a
            training log: not checked).
        training: the records are a training log's lines (only the fields they hold of
            :data:`CHECKED_FIELDS` beyond :data:`TRAINING_FIELDS` are compared; no agent).
    """

    base_seed: int | None = None
    training: bool = False


def _same(claimed: Any, proven: Any) -> bool:
    """Equal as JSON values: ``True`` is no ``1``, and ``1`` is ``1.0``."""
    if isinstance(claimed, bool) or isinstance(proven, bool):
        return claimed is proven
    numbers = type(claimed) in (int, float) and type(proven) in (int, float)
    return (numbers or type(claimed) is type(proven)) and claimed == proven


def _differs(name: str, claimed: Mapping[str, Any], value: Any, by: str) -> Failure | None:
    """The failure of field ``name`` of ``claimed`` against ``value`` (``by``: ``replayed``
    or ``in its replay's header``), or None."""
    if name in claimed and _same(claimed[name], value):
        return None
    said = f"{claimed[name]!r} in the record" if name in claimed else "missing from the record"
    return Failure(name, f"{name}: {shown(said)}, {value!r} {by}")


def _header_failures(
    header: ReplayHeader, record: Mapping[str, Any], claims: Claims
) -> list[Failure]:
    """What the record says of its episode that its replay's header does not."""
    found = [_differs("game", record, header.game, "in its replay's header"),
             _differs("episode", record, header.episode, "in its replay's header"),
             _differs("seed", record, header.seed, "in its replay's header")]  # fmt: skip
    if not claims.training:
        found += [
            _differs("agent", record, header.agent, "in its replay's header"),
            None if _same(record.get("run"), header.run)
            else Failure("run", f"run: {shown(repr(record.get('run')))} in the record, "
                         f"{header.run!r} in its replay's header"),
        ]  # fmt: skip
    if "steps" in record or not claims.training:
        found.append(_differs("steps", record, header.steps, "in its replay's header"))
    return [failure for failure in found if failure is not None]


def static_check(
    directory: Path, record: Mapping[str, Any], line: int, claims: Claims
) -> tuple[EpisodeCheck, bytes | None]:
    """The static check of one finished record: its seed, its replay file (a regular
    file inside ``directory``, of a size its header allows, whose SHA-256 is the record's
    ``replay_sha256`` and whose checksum holds) and that file's header against the
    record. Returns the check and the file's bytes (None when it cannot be played)."""
    game, episode = str(record["game"]), int(record["episode"])
    failures: list[Failure] = []

    # Every replay of a run is checked so, sampled or not: the check is made once, at the
    # end, rather than copied field by field (dataclasses.replace) at each step.
    def checked(data: bytes | None = None, **read: Any) -> tuple[EpisodeCheck, bytes | None]:
        found = EpisodeCheck(game, episode, line, claimed=dict(record), failures=tuple(failures),
                             **read)  # fmt: skip
        return found, data

    seed = record.get("seed")
    if claims.base_seed is not None:
        expected = episode_seed(claims.base_seed, game, episode)
        if not _same(seed, expected):
            failures.append(Failure("seed", f"seed: {shown(repr(seed))} in the record, {expected} "
                                    "is this episode's seed under the run's base seed"))  # fmt: skip
    relative = record.get("replay")
    if not relative:
        failures.append(Failure("replay", "no replay recorded (a run with --no-replays, or a "
                                "training log recorded without replays=True)"))  # fmt: skip
        return checked()
    named = shown(relative)
    try:
        data = read_contained(directory, relative, MAX_REPLAY_BYTES)
    except RunDirectoryError as why:
        failures.append(Failure("replay", f"replay file {named}: {why}"))
        return checked()
    if sha256_of(data) != record.get("replay_sha256"):
        failures.append(Failure("replay", f"replay file {named} is not the one the record names "
                                "(its SHA-256 is not the record's replay_sha256): changed or "
                                "replaced since the episode was recorded"))  # fmt: skip
    try:
        header, _ = decode_replay_header(data, named)
    except ReplayError as error:
        failures.append(Failure("replay", f"replay file {error}"))
        return checked()
    read = dict(steps=header.steps, settings=dict(header.settings),
                frames=header.steps * frame_skip(header.settings), agent=header.agent,
                run=header.run, versions=dict(header.versions), rom_sha256=header.rom_sha256)  # fmt: skip
    if (header.game, header.episode) != (game, episode):
        failures.append(Failure("replay", f"replay file {named} is the replay of "
                                f"{shown(header.game)} episode {header.episode} (seed "
                                f"{header.seed}), not of this episode (seed {shown(repr(seed))})"))  # fmt: skip
        return checked(**read)
    failures += _header_failures(header, record, claims)
    return checked(data, **read)


def proven_record(
    header: ReplayHeader, played: Mapping[str, Any], record: Mapping[str, Any]
) -> dict[str, Any]:
    """The record rebuilt from a replay: who and which from its header, the results from
    its play (no ``seconds``), and the replay it names."""
    proven: dict[str, Any] = {"game": header.game, "episode": header.episode,
                              "seed": header.seed, "agent": header.agent}  # fmt: skip
    if header.run is not None:
        proven["run"] = header.run
    proven.update({key: value for key, value in played.items() if key != "seconds"})
    proven.update(replay=record.get("replay"), replay_sha256=record.get("replay_sha256"))
    return proven


def _observing_least(replay: Replay) -> Replay:
    """``replay`` with the smallest observations (one frame of one pixel): they change
    nothing of a record, a header may ask for observations of any size, and frames that
    nobody looks at need not be resized and stacked at every step."""
    settings = {**replay.header.settings, "screen_size": 1, "stack_size": 1}
    return Replay(replace(replay.header, settings=settings), replay.actions)


def _played(simulation: Resimulation) -> dict[str, Any] | None:
    """Play ``simulation`` whole, reporting progress (:func:`report`); its record."""
    steps = 0
    for steps, _ in enumerate(simulation, 1):
        if steps % REPORT_STEPS == 0:
            report(REPORT_STEPS)
    report(steps % REPORT_STEPS)
    return simulation.record


def play_check(
    directory: Path, record: Mapping[str, Any], line: int, claims: Claims
) -> EpisodeCheck:
    """The static check of one record (:func:`static_check`), then the play of its
    replay under its header's settings: the record rebuilt from the play, and each field
    of the record that it does not reproduce, named.

    Never raises for a damaged, missing or foreign replay: each is a failure of the check.
    """
    check, data = static_check(directory, record, line, claims)
    check = replace(check, drawn=True)
    if data is None:
        return check
    try:
        replay = decode_replay(data, shown(record.get("replay")))
    except ReplayError as error:
        return replace(check, failures=(*check.failures, Failure("replay", f"replay file {error}")))
    failures = list(check.failures)
    try:
        simulation = Resimulation(_observing_least(replay))
        played = _played(simulation)
    except SaberError as error:
        failures.append(Failure("replay", f"cannot be replayed here: {error}"))
        return replace(check, failures=tuple(failures))
    if played is None:
        failures.append(Failure("end", f"end: {shown(repr(record.get('end')))} in the record, "
                                "but the episode had not ended when the replay's "
                                f"{len(replay.actions)} actions ran out"))  # fmt: skip
        return replace(check, failures=tuple(failures), played=True)
    fields = TRAINING_FIELDS if claims.training else CHECKED_FIELDS
    if claims.training:
        fields += tuple(name for name in CHECKED_FIELDS if name in record and name not in fields)
    failures += [f for f in (_differs(n, record, played.get(n), "replayed") for n in fields) if f]
    if simulation.unused:
        failures.append(Failure("replay", f"the replay holds {simulation.unused} action(s) "
                                "after the episode's end"))  # fmt: skip
    return replace(check, failures=tuple(failures), played=True,
                   proven=proven_record(replay.header, played, record))  # fmt: skip


def play_job(job: tuple[str, dict[str, Any], int, Claims]) -> EpisodeCheck:
    """:func:`play_check` in a worker process (``job``: its arguments, the directory as
    text)."""
    directory, record, line, claims = job
    return play_check(Path(directory), record, line, claims)


def why_unproven(directory: Path, record: dict[str, Any], run: Mapping[str, Any]) -> str | None:
    """Why ``record``'s replay does not prove it (its first failure, for people), or None
    when its replay, played, reproduces it: the proof :func:`saber.rundir.repair.repair_run`
    asks of a record that ``run.json`` (its object ``run``) no longer attests. A failed
    attempt or a record of a crash claims no result: None."""
    if is_failure(record) or is_torn(record):
        return None
    game, episode = record.get("game"), record.get("episode")
    if not isinstance(game, str) or isinstance(episode, bool) or not isinstance(episode, int):
        return "not an episode record"
    base = run.get("base_seed")
    checks_seeds = isinstance(base, int) and not isinstance(base, bool) and base >= 0
    claims = Claims(base if checks_seeds and run.get("seed_scheme") == SEED_SCHEME else None)
    check = play_check(directory, record, 0, claims)
    if check.status == "verified":
        return None
    return check.lines()[0] if check.failures else "its replay could not be played"
