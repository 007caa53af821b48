"""A run directory that nothing can corrupt or misread: each class of damage a user met.

Every test starts from a real run directory written by ``saber eval`` (real ROMs through
ale-py) and damages it as a crash, a full disk, a copy or an edit would.
"""

from __future__ import annotations

import errno
import inspect
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from saber import rundir
from saber.cli import main
from saber.errors import ExitCode, SaberError
from saber.harness import Inline, Processes, evaluate
from saber.harness.store import ResultsStore
from saber.rundir import EPISODES_FILE, RunFile, Session, durable, read_run_file
from saber.rundir.records import now
from saber.scoring import read_scores
from tests.harness.helpers import (
    alive,
    descendants,
    evaluate_short,
    start_hung_policies,
    strip_timing,
    wait_for,
)

EPISODES = 3
EVAL_ARGS = ["eval", "--agent", "random", "--games", "breakout", "--episodes", str(EPISODES),
             "--workers", "0", "--env-option", "max_frames_without_reward=400",
             "--allow-non-saber"]  # fmt: skip


def _evaluate(out: Path, episodes: int = EPISODES, **options: object):  # type: ignore[no-untyped-def]
    return evaluate_short(out, episodes, **options)


def _copy(run: Path, tmp_path: Path, name: str = "run") -> Path:
    return Path(shutil.copytree(run, tmp_path / name))


def _reopen(directory: Path, episodes: int | None = None) -> ResultsStore:
    """Open the directory as a new session of its own run would (asking for ``episodes``)."""
    on_disk = read_run_file(directory)
    session = Session(command=["test"], started=now(), versions=dict(on_disk.versions))
    changes = {"sessions": [session], "episodes": episodes or on_disk.episodes}
    return ResultsStore.open(directory, RunFile(**{**on_disk.__dict__, **changes}))


def _crashed_while_writing(clean_run: Path, tmp_path: Path, last: str) -> Path:
    """A run that finished episodes 0 and 1, then, in a later session, was writing the last
    line (episode 2's record, or a failed attempt of it) when it crashed; the line is whole
    here, for the caller to cut."""
    directory = tmp_path / "source"
    _evaluate(directory, episodes=EPISODES - 1)
    record = next(r for r in _lines(clean_run) if r["episode"] == EPISODES - 1)
    if last == "failed":
        record = rundir.FailedAttempt(
            "breakout", record["episode"], record["seed"], "random", "RuntimeError: boom",
            "episode", 0,
        ).to_dict()  # fmt: skip
    store = _reopen(directory, EPISODES)
    store.write(record)
    store.close()  # killed: the session never ended
    return directory


def _lines(directory: Path) -> list[dict]:
    return [json.loads(line) for line in (directory / EPISODES_FILE).read_bytes().splitlines()]


# --- every truncation point of the last line ----------------------------------------------


