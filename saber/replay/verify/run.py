"""Verifying a run directory: its records against its request, every replay statically,
a draw of them played, and ``run.json`` held to what the replays' headers say.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from saber.envs.emulator import rom_sha256
from saber.errors import RunDamageError, RunDirectoryError, SaberError, shown
from saber.protocol.seeds import SEED_SCHEME
from saber.protocol.settings import SaberSettings
from saber.replay.verify.episode import Claims, play_job, static_check
from saber.replay.verify.pool import play_all
from saber.replay.verify.result import EpisodeCheck, Failure, VerifyResult, Wholeness
from saber.rundir.damage import read_checked
from saber.rundir.reading import EpisodeLines, parse_run_file, read_episode_lines, read_run_json
from saber.rundir.records import EPISODES_FILE, RUN_FILE, episode_key
from saber.rundir.runfile import RunFile
from saber.version import __version__, installed_version

Records = dict[tuple[str, int], tuple[int, dict[str, Any]]]
# The most episodes a request may define: 61 games x 100 episodes is 6,100.
MAX_REQUESTED = 100_000


def versions_here() -> dict[str, str]:
    """The versions of saber and ale-py here: what a replay recorded here names (read as
    ``run.json``'s are, :func:`saber.version.installed_version`)."""
    return {"saber": __version__, "ale_py": installed_version("ale_py", "ale-py")}


def version_notes(checks: list[EpisodeCheck]) -> tuple[str, ...]:
    """The differences between the versions (and ROMs) that recorded ``checks`` and these."""
    here = versions_here()
    notes = []
    for key, name in (("saber", "saber"), ("ale_py", "ale-py")):
        recorded = sorted({shown(c.versions[key]) for c in checks if key in c.versions})
        if [v for v in recorded if v != here[key]]:
            emulator = ": a score that differs may come from the emulator, not from the play"
            notes.append(f"{name}: the replays were recorded with {', '.join(recorded)}, this "
                         f"is {here[key]}" + (emulator if key == "ale_py" else ""))  # fmt: skip
    roms = {(c.game, c.rom_sha256) for c in checks if c.rom_sha256}
    changed = sorted({shown(game) for game, digest in roms if digest != _rom(game)})
    if changed:
        notes.append(f"ROMs: {', '.join(changed)} recorded on another ROM file than this "
                     "ale-py's (SHA-256 differs)")  # fmt: skip
    return tuple(notes)


def _rom(game: str) -> str | None:
    try:
        return rom_sha256(game)
    except (SaberError, OSError, ValueError):
        return None  # a game this ale-py lacks: its play says so


def sort_records(found: EpisodeLines, run: RunFile | None) -> tuple[Records, Wholeness]:
    """The first finished record of each episode of the request, by ``(game, episode)``
    with its line number, and the records against the request (``run``; None: none).

    Raises:
        RunDirectoryError: a request of more than :data:`MAX_REQUESTED` episodes.
    """
    if run is not None and len(set(run.games)) * max(run.episodes, 0) > MAX_REQUESTED:
        raise RunDirectoryError(
            f"{shown(found.path.with_name(RUN_FILE))} asks for {len(set(run.games))} game(s) x "
            f"{run.episodes:,} episodes, more than any run saber verifies "
            f"({MAX_REQUESTED:,} episodes); it was not written by saber eval"
        )
    first: Records = {}
    lines: dict[tuple[str, int], list[int]] = {}
    outside = []
    for line in found.records():
        # Finished as the score readers count it: an empty "error" is no failure there.
        failed = line.kind == "failed" and line.record.get("error")
        if line.kind == "torn" or failed or "game" not in line.record:
            continue
        key = episode_key(line.record, line.where)
        if run is not None and (key[0] not in run.games or key[1] >= run.episodes):
            why = ("a game it did not ask for" if key[0] not in run.games
                   else f"it asked for episodes 0..{run.episodes - 1}")  # fmt: skip
            outside.append((line.number, key[0], key[1], why))
            continue
        first.setdefault(key, (line.number, line.record))
        lines.setdefault(key, []).append(line.number)
    duplicates = tuple((g, e, tuple(n)) for (g, e), n in sorted(lines.items()) if len(n) > 1)
    if run is None:
        return first, Wholeness(duplicates=duplicates, outside=tuple(outside))
    games = tuple(dict.fromkeys(run.games))
    asked = [(game, episode) for game in games for episode in range(run.episodes)]
    return first, Wholeness(
        requested=len(asked), games=games, episodes=run.episodes,
        missing=tuple(sorted(key for key in asked if key not in first)),
        duplicates=duplicates, outside=tuple(outside),
    )  # fmt: skip


def _draw(keys: list[tuple[str, int]], sample: int | None, seed: int) -> list[tuple[str, int]]:
    if sample is not None and sample < len(keys):
        return sorted(random.Random(seed).sample(keys, sample))
    return keys


def _within(
    drawn: list[tuple[str, int]], frames: Mapping[Any, int], budget: int | None
) -> list[Any]:
    """The drawn episodes whose frames fit in ``budget`` (None: all), in order."""
    if budget is None:
        return drawn
    kept, spent = [], 0
    for key in drawn:
        if spent + frames[key] <= budget:
            kept.append(key)
            spent += frames[key]
    return kept


def verify_records(
    directory: Path,
    records: Records,
    claims: Claims,
    draw: tuple[int | None, int, int | None, int | None],
    progress: bool | None = None,
    say: Callable[[str], None] | None = None,
) -> VerifyResult:
    """Check every record of ``records`` statically, play a draw of them, and gather the
    result (no run-level failures yet).

    Args:
        draw: ``sample``, ``seed``, ``workers`` and ``budget`` of :func:`verify_run`.
    """
    sample, seed, workers, budget = draw
    static = {key: static_check(directory, record, line, claims)[0]
              for key, (line, record) in records.items()}  # fmt: skip
    frames = {key: check.frames for key, check in static.items()}
    chosen = _within(_draw(sorted(records), sample, seed), frames, budget)
    work = [static[key].steps for key in chosen]
    if say is not None and chosen:
        say(f"{shown(directory)}: playing {len(chosen)} episode(s), {sum(work):,} agent "
            f"steps in all ({sum(frames[key] for key in chosen):,} frames at most; the "
            f"longest {max(work):,} steps)")  # fmt: skip
    jobs = [(str(directory), records[key][1], records[key][0], claims) for key in chosen]
    played = dict(zip(chosen, play_all(play_job, jobs, work, workers, progress), strict=True))
    episodes = tuple(played.get(key, static[key]) for key in sorted(records))
    done = [check for check in played.values() if check.played]
    return VerifyResult(
        directory, episodes, sample=sample, seed=seed, budget=budget,
        steps_played=sum(c.steps for c in done), frames_played=sum(c.frames for c in done),
        steps_total=sum(c.steps for c in static.values()), frames_total=sum(frames.values()),
        finished=len(records), versions=version_notes([c for c in episodes if c.versions]),
    )  # fmt: skip


def _one(values: list[Any]) -> tuple[Any, Counter[str]]:
    """The value all of ``values`` share (None if they differ), and how many hold each."""
    counts = Counter(json.dumps(value, sort_keys=True, default=repr) for value in values)
    return (values[0] if len(counts) == 1 else None), counts


def deviations_of(settings: Mapping[str, Any]) -> dict[str, tuple[Any, Any]]:
    """The settings of ``settings`` that break the protocol (``{name: (saber's, these)}``,
    :meth:`SaberSettings.deviations`); settings this saber does not know deviate too."""
    try:
        return SaberSettings.from_overrides(**settings).deviations()
    except (SaberError, TypeError, ValueError):
        saber = SaberSettings().as_dict()
        return {k: (saber.get(k), v) for k, v in settings.items() if saber.get(k) != v}


def _said(settings: Mapping[str, Any]) -> str:
    return ", ".join(f"{shown(k)}={v!r}" for k, v in sorted(settings.items())) or "none"


def judged_by_headers(result: VerifyResult) -> VerifyResult:
    """``result`` with the settings, agent and run name its replays' headers give, and a
    failure when the headers disagree among themselves."""
    read = [c for c in result.episodes if c.settings]
    if not read:
        return result
    problems = list(result.problems)
    settings, counts = _one([dict(c.settings) for c in read])
    if settings is None:
        differ = sorted({k for c in read for k in c.settings
                         if c.settings.get(k) != read[0].settings.get(k)})  # fmt: skip
        problems.append(Failure("settings", "settings: the replays were played with different "
                                f"settings ({', '.join(map(shown, differ))}), in {len(counts)} "
                                "sets; a run is played with one"))  # fmt: skip
    return replace(
        result, problems=tuple(problems), settings=settings or {},
        deviations=deviations_of(settings) if settings is not None else {},
        agent=_one([c.agent for c in read])[0], run=_one([c.run for c in read])[0],
    )  # fmt: skip


def run_json_failures(
    run: RunFile, on_disk: Mapping[str, Any], result: VerifyResult
) -> list[Failure]:
    """What ``run.json`` says that its replays' headers do not: its settings, its
    deviations and ``non_saber`` flag, its agent, its run name."""
    if not result.settings:
        return []
    found = [
        Failure(f"settings.{key}", f"settings: the replays were played with {shown(key)}="
                f"{result.settings.get(key)!r}, run.json says {shown(key)}={run.settings.get(key)!r}")
        for key in sorted(run.settings.keys() | result.settings.keys())
        if run.settings.get(key) != result.settings.get(key)
    ]  # fmt: skip
    claimed = sorted(map(str, run.deviations))
    flag = on_disk.get("non_saber")
    flag_differs = flag is not None and flag is not bool(result.deviations)  # None: unsaid
    if claimed != sorted(result.deviations) or flag_differs:
        played = _said({k: v for k, (_, v) in result.deviations.items()})
        found.append(Failure("run.json", f"run.json says the run deviates from SABER in "
                             f"{', '.join(map(shown, claimed)) or 'nothing'} (non_saber "
                             f"{shown(repr(flag))}); its replays were played with {played} "
                             "against SABER's settings"))  # fmt: skip
    agents = {c.agent for c in result.episodes if c.settings}
    if agents and agents != {run.agent}:
        found.append(Failure("agent", f"agent: the replays' headers say "
                             f"{' and '.join(sorted(map(repr, agents)))}, run.json says "
                             f"{shown(repr(run.agent))}"))  # fmt: skip
    runs = {c.run for c in result.episodes if c.settings}
    if runs and runs != {run.run}:
        found.append(Failure("run", f"run: the replays' headers name the run "
                             f"{' and '.join(sorted(map(repr, runs)))}, run.json names it "
                             f"{shown(repr(run.run))}"))  # fmt: skip
    return found


def _read_run(directory: Path) -> tuple[RunFile, dict[str, Any]]:
    try:
        on_disk = read_run_json(directory / RUN_FILE)
    except FileNotFoundError:
        raise RunDirectoryError(
            f"{shown(directory)}: no run.json, so the run's settings and seeds are unknown: "
            "nothing can be verified. Verify the directory that saber eval wrote."
        ) from None
    return parse_run_file(on_disk, directory / RUN_FILE), on_disk


def verify_run(
    directory: str | Path,
    sample: int | None = None,
    seed: int = 0,
    workers: int | None = None,
    *,
    budget: int | None = None,
    progress: bool | None = None,
    say: Callable[[str], None] | None = None,
) -> VerifyResult:
    """Verify the finished episodes of a run directory (see :mod:`saber.replay.verify`).

    Args:
        directory: the run directory (``saber eval --out``).
        sample: play this many episodes, drawn at random (reproducibly: the same
            ``seed`` draws the same sample); None: all of them; 0: none (every replay is
            checked statically all the same).
        seed: the seed of the sample.
        workers: worker processes (None: one per core; 0: this process).
        budget: emulator frames the play may take in all (None: no limit; an episode
            takes at most its header's steps times its frame skip): drawn episodes that
            do not fit, in order, are not played.
        progress: a progress bar on stderr (None: when stderr is a terminal).
        say: told one line before playing: the work, in agent steps.

    Raises:
        RunDirectoryError: no ``run.json`` (the run's settings and seeds are unknown) or
            a damaged one, or damaged records (``RunDamageError``: the advice of
            ``saber eval`` and ``saber report``, run ``saber repair``). (A ``run.json`` of
            another run is a failure of the result: the episodes are checked all the same.)
        KeyboardInterrupt: a stop (Ctrl-C, SIGTERM), within seconds: the workers are
            terminated.
    """
    directory = Path(directory)
    run, on_disk = _read_run(directory)
    problems = []
    try:
        found = read_checked(directory, on_disk)  # one pass: damage, then records
    except RunDamageError:
        raise  # the same advice as eval and report
    except RunDirectoryError as error:  # another run's run.json: records checked one by one
        problems.append(Failure("run.json", str(error)))
        found = read_episode_lines(directory / EPISODES_FILE)
    records, wholeness = sort_records(found, run)
    base_seed = run.base_seed if run.seed_scheme == SEED_SCHEME else None
    result = verify_records(directory, records, Claims(base_seed), (sample, seed, workers, budget),
                            progress, say)  # fmt: skip
    result = judged_by_headers(replace(result, wholeness=wholeness))
    problems += [*result.problems, *wholeness.failures(), *run_json_failures(run, on_disk, result)]
    return replace(result, problems=tuple(problems))
