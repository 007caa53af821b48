"""The Dask path under real faults, on a cluster of separate processes on loopback
(:class:`tests.harness.dask_cluster.LoopbackCluster`): the scheduler killed (-9) with
Ctrl-C and SIGTERM during the reconnect, and without; a worker killed (-9); a worker
stopped (SIGSTOP) mid-unit, and one stopped while idle, then handed a unit; a whole node
frozen (nanny and worker stopped); workers slow
to build the policy (not stopped); a hung worker that nothing replaces (no nanny); a policy
that segfaults on every worker. The runs that
finish are compared, field for field, with an uninterrupted run of the same seeds, every
episode exactly once, and ``saber verify`` passes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from saber.errors import ExitCode
from saber.harness import EnvOptions, Inline, evaluate
from tests.harness.dask_cluster import (
    AGENT_NAME,
    BUILD_SECONDS,
    SHORT,
    LoopbackCluster,
    check_run_exactly_once,
    eval_command,
    finished_lines,
    running_eval,
)
from tests.harness.helpers import PixelsAndDice, read_records, strip_timing, wait_for

pytest.importorskip("distributed")
# slow: real faults wait out Dask's deadlines and reconnects (minutes on 2 loaded cores);
# CI's slow stage runs them.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        sys.platform == "win32", reason="kill -9, SIGSTOP and process groups are POSIX"
    ),
]

DASK_TIMEOUT = 3  # --dask-timeout: how long the client tries to reconnect to a lost scheduler
# The bound on a lost scheduler: Dask's reconnect attempts, the backend's margin beyond
# them (saber.harness.dask_executor), and the command's own stop (the records' fsync).
LOST_SCHEDULER_BOUND = DASK_TIMEOUT + 5 + 10


def _reference(folder: Path, episodes: int) -> list[str]:
    """The records of an uninterrupted run of the same seeds, in this process."""
    result = evaluate(PixelsAndDice(), "breakout", episodes, out=folder, agent=AGENT_NAME,
                      backend=Inline(envs_per_worker=1), progress=False,
                      env_options=EnvOptions(SHORT, allow_non_saber=True))  # fmt: skip
    assert result.finished == episodes
    return strip_timing(result.records)


def _last_session(out: Path) -> dict:
    return json.loads((out / "run.json").read_text())["sessions"][-1]


def _stopped(process: subprocess.Popen, seconds: float) -> int:
    """Wait up to ``seconds`` for ``process`` to end (an AssertionError after them, and
    :func:`running_eval` kills it): its exit status."""
    try:
        return process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"still running after {seconds} s") from None


def _errors(folder: Path) -> str:
    text = (folder / "eval.err").read_text(errors="replace")
    (folder / "eval.err").unlink()
    return text


def test_lost_scheduler_interrupts_or_stops_in_bounded_time_and_resumes_exactly_once(
    tmp_path: Path,
) -> None:
    """Ctrl-C and SIGTERM during the reconnect end as interrupted (130, 143); a scheduler
    restarted at the same address, or none, ends the run within LOST_SCHEDULER_BOUND
    naming the scheduler (4, unfinished: the same command resumes); a new cluster, where a worker is killed -9 mid-run,
    finishes every episode exactly once."""
    episodes = 8
    reference = _reference(tmp_path / "reference", episodes)
    out = tmp_path / "run"
    timeout = ("--dask-timeout", str(DASK_TIMEOUT))
    for name, stop, code in (("ctrl-c", signal.SIGINT, ExitCode.INTERRUPTED),
                             ("sigterm", signal.SIGTERM, ExitCode.TERMINATED),
                             ("restarted", None, ExitCode.UNFINISHED),
                             ("alone", None, ExitCode.UNFINISHED)):  # fmt: skip
        command = eval_command("", out, episodes, *timeout)
        with LoopbackCluster(tmp_path / name) as cluster:
            command[command.index("--address") + 1] = cluster.address
            before = finished_lines(out)
            with running_eval(command, tmp_path) as process:
                assert wait_for(lambda n=before: finished_lines(out) > n, 120), _errors(tmp_path)
                cluster.kill_scheduler()
                if name == "restarted":  # at the same address, within --dask-timeout
                    cluster.restart_scheduler()
                if stop is not None:
                    time.sleep(1)  # inside the reconnect attempts (DASK_TIMEOUT)
                    process.send_signal(stop)
                status = _stopped(process, LOST_SCHEDULER_BOUND)
        errors = _errors(tmp_path)
        assert status == code, errors
        assert "Traceback" not in errors and "ClosedClientError" not in errors, errors
        assert "distributed.client" not in errors, errors  # the run's line, not Dask's too
        session = _last_session(out)
        assert session["status"] == ("failed" if stop is None else "interrupted")
        if stop is None:
            last = errors.strip().splitlines()[-1]
            assert last.startswith(f"Error: Lost the Dask scheduler at {cluster.address} "), last
            assert ("(it restarted: " in last) == (name == "restarted"), last
            assert "run the same command (with that cluster's --address) to resume." in last
            assert last.endswith(f"finished episodes are on disk in {out}."), last
    with LoopbackCluster(tmp_path / "new") as cluster:
        before = finished_lines(out)
        with running_eval(eval_command(cluster.address, out, episodes), tmp_path) as process:
            assert wait_for(lambda: finished_lines(out) > before, 120), _errors(tmp_path)
            os.kill(next(iter(cluster.workers().values())), signal.SIGKILL)
            status = _stopped(process, 240)
    assert status == 0, _errors(tmp_path)
    assert _last_session(out)["status"] == "finished"
    check_run_exactly_once(out, reference)


@pytest.mark.parametrize("when", ["mid-unit", "idle"])
def test_stopped_worker_holds_up_nothing_and_its_unit_runs_elsewhere(
    tmp_path: Path, when: str
) -> None:
    """A worker stopped (SIGSTOP) and never woken, mid-unit, or idle before the run and
    then handed a unit it never starts (the policy check goes on without it after
    --unit-timeout): at --unit-timeout its nanny kills it, its unit's episodes fail once
    (timeout) and run on another worker, whose episodes are written meanwhile, and the run
    finishes long before Dask's worker TTL (5 minutes) would have noticed."""
    episodes, unit_timeout = 6, 8
    reference = _reference(tmp_path / "reference", episodes)
    out = tmp_path / "run"
    with LoopbackCluster(tmp_path / "cluster") as cluster:
        command = eval_command(cluster.address, out, episodes, "--workers", "2",
                               "--envs-per-worker", "3", "--unit-timeout", str(unit_timeout))  # fmt: skip
        first = next(iter(cluster.workers().values()))
        if when == "idle":
            os.kill(first, signal.SIGSTOP)  # never woken
        with running_eval(command, tmp_path) as process:
            if when == "mid-unit":
                # Two units of three episodes, one per worker: at the first record (a
                # 100-step episode) both run, each with an episode of 175 steps or more to go.
                assert wait_for(lambda: finished_lines(out) > 0, 120), _errors(tmp_path)
                os.kill(first, signal.SIGSTOP)  # never woken
            status = _stopped(process, 180)
    errors = _errors(tmp_path)
    assert status == 0, errors
    failures = check_run_exactly_once(out, reference)
    assert failures and {(f["kind"], f["attempt"]) for f in failures} == {("timeout", 0)}
    if when == "idle":  # the unit it was handed: three episodes, none started
        assert len(failures) == 3, failures