@pytest.mark.parametrize("last", ["finished", "failed"])
def test_every_cut_of_the_last_line_resumes_and_reports_rightly(
    clean_run: Path, tmp_path: Path, last: str
) -> None:
    source = _crashed_while_writing(clean_run, tmp_path, last)
    data = (source / EPISODES_FILE).read_bytes()
    start = data.rstrip(b"\n").rfind(b"\n") + 1  # where the last line begins
    whole = _lines(source)
    before = [(r["game"], r["episode"]) for r in whole[:-1] if "error" not in r]
    for cut in range(start, len(data) + 1):
        directory = _copy(source, tmp_path, f"cut-{cut}")
        (directory / EPISODES_FILE).write_bytes(data[:cut])
        with _reopen(directory) as store:
            repaired = store.recovered
            finished = sorted(store.finished)
            unresolved = sorted(store.log.unresolved())
        after = (directory / EPISODES_FILE).read_bytes()
        assert after.startswith(data[:cut]), cut  # append-only, even when repairing
        records = _lines(directory)  # every line is one whole JSON object
        if cut in (start, len(data)):  # nothing cut, or the whole line with its newline
            assert repaired is None, cut
        elif cut == len(data) - 1:  # a whole record that lost its newline counts as it is
            assert repaired is not None and "lost its line end" in repaired, cut
            assert records[-1] == whole[-1]
        else:  # a record cut short: no episode's, whatever its fields seem to say
            assert repaired is not None and "cut short by a crash" in repaired, cut
            assert records[-1]["torn"] is True and "runs again" in repaired
        whole_last = cut >= len(data) - 1
        expected = before + ([("breakout", whole[-1]["episode"])] if whole_last and last == "finished" else [])  # fmt: skip
        assert finished == sorted(expected), cut
        failed = [("breakout", 2)] if whole_last and last == "failed" else []
        assert unresolved == failed, cut
        # The report reads it, says what it left out, and never blames a wrong episode.
        table = read_scores(directory)
        assert sorted({(r.game, r.episode) for r in table.records}) == sorted(expected), cut
        text = " ".join(table.warnings)
        if start < cut < len(data) - 1:
            assert "cut short by a crash and completed on resume" in text, cut
        assert ("episode(s) skipped: breakout episode 2" in text) == bool(failed), cut
        assert ("unfinished run: " in text) != (whole_last and last == "finished"), cut
        with _reopen(directory) as store:  # a second open repairs nothing more
            assert store.recovered is None
        assert (directory / EPISODES_FILE).read_bytes() == after


@pytest.mark.parametrize("cut", ["{", '{"ga', '{"game": "breakout", "episode": 1'])
def test_a_resume_after_a_cut_plays_exactly_the_missing_episodes(
    clean_run: Path, tmp_path: Path, cut: str
) -> None:
    directory = _crashed_while_writing(clean_run, tmp_path, "finished")
    lines = (directory / EPISODES_FILE).read_text().splitlines(keepends=True)
    # The last episode's record was being written when the power went: `cut` of it is on disk.
    (directory / EPISODES_FILE).write_text("".join(lines[:-1]) + cut)
    messages: list[str] = []
    result = _evaluate(directory, on_message=messages.append)
    assert result.new_episodes == 1 and result.finished == EPISODES
    assert any("cut short by a crash" in m for m in messages)
    assert strip_timing(result.records) == strip_timing([json.loads(x) for x in lines])
    assert result.failures == []  # the torn record is no failure of any episode
    runner = CliRunner()
    report = runner.invoke(main, ["report", str(directory)])
    assert report.exit_code == 0, report.output
    assert "cut short by a crash and completed on resume" in report.output


def test_a_torn_line_cut_inside_a_character_reads_and_resumes(tmp_path: Path) -> None:
    directory = tmp_path / "run"
    _evaluate(directory, episodes=1)
    _reopen(directory, episodes=2).close()  # a session that crashed while writing a line
    line = json.dumps({"game": "breakout", "episode": 1, "agent": "été"}, ensure_ascii=False)
    data = line.encode()
    cut = data.index("é".encode()) + 1  # half of a two-byte character
    with (directory / EPISODES_FILE).open("ab") as handle:
        handle.write(data[:cut])
    with _reopen(directory) as store:
        assert store.recovered and "cut short" in store.recovered
    assert read_scores(directory).records  # every line reads again
    with _reopen(directory) as store:
        assert store.recovered is None


# --- records outside the run's request ----------------------------------------------------


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"game": "pong"}, "a game the run did not ask for"),
        ({"episode": 7}, "the run asked for episodes 0..2"),
        ({"agent": "someone-else"}, "agent 'someone-else', the run's is 'random'"),
        ({"seed": 12345}, "seed 12345 is not that episode's seed"),
    ],
)
def test_records_outside_the_request_are_left_out_and_named(
    clean_run: Path, tmp_path: Path, change: dict, why: str
) -> None:
    directory = _copy(clean_run, tmp_path)
    # Someone appended a record: a copy of episode 0's with one field changed.
    outsider = {**_lines(directory)[0], **change}
    with (directory / EPISODES_FILE).open("a") as handle:
        handle.write(json.dumps(outsider) + "\n")
    result = CliRunner().invoke(main, ["report", str(directory)])
    assert result.exit_code == 0, result.output
    assert "outside what" in result.output and why in result.output
    table = read_scores(directory)
    assert len(table.records) == 3 * EPISODES  # the run's own episodes, once each
    assert [r.score for r in table.records] == [r.score for r in read_scores(clean_run).records]


