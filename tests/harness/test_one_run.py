"""One run, one answer; nothing left behind, nothing started for nothing.

What ``saber eval`` prints, ``report.json``, ``EvaluationResult.mean_scores()`` and
``.report()`` agree whatever the directory holds; a call that asks for less than the run
is refused; a run and its copies count once in a report; ``--workers`` is capped at the
episodes to play; games, agent and lock are checked before any worker starts; the
``/dev/shm`` blocks of a ``--policy-process`` run killed outright are removed by the next.
"""

from __future__ import annotations

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

from saber.cli import main
from saber.errors import ExitCode, SaberError
from saber.harness import (
    Dask,
    Inline,
    PolicyError,
    Processes,
    Recording,
    RunMismatchError,
    evaluate,
)
from saber.harness.backends import capped_to_work
from saber.protocol.seeds import episode_seed
from saber.rundir.durable import lock_directory
from saber.scoring import read_scores
from tests.harness.helpers import short_env

SHORT = {"env_options": short_env(), "progress": False}
BARE = {**SHORT, "recording": Recording(replays=False)}  # no replays: a smaller directory
CLI_SHORT = ["--env-option", "max_frames_without_reward=400", "--allow-non-saber",
             "--no-progress", "--no-replays"]  # fmt: skip


@pytest.fixture(scope="module")
def run_of_4(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """4 random episodes of Breakout (their scores differ), inline."""
    out = tmp_path_factory.mktemp("run") / "run"
    result = evaluate("random", "breakout", 4, out=out, backend=Inline(), **BARE)
    assert result.finished == 4 and len({r["score"] for r in result.records}) > 1
    return out


def _per_game(report: dict) -> dict[str, tuple[float, int]]:
    (agent,) = report["agents"].values()
    return {
        game: (row["score"], row["episodes"]) for game, row in agent["saber"]["per_game"].items()
    }


def test_a_call_for_fewer_episodes_or_games_than_the_run_is_refused(
    run_of_4: Path, tmp_path: Path
) -> None:
    """The reported case: --episodes 10 on a directory of 40 printed "10 finished" and
    wrote a report over 40; mean_scores() and report() disagreed."""
    out = tmp_path / "run"
    shutil.copytree(run_of_4, out)
    files = {name: (out / name).read_bytes() for name in ("episodes.jsonl", "run.json")}
    with pytest.raises(RunMismatchError, match="holds a run of 4 episodes per game of breakout"):
        evaluate("random", "breakout", 2, out=out, backend=Inline(), **SHORT)
    with pytest.raises(RunMismatchError, match=r"ask for all of it \(--games breakout,pong"):
        evaluate("random", "pong", 4, out=out, backend=Inline(), **SHORT)
    args = ["eval", "--agent", "random", "--games", "breakout", "--episodes", "2",
            "--workers", "0", "--out", str(out), *CLI_SHORT]  # fmt: skip
    refused = CliRunner().invoke(main, args)
    assert refused.exit_code == ExitCode.BAD_INPUT and "Traceback" not in refused.output
    assert (
        refused.output.count("\n") == 1 and "--episodes 4, or more to extend it" in refused.output
    )
    assert {name: (out / name).read_bytes() for name in files} == files  # nothing written

    # The whole run: the printed count, report.json, mean_scores() and report() agree.
    args[args.index("2")] = "4"
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0, done.output
    assert "4 finished, 0 failed" in done.stderr
    result = evaluate("random", "breakout", 4, out=out, backend=Inline(), **SHORT)
    written = json.loads((out / "report.json").read_text())
    assert _per_game(written) == _per_game(result.report())
    assert (
        _per_game(written) == {game: (mean, 4) for game, mean in result.mean_scores().items()}
        and result.finished == 4
    )


def test_a_record_pasted_in_from_another_agent_is_not_the_runs(tmp_path: Path) -> None:
    """The directory holds a line that reports leave out (another agent's): the run plays
    that episode, so mean_scores() and report() count the same episodes."""
    out = tmp_path / "run"
    first = evaluate("random", "breakout", 1, out=out, backend=Inline(), **BARE)
    pasted = {**first.records[0], "episode": 1, "agent": "someone-else", "score": 999.0}
    pasted["seed"] = episode_seed(0, "breakout", 1)
    with (out / "episodes.jsonl").open("a") as handle:
        handle.write(json.dumps(pasted) + "\n")
    result = evaluate("random", "breakout", 2, out=out, backend=Inline(), **BARE)
    assert result.new_episodes == 1 and [r["agent"] for r in result.records] == ["random"] * 2
    assert _per_game(result.report()) == {
        game: (mean, 2) for game, mean in result.mean_scores().items()
    }


def test_a_run_and_its_copies_count_once_in_a_report(run_of_4: Path, tmp_path: Path) -> None:
    """The reported case: a directory and its copy elsewhere counted as two runs (an
    interval of zero width, no warning); the same directory twice was an error."""
    copy = tmp_path / "elsewhere" / "copy-of-run"
    shutil.copytree(run_of_4, copy)
    once = read_scores(run_of_4)
    for paths in ((run_of_4, copy), (run_of_4, run_of_4), (run_of_4, run_of_4 / "episodes.jsonl")):
        table = read_scores(*paths)
        assert table.records == once.records and len(table.runs("random", "saber")) == 1
        (merged,) = [w for w in table.warnings if w.startswith("merged:")]
        assert "counted once" in merged
    report = CliRunner().invoke(main, ["report", str(run_of_4), str(copy)])
    assert report.exit_code == 0, report.output
    said = [line for line in report.stderr.splitlines() if "merged:" in line]
    assert len(said) == 1 and str(copy) in said[0]


def test_a_run_json_of_saber_0_3_is_refused_in_one_line_by_every_reader(
    run_of_4: Path, tmp_path: Path
) -> None:
    """A saber ``run.json`` without ``run_id``, or with a session without its checkpoint
    (``episodes_log``), as the unpublished saber 0.3 wrote it: the report, ``saber
    verify`` and a resume each refuse it in one line that names the file and saber 0.4
    (which reads it); nothing is written."""
    for lacks in ("run_id", "episodes_log"):
        old = tmp_path / lacks
        shutil.copytree(run_of_4, old)
        run = json.loads((old / "run.json").read_text())
        if lacks == "run_id":
            del run["run_id"]
        else:
            del run["sessions"][-1]["episodes_log"]
        (old / "run.json").write_text(json.dumps(run))
        before = {path: path.read_bytes() for path in old.rglob("*") if path.is_file()}
        for command in (["report", str(old)], ["verify", str(old)]):
            result = CliRunner().invoke(main, command)
            assert result.exit_code == ExitCode.BAD_INPUT, result.output
            (line,) = result.stderr.strip().splitlines()
            assert line.startswith(f"Error: {old / 'run.json'} has ") and lacks in line, line
            assert "saber 0.4 reads this one" in line, line
        with pytest.raises(SaberError, match=r"written by saber 0\.3 or older"):
            evaluate("random", "breakout", 4, out=old, backend=Inline(), **SHORT)
        assert {path: path.read_bytes() for path in old.rglob("*") if path.is_file()} == before


def test_workers_are_capped_at_the_episodes_to_play(tmp_path: Path) -> None:
    """The reported case: --workers 500 for 2 episodes started 500 processes."""
    said: list[str] = []
    result = evaluate(
        "random", "breakout", 2, out=tmp_path / "run", backend=Processes(500),
        on_message=said.append, **BARE,
    )  # fmt: skip
    assert result.finished == 2
    assert said[:2] == [
        "500 worker processes asked for, but only 2 episode(s) to play: using 2",
        said[1],
    ] and said[1].startswith("2 worker processes, ")
    # A finished run plays nothing and starts nothing.
    said.clear()
    evaluate("random", "breakout", 2, out=tmp_path / "run", backend=Processes(500),
             on_message=said.append, **SHORT)  # fmt: skip
    assert said == ["resuming: 2 of 2 episodes already done"]
    assert capped_to_work(Dask(workers=500), 3) == (
        Dask(workers=3),
        "500 Dask workers asked for, but only 3 episode(s) to play: using 3",
    )
    assert capped_to_work(Processes(2), 3) == (Processes(2), None)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--agent", "random", "--games", "pongg"], "Unknown game 'pongg'"),
        (["--agent", "no_such_module_x:policy", "--games", "pong"], "no module named"),
        (["--agent", "random", "--games", "pong"], "is used by another saber run"),
    ],
    ids=["unknown-game", "unimportable-agent", "locked-directory"],
)
def test_games_agent_and_lock_are_checked_before_any_worker_starts(
    tmp_path: Path, extra: list[str], message: str
) -> None:
    """The reported case: an unknown game was refused after "2 worker processes ..." (the
    workers had started); an unimportable module was imported by a started worker."""
    out = tmp_path / "run"
    out.mkdir()
    lock = lock_directory(out) if "locked" in message or "used by" in message else None
    try:
        result = CliRunner().invoke(
            main, ["eval", *extra, "--episodes", "2", "--workers", "2", "--out", str(out)]
        )
    finally:
        if lock is not None:
            lock.close()
    assert result.exit_code == ExitCode.BAD_INPUT and "Traceback" not in result.output
    assert result.output.startswith("Error: ") and message in result.output
    assert result.output.count("\n") == 1  # no "2 worker processes ..." before it
    assert sorted(path.name for path in out.iterdir()) == ([".lock"] if lock else [])


