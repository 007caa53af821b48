"""Property tests of every reader of outside input: generated and damaged files.

The property: a reader either returns the right result, or raises one of saber's errors
(:class:`saber.errors.SaberError`) whose message is one line; never another exception,
never a hang, never a number other than the one written. The CLI commands that read files
exit with a one-line ``Error:`` and no traceback.

Inputs are generated, or made by damaging valid files (:mod:`tests.robustness.mutations`)
that real runs made once per session (:mod:`tests.robustness.conftest`).

The default suite tries ``DEFAULT_EXAMPLES`` examples per property, derandomized (the same
examples every run, so a CI failure reproduces); ``-m slow`` tries ``THOROUGH_EXAMPLES``
per property with fresh random examples each run (Hypothesis prints the failing example and
how to reproduce it). A property's ``cost`` scales both counts down for readers that run
the emulator (verify).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import shutil
import signal
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from saber.agents.convnet import read_policy_file
from saber.cli import main
from saber.errors import ExitCode, SaberError
from saber.games import get_game
from saber.harness.policies import resolve_spec
from saber.harness.store import ResultsStore
from saber.protocol.replay import decode_replay, encode_replay
from saber.protocol.settings import SaberSettings
from saber.protocol.training import parse_frames
from saber.replay import recorded_episodes, verify_run, verify_training_log
from saber.reports.training_log import read_training_log, training_scores
from saber.rundir import (
    EPISODES_FILE,
    RUN_FILE,
    read_episode_lines,
    read_run_file,
)
from saber.scoring import read_scores, reference_table
from saber.scoring.csvscores import read_score_csv
from tests.robustness.mutations import dump, json_values, mutated_bytes, mutated_json
from tests.robustness.valid_files import reseal

DEFAULT_EXAMPLES = 40  # per property: 980 in all, about 15 s of CPU
THOROUGH_EXAMPLES = 2000  # per property with -m slow: 49,000 in all
HANG_SECONDS = 60  # an example still running after this long is a hang (usually < 0.1 s)
EXAMPLE_SCORES = Path(__file__).parents[1] / "reports" / "data" / "example_scores.csv"


class Hang(BaseException):
    """A reader ran past :data:`HANG_SECONDS` (a BaseException, so no ``except
    Exception`` in the code under test can swallow it)."""


@contextlib.contextmanager
def hang_guard() -> Iterator[None]:
    """Fail an example that runs past :data:`HANG_SECONDS` (a hang, not a timing test)."""

    def stop(signum: int, frame: Any) -> None:
        raise Hang(f"still running after {HANG_SECONDS} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def read_or_refuse(read: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``read(*args, **kwargs)``, or None when it refused with one of saber's errors.

    Any other exception fails the example; so does an error message that is empty or
    longer than one line.
    """
    with hang_guard():
        try:
            return read(*args, **kwargs)
        except SaberError as error:
            message = str(error)
            assert message.strip(), f"{type(error).__name__} without a message"
            assert "\n" not in message and "\r" not in message, (
                f"{type(error).__name__} message of several lines: {message!r}"
            )
            return None


