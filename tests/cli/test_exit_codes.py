"""Every command's exit statuses, one meaning each (saber.errors.ExitCode, docs/exit-codes.md),
provoked with real inputs: real ROMs, real run directories, real processes."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from saber.cli import main
from saber.errors import ExitCode
from tests.mounts import Mounts

SHIPPED_LOG = Path(__file__).parents[2] / "saber" / "agents" / "data" / "ppo_pong_training.jsonl.gz"
SHORT = ["--env-option", "max_episode_frames=400", "--allow-non-saber"]  # 100 steps of Pong
SAY = [sys.executable, "-m", "saber.cli"]


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A real run (noop, one short Pong episode), one whose record a replay contradicts, an
    empty directory, a score table that is not one, and a file that is not a training log."""
    root = tmp_path_factory.mktemp("exit-codes")
    run = root / "run"
    args = ["eval", "--agent", "noop", "--games", "pong", "--episodes", "1", "--workers", "0",
            "--out", str(run), "--no-report", *SHORT]  # fmt: skip
    made = CliRunner().invoke(main, args)
    assert made.exit_code == ExitCode.OK, made.output
    edited = root / "edited"
    shutil.copytree(run, edited)
    records = edited / "episodes.jsonl"
    text = records.read_text(encoding="utf-8")
    assert '"score": -2.0' in text  # the same length: the file stays whole, the score is wrong
    records.write_text(text.replace('"score": -2.0', '"score": -1.0'), encoding="utf-8")
    (root / "empty").mkdir()
    (root / "bad.csv").write_text("game,score\npong,twenty\n", encoding="utf-8")
    (root / "notalog.jsonl").write_text("hello\n", encoding="utf-8")
    return {"run": run, "edited": edited, "empty": root / "empty", "root": root,
            "badcsv": root / "bad.csv", "notalog": root / "notalog.jsonl"}  # fmt: skip


OK, FAILED, USAGE, BAD_INPUT, UNFINISHED = (
    ExitCode.OK, ExitCode.FAILED, ExitCode.USAGE, ExitCode.BAD_INPUT, ExitCode.UNFINISHED
)  # fmt: skip

# (command line with {places}, status, what the output must say). Every command with each
# status it can end with, but the signals (below) and check's pass (slow, below).
CASES = [
    ("list", OK, "SABER"),
    ("list --bogus", USAGE, "No such option '--bogus'"),
    ("report {run}", OK, "SABER report"),
    ("report {run} --seed 3", USAGE, "saber report --seed is now --bootstrap-seed"),
    ("report {badcsv}", BAD_INPUT, "score 'twenty' of game pong is not a number"),
    (f"training {SHIPPED_LOG}", OK, "pong"),
    (f"training {SHIPPED_LOG} --at x", USAGE, "Expect a number of frames like 10M"),
    ("training {notalog}", BAD_INPUT, "not a training log"),
    ("check ALE/Pong-v5 --quick", FAILED, "ALE/Pong-v5: not SABER"),
    ("check", USAGE, "Missing argument 'TARGET'"),
    ("check no_such_module_xyz:make", BAD_INPUT, "Cannot load 'no_such_module_xyz:make'"),
    ("check SABER/Pong --quick", UNFINISHED, "SABER/Pong: not shown to be SABER"),
    ("verify {run}", OK, "every replay reproduces its record"),
    ("verify {edited}", FAILED, "1 do not match"),
    ("verify {run} --sample 0", USAGE, "0 is not in the range x>=1"),
    ("verify {empty}", BAD_INPUT, "no run.json"),
    ("repair {run}", OK, "nothing to repair"),
    ("repair", USAGE, "Missing argument 'RUN'"),
    ("repair {empty}", BAD_INPUT, "not a run directory of saber eval"),
    ("replay {run} --game pong --episode 0", OK, "pong episode 0"),
    ("replay {run} --game pong", USAGE, "Missing option '--episode'"),
    ("replay {run} --game pong --episode 5", BAD_INPUT, "no finished episode 5 of pong"),
    ("export {run} --dataset-id saber/pong/codes-v0", OK, "wrote Minari dataset"),
    ("export {run} --format rlds", USAGE, "'rlds' is not 'minari'"),
    ("export {empty}", BAD_INPUT, "no run.json"),
    ("board {run} --out {root}/site --no-figures", OK, "wrote"),
    ("board --out {root}/site2", USAGE, "Missing argument 'ENTRY...'"),
    ("board {run} --out {badcsv}", USAGE, "is a file"),
    ("eval --agent noop --games pong --episodes 1 --workers 0 --out {root}/e0", OK, "1 finished"),
    ("eval --agent tests.harness.helpers:fail_on_episode_1 --games breakout --episodes 2 "
     "--workers 0 --out {root}/e1", FAILED, ", 1 failed"),
    ("eval --agent noop --games pong --episodes 0 --out {root}/e2", USAGE,
     "--episodes must be >= 1, actually: 0"),
    ("eval --agent noop --games pong --address tcp://127.0.0.1:9 --out {root}/e2", USAGE,
     "--address needs --backend dask"),
    ("eval --agent tests.harness.helpers:make_nop --games pong --out {root}/e3", BAD_INPUT,
     "has no attribute 'make_nop'; did you mean 'make_noop'?"),
    ("eval --agent noop --games pongg --out {root}/e3", BAD_INPUT, "Unknown game 'pongg'"),
    ("eval --agent tests.harness.helpers:AlwaysRaise --games breakout,pong --episodes 4 "
     "--workers 0 --envs-per-worker 2 --out {root}/e4", UNFINISHED,
     "Stopped: the same failure ended 3 work units in a row"),
    # A policy that breaks the protocol mid-run: the run stops, its failed attempts recorded.
    ("eval --agent tests.harness.helpers:OutOfRange --games pong --episodes 1 --workers 0 "
     "--out {root}/e5", UNFINISHED, "out-of-range actions [18] (game pong)"),
]  # fmt: skip


