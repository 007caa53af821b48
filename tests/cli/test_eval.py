"""``saber eval``: end to end through the CLI, interruption and a full disk."""

from __future__ import annotations

import json
import os
import re
import resource
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from saber.agents.pretrained import PRETRAINED
from saber.cli import main
from saber.cli.eval import eval_command
from saber.errors import ExitCode
from saber.harness.options import MAX_EPISODES
from tests.harness.helpers import read_records

EVAL = [sys.executable, "-m", "saber.cli", "eval"]


def test_eval_writes_records_provenance_and_report(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["eval", "--agent", "constant:1", "--games", "breakout", "--episodes", "2",
            "--workers", "0", "--out", str(out), "--seed", "3"]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "# SABER report" in result.stdout
    records = read_records(out)
    assert [(r["agent"], r["episode"], r["steps"]) for r in records] == [
        ("constant:1", 0, 122),
        ("constant:1", 1, 122),
    ]
    run = json.loads((out / "run.json").read_text())
    assert run["agent"] == "constant:1" and run["base_seed"] == 3 and run["non_saber"] is False
    assert run["settings"]["max_frames_without_reward"] == 18000 and run["episodes"] == 2
    report = json.loads((out / "report.json").read_text())
    assert report["saber_compliant"] is True and "constant:1" in report["agents"]
    assert (out / "report.md").is_file()


def test_agent_name_names_the_agent_in_records_and_report(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["eval", "--agent", "constant:1", "--agent-name", "my-agent v2", "--games",
            "breakout", "--episodes", "1", "--workers", "0", "--out", str(out)]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert [r["agent"] for r in read_records(out)] == ["my-agent v2"]
    assert json.loads((out / "run.json").read_text())["agent"] == "my-agent v2"
    assert list(json.loads((out / "report.json").read_text())["agents"]) == ["my-agent v2"]
    blank = CliRunner().invoke(main, [*args[:3], "--agent-name", " ", *args[5:]])
    assert blank.exit_code == ExitCode.USAGE
    assert "--agent-name must be a non-empty name" in blank.output


def test_eval_bad_input_is_a_one_line_error(tmp_path: Path) -> None:
    usage, refused = ExitCode.USAGE, ExitCode.BAD_INPUT
    cases = {
        ("--agent", "randomm"): (refused, "Unknown agent spec 'randomm'"),
        ("--agent", "random", "--games", "pongg"): (
            refused,
            "Unknown game 'pongg'. Did you mean: pong",
        ),
        ("--env-option", "max_frames_without_reward=400"): (refused, "break the SABER protocol"),
        ("--env-option", "no_such_setting=1", "--allow-non-saber"): (
            refused,
            "Unknown SABER setting(s): no_such_setting",
        ),
        ("--env-option", "oops"): (usage, "Expect KEY=VALUE, actually: 'oops'"),
        ("--episodes", "0"): (usage, "Error: --episodes must be >= 1, actually: 0"),
        ("--envs-per-worker", "0"): (usage, "Error: --envs-per-worker must be >= 1, actually: 0"),
        ("--workers", "-1"): (usage, "Error: --workers must be >= 0, actually: -1"),
        ("--seed", "-2"): (usage, "Error: --seed must be >= 0, actually: -2"),
        ("--unit-timeout", "0"): (usage, "Error: --unit-timeout must be > 0, actually: 0"),
        ("--backend", "dask", "--workers", "0"): (
            usage,
            "Error: --workers must be >= 1 with --backend dask",
        ),
        ("--run", " "): (usage, "Error: --run must be a non-empty name"),
    }
    for extra, (status, message) in cases.items():
        args = ["eval", "--agent", "random", "--games", "pong", "--out", str(tmp_path / "x"),
                *extra]  # fmt: skip
        result = CliRunner().invoke(main, args)
        assert result.exit_code == status and message in result.output, (extra, result.output)
        assert "Traceback" not in result.output
    assert not (tmp_path / "x").exists()


def test_episodes_beyond_the_bound_are_one_line_before_anything_is_planned(
    tmp_path: Path,
) -> None:
    out = tmp_path / "x"
    args = ["eval", "--agent", "random", "--games", "all", "--episodes", "1000000000",
            "--out", str(out)]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == ExitCode.USAGE
    assert result.output == (
        f"Error: --episodes must be <= {MAX_EPISODES:,} (every episode is planned in memory "
        "before any plays; the protocol asks for 100), actually: 1,000,000,000\n"
    )
    assert not out.exists()


def _help(*command: str) -> str:
    """A command's help on one line (no wrapping inside a name such as ppo-breakout)."""
    result = CliRunner().invoke(main, [*command, "--help"], terminal_width=10_000,
                                max_content_width=10_000)  # fmt: skip
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def test_help_names_the_shipped_agents_where_they_are_all_listed_and_the_bound() -> None:
    text = _help("eval")
    named = set(re.findall(r"\bppo-[a-z0-9-]*[a-z0-9]", text))
    assert {"ppo-pong", "ppo-breakout", "ppo-qbert"} <= named <= set(PRETRAINED)
    assert "saber list names every one" in text
    listed = CliRunner().invoke(main, ["list"]).output
    assert all(name in listed for name in PRETRAINED)
    assert f"Episodes per game, 1 to {MAX_EPISODES:,} (" in text


NO_POLICIES = """
count = 42
names = ["a", "b"]
greeting = f"hello {count}"
hint: int
"""


@pytest.mark.parametrize(
    ("attribute", "said"),
    [
        ("count", "'count' is an int, not a policy, a policy class or a factory"),
        ("names", "'names' is a list, not a policy, a policy class or a factory"),
        ("greeting", "'greeting' is a str, not a policy, a policy class or a factory"),
        ("hint", "module 'agents_that_are_none' has no attribute 'hint'"),
    ],
)
def test_an_attribute_that_is_no_policy_is_refused_before_any_worker_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, attribute: str, said: str
) -> None:
    (tmp_path / "agents_that_are_none.py").write_text(NO_POLICIES)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # and sys.path as it was, after the test
    spec = f"agents_that_are_none:{attribute}"
    args = ["eval", "--agent", spec, "--games", "pong", "--episodes", "1", "--workers", "2",
            "--out", "run"]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == ExitCode.BAD_INPUT
    # The one line; no "2 worker processes, ..." before it: none started.
    assert result.output == f"Error: Agent spec {spec!r}: {said}\n"
    assert not (tmp_path / "run").exists()


def test_counts_agree_in_number(tmp_path: Path) -> None:
    args = ["eval", "--agent", "constant:1", "--games", "breakout", "--episodes", "1",
            "--workers", "1", "--envs-per-worker", "1", "--out", str(tmp_path / "run"),
            "--no-report"]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    threads = re.match(r"1 worker process, (\d+) (threads?) for the policy \(", lines[0])
    assert threads and (threads[1] == "1") == (threads[2] == "thread"), lines
    assert lines[1].startswith("1 new episode in ") and lines[1].endswith(
        f"; 1 episode in {tmp_path / 'run'}"
    )
    assert lines[2] == "1 finished, 0 failed"


def _restore_sigint() -> None:
    # Background jobs of a non-interactive shell ignore SIGINT; Python would inherit that.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize(
    ("stop", "code", "said"),
    [(signal.SIGINT, 130, "Interrupted"), (signal.SIGTERM, 143, "Terminated (SIGTERM)")],
    ids=["ctrl-c", "sigterm"],
)
def test_ctrl_c_or_sigterm_stops_cleanly_and_keeps_finished_episodes(
    tmp_path: Path, stop: signal.Signals, code: int, said: str
) -> None:
    out = tmp_path / "run"
    command = [*EVAL, "--agent", "random", "--games", "breakout", "--episodes", "16",
               "--workers", "2", "--envs-per-worker", "2", "--out", str(out), "--no-report"]  # fmt: skip
    process = subprocess.Popen(
        command, stderr=subprocess.PIPE, text=True, preexec_fn=_restore_sigint
    )
    episodes = out / "episodes.jsonl"
    deadline = time.monotonic() + 60
    while not episodes.exists() or len(episodes.read_text().splitlines()) < 2:
        if time.monotonic() > deadline or process.poll() is not None:
            process.kill()
            _, stderr = process.communicate(timeout=30)
            pytest.fail(f"no 2 finished episodes to interrupt within 60 s: {stderr}")
        time.sleep(0.2)
    process.send_signal(stop)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == code, stderr
    # One line, from the main process; none from the workers (no EOFError, BrokenPipeError).
    assert f"{said}. Finished episodes are in" in stderr and "Traceback" not in stderr
    assert "Error" not in stderr, stderr
    kept = read_records(out)
    assert 2 <= len(kept) < 16 and all("score" in r for r in kept)
    # How many are on disk, and the command that resumes, as the user gave it.
    given = ["saber", *command[len(EVAL) - 1 :]]
    assert stderr.splitlines()[-1] == (
        f"{said}. Finished episodes are in {episodes}: {len(kept)} of the 16 episodes asked "
        f"for; run the same command to resume: {shlex.join(given)}"
    )
    (session,) = json.loads((out / "run.json").read_text())["sessions"]
    assert session["status"] == "interrupted" and "ended" in session
    assert session["counts"] == {"episodes_finished": len(kept), "attempts_failed": 0}
    # The lock is released and a resume (of the whole run: a call asks for all of it) runs
    # only the episodes that had not finished.
    wanted = 16
    args = ["eval", "--agent", "random", "--games", "breakout", "--episodes", str(wanted),
            "--workers", "0", "--out", str(out), "--no-report"]  # fmt: skip
    result = CliRunner().invoke(main, args)
    new = wanted - len(kept)
    said_new = "1 new episode in" if new == 1 else f"{new} new episodes in"
    assert result.exit_code == 0 and said_new in result.output
    sessions = json.loads((out / "run.json").read_text())["sessions"]
    assert [s["status"] for s in sessions] == ["interrupted", "finished"]