def test_worker_slow_to_build_the_policy_is_not_taken_for_a_stopped_one(tmp_path: Path) -> None:
    """Both workers take longer than two unit deadlines to build the policy (the check
    before the first unit): the check goes on on their threads while they send
    heartbeats, the units wait behind it, none fails, and no worker is stopped."""
    episodes, unit_timeout = 4, 5
    assert 2 * unit_timeout < BUILD_SECONDS  # longer than two deadlines
    reference = _reference(tmp_path / "reference", episodes)
    out = tmp_path / "run"
    with LoopbackCluster(tmp_path / "cluster") as cluster:
        workers = cluster.workers()
        command = eval_command(cluster.address, out, episodes, "--workers", "2",
                               "--envs-per-worker", "2", "--unit-timeout", str(unit_timeout))  # fmt: skip
        command[command.index("--agent") + 1] = "tests.harness.dask_cluster:slow_to_build"
        with running_eval(command, tmp_path) as process:
            status = _stopped(process, 180)
        assert cluster.workers() == workers  # the same processes: none was stopped
    errors = _errors(tmp_path)
    assert status == 0, errors
    assert check_run_exactly_once(out, reference) == []


def test_hung_worker_that_nothing_replaces_ends_the_run_in_bounded_time(tmp_path: Path) -> None:
    """The only worker, started without a nanny, hangs in episode 1: at --unit-timeout the
    unit fails and the worker is asked to exit (it has no nanny to kill it); nothing
    replaces it, and with episode 2 waiting for a worker the run ends once there has been
    none for --unit-timeout + --dask-timeout seconds, naming the scheduler and what to do
    (4, unfinished: the same command resumes)."""
    out, unit_timeout, dask_timeout = tmp_path / "run", 4, 3
    with LoopbackCluster(tmp_path / "cluster", workers=1, nanny=False) as cluster:
        command = eval_command(cluster.address, out, 3, "--unit-timeout", str(unit_timeout),
                               "--dask-timeout", str(dask_timeout))  # fmt: skip
        command[command.index("--agent") + 1] = "tests.harness.dask_cluster:hang_in_episode_1"
        with running_eval(command, tmp_path) as process:
            status = _stopped(process, 120)
    errors = _errors(tmp_path)
    assert status == ExitCode.UNFINISHED, errors
    last = errors.strip().splitlines()[-1]
    wait = unit_timeout + dask_timeout
    assert last.startswith(f"Error: No Dask worker at the scheduler {cluster.address} for "
                           f"{wait} s (--unit-timeout plus --dask-timeout)"), last  # fmt: skip
    assert "run the same command to resume" in last, last
    assert last.endswith(f"1 finished episode is on disk in {out}, 1 failed."), last
    records = read_records(out)
    assert [(r["episode"], r.get("kind")) for r in records] == [(0, None), (1, "timeout")]
    assert _last_session(out)["status"] == "failed"