def test_a_missing_agent_module_fails_without_importing_in_this_process(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="no module named 'no_such_module_y'"):
        evaluate("no_such_module_y:policy", "pong", 1, out=tmp_path / "r", backend=Processes(1))
    assert not (tmp_path / "r").exists()
    with pytest.raises(SaberError, match=r"Unknown agent spec 'tests\.harness\.helpers'"):
        evaluate("tests.harness.helpers", "pong", 1, out=tmp_path / "r", backend=Processes(1))


def _policy_folders(pid: int) -> list[Path]:
    shared = Path("/dev/shm") if Path("/dev/shm").is_dir() else Path("/tmp")
    return [*shared.glob(f"saber-policy-{pid}-*"), *Path("/tmp").glob(f"saber-socket-{pid}-*")]


@pytest.mark.skipif(sys.platform != "linux", reason="kill -9 and /dev/shm: Linux")
def test_the_blocks_of_a_policy_process_killed_outright_are_removed_by_the_next_run(
    tmp_path: Path,
) -> None:
    """The reported case: kill -9 of saber eval --policy-process left
    /dev/shm/saber-policy-* (448 kB) that no later run removed."""
    command = [sys.executable, "-m", "saber.cli", "eval", "--agent", "random", "--games",
               "pong", "--episodes", "50", "--workers", "2", "--policy-process", "--out",
               str(tmp_path / "killed"), *CLI_SHORT, "--no-report"]  # fmt: skip
    killed = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while len(_policy_folders(killed.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        left = _policy_folders(killed.pid)
        assert len(left) == 2, "the run made no blocks"
    finally:
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait(timeout=30)
    assert all(folder.exists() for folder in left)  # nobody removes them at a kill -9
    said: list[str] = []
    evaluate("random", "breakout", 1, out=tmp_path / "next", backend=Inline(),
             on_message=said.append, **BARE)  # fmt: skip
    assert not any(folder.exists() for folder in left)
    assert said[0].startswith("removed 2 folder(s) of a policy process whose run was killed")
