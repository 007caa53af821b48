"""``saber verify``: replay every recorded episode of a run and check its record.

Each finished episode of a run directory names its replay and the replay's SHA-256
(``episodes.jsonl``: ``replay``, ``replay_sha256``). Verifying an episode reads that file,
checks that it is whole and is the replay of that episode (game, index, seed), plays its
actions again from its seed with the run's settings in a fresh env, without the policy
(:class:`~saber.replay.simulate.Resimulation`), and compares the record that play makes
with the one on file, field by field and exactly: ``score``, ``score_5min``,
``score_30min``, ``frames``, ``steps`` and ``end``. Episodes are checked in parallel
worker processes, as ``saber eval`` plays them. A training log recorded with
``replays=True`` (:mod:`saber.training.replays`) is verified the same way
(:func:`verify_training_log`).

What it proves: the play in the replays produces the scores in the records, under the
settings in ``run.json``, on this emulator. What it does not prove: that a given policy
produced that play (anyone can write actions); that the seeds were not chosen (it checks
that each record's seed is its episode's under the run's base seed, but not that the
base seed was not picked among many); or anything about episodes that are not in the
directory.

>>> VerifyResult(Path("run"), [], versions=[]).summary()
'run: no finished episode to verify'
"""

from __future__ import annotations

import concurrent.futures
import json
import multiprocessing
import os
import random
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from saber.envs.emulator import rom_sha256
from saber.errors import ReplayError, RunDamageError, RunDirectoryError, SaberError, shown
from saber.protocol.limits import TIME_LIMITS
from saber.protocol.replay import Replay, decode_replay, sha256_of
from saber.protocol.seeds import SEED_SCHEME, episode_seed
from saber.replay.simulate import Resimulation
from saber.rundir.damage import read_checked
from saber.rundir.reading import read_episode_lines, read_run_file
from saber.rundir.records import EPISODES_FILE
from saber.version import __version__, installed_version

# The fields of a record that its replay must reproduce exactly (the score at each time
# limit of the registry, then the length and how it ended); ``seconds`` is wall-clock.
CHECKED_FIELDS: tuple[str, ...] = (
    *dict.fromkeys(
        ["score", *(limit.record_field for limit in TIME_LIMITS if limit.frames is not None)]
    ),
    "frames",
    "steps",
    "end",
)


@dataclass
class EpisodeCheck:
    """The verification of one episode.

    Attributes:
        game, episode: which.
        problems: what does not match, one item each (``score: 12.0 in the record, 11.0
            replayed``); empty when the episode is verified.
        versions: package versions that recorded the replay (its header), if it was read.
        rom_sha256: the ROM the replay was recorded on, if it was read.
    """

    game: str
    episode: int
    problems: list[str] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)
    rom_sha256: str | None = None

    def lines(self) -> list[str]:
        """One line per problem: ``breakout episode 3: score: 12.0 in the record, ...``."""
        return [f"{self.game} episode {self.episode}: {problem}" for problem in self.problems]


def _compare(record: dict[str, Any], replayed: dict[str, Any]) -> list[str]:
    return [
        f"{name}: {record.get(name)!r} in the record, {replayed.get(name)!r} replayed"
        for name in CHECKED_FIELDS
        if record.get(name) != replayed.get(name)
    ]


def check_episode(
    directory: str | Path,
    record: dict[str, Any],
    settings: dict[str, Any] | None = None,
    base_seed: int | None = None,
) -> EpisodeCheck:
    """Verify one finished episode of a run directory (see the module docstring).

    Args:
        directory: the run directory.
        record: the episode's line of ``episodes.jsonl``.
        settings: the run's settings (``run.json``), played instead of the replay's own
            (a difference between the two is a problem too); None: the replay's.
        base_seed: the run's base seed, to check the record's seed (None: not checked).

    Never raises for a damaged, missing or foreign replay: each is a problem of the check.
    """
    game, episode = str(record["game"]), int(record["episode"])
    check = EpisodeCheck(game, episode)
    seed = record.get("seed")
    if base_seed is not None and seed != episode_seed(base_seed, game, episode):
        check.problems.append(
            f"seed: {seed!r} in the record, {episode_seed(base_seed, game, episode)} is this "
            "episode's seed under the run's base seed"
        )
    replay = _recorded_replay(Path(directory), record, check)
    if replay is None:
        return check
    if settings is not None:
        header = replay.header
        differ = sorted(k for k in settings.keys() | header.settings.keys()
                        if settings.get(k) != header.settings.get(k))  # fmt: skip
        if differ:
            check.problems.append(
                "settings: the replay was recorded with "
                + ", ".join(f"{k}={header.settings.get(k)!r}" for k in differ)
                + ", run.json says "
                + ", ".join(f"{k}={settings.get(k)!r}" for k in differ)
            )
        replay = Replay(replace(header, settings=dict(settings)), replay.actions)
    check.problems += _replayed(replay, record)
    return check