def cli_reads_or_refuses(*args: str, verdict: bool = False) -> None:
    """``saber ARGS`` ends with exit 0, or a refusal (usage 2, bad input 3) and a one-line
    ``Error:``; no traceback.

    ``verdict``: the command may also end with its answer (``saber verify``: a record that
    does not match, exit 1), printed without ``Error:``.
    """
    with hang_guard():
        result = CliRunner().invoke(main, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert "Traceback" not in result.output
    if verdict and result.exit_code == ExitCode.FAILED and "Error" not in result.output:
        return
    if result.exit_code != ExitCode.OK:
        assert result.exit_code in (ExitCode.USAGE, ExitCode.BAD_INPUT), result.output
        errors = [line for line in result.output.splitlines() if line.startswith("Error")]
        assert len(errors) == 1, result.output
        tail = result.output[result.output.index(errors[0]) :]
        assert tail.rstrip("\n").count("\n") == 0, f"an error of several lines: {tail!r}"


@contextlib.contextmanager
def scratch() -> Iterator[Path]:
    """A fresh directory for one example (Hypothesis runs many examples per test)."""
    with tempfile.TemporaryDirectory(prefix="saber-fuzz-") as directory:
        yield Path(directory)


def copy_run(run: Path, into: Path) -> Path:
    target = into / "run"
    shutil.copytree(run, target)
    return target


# --- oracles: what a result must say, given the file -----------------------------------------


def harness_scores_as_written(table: Any, episodes_file: Path) -> None:
    """Every score of a harness table is the number on its line; one row per time limit
    per line, and lines with an ``error`` or ``torn`` never count."""
    lines = {
        number: record
        for number, record in read_episode_lines(episodes_file).lines
        if isinstance(record, dict)
    }
    fields = {"5min": "score_5min", "30min": "score_30min", "saber": "score"}
    by_limit: dict[str, list[int]] = {}
    for row in table.records:
        number = int(row.where.rsplit(":", 1)[1])
        line = lines[number]
        assert not line.get("error") and line.get("torn") is not True
        written = line[fields[row.time_limit]]
        assert not isinstance(written, bool) and float(written) == row.score, (row, line)
        assert row.game == get_game(str(line["game"])).ale_id
        assert row.episode == line.get("episode")
        assert row.infinite == (row.time_limit == "saber" and line.get("infinite") is True)
        by_limit.setdefault(row.time_limit, []).append(number)
    assert len({tuple(sorted(numbers)) for numbers in by_limit.values()}) <= 1
    for numbers in by_limit.values():
        assert len(numbers) == len(set(numbers)), "one line counted twice"


def csv_scores_as_written(table: Any, path: Path) -> None:
    """Every row of a CSV table is its line as written (score, game, episode, agent), and
    every non-blank line is one row."""
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle)
        header = [cell.strip().lower() for cell in next(reader)]
        rows = {}
        for row in reader:
            if any(cell.strip() for cell in row):
                rows[reader.line_num] = dict(
                    zip(header, (cell.strip() for cell in row), strict=False)
                )
    assert len(table.records) == len(rows)
    for record in table.records:
        row = rows[int(record.where.rsplit(":", 1)[1])]
        assert record.game == get_game(row["game"]).ale_id
        written = row["score"].lower()
        if record.score == math.inf:
            assert record.infinite
        else:
            assert record.score == float(written), (record, row)
        if "episode" in row:
            assert record.episode == int(row["episode"])
        assert record.agent == row.get("agent", "agent")


# --- the properties ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Property:
    """A property of one reader: ``test`` is Hypothesis-wrapped; ``fixtures`` are the
    session fixtures it takes; ``cost`` scales its example counts (1: cheap)."""

    test: Callable[..., None]
    fixtures: tuple[str, ...] = ()
    cost: float = 1.0


PROPERTIES: dict[str, Property] = {}


def prop(*fixtures: str, cost: float = 1.0, **strategies: Any) -> Callable:
    def register(function: Callable[..., None]) -> Callable[..., None]:
        PROPERTIES[function.__name__] = Property(given(**strategies)(function), fixtures, cost)
        return function

    return register


# Score tables (CSV) ------------------------------------------------------------------------

_GAMES = ("pong", "Pong", "Montezuma's Revenge", "MsPacman", "ms pacman", "Battle Zone", "venture")
_AGENT = st.text(st.characters(codec="utf-8", exclude_characters="\r\n\x00"), min_size=1).filter(
    lambda name: name.strip() != ""
)
_SCORE_TEXT = st.one_of(
    st.integers(-(10**12), 10**12).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda x: f" {x:.6g} "),
)