STOPS_AT_CALL_200 = """
import numpy as np

calls = 0


def policy(observations):
    global calls
    calls += 1
    if calls == 200:  # after breakout's first episode of constant:1 (122 steps)
        raise KeyboardInterrupt
    return np.ones(len(observations), dtype=np.int64)
"""


@pytest.mark.parametrize("through", ["saber", "eval alone"])
def test_an_interruption_says_how_many_episodes_are_on_disk_and_how_to_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, through: str
) -> None:
    """The line of a stop, in this process: a policy that raises KeyboardInterrupt as
    Ctrl-C would, in the saber group or in ``saber eval`` run as a command of its own."""
    module = f"stops_at_call_200_{through.replace(' ', '_')}"  # a policy of its own, each
    (tmp_path / f"{module}.py").write_text(STOPS_AT_CALL_200)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    args = ["eval", "--agent", f"{module}:policy", "--games", "breakout", "--episodes", "3",
            "--envs-per-worker", "1", "--workers", "0", "--out", "run dir"]  # fmt: skip
    if through == "saber":
        result = CliRunner().invoke(main, args)
    else:  # rebuilt from the options given, in the order saber eval --help lists them
        result = CliRunner().invoke(eval_command, [*args[1:], "--no-progress"])
        args = [*args[:7], "--out", "run dir", "--workers", "0", "--envs-per-worker", "1",
                "--no-progress"]  # fmt: skip
    assert result.exit_code == ExitCode.INTERRUPTED, result.output
    assert len(read_records(tmp_path / "run dir")) == 1
    assert result.stderr.splitlines()[-1] == (
        "Interrupted. Finished episodes are in run dir/episodes.jsonl: 1 of the 3 episodes "
        f"asked for; run the same command to resume: saber {shlex.join(args)}"
    )