def _recorded_replay(directory: Path, record: dict[str, Any], check: EpisodeCheck) -> Replay | None:
    """The replay that ``record`` names, read and checked against the record (its
    versions and ROM noted in ``check``), or None when it cannot be played: each reason
    is a problem of ``check``."""
    relative = record.get("replay")
    if not relative:
        check.problems.append(
            "no replay recorded (a run with --no-replays, or a training log recorded "
            "without replays=True)"
        )
        return None
    path = directory / str(relative)
    relative = shown(relative)  # as problems show it: one line whatever the record says
    try:
        data = path.read_bytes()
    except (OSError, ValueError) as error:  # ValueError: a NUL in the path
        why = (
            "missing"
            if isinstance(error, FileNotFoundError)
            else getattr(error, "strerror", None) or str(error)
        )
        check.problems.append(f"replay file {relative}: {why}")
        return None
    if sha256_of(data) != record.get("replay_sha256"):
        check.problems.append(
            f"replay file {relative} is not the one the record names (its SHA-256 is not the "
            "record's replay_sha256): changed or replaced since the episode was recorded"
        )
    try:
        replay = decode_replay(data, str(relative))
    except ReplayError as error:
        check.problems.append(f"replay file {error}")
        return None
    header = replay.header
    check.versions, check.rom_sha256 = dict(header.versions), header.rom_sha256
    seed = record.get("seed")
    if (header.game, header.episode, header.seed) != (check.game, check.episode, seed):
        check.problems.append(
            f"replay file {relative} is the replay of {shown(header.game)} episode {header.episode} "
            f"(seed {header.seed}), not of this episode (seed {seed})"
        )
        return None
    return replay


def _replayed(replay: Replay, record: dict[str, Any]) -> list[str]:
    """What the play of ``replay`` gives that differs from ``record`` (problems)."""
    try:
        simulation = Resimulation(replay)
        replayed = simulation.run()
    except SaberError as error:
        return [f"cannot be replayed here: {error}"]
    if replayed is None:
        return [
            f"end: {record.get('end')!r} in the record, but the episode had not ended when "
            f"the replay's {len(replay.actions)} actions ran out"
        ]
    problems = _compare(record, replayed)
    if simulation.unused:
        problems.append(f"the replay holds {simulation.unused} action(s) after the episode's end")
    return problems


def _check_job(job: tuple[str, dict[str, Any], dict[str, Any] | None, int | None]) -> EpisodeCheck:
    import ale_py

    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)
    return check_episode(*job)