@prop(rows=st.lists(st.tuples(_AGENT, st.sampled_from(_GAMES), _SCORE_TEXT), max_size=12))
def generated_score_csv(rows: list[tuple[str, str, str]]) -> None:
    """A generated CSV is read as written: each row's agent, game, episode and score."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["agent", "game", "episode", "score"])
    expected, episodes = set(), {}
    for agent, game, score in rows:
        key = (agent.strip(), get_game(game).ale_id)
        episode = episodes[key] = episodes.get(key, -1) + 1
        writer.writerow([agent, game, episode, score])
        expected.add((*key, episode, float(score)))
    with scratch() as directory:
        path = directory / "scores.csv"
        path.write_text(out.getvalue(), encoding="utf-8")
        table = read_or_refuse(read_score_csv, path)
    if not rows:
        assert table is None  # a header alone is refused
        return
    assert table is not None
    assert {(r.agent, r.game, r.episode, r.score) for r in table.records} == expected
    assert {r.time_limit for r in table.records} == {"saber"}


@prop(data=st.data())
def damaged_score_csv(data: st.DataObject) -> None:
    """A damaged CSV is read as written, or refused with one line."""
    blob = data.draw(mutated_bytes(EXAMPLE_SCORES.read_bytes()))
    with scratch() as directory:
        path = directory / "scores.csv"
        path.write_bytes(blob)
        table = read_or_refuse(read_scores, path)
        if table is not None:
            csv_scores_as_written(table, path)


@prop(data=st.data())
def damaged_score_csv_cli(data: st.DataObject) -> None:
    """``saber report`` of a damaged CSV: a report, or one line of error."""
    blob = data.draw(mutated_bytes(EXAMPLE_SCORES.read_bytes(), edits=2))
    with scratch() as directory:
        path = directory / "scores.csv"
        path.write_bytes(blob)
        cli_reads_or_refuses("report", str(path), "--resamples", "20")


@prop(name=st.one_of(st.text(max_size=20), st.sampled_from(["saber-paper", "dopamine@10m",
      "dopamine:rainbow@50M", "saber-random@10M", "dopamine@", "@", "dopamine:", " Dopamine "])))  # fmt: skip
def reference_names(name: str) -> None:
    """``--reference NAME``: a shipped table or an error naming the shipped ones."""
    read_or_refuse(reference_table, name)


# Run directories: episodes.jsonl and run.json -----------------------------------------------


@prop("real_run", data=st.data(), resealed=st.booleans())
def damaged_episodes_log(real_run: Path, data: st.DataObject, resealed: bool) -> None:
    """A damaged ``episodes.jsonl``: its scores as written, or refused with one line.

    With the run's checkpoint (``episodes_log``), a change to the bytes it covers makes
    ``run.json`` not the file's; with the checkpoint made anew for the changed file (as
    had the run written it), each line is read on its own.
    """
    blob = data.draw(mutated_bytes((real_run / EPISODES_FILE).read_bytes()))
    with scratch() as directory:
        run = copy_run(real_run, directory)
        (run / EPISODES_FILE).write_bytes(blob)
        if resealed:
            reseal(run)
        table = read_or_refuse(read_scores, run)
        if table is not None:
            harness_scores_as_written(table, run / EPISODES_FILE)


@prop("real_run", data=st.data())
def changed_episode_records(real_run: Path, data: st.DataObject) -> None:
    """Records with values of other types, huge, NaN or infinite: as written, or refused."""
    records = [json.loads(line) for line in (real_run / EPISODES_FILE).read_text().splitlines()]
    index = data.draw(st.integers(0, len(records) - 1))
    records[index] = data.draw(mutated_json(records[index]))
    with scratch() as directory:
        run = copy_run(real_run, directory)
        (run / EPISODES_FILE).write_text("".join(dump(r) + "\n" for r in records))
        reseal(run)
        table = read_or_refuse(read_scores, run)
        if table is not None:
            harness_scores_as_written(table, run / EPISODES_FILE)


@prop("real_run", data=st.data())
def changed_run_json(real_run: Path, data: st.DataObject) -> None:
    """A ``run.json`` with values changed: the run file, or refused with one line; the
    scores beside it still read as written."""
    run_json = json.loads((real_run / RUN_FILE).read_text())
    text = dump(data.draw(mutated_json(run_json, edits=4)))
    with scratch() as directory:
        run = copy_run(real_run, directory)
        (run / RUN_FILE).write_text(text)
        read_or_refuse(read_run_file, run)
        table = read_or_refuse(read_scores, run)
        if table is not None:
            harness_scores_as_written(table, run / EPISODES_FILE)


@prop("real_run", data=st.data())
def damaged_run_json_bytes(real_run: Path, data: st.DataObject) -> None:
    """A ``run.json`` with bytes changed: read or refused with one line."""
    blob = data.draw(mutated_bytes((real_run / RUN_FILE).read_bytes()))
    with scratch() as directory:
        run = copy_run(real_run, directory)
        (run / RUN_FILE).write_bytes(blob)
        read_or_refuse(read_run_file, run)
        read_or_refuse(read_scores, run)


@prop("real_run", data=st.data(), which=st.sampled_from([EPISODES_FILE, RUN_FILE]))
def resume_damaged_run(real_run: Path, data: st.DataObject, which: str) -> None:
    """``ResultsStore.open`` (what ``saber eval`` resumes with) on a damaged directory:
    it opens, or refuses with one line (a run made with other settings lists them, one a
    line: the only message of several lines, by design)."""
    from saber.errors import RunMismatchError

    session = read_run_file(real_run)
    session.sessions = session.sessions[-1:]
    blob = data.draw(mutated_bytes((real_run / which).read_bytes()))
    with scratch() as directory:
        run = copy_run(real_run, directory)
        (run / which).write_bytes(blob)
        with hang_guard():
            try:
                store = ResultsStore.open(run, session)
            except RunMismatchError:
                return
            except SaberError as error:
                assert "\n" not in str(error), str(error)
                return
        store.close()


@prop("real_run", data=st.data())
def damaged_run_report_cli(real_run: Path, data: st.DataObject) -> None:
    """``saber report DIR`` of a damaged run directory: a report or one line of error."""
    which = data.draw(st.sampled_from([EPISODES_FILE, RUN_FILE]))
    blob = data.draw(mutated_bytes((real_run / which).read_bytes(), edits=2))
    with scratch() as directory:
        run = copy_run(real_run, directory)
        (run / which).write_bytes(blob)
        cli_reads_or_refuses("report", str(run), "--resamples", "20")


# Replays -----------------------------------------------------------------------------------


def _replay_file(real_run: Path) -> Path:
    return next((real_run / "replays").rglob("*.saber-replay"))


@prop("real_run", data=st.data())
def damaged_replay(real_run: Path, data: st.DataObject) -> None:
    """A damaged replay file is refused (its checksum), or is the replay unchanged."""
    valid = _replay_file(real_run).read_bytes()
    blob = data.draw(mutated_bytes(valid))
    replay = read_or_refuse(decode_replay, blob, "replay")
    if replay is not None:
        assert replay == decode_replay(valid)


@prop("real_run", data=st.data())
def resealed_replay(real_run: Path, data: st.DataObject) -> None:
    """A replay changed and its checksum made again (a forger, or a bug in a writer):
    the parts past the checksum refuse it with one line, or read what it holds."""
    import hashlib

    valid = _replay_file(real_run).read_bytes()
    blob = data.draw(mutated_bytes(valid[:-32], edits=2))
    read_or_refuse(decode_replay, blob + hashlib.sha256(blob).digest(), "replay")


@prop("real_run", data=st.data())
def changed_replay_header(real_run: Path, data: st.DataObject) -> None:
    """A replay whose header has values of other types: refused with one line, or its
    header read as written."""
    import bz2
    import hashlib
    import struct

    replay = decode_replay(_replay_file(real_run).read_bytes())
    header = data.draw(mutated_json(replay.header.to_dict()))
    head = dump(header).encode("utf-8")
    body = bz2.compress(replay.actions)
    content = b"SABERRPL\x01" + struct.pack("<I", len(head)) + head
    content += struct.pack("<I", len(body)) + body
    decoded = read_or_refuse(decode_replay, content + hashlib.sha256(content).digest())
    if decoded is not None:
        assert decoded.actions == replay.actions
        assert decoded.header.steps == header["steps"] == len(replay.actions)
        assert decoded.header.episode == header["episode"]
        assert decoded.header.seed == header["seed"]
        assert encode_replay(decoded.header, decoded.actions)  # it writes back


@prop("real_run", data=st.data())
def recorded_episodes_of_damaged_run(real_run: Path, data: st.DataObject) -> None:
    """``saber.replay.recorded_episodes`` of a damaged run: its episodes, or one line."""
    records = [json.loads(line) for line in (real_run / EPISODES_FILE).read_text().splitlines()]
    index = data.draw(st.integers(0, len(records) - 1))
    records[index] = data.draw(mutated_json(records[index]))
    with scratch() as directory:
        run = copy_run(real_run, directory)
        (run / EPISODES_FILE).write_text("".join(dump(r) + "\n" for r in records))
        read_or_refuse(lambda: list(recorded_episodes(run)))


@prop("real_run", data=st.data(), cost=0.25)
def verify_damaged_run(real_run: Path, data: st.DataObject) -> None:
    """``verify_run`` of a run whose records were changed: a result, or one line."""
    records = [json.loads(line) for line in (real_run / EPISODES_FILE).read_text().splitlines()]
    index = data.draw(st.integers(0, len(records) - 1))
    records[index] = data.draw(mutated_json(records[index]))
    with scratch() as directory:
        run = copy_run(real_run, directory)
        (run / EPISODES_FILE).write_text("".join(dump(r) + "\n" for r in records))
        result = read_or_refuse(verify_run, run, sample=1, workers=0)
        if result is not None:
            assert all("\n" not in line for check in result.checks for line in check.problems)


@prop("real_run", data=st.data(), cost=0.25)
def verify_damaged_run_cli(real_run: Path, data: st.DataObject) -> None:
    """``saber verify DIR`` of a run with a damaged file (a replay too): its verdict, or
    one line of error."""
    files = [EPISODES_FILE, RUN_FILE, str(_replay_file(real_run).relative_to(real_run))]
    which = data.draw(st.sampled_from(files))
    blob = data.draw(mutated_bytes((real_run / which).read_bytes(), edits=2))
    with scratch() as directory:
        run = copy_run(real_run, directory)
        (run / which).write_bytes(blob)
        cli_reads_or_refuses("verify", str(run), "--workers", "0", "--sample", "1", verdict=True)


# Training logs ----------------------------------------------------------------------------

_EPISODE = st.tuples(
    st.sampled_from(["pong", "breakout"]),
    st.integers(0, 10**9),
    # Atari scores are below 1e8; far larger ones only test float summation, not reading.
    st.one_of(st.integers(-(10**6), 10**6), st.floats(-1e12, 1e12)),
)


@prop(episodes=st.lists(_EPISODE, max_size=30))
def generated_training_log(episodes: list[tuple[str, int, float]]) -> None:
    """Each game's score at a checkpoint past every episode, which the training reached
    (``trained_frames``: a log alone reaches only its last line's frames), is the mean of
    its episodes' scores as written (fewer than 100 per game), over as many episodes as
    lines."""
    with scratch() as directory:
        log = directory / "training.jsonl"
        log.write_text(
            "".join(
                json.dumps({"game": game, "frames": frames, "score": score, "episode": index})
                + "\n"
                for index, (game, frames, score) in enumerate(episodes)
            )
        )
        scores = read_or_refuse(training_scores, log, [10**12], trained_frames=10**12)
    assert scores is not None
    assert sum(s.episodes for s in scores) == len(episodes)
    for s in scores:
        written = [score for game, _, score in episodes if game == s.game]
        assert s.mean == pytest.approx(math.fsum(written) / len(written), rel=1e-9, abs=1e-3)


@prop("real_training_log", data=st.data())
def damaged_training_log(real_training_log: Path, data: st.DataObject) -> None:
    """A damaged training log: scores over at most its lines, or one line of error."""
    blob = data.draw(mutated_bytes(real_training_log.read_bytes()))
    with scratch() as directory:
        log = directory / "training.jsonl"
        log.write_bytes(blob)
        by_game = read_or_refuse(read_training_log, log)
        scores = read_or_refuse(training_scores, log, [10**12])
        if by_game is not None and scores is not None:
            lines = [line for line in blob.splitlines() if line.strip()]
            assert sum(len(episodes) for episodes in by_game.values()) <= len(lines)


@prop("real_training_log", data=st.data())
def changed_training_records(real_training_log: Path, data: st.DataObject) -> None:
    """Training-log records with values of other types: read as written, or refused."""
    records = [json.loads(line) for line in real_training_log.read_text().splitlines()]
    index = data.draw(st.integers(0, len(records) - 1))
    records[index] = data.draw(mutated_json(records[index]))
    with scratch() as directory:
        log = directory / "training.jsonl"
        log.write_text("".join(dump(r) + "\n" for r in records))
        by_game = read_or_refuse(read_training_log, log)
    if by_game is not None:
        read = sorted(e["score"] for episodes in by_game.values() for e in episodes)
        written = sorted(float(r["score"]) for r in records)  # scores are float64
        assert read == written
        assert all(math.isfinite(e["score"]) for episodes in by_game.values() for e in episodes)


@prop("real_training_log", data=st.data())
def damaged_training_log_cli(real_training_log: Path, data: st.DataObject) -> None:
    """``saber training LOG`` of a damaged log: the table, or one line of error."""
    blob = data.draw(mutated_bytes(real_training_log.read_bytes(), edits=2))
    at = data.draw(st.sampled_from(["10M", "1k,2k", "1e400", "0", "-1", "x", "1.5e6", ""]))
    with scratch() as directory:
        log = directory / "training.jsonl"
        log.write_bytes(blob)
        cli_reads_or_refuses("training", str(log), "--at", at)


@prop("real_training_log", data=st.data())
def verify_damaged_training_log(real_training_log: Path, data: st.DataObject) -> None:
    """``verify_training_log`` of a damaged log (no replays: each line's own problem)."""
    blob = data.draw(mutated_bytes(real_training_log.read_bytes(), edits=2))
    with scratch() as directory:
        log = directory / "training.jsonl"
        log.write_bytes(blob)
        read_or_refuse(verify_training_log, log, workers=0)


@prop(text=st.one_of(st.text(max_size=12), st.from_regex(r"\s*[0-9_.eE+]{1,8}\s*[kKmMbBgG]?\s*")))
def checkpoint_frames_text(text: str) -> None:
    """``--at`` text: a whole, non-negative number of frames, or one line of error."""
    frames = read_or_refuse(parse_frames, text)
    assert frames is None or (isinstance(frames, int) and frames >= 0)


# Policy files and agent specs ---------------------------------------------------------------


@prop("policy_file", data=st.data())
def damaged_policy_file(policy_file: Path, data: st.DataObject) -> None:
    """A damaged policy file: the network, or one line of error (``conv-actor:PATH`` too)."""
    blob = data.draw(mutated_bytes(policy_file.read_bytes(), edits=2))
    with scratch() as directory:
        path = directory / "policy.npz"
        path.write_bytes(blob)
        read_or_refuse(read_policy_file, path)
        read_or_refuse(resolve_spec, f"conv-actor:{path}")


_ARRAY = st.one_of(
    st.sampled_from([np.zeros((2, 4, 8, 8)), np.array("x"), np.array([math.nan]), np.array(1)]),
    st.builds(
        np.full,
        st.lists(st.integers(0, 3), max_size=3).map(tuple),
        st.sampled_from([0.0, 1.0, math.inf, math.nan]),
    ),
    st.sampled_from([np.array(["a", "b"]), np.array([1, 2], dtype=np.int8), np.array(True)]),
)


@prop("policy_file", data=st.data())
def changed_policy_arrays(policy_file: Path, data: st.DataObject) -> None:
    """A policy file whose arrays (or format, or provenance) were replaced."""
    with np.load(policy_file) as archive:
        arrays = {name: archive[name] for name in archive.files}
    for _ in range(data.draw(st.integers(1, 3))):
        name = data.draw(st.sampled_from(sorted(arrays)))
        if data.draw(st.booleans()):
            arrays[name] = data.draw(_ARRAY)
        elif name == "provenance":
            arrays[name] = np.array(dump(data.draw(json_values)))
        else:
            del arrays[name]
    with scratch() as directory:
        path = directory / "policy.npz"
        np.savez(path, **arrays)
        read_or_refuse(read_policy_file, path)


_SPEC_KINDS = ("random", "noop", "constant", "epsilon-constant", "ppo-pong", "conv-actor")
_SPEC_ARGUMENTS = ("0", "17", "18", "-1", "1e3", "99999999999999999999", "٣", "3:0.5", "3:nan",
                   "3:inf", "3:-0.1", "3:1e400", "3:", ":", "/nonexistent")  # fmt: skip


@prop(
    kind=st.sampled_from(_SPEC_KINDS),
    argument=st.one_of(st.text(max_size=10), st.sampled_from(_SPEC_ARGUMENTS)),
    colon=st.booleans(),
)
def agent_specs(kind: str, argument: str, colon: bool) -> None:
    """``--agent SPEC`` of a built-in kind with any argument: a factory, or one line."""
    spec = f"{kind}:{argument}" if colon else f"{kind}{argument}"
    if ":" not in spec or spec.split(":", 1)[0].strip() in _SPEC_KINDS:
        read_or_refuse(resolve_spec, spec)


# Settings (--env-option KEY=VALUE) --------------------------------------------------------------

_SETTING_NAMES = (*SaberSettings().as_dict(), "frameskip", "unknown")
_SETTING_TEXT = st.one_of(
    st.sampled_from(["400", "0", "-1", "0.25", "1e400", "NaN", "Infinity", "true", "null", '"x"',
                     "[1]", "{}", "9" * 5000, "[" * 5000 + "]" * 5000, "correct", ""]),
    st.text(max_size=8),
    st.integers().map(str),
    st.floats().map(repr),
)  # fmt: skip


@prop(name=st.sampled_from(_SETTING_NAMES), text=_SETTING_TEXT)
def env_options(name: str, text: str) -> None:
    """``--env-option NAME=TEXT``: settings, or one line of error (before any run)."""
    from saber.cli.eval import env_options as _env_options

    options = _env_options((f"{name}={text}",))
    read_or_refuse(SaberSettings.from_overrides, **options)


# --- the tests ---------------------------------------------------------------------------------


# saber.envpool's arguments ---------------------------------------------------------------

_ENVPOOL_ARGUMENTS = (
    "num_envs", "batch_size", "num_threads", "seed", "reward_clip", "episodic_life",
    "repeat_action_probability", "noop_max", "use_fire_reset", "full_action_space",
    "max_episode_steps", "frame_skip", "stack_num", "img_height", "img_width", "gray_scale",
    "base_path", "no_such_argument",
)  # fmt: skip
# Few envs whatever is drawn: an env is built when the arguments are SABER's.
_small_counts = st.one_of(st.integers(-2, 4), st.sampled_from([0.5, "4", None, True, [2]]))


@prop(
    cost=0.25,
    task=st.one_of(
        st.sampled_from(["Pong-v5", "SABER/Breakout", "pong", "Nope-v5", ""]), st.text()
    ),
    env_type=st.one_of(st.sampled_from(["gymnasium", "gym", "dm", ""]), st.text(max_size=5)),
    counts=st.fixed_dictionaries(
        {}, optional={"num_envs": _small_counts, "batch_size": _small_counts}
    ),
    others=st.dictionaries(st.sampled_from(_ENVPOOL_ARGUMENTS[2:]), json_values, max_size=3),
)
def envpool_arguments(task: Any, env_type: Any, counts: dict, others: dict) -> None:
    """saber.envpool.make with drawn arguments: an env of SABER, or one line naming the
    argument (an unknown task, env type, count or setting SABER fixes); never a traceback."""
    from saber import envpool

    env = read_or_refuse(envpool.make, task, env_type, **counts, **others)
    if env is not None:
        assert env.num_envs >= 1 and env.config["repeat_action_probability"] == 0.25
        env.close()


def _examples(name: str, count: int) -> int:
    return max(1, round(count * PROPERTIES[name].cost))


def _run(request: pytest.FixtureRequest, name: str, count: int, derandomize: bool) -> None:
    found = PROPERTIES[name]
    configured = settings(
        max_examples=_examples(name, count),
        deadline=None,  # hang_guard catches hangs; no timing threshold on a shared machine
        derandomize=derandomize,
        database=None,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )(found.test)
    configured(**{fixture: request.getfixturevalue(fixture) for fixture in found.fixtures})


@pytest.mark.parametrize("name", sorted(PROPERTIES))
def test_reader_property(request: pytest.FixtureRequest, name: str) -> None:
    _run(request, name, DEFAULT_EXAMPLES, derandomize=True)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PROPERTIES))
def test_reader_property_thorough(request: pytest.FixtureRequest, name: str) -> None:
    count = int(os.environ.get("SABER_FUZZ_EXAMPLES", THOROUGH_EXAMPLES))
    _run(request, name, count, derandomize=False)