def _limit_file_size() -> None:
    # A file-size limit makes writes fail like a full disk (EFBIG instead of ENOSPC).
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (2600, 2600))


def test_full_disk_is_a_clear_error_and_loses_no_finished_episode(tmp_path: Path) -> None:
    out = tmp_path / "run"
    command = [*EVAL, "--agent", "constant:1", "--games", "breakout", "--episodes", "14",
               "--workers", "0", "--envs-per-worker", "14", "--out", str(out), "--no-report"]  # fmt: skip
    process = subprocess.run(
        command, capture_output=True, text=True, preexec_fn=_limit_file_size, timeout=120
    )
    assert process.returncode == ExitCode.UNFINISHED, process.stderr  # the same command resumes
    kept = read_records(out)  # every line whole
    assert 0 < len(kept) < 14
    assert (
        f"Cannot write to {out / 'episodes.jsonl'}: File too large. {len(kept)} finished episodes are safely on disk"
        in process.stderr
    )
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert sorted(r["episode"] for r in read_records(out)) == list(range(14))


AGENT_MODULE = """
import os

import numpy as np


class Fire:
    def __init__(self):
        open(f"built-by-{os.getpid()}", "w").close()  # which process built the policy

    def __call__(self, observations):
        return np.ones(len(observations), dtype=np.int64)
"""