# --- a run.json that does not belong to the directory --------------------------------------


def test_a_run_json_of_another_run_is_refused(clean_run: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    _evaluate(other, base_seed=1)  # same agent, game, settings; another seed
    twin = tmp_path / "twin"
    _evaluate(twin, episodes=2)  # the same run as clean_run, but fewer episodes
    for source in (other, twin):
        directory = _copy(clean_run, tmp_path, f"victim-{source.name}")
        shutil.copy(source / "run.json", directory / "run.json")
        with pytest.raises(SaberError, match="does not belong to"):
            _reopen(directory)
        result = CliRunner().invoke(main, ["report", str(directory)])
        assert result.exit_code == ExitCode.BAD_INPUT and "does not belong to" in result.output
        assert "Traceback" not in result.output
        resumed = CliRunner().invoke(main, [*EVAL_ARGS, "--out", str(directory)])
        assert resumed.exit_code == ExitCode.BAD_INPUT
        assert "does not belong to" in resumed.output
    # A run.json copied into an empty directory, and an episodes.jsonl rewritten.
    empty = tmp_path / "empty"
    empty.mkdir()
    shutil.copy(clean_run / "run.json", empty / "run.json")
    with pytest.raises(SaberError, match="does not belong to"):
        _reopen(empty)
    edited = _copy(clean_run, tmp_path, "edited")
    text = (edited / EPISODES_FILE).read_text()
    (edited / EPISODES_FILE).write_text(text.replace('"score": ', '"score": 1', 1))
    with pytest.raises(SaberError, match="does not belong to"):
        read_scores(edited)


# --- provenance missing, unfinished runs ---------------------------------------------------


def test_a_missing_run_json_and_an_unfinished_run_are_reported_with_a_warning(
    clean_run: Path, tmp_path: Path
) -> None:
    bare = _copy(clean_run, tmp_path, "bare")
    (bare / "run.json").unlink()
    result = CliRunner().invoke(main, ["report", str(bare)])
    assert result.exit_code == 0 and "warning:" in result.output
    assert "no run.json beside episodes.jsonl" in result.output
    unfinished = tmp_path / "unfinished"
    _evaluate(unfinished, episodes=1)
    _evaluate(unfinished, episodes=1)  # resumed, asking for no more
    run = json.loads((unfinished / "run.json").read_text())
    run_file = RunFile.from_dict(run)
    with ResultsStore.open(unfinished, RunFile(**{**run_file.__dict__, "episodes": 4, "sessions": [Session(["saber"], now(), dict(run_file.versions))]})) as store:  # fmt: skip
        store.end_session({}, "interrupted")  # a session asked for 4, stopped after 1
    result = CliRunner().invoke(main, ["report", str(unfinished)])
    assert result.exit_code == 0, result.output
    assert "an unfinished run: 1 of the 4 episodes it asked for finished (last session: interrupted)" in result.output  # fmt: skip
    finished = CliRunner().invoke(main, ["report", str(clean_run)])
    warnings = [line for line in finished.output.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "break the SABER protocol" in warnings[0]  # only that


# --- a full disk at every write ------------------------------------------------------------


class DiskFull:
    """Makes the ``n``-th write of :func:`saber.rundir.durable._write_all` (the one place
    that writes file contents) write half its bytes, then fail as a full disk does."""

    def __init__(self, n: int | None) -> None:
        self.n = n
        self.calls = 0
        self.real = durable._write_all

    def __call__(self, fd: int, data: bytes) -> None:
        self.calls += 1
        if self.calls == self.n:
            self.real(fd, data[: len(data) // 2])
            raise OSError(errno.ENOSPC, "No space left on device")
        self.real(fd, data)


def _whole_or_absent(directory: Path) -> None:
    for line in (directory / EPISODES_FILE).read_bytes().splitlines(keepends=True):
        assert line.endswith(b"\n") and isinstance(json.loads(line), dict)
    json.loads((directory / "run.json").read_text())
    for name in ("report.json",):
        if (directory / name).exists():
            json.loads((directory / name).read_text())
    assert not list(directory.rglob("*.tmp")), "a temporary file was left behind"


# Every write, or one of each kind: the run's first run.json (1), the first episode's record
# (2) and the last write (the report's). The full sweep takes about a minute on 2 cores:
# it runs under -m slow; the default suite keeps one write of each kind.
SWEEPS = ["one-of-each-kind", pytest.param("every-write", marks=pytest.mark.slow)]


def _writes_to_fail(sweep: str, writes: int) -> list[int]:
    return list(range(1, writes + 1)) if sweep == "every-write" else [1, 2, writes]


@pytest.mark.parametrize("sweep", SWEEPS)
def test_a_full_disk_at_any_write_leaves_every_file_whole_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sweep: str
) -> None:
    runner = CliRunner()
    clean = tmp_path / "clean"
    counter = DiskFull(None)
    monkeypatch.setattr(durable, "_write_all", counter)
    assert runner.invoke(main, [*EVAL_ARGS, "--out", str(clean)]).exit_code == 0
    writes = counter.calls
    assert writes >= EPISODES + 4  # run.json twice, each episode, report.json, report.md
    expected = strip_timing(_lines(clean))
    for n in _writes_to_fail(sweep, writes):
        out = tmp_path / f"full-{n}"
        monkeypatch.setattr(durable, "_write_all", DiskFull(n))
        result = runner.invoke(main, [*EVAL_ARGS, "--out", str(out)])
        assert "No space left on device" in result.output, (n, result.output)
        assert "Traceback" not in result.output, (n, result.output)
        if result.exit_code == 0:  # only the session's end in run.json was lost: said so
            assert "only this session's summary is lost" in result.output, (n, result.output)
        else:
            assert result.exit_code == ExitCode.UNFINISHED, (n, result.output)  # it resumes
            assert isinstance(result.exception, SystemExit), n
            errors = [line for line in result.output.splitlines() if "Error" in line]
            assert len(errors) == 1 and "Cannot write" in errors[0], (n, result.output)
        if (out / "run.json").exists():
            _whole_or_absent(out)
        monkeypatch.setattr(durable, "_write_all", counter.real)  # space freed
        again = runner.invoke(main, [*EVAL_ARGS, "--out", str(out)])
        assert again.exit_code == 0, (n, again.output)
        _whole_or_absent(out)
        assert strip_timing(_lines(out)) == expected, n
        assert json.loads((out / "report.json").read_text())


class StopAfterWrite:
    """Raises KeyboardInterrupt just after the ``n``-th write of
    :func:`saber.rundir.durable._write_all` put its bytes in the file: where a Ctrl-C or
    SIGTERM lands when it arrives between the write and the bookkeeping that follows it."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.calls = 0
        self.real = durable._write_all

    def __call__(self, fd: int, data: bytes) -> None:
        self.real(fd, data)
        self.calls += 1
        if self.calls == self.n:
            raise KeyboardInterrupt


@pytest.mark.parametrize("sweep", SWEEPS)
def test_a_stop_right_after_any_write_keeps_the_counts_true_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sweep: str
) -> None:
    """The session's counts in run.json are what its lines on disk say, even when the stop
    lands between a record's write and the counters (CI saw 1 counted of 2 written)."""
    runner = CliRunner()
    clean = tmp_path / "clean"
    counter = DiskFull(None)
    monkeypatch.setattr(durable, "_write_all", counter)
    assert runner.invoke(main, [*EVAL_ARGS, "--out", str(clean)]).exit_code == 0
    expected = strip_timing(_lines(clean))
    stopped_in_a_session = 0
    for n in _writes_to_fail(sweep, counter.calls):
        out = tmp_path / f"stop-{n}"
        monkeypatch.setattr(durable, "_write_all", StopAfterWrite(n))
        result = runner.invoke(main, [*EVAL_ARGS, "--out", str(out)])
        assert result.exit_code == ExitCode.INTERRUPTED, (n, result.output)
        assert "Interrupted. Finished episodes are in" in result.output, (n, result.output)
        assert "Traceback" not in result.output, (n, result.output)
        monkeypatch.setattr(durable, "_write_all", counter.real)
        if (out / "run.json").exists():
            _whole_or_absent(out)
            (session,) = json.loads((out / "run.json").read_text())["sessions"]
            if "counts" in session:  # the stop was not in the end's own run.json write
                stopped_in_a_session += 1
                assert session["counts"] == {
                    "episodes_finished": len(_lines(out)),
                    "attempts_failed": 0,
                }, n
        again = runner.invoke(main, [*EVAL_ARGS, "--out", str(out)])
        assert again.exit_code == 0, (n, again.output)
        _whole_or_absent(out)
        assert strip_timing(_lines(out)) == expected, n
    # After each episode's record (the sample stops after the first one only).
    assert stopped_in_a_session >= (EPISODES if sweep == "every-write" else 1)


# --- undecodable input ---------------------------------------------------------------------


def test_input_that_is_not_utf8_is_a_one_line_error(clean_run: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    csv_file = tmp_path / "scores.csv"
    csv_file.write_bytes("game,score\npong,1\nbreakout,2 caf\xe9\n".encode("latin-1"))
    training_log = tmp_path / "training.jsonl"
    training_log.write_bytes(b'{"game": "pong", "frames": 1, "score": 1, "x": "\xff"}\n')
    middle = _copy(clean_run, tmp_path, "middle")
    line = (middle / EPISODES_FILE).read_bytes().splitlines(keepends=True)[0]
    with (middle / EPISODES_FILE).open("ab") as handle:  # a bad line, then a good one
        handle.write(line.replace(b'"agent": "random"', b'"agent": "r\xe9ndom"') + line)
    provenance = _copy(clean_run, tmp_path, "provenance")
    (provenance / "run.json").write_bytes(
        (provenance / "run.json").read_bytes().replace(b'"random"', b'"r\xe9ndom"', 1)
    )
    damaged = "episodes.jsonl is damaged: 1 line(s) that are not a JSON record"
    cases = [
        (["report", str(csv_file)], "scores.csv: not UTF-8 text (byte 0xe9 at line 3, column 15)"),
        (["training", str(training_log)], "training.jsonl: not UTF-8 text (byte 0xff at line 1"),
        (["report", str(middle)], f"{damaged} (line {EPISODES + 1}: not UTF-8 text, byte 0xe9"),
        (["report", str(provenance)], "run.json is damaged (not UTF-8 text: byte 0xe9"),
        ([*EVAL_ARGS, "--out", str(middle)], f"{damaged} (line {EPISODES + 1}: not UTF-8 text"),
        ([*EVAL_ARGS, "--out", str(provenance)], "run.json is damaged (not UTF-8 text"),
    ]
    for args, message in cases:
        result = runner.invoke(main, args)
        assert result.exit_code == ExitCode.BAD_INPUT, (args, result.output)
        assert message in result.output, (args, result.output)
        assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)
        assert len(result.output.strip().splitlines()) == 1, result.output


def test_a_damaged_run_json_says_whether_the_episodes_are_there(
    clean_run: Path, tmp_path: Path
) -> None:
    # A folder may hold run.json alone: only a file that exists is called intact.
    with_episodes = _copy(clean_run, tmp_path, "with-episodes")
    alone = tmp_path / "alone"
    alone.mkdir()
    for folder in (with_episodes, alone):
        (folder / "run.json").write_bytes(b'{"run_id": ')
    said = {}
    for folder in (with_episodes, alone):
        with pytest.raises(SaberError) as refused:
            read_run_file(folder)
        said[folder] = str(refused.value)
    assert "is damaged (" in said[alone] and f"{alone / EPISODES_FILE} is absent" in said[alone]
    assert "are intact" not in said[alone]
    assert f"the episodes in {with_episodes / EPISODES_FILE} are intact" in said[with_episodes]


# --- processes: the parent killed outright, two SIGTERMs, errors in the user's code --------

REPO = Path(__file__).parents[2]
EVAL = [sys.executable, "-m", "saber.cli", "eval"]


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads process states from /proc")
def test_no_worker_outlives_a_parent_killed_outright(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    command = [*EVAL, "--agent", "tests.harness.helpers:hang_and_say_so", "--games", "breakout",
               "--episodes", "4", "--workers", "2", "--envs-per-worker", "2",
               "--out", str(tmp_path / "run"), "--no-report"]  # fmt: skip
    process, workers = start_hung_policies(command, pids, 2, REPO)
    try:
        below = descendants(process.pid)
        assert set(workers) <= below and process.pid not in workers
        process.kill()  # kill -9 of saber eval while both policies hang
        process.wait(timeout=30)
        assert wait_for(lambda: not any(alive(pid) for pid in below), 30), below
    finally:
        if process.poll() is None:
            process.kill()


@pytest.mark.parametrize(("delay", "group"), [(0.05, False), (0.05, True), (0.0, False)])
def test_two_sigterms_in_a_row_still_stop_cleanly_with_143(
    tmp_path: Path, delay: float, group: bool
) -> None:
    out = tmp_path / "run"
    command = [*EVAL, "--agent", "random", "--games", "breakout", "--episodes", "40",
               "--workers", "2", "--envs-per-worker", "2", "--out", str(out), "--no-report"]  # fmt: skip
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, start_new_session=group)
    episodes = out / EPISODES_FILE
    try:
        assert wait_for(
            lambda: episodes.exists() and len(episodes.read_text().splitlines()) >= 1, 300
        ), "no episode finished"

        def terminate() -> None:
            if group:  # a batch system stopping the job: the whole process group
                os.killpg(process.pid, signal.SIGTERM)
            else:
                process.send_signal(signal.SIGTERM)

        terminate()
        time.sleep(delay)
        terminate()
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == ExitCode.TERMINATED, stderr
    assert "Terminated (SIGTERM). Finished episodes are in" in stderr
    assert "Traceback" not in stderr and "Error" not in stderr, stderr
    (session,) = json.loads((out / "run.json").read_text())["sessions"]
    assert session["status"] == "interrupted"
    kept = _lines(out)
    assert kept and all("error" not in r for r in kept)  # no worker died of the signal


def test_an_error_in_the_users_factory_is_reported_at_the_users_line(tmp_path: Path) -> None:
    from tests.harness import helpers

    def line_of(function, text: str) -> str:  # type: ignore[no-untyped-def]
        lines, first = inspect.getsourcelines(function)
        number = first + next(i for i, line in enumerate(lines) if text in line)
        return f"{inspect.getsourcefile(function)}:{number}"

    factory_line = line_of(helpers.broken_factory, "raise RuntimeError")
    init_line = line_of(helpers.BrokenInit.__init__, "raise RuntimeError")
    cases = [
        ("tests.harness.helpers:broken_factory", Inline(), factory_line),
        ("tests.harness.helpers:broken_factory", Processes(1), factory_line),
        (helpers.BrokenInit, Inline(), init_line),
        (helpers.BrokenInit, Processes(1), init_line),
    ]
    for number, (policy, backend, where) in enumerate(cases):
        with pytest.raises(SaberError) as error:
            evaluate(policy, "breakout", 1, out=tmp_path / str(number), backend=backend,
                     progress=False)  # fmt: skip
        assert f"(at {where})" in str(error.value), str(error.value)
    # A module that fails on import: the line in that module.
    (tmp_path / "broken_agent.py").write_text("import os\nraise ImportError('no torch here')\n")
    sys.path.insert(0, str(tmp_path))
    try:
        with pytest.raises(SaberError, match=r"no torch here \(at .*broken_agent.py:2\)"):
            evaluate("broken_agent:policy", "breakout", 1, out=tmp_path / "m", progress=False)
    finally:
        sys.path.remove(str(tmp_path))
