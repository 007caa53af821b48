"""A real Dask cluster on loopback for the fault tests: a ``dask scheduler`` and ``dask
worker`` processes started here, killed and stopped for real; and the policies those
tests run (importable by the workers as ``tests.harness.dask_cluster:...``). Also the
Dask tests' ``LocalCluster`` (:func:`local_cluster`) and their check of a finished run
(:func:`check_run_exactly_once`).

Every process is started in a session of its own, so that the whole group (a worker's
nanny and its worker process) is killed at the end, even when a test fails.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from tests.harness.helpers import (
    PixelsAndDice,
    SleepOnEpisode,
    read_records,
    strip_timing,
    wait_for,
)

ROOT = Path(__file__).parents[2]
AGENT = "tests.harness.dask_cluster:slow_dice"
AGENT_NAME = "dice"  # the same name in the reference run and the cluster's
STEP_SECONDS = 0.02  # a policy call's sleep: episodes last seconds, so faults land mid-run
SHORT = {"max_frames_without_reward": 400}  # episodes end in seconds (not SABER)


class SlowDice(PixelsAndDice):
    """:class:`PixelsAndDice` (the same actions in any batch) that sleeps on each call."""

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        time.sleep(STEP_SECONDS)
        return super().__call__(observations)


def slow_dice() -> SlowDice:
    """A factory for ``--agent``."""
    return SlowDice()


def local_cluster(workers: int, **kwargs: Any) -> Any:
    """A ``distributed.LocalCluster`` of ``workers`` single-threaded worker processes, as
    ``saber eval``'s own: no dashboard, the scheduler's HTTP server on a free port."""
    from distributed import LocalCluster

    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                        dashboard_address=None, scheduler_kwargs={"dashboard_address": ":0"},
                        **kwargs)  # fmt: skip


def check_run_exactly_once(out: Path, reference: list[str]) -> list[dict]:
    """Every episode of the run in ``out`` finished exactly once, each record as the
    ``reference``'s (:func:`strip_timing`'s lines, wall time aside), and ``saber verify``
    passes; the failed attempts, for the caller to check."""
    records = read_records(out)
    finished = [record for record in records if "error" not in record]
    counts = Counter((record["game"], record["episode"]) for record in finished)
    assert set(counts.values()) == {1}, counts
    assert strip_timing(finished) == reference
    verify = subprocess.run([sys.executable, "-m", "saber.cli", "verify", str(out)], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)  # fmt: skip
    assert verify.returncode == 0, verify.stderr[-2000:]
    return [record for record in records if "error" in record]


BUILD_SECONDS = 12.0  # slow_to_build: seconds to build the policy


def slow_to_build() -> SlowDice:
    """A factory for ``--agent`` that takes :data:`BUILD_SECONDS` to build (a large model
    loading, or a machine under load)."""
    time.sleep(BUILD_SECONDS)
    return SlowDice()


def hang_in_episode_1() -> SleepOnEpisode:
    """A factory for ``--agent``: FIRE, and a call that never returns in Breakout's
    episode 1."""
    return SleepOnEpisode("breakout", episode=1)


def segfault() -> Any:
    """A factory for ``--agent``: a policy whose every call crashes its process (SIGSEGV)."""

    def policy(observations: np.ndarray) -> np.ndarray:
        ctypes.string_at(0)  # reads address 0: a segmentation fault
        return np.zeros(len(observations), dtype=np.int64)

    return policy


def environment(**extra: str) -> dict[str, str]:
    """This environment, with the repository importable (the policies above). Dask's
    logging stays at its default: a nanny's log names the signal its worker died of."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, **extra}