def _args(line: str, places: dict[str, Path]) -> list[str]:
    words = line.format(**{name: str(path) for name, path in places.items()}).split()
    if words[0] == "eval" and "{root}/e" in line:
        words += SHORT if "--episodes 0" not in line else []
    return words


@pytest.mark.parametrize(
    ("line", "status", "said"), CASES, ids=[c[0].split(" {")[0] + f"-{c[1].name}" for c in CASES]
)
def test_each_command_ends_with_the_status_of_the_table(
    places: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    line: str,
    status: ExitCode,
    said: str,
) -> None:
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(places["root"] / "minari"))
    monkeypatch.setenv("SABER_CACHE_DIR", "off")
    result = CliRunner().invoke(main, _args(line, places))
    assert result.exit_code == status, (line, result.output)
    assert said in result.output, result.output
    if status in (USAGE, BAD_INPUT):  # a refusal: no traceback, one line saying what to do
        assert "Traceback" not in result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)


def test_every_command_is_held_to_the_table() -> None:
    """Every command has its statuses provoked above, and the table of docs/exit-codes.md
    is ExitCode's: the same codes and names, in order."""
    assert set(main.commands) <= {line.split()[0] for line, _, _ in CASES}
    page = (Path(__file__).parents[2] / "docs" / "exit-codes.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d+) \| `(\w+)` \|", page, re.M)
    assert rows == [(str(int(code)), code.name) for code in ExitCode]


def test_a_bad_policy_output_is_recorded_and_the_run_resumes(places: dict[str, Path]) -> None:
    """Status 4, as the table says of a run stopped with what it did kept: the failed
    attempt is in the run's records (status 3 would say nothing was written)."""
    import json

    out = places["root"] / "e5"
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert [(r["episode"], r["kind"]) for r in records] == [(0, "policy")]
    assert "out-of-range actions [18]" in records[0]["error"]


# Every command that writes results, each onto a full disk: "{place}" is where it writes.
WRITERS = {
    "eval": "eval --agent noop --games pong --episodes 1 --workers 0 --out {place}/run",
    "report": "report {run} --json {place}/r.json",
    "report --plots": "report {run} --plots {place}/figures",
    "training": f"training {SHIPPED_LOG} --json {{place}}/t.json",
    "replay --video": "replay {run} --game pong --episode 0 --video {place}/e.mp4",
    "export": "export {run} --dataset-id saber/pong/full-v0",
    "board": "board {run} --out {place}/site --no-figures",
}


@pytest.mark.parametrize("command", list(WRITERS))
def test_a_full_disk_is_unfinished_in_every_command(
    places: dict[str, Path], mounts: Mounts, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """The same condition, the same status: results that cannot be written (a full disk
    here; a read-only or uncreatable place in tests/test_writers.py) are ``UNFINISHED`` in
    every command, one line that names the place, no traceback."""
    if command in ("replay --video", "export"):
        pytest.importorskip("imageio_ffmpeg" if command == "replay --video" else "minari")
    place = mounts.full()
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(place / "minari"))
    monkeypatch.setenv("SABER_CACHE_DIR", "off")
    words = WRITERS[command].format(place=place, run=places["run"]).split()
    result = CliRunner().invoke(main, words + (SHORT if command == "eval" else []))
    assert result.exit_code == UNFINISHED, result.output
    assert "Traceback" not in result.output, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and str(place) in errors[0], result.output