@dataclass
class VerifyResult:
    """What :func:`verify_run` found.

    Attributes:
        directory: the run directory.
        checks: one per verified episode, by game and episode.
        versions: differences between the versions that recorded the run and these
            (``ale-py: 0.11.0 recorded, 0.12.1 here``): stated, not failures.
        finished: finished episodes in the run (``checks`` holds a sample with
            ``--sample``).
        problems: what is wrong with the run directory itself (an ``episodes.jsonl``
            changed since ``run.json`` was written), for people.
    """

    directory: Path
    checks: list[EpisodeCheck]
    versions: list[str]
    finished: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Every checked episode matches (and there was one to check), and the directory's
        files belong together."""
        return (
            bool(self.checks)
            and not self.problems
            and not any(check.problems for check in self.checks)
        )

    def lines(self) -> list[str]:
        """One line per problem of the directory, then one per mismatch, by game and
        episode."""
        return [*self.problems, *(line for check in self.checks for line in check.lines())]

    def summary(self) -> str:
        """One line: how many episodes were checked and how many match."""
        if not self.checks:
            return f"{self.directory}: no finished episode to verify"
        bad = [check for check in self.checks if check.problems]
        games = len({check.game for check in self.checks})
        of = (
            f" (a sample of {len(self.checks)} of {self.finished})"
            if len(self.checks) < self.finished
            else ""
        )
        head = f"{self.directory}: verified {len(self.checks)} episode(s) of {games} game(s){of}"
        if not bad and not self.problems:
            return f"{head}: every replay reproduces its record"
        if not bad:
            return f"{head}: every replay reproduces its record, but the run directory does not hold together; exit status 1"
        count = sum(len(check.problems) for check in bad)
        return f"{head}: {len(bad)} do not match ({count} mismatch(es)); exit status 1"


def versions_here() -> dict[str, str]:
    """The versions of saber and ale-py here: what a replay recorded here names (read as
    ``run.json``'s are, :func:`saber.version.installed_version`)."""
    return {"saber": __version__, "ale_py": installed_version("ale_py", "ale-py")}


def _version_notes(checks: list[EpisodeCheck]) -> list[str]:
    here = versions_here()
    notes = []
    for key, name in (("saber", "saber"), ("ale_py", "ale-py")):
        recorded = sorted({c.versions[key] for c in checks if key in c.versions})
        others = [v for v in recorded if v != here[key]]
        if others:
            notes.append(
                f"{name}: the replays were recorded with {', '.join(recorded)}, this is "
                f"{here[key]}"
                + (
                    ": a score that differs may come from the emulator, not from the play"
                    if key == "ale_py"
                    else ""
                )
            )
    roms = {(c.game, c.rom_sha256) for c in checks if c.rom_sha256}
    changed = sorted({game for game, digest in roms if digest != rom_sha256(game)})
    if changed:
        notes.append(
            f"ROMs: {', '.join(changed)} recorded on another ROM file than this ale-py's "
            "(SHA-256 differs)"
        )
    return notes


def _check_all(jobs: list[Any], workers: int | None) -> list[EpisodeCheck]:
    workers = (os.cpu_count() or 1) if workers is None else workers
    if workers <= 1 or len(jobs) <= 1:
        return [_check_job(job) for job in jobs]
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(min(workers, len(jobs)), context) as pool:
        return list(pool.map(_check_job, jobs))


def _sample(keys: list[Any], sample: int | None, seed: int) -> list[Any]:
    if sample is not None and sample < len(keys):
        return sorted(random.Random(seed).sample(keys, sample))
    return keys


def verify_run(
    directory: str | Path,
    sample: int | None = None,
    seed: int = 0,
    workers: int | None = None,
) -> VerifyResult:
    """Verify the finished episodes of a run directory (see the module docstring).

    Args:
        directory: the run directory (``saber eval --out``).
        sample: verify this many episodes, drawn at random (reproducibly: the same
            ``seed`` draws the same sample); None: all of them.
        seed: the seed of the sample.
        workers: worker processes (None: one per core; 0: this process).

    Raises:
        RunDirectoryError: no ``run.json`` (the run's settings and seeds are unknown) or
            a damaged one, or damaged records (``RunDamageError``: the advice of
            ``saber eval`` and ``saber report``, run ``saber repair``). (A ``run.json`` of
            another run is a problem of the result: the episodes are checked all the same.)
    """
    directory = Path(directory)
    try:
        run = read_run_file(directory)
    except FileNotFoundError:
        raise RunDirectoryError(
            f"{directory}: no run.json, so the run's settings and seeds are unknown: nothing "
            "can be verified. Verify the directory that saber eval wrote."
        ) from None
    problems = []
    try:
        found = read_checked(directory, run.to_dict())  # one pass: damage, then records
    except RunDamageError:
        raise  # the same advice as eval and report
    except RunDirectoryError as error:  # another run's run.json: records checked one by one
        problems.append(str(error))
        found = read_episode_lines(directory / EPISODES_FILE)
    records = {
        key: line
        for key, line in found.finished().items()
        if key[0] in run.games and 0 <= key[1] < run.episodes
    }
    base_seed = run.base_seed if run.seed_scheme == SEED_SCHEME else None
    checked = _verify(directory, records, (run.settings, base_seed), (sample, seed, workers))
    checked.problems = problems
    return checked


def _verify(
    directory: Path,
    records: dict[tuple[str, int], dict[str, Any]],
    held_to: tuple[dict[str, Any] | None, int | None],
    draw: tuple[int | None, int, int | None],
    where: Path | None = None,
) -> VerifyResult:
    """Verify ``records`` (by ``(game, episode)``), whose replays lie in ``directory``.

    Args:
        held_to: the settings and base seed of :func:`check_episode`.
        draw: the ``sample``, ``seed`` and ``workers`` of :func:`verify_run`.
        where: what the result names (default: ``directory``).
    """
    sample, seed, workers = draw
    keys = _sample(sorted(records), sample, seed)
    jobs = [(str(directory), records[key], *held_to) for key in keys]
    checks = _check_all(jobs, workers)
    return VerifyResult(where or directory, checks, _version_notes(checks), len(records))


def verify_training_log(
    log: str | Path,
    sample: int | None = None,
    seed: int = 0,
    workers: int | None = None,
) -> VerifyResult:
    """Verify the episodes of a training log recorded with ``replays=True``
    (:mod:`saber.training.replays`): each line's replay, played again from its seed with
    the settings in its header, must give the line's ``score``, ``score_5min``,
    ``score_30min``, ``episode_frames``, ``steps`` and ``end``. A line without a replay is
    a problem of its own. A torn last line (a training killed mid-write) is skipped.

    What it does not check besides what :func:`verify_run` does not: the seeds (a training
    draws them from its first reset's seed; there is no base seed to hold them to), and
    the ``frames`` column (cumulative training frames, which the episodes alone do not fix).

    Args:
        log: the JSON-lines training log (``TrainingRecorder(..., replays=True)``).
        sample, seed, workers: as :func:`verify_run`.

    Raises:
        RunDirectoryError: the log cannot be read.
    """
    log = Path(log)
    try:
        text = log.read_bytes().decode("utf-8")
    except OSError as error:
        raise RunDirectoryError(f"Cannot read {log}: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise RunDirectoryError(f"{log}: not a training log (not UTF-8: {error.reason})") from None
    records: dict[tuple[str, int], dict[str, Any]] = {}
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
        records.setdefault(key, record)
    return _verify(log.parent, records, (None, None), (sample, seed, workers), where=log)