class LoopbackCluster:
    """``dask scheduler`` and ``workers`` ``dask worker`` processes (one thread each, with
    a nanny unless told not) on 127.0.0.1, each in a session of its own.

    Args:
        folder: where the scheduler file and the processes' logs go.
        workers: worker processes.
        allowed_failures: Dask's ``distributed.scheduler.allowed-failures`` (how many
            worker deaths a task survives; 0 fails it at the first).
        nanny: whether each worker has a nanny (``--no-nanny`` if not: a worker that
            ends is not replaced).
    """

    def __init__(
        self, folder: Path, workers: int = 2, allowed_failures: int = 3, nanny: bool = True
    ) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.processes: list[subprocess.Popen] = []
        self.scheduler_file = folder / "scheduler.json"
        self.scheduler_file.unlink(missing_ok=True)  # an earlier cluster's
        self.nanny = nanny
        try:  # a cluster that fails to start leaves no process behind either
            self._start_processes(workers, allowed_failures)
        except BaseException:
            self.close()
            raise

    def _start_processes(self, workers: int, allowed_failures: int) -> None:
        self.scheduler = self._start(
            "scheduler", ["--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                          "--scheduler-file", str(self.scheduler_file)],
            DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=str(allowed_failures),
        )  # fmt: skip
        if not wait_for(lambda: self._address() is not None, 60):
            raise AssertionError(f"no scheduler: {self.log('scheduler')}")
        self.address = str(self._address())
        for index in range(workers):
            self._start(f"worker-{index}", [self.address, "--host", "127.0.0.1", "--nthreads",
                                            "1", "--no-dashboard", "--death-timeout", "60",
                                            "--local-directory", str(self.folder),
                                            *([] if self.nanny else ["--no-nanny"])])  # fmt: skip
        if not wait_for(lambda: len(self.workers()) == workers, 120):
            raise AssertionError(f"workers did not connect: {self.log('worker-0')}")

    def _address(self) -> str | None:
        """The scheduler's address from its file, once the file is whole."""
        try:
            return json.loads(self.scheduler_file.read_text())["address"]
        except (OSError, ValueError, KeyError):
            return None

    def _start(self, name: str, arguments: list[str], **extra: str) -> subprocess.Popen:
        command = [sys.executable, "-m", f"distributed.cli.dask_{name.split('-')[0]}"]
        with open(self.folder / f"{name}.log", "wb") as log:
            process = subprocess.Popen(
                command + arguments, cwd=ROOT, env=environment(**extra), stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        self.processes.append(process)
        return process

    def log(self, name: str) -> str:
        """The last lines of a process's output (for a failing test's message)."""
        path = self.folder / f"{name}.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def workers(self) -> dict[str, int]:
        """The workers connected to the scheduler: address -> process id."""
        from distributed import Client

        try:
            with Client(self.address, timeout=10) as client:
                return dict(client.run(os.getpid))
        except (OSError, TimeoutError):
            return {}

    def kill_scheduler(self) -> None:
        """kill -9 of the scheduler process."""
        os.kill(self.scheduler.pid, signal.SIGKILL)
        self.scheduler.wait(timeout=30)

    def restart_scheduler(self) -> None:
        """A new scheduler at the address of the one killed (its workers are gone: Dask
        closes a worker whose scheduler is lost)."""
        port = self.address.rsplit(":", 1)[1]
        self.scheduler = self._start("scheduler", ["--host", "127.0.0.1", "--port", port,
                                                   "--no-dashboard"])  # fmt: skip

    def close(self) -> None:
        """Kill every process of the cluster (stopped ones included) and reap them."""
        for process in self.processes:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
        for process in self.processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=30)

    def __enter__(self) -> LoopbackCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def eval_command(address: str, out: Path, episodes: int, *more: str) -> list[str]:
    """``saber eval`` of :func:`slow_dice` on Breakout on the cluster at ``address``."""
    return [sys.executable, "-m", "saber.cli", "eval", "--agent", AGENT, "--agent-name",
            AGENT_NAME, "--games", "breakout", "--episodes", str(episodes), "--backend",
            "dask", "--address", address, "--envs-per-worker", "1", "--out", str(out),
            "--no-report", "--allow-non-saber",
            *[arg for key, value in SHORT.items() for arg in ("--env-option", f"{key}={value}")],
            *more]  # fmt: skip


@contextlib.contextmanager
def running_eval(command: list[str], folder: Path) -> Iterator[subprocess.Popen]:
    """``command`` running in the background (its stderr in ``folder/eval.err``, appended),
    killed on the way out if it still runs."""
    with open(folder / "eval.err", "ab") as err:
        process = subprocess.Popen(
            command, cwd=ROOT, env=environment(), stdout=subprocess.DEVNULL, stderr=err,
            start_new_session=True,
        )  # fmt: skip
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)


def finished_lines(out: Path) -> int:
    """Finished episodes in ``out/episodes.jsonl`` so far."""
    path = out / "episodes.jsonl"
    if not path.exists():
        return 0
    lines = path.read_text().splitlines()
    return sum('"error"' not in line for line in lines if line.strip())