def test_policy_that_segfaults_everywhere_stops_after_three_units_naming_the_signal(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run"
    with LoopbackCluster(tmp_path / "cluster", allowed_failures=0) as cluster:
        command = eval_command(cluster.address, out, 8)
        command[command.index("--agent") + 1] = "tests.harness.dask_cluster:segfault"
        with running_eval(command, tmp_path) as process:
            status = _stopped(process, 180)
    errors = _errors(tmp_path)
    assert status == ExitCode.UNFINISHED, errors  # a repeated failure: resumable
    last = errors.strip().splitlines()[-1]
    assert last.startswith("Error: Stopped: the same failure ended 3 work units in a row"), last
    assert "killed by SIGSEGV (a segmentation fault" in last, last
    assert "tcp://" not in last and "saber-unit-" not in last, last
    records = read_records(out)
    assert len({record["error"] for record in records}) == 1
    assert _last_session(out)["status"] == "failed"


def test_a_frozen_node_holds_up_nothing(tmp_path: Path) -> None:
    """A whole node frozen mid-unit (its nanny and its worker stopped with SIGSTOP, never
    woken: no nanny is left to kill the worker): its unit fails at --unit-timeout and its
    episodes run again; a retry that lands on the frozen worker again fails at the
    deadline too and ends its episode as a failure. The run ends long before Dask's worker
    TTL (5 minutes) would have noticed, every episode recorded once: finished as the
    reference's, or failed after its two attempts (exit status 1)."""
    episodes, unit_timeout = 6, 8
    reference = _reference(tmp_path / "reference", episodes)
    out = tmp_path / "run"
    with LoopbackCluster(tmp_path / "cluster") as cluster:
        command = eval_command(cluster.address, out, episodes, "--workers", "2",
                               "--envs-per-worker", "3", "--unit-timeout", str(unit_timeout))  # fmt: skip
        first = next(iter(cluster.workers().values()))
        with running_eval(command, tmp_path) as process:
            assert wait_for(lambda: finished_lines(out) > 0, 120), _errors(tmp_path)
            os.killpg(os.getpgid(first), signal.SIGSTOP)  # the nanny's group: never woken
            status = _stopped(process, 180)
    errors = _errors(tmp_path)
    records = read_records(out)
    finished = {r["episode"]: r for r in records if "error" not in r}
    failed = {r["episode"] for r in records if "error" in r} - set(finished)
    assert status == (ExitCode.FAILED if failed else 0), errors
    assert sorted([*finished, *failed]) == list(range(episodes))
    assert set(strip_timing(list(finished.values()))) <= set(reference)  # as played alone
    assert {r["kind"] for r in records if "error" in r} == {"timeout"}
    for episode in failed:  # its two attempts, both at the deadline
        attempts = [r["attempt"] for r in records if r["episode"] == episode and "error" in r]
        assert attempts == [0, 1], records