def test_console_script_imports_the_agent_module_from_the_working_directory(
    tmp_path: Path,
) -> None:
    # The `saber` console script, unlike `python -m`, does not put the working directory
    # on sys.path by itself; the spawned workers must import the module too.
    script = Path(sys.executable).with_name("saber")
    assert script.is_file(), f"no console script next to {sys.executable}"
    (tmp_path / "my_fire_agent.py").write_text(AGENT_MODULE)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    command = [str(script), "eval", "--agent", "my_fire_agent:Fire", "--games", "breakout",
               "--episodes", "2", "--workers", "2", "--envs-per-worker", "1", "--out", "run",
               "--no-report"]  # fmt: skip
    process = subprocess.Popen(command, cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 0, stderr
    records = read_records(tmp_path / "run")
    assert [(r["agent"], r["steps"]) for r in records] == [("my_fire_agent:Fire", 122)] * 2
    builders = {int(p.name.removeprefix("built-by-")) for p in tmp_path.glob("built-by-*")}
    assert builders and process.pid not in builders  # built in the worker processes


def test_eval_accepts_any_rom_of_ale_py(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["eval", "--agent", "noop", "--games", "basic_math", "--episodes", "1",
            "--workers", "0", "--out", str(out), "--allow-non-saber",
            "--env-option", "max_frames_without_reward=400"]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert [r["game"] for r in read_records(out)] == ["basic_math"]
    assert (
        "No SABER baseline (not one of the 61 SABER games), left out of the world-record "
        "and human-normalized aggregates: Basic Math." in result.stdout
    )
    result = CliRunner().invoke(main, [*args[:4], "basic_mat", *args[5:]])
    assert (
        result.exit_code == ExitCode.BAD_INPUT
        and "Unknown game 'basic_mat'. Did you mean: basic_math" in result.output
    )


def _eval(out: Path, *extra: str) -> list[str]:
    return ["eval", "--games", "breakout", "--workers", "0", "--out", str(out), "--no-report",
            *extra]  # fmt: skip


def test_failed_episodes_make_a_non_zero_exit_with_the_counts(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = _eval(out, "--agent", "tests.harness.helpers:fail_on_episode_1", "--episodes", "3",
                 "--envs-per-worker", "2")  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == ExitCode.FAILED, result.output
    lines = result.stderr.splitlines()
    assert lines[-1] == "2 finished (2 after a retry), 1 failed"
    assert lines[-2].startswith("failed 4 time(s): RuntimeError: planned failure (at ")
    # A resume says so, runs the failed episode again, and fails again.
    result = CliRunner().invoke(main, args)
    assert result.exit_code == ExitCode.FAILED
    assert result.stderr.splitlines()[0] == (
        "resuming: 2 of 3 episodes already done; 1 that failed before run again"
    )


def test_a_policy_that_always_fails_stops_early_with_one_message(tmp_path: Path) -> None:
    args = _eval(tmp_path / "run", "--agent", "tests.harness.helpers:AlwaysRaise",
                 "--episodes", "20", "--envs-per-worker", "2")  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == ExitCode.UNFINISHED  # stopped; the same command resumes
    assert result.stderr.count("\n") == 1, result.stderr  # one line
    assert result.stderr.startswith(
        "Error: Stopped: the same failure ended 3 work units in a row, with no episode "
        "finishing in between: RuntimeError: this policy always fails"
    )
    assert "0 finished episodes are on disk" in result.stderr and ", 15 failed." in result.stderr


def test_success_says_how_many_finished_and_resume_says_how_many_were_done(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run"
    first = CliRunner().invoke(main, _eval(out, "--agent", "constant:1", "--episodes", "1"))
    assert first.exit_code == 0 and first.stderr.splitlines()[-1] == "1 finished, 0 failed"
    again = CliRunner().invoke(main, _eval(out, "--agent", "constant:1", "--episodes", "2"))
    assert again.exit_code == 0, again.output
    assert again.stderr.splitlines()[0] == "resuming: 1 of 2 episodes already done"
    assert again.stderr.splitlines()[-1] == "2 finished, 0 failed"


def test_run_name_through_the_cli(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(
        main, _eval(out, "--agent", "constant:1", "--episodes", "1", "--run", "seed-7")
    )
    assert result.exit_code == 0, result.output
    assert json.loads((out / "run.json").read_text())["run"] == "seed-7"
    assert [r["run"] for r in read_records(out)] == ["seed-7"]


def test_workers_print_no_ale_banner(tmp_path: Path) -> None:
    command = [*EVAL, "--agent", "constant:1", "--games", "breakout", "--episodes", "2",
               "--workers", "2", "--envs-per-worker", "1", "--out", str(tmp_path / "run"),
               "--no-report"]  # fmt: skip
    process = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert process.returncode == 0, process.stderr
    assert "A.L.E" not in process.stderr and "Stella" not in process.stderr


def test_out_under_a_dangling_symbolic_link_names_the_link(tmp_path: Path) -> None:
    (tmp_path / "runs").symlink_to(tmp_path / "mounted-disk")  # a disk not mounted, say
    out = tmp_path / "runs" / "run"
    args = ["eval", "--agent", "noop", "--games", "pong", "--episodes", "1", "--workers", "0",
            "--out", str(out), "--no-report"]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == ExitCode.UNFINISHED  # nothing could be written: mend, run again
    assert result.output.strip() == (
        f"Error: Cannot create the run directory {out}: {tmp_path / 'runs'} is a symbolic link "
        f"to {tmp_path / 'mounted-disk'}, which does not exist; create that, remove the link, "
        "or choose another path"
    )


_EMULATOR = ("ale_py", "cv2", "gymnasium", "saber.envs", "saber.training")
_LOADED_AT_EXIT = (
    "import atexit, sys\n"
    "from saber.cli import main\n"
    "atexit.register(lambda: print('LOADED', sorted(name for name in sys.modules if "
    f"name.split('.')[0] in {_EMULATOR!r} or name.startswith({_EMULATOR!r}))))\n"
    "main()\n"
)


def test_the_main_process_loads_no_emulator_once_the_probe_passed(tmp_path: Path) -> None:
    """The workers play; ``saber eval``'s own process plans, stores and reports. Once the
    quick probe's pass is kept on disk, it imports none of the emulator's modules (with
    ``--video 0``, the default, no video module either)."""
    env = {**os.environ, "SABER_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("ALE_ROMS_DIR", None)  # a pass is kept only for the shipped ROMs
    loaded = []
    for name in ("first", "second"):  # the first run probes and keeps the pass
        done = subprocess.run(
            [sys.executable, "-c", _LOADED_AT_EXIT, "eval", "--agent", "noop", "--games",
             "pong", "--episodes", "1", "--workers", "1", "--envs-per-worker", "1",
             "--out", str(tmp_path / name), "--no-report"],
            capture_output=True, text=True, timeout=300, env=env,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        loaded.append(next(line for line in done.stdout.splitlines() if line.startswith("LOADED")))
    assert "saber.envs" in loaded[0]  # the probe ran here: the check can see the modules
    assert loaded[1] == "LOADED []"