@pytest.mark.parametrize(
    ("agent", "said"),
    [
        ("tests.harness.helpers:make_nop", "has no attribute 'make_nop'"),
        ("tests.harness.helpers:broken_factory", "building the policy failed: RuntimeError"),
    ],
)
def test_a_refused_eval_writes_nothing_to_the_run(
    places: dict[str, Path], agent: str, said: str
) -> None:
    # --agent-name noop: the run's own agent, so that the run is the same and the refusal
    # is the agent's (a factory that fails is found by the worker that builds it).
    files = [places["run"] / name for name in ("episodes.jsonl", "run.json")]
    before = [path.read_bytes() for path in files]
    args = ["eval", "--agent", agent, "--agent-name", "noop", "--games", "pong", "--episodes",
            "2", "--workers", "1", "--out", str(places["run"]), "--no-report", *SHORT]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == BAD_INPUT, result.output
    assert said in result.output.strip().splitlines()[-1]
    assert [path.read_bytes() for path in files] == before


@pytest.mark.slow  # the full check of one game: about a minute
def test_check_of_a_saber_env_exits_ok() -> None:
    result = CliRunner().invoke(main, ["check", "SABER/Pong"])
    assert result.exit_code == OK and "SABER/Pong: SABER (12 pass" in result.output


@pytest.mark.parametrize(
    ("sent", "status"),
    [(signal.SIGINT, ExitCode.INTERRUPTED), (signal.SIGTERM, ExitCode.TERMINATED)],
)
def test_eval_ends_with_130_on_ctrl_c_and_143_on_sigterm(
    tmp_path: Path, sent: signal.Signals, status: ExitCode
) -> None:
    out = tmp_path / "run"
    command = [*SAY, "eval", "--agent", "noop", "--games", "pong", "--episodes", "1",
               "--workers", "0", "--out", str(out), "--no-progress"]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _wait_for(lambda: (out / "run.json").exists(), process)  # the session has begun
    process.send_signal(sent)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == status, stderr.decode()
    assert "run the same command to resume" in stderr.decode()


@pytest.mark.parametrize(
    ("sent", "status", "said"),
    [
        (signal.SIGINT, ExitCode.INTERRUPTED, "Interrupted."),
        (signal.SIGTERM, ExitCode.TERMINATED, "Terminated (SIGTERM)."),
    ],
)
def test_ctrl_c_or_sigterm_ends_any_command_with_130_or_143(
    sent: signal.Signals, status: ExitCode, said: str
) -> None:
    # saber check's full probe of a game runs for a minute: long enough to interrupt, and
    # it prints nothing before its verdict. 6 s: well past the import of saber.cli (the
    # handlers are installed when the command starts) on a loaded machine.
    process = subprocess.Popen([*SAY, "check", "SABER/Pong"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)  # fmt: skip
    time.sleep(6)
    process.send_signal(sent)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == status, stderr.decode()
    assert stderr.decode().strip().splitlines()[-1] == said


def _wait_for(condition, process: subprocess.Popen) -> None:  # type: ignore[no-untyped-def, type-arg]
    deadline = time.monotonic() + 120
    while not condition():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)


@pytest.mark.parametrize(
    "line",
    ["check ALE/Pong-v5 --quick", "replay {run} --game pong --episode 0 --video {root}/v.mp4"],
    ids=["check", "replay"],
)
def test_no_ale_banner_on_a_command_s_output(places: dict[str, Path], line: str) -> None:
    # The banner is written by ale-py's C++ core to the process's file descriptors: read
    # them from a real process, not from click's runner.
    if "--video" in line:
        pytest.importorskip("imageio_ffmpeg")
    video = places["root"] / "v.mp4"
    if video.exists():
        video.unlink()
    done = subprocess.run([*SAY, *_args(line, places)], capture_output=True, check=False,
                          env={**os.environ, "SABER_CACHE_DIR": "off"})  # fmt: skip
    output = done.stdout.decode() + done.stderr.decode()
    assert done.returncode in (OK, FAILED), output  # ALE/Pong-v5 is not SABER: 1
    assert not re.search(r"A\.L\.E|Powered by Stella", output), output
    assert output.strip(), "the command said nothing: the test would not see a banner"
