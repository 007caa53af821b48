"""The Dask backend on local clusters: a hung unit, a worker that cannot import the agent, TLS,
no process left behind when saber eval is killed outright, no word about a port that another
cluster holds."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from saber.cli import main
from saber.harness import BackendError, Dask, EnvOptions, PolicyError, evaluate
from tests.harness.dask_cluster import local_cluster
from tests.harness.helpers import (
    BrokenInit,
    SleepOnEpisode,
    alive,
    check_hung_episode_1,
    descendants,
    read_records,
    start_hung_policies,
    wait_for,
)

distributed = pytest.importorskip("distributed")


def test_hung_unit_is_stopped_retried_then_recorded_and_the_run_goes_on(tmp_path: Path) -> None:
    # Each stop leaves the cluster without a worker until the nanny's new one connects,
    # which is slow on a loaded machine: the run waits for it up to unit_timeout + timeout
    # seconds, so timeout is well above a slow start.
    with local_cluster(1) as cluster:
        result = evaluate(
            SleepOnEpisode("breakout", episode=1),
            "breakout",
            3,
            out=tmp_path,
            backend=Dask(cluster.scheduler_address, envs_per_worker=1, unit_timeout=4, timeout=30),
            progress=False,
        )
    check_hung_episode_1(result, unit_timeout=4)


AGENT = "import numpy as np\n\ndef policy(observations):\n    return np.zeros(len(observations), dtype=np.int64)\n"


def test_agent_module_missing_on_the_workers_fails_early_with_one_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with local_cluster(1) as cluster:
        # The module exists here only, after the workers started: they cannot import it.
        (tmp_path / "only_here_agent.py").write_text(AGENT)
        monkeypatch.syspath_prepend(str(tmp_path))
        with pytest.raises(PolicyError) as error:
            evaluate(
                "only_here_agent:policy",
                "breakout",
                50,
                out=tmp_path / "run",
                backend=Dask(cluster.scheduler_address),
                progress=False,
            )
    message = str(error.value)
    assert message.startswith("1 of 1 Dask workers cannot load the policy; tcp://")
    assert "Agent spec 'only_here_agent:policy'" in message and "or install it" in message
    assert "Every worker needs saber and the agent's module importable" in message
    assert read_records(tmp_path / "run") == []
    sys.modules.pop("only_here_agent", None)


@pytest.mark.parametrize("agent", ["tests.harness.helpers:broken_factory", BrokenInit])
def test_a_policy_that_cannot_be_built_on_the_workers_leaves_no_record(
    tmp_path: Path, agent: object
) -> None:
    # Every worker builds the policy before the first unit: a failure is the run's one
    # message, with no failed episode in the records (nor in any later summary).
    with local_cluster(1) as cluster, pytest.raises(PolicyError) as error:
        evaluate(agent, "breakout", 2, out=tmp_path / "run",  # type: ignore[arg-type]
                 backend=Dask(cluster.scheduler_address), progress=False)  # fmt: skip
    assert "1 of 1 Dask workers cannot load the policy" in str(error.value)
    assert "building the policy failed: RuntimeError" in str(error.value)
    records = tmp_path / "run" / "episodes.jsonl"
    assert not records.exists() or records.read_text() == ""


def test_tls_scheduler_with_certificates(tmp_path: Path) -> None:
    pytest.importorskip("cryptography")  # Security.temporary() makes its certificates
    security = distributed.Security.temporary()
    files = {}
    for name in ("tls_ca_file", "tls_client_cert", "tls_client_key"):
        files[name] = tmp_path / f"{name}.pem"
        files[name].write_text(getattr(security, name))
    with local_cluster(1, security=security) as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tls://")
        args = ["eval", "--agent", "constant:1", "--games", "breakout", "--episodes", "2",
                "--backend", "dask", "--address", address, "--out", str(tmp_path / "run"),
                "--tls-ca-file", str(files["tls_ca_file"]), "--tls-cert",
                str(files["tls_client_cert"]), "--tls-key", str(files["tls_client_key"]),
                "--no-report"]  # fmt: skip
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        assert [r["steps"] for r in read_records(tmp_path / "run")] == [122, 122]
        with pytest.raises(
            BackendError, match="A tls:// scheduler needs the client's certificates"
        ):
            evaluate("random", "breakout", 1, out=tmp_path / "plain", backend=Dask(address, timeout=2), progress=False)  # fmt: skip


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads process states from /proc")
def test_no_process_of_a_local_cluster_outlives_a_parent_killed_outright(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    command = [sys.executable, "-m", "saber.cli", "eval", "--agent",
               "tests.harness.helpers:hang_and_say_so", "--games", "breakout", "--episodes", "4",
               "--backend", "dask", "--workers", "2", "--envs-per-worker", "2",
               "--out", str(tmp_path / "run"), "--no-report"]  # fmt: skip
    process, workers = start_hung_policies(command, pids, 2, Path(__file__).parents[2])
    below = descendants(process.pid)  # the cluster's workers (and Python's helpers)
    try:
        assert set(workers) <= below and process.pid not in workers
        process.kill()  # kill -9 of saber eval --backend dask while both policies hang
        process.wait(timeout=30)
        assert wait_for(lambda: not any(alive(pid) for pid in below), 30), below
    finally:
        if process.poll() is None:
            process.kill()
        for pid in below:  # only if the test failed: leave nothing behind
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_local_cluster_says_nothing_of_the_port_another_cluster_holds(tmp_path: Path) -> None:
    """saber eval's own cluster (no --address) serves no dashboard, and its scheduler's
    HTTP server takes a free port: Dask's default, 8787, held here as another Dask
    cluster on the machine would hold it, is not tried (Dask would warn "Port 8787 is
    already in use. Perhaps you already have a cluster running?")."""
    with socket.socket() as held, warnings.catch_warnings(record=True) as caught:
        with contextlib.suppress(OSError):  # else something holds it already: as good
            held.bind(("", 8787))
            held.listen()
        warnings.simplefilter("always")
        result = evaluate("random", "breakout", 1, out=tmp_path / "run",
                          backend=Dask(workers=1), progress=False,
                          env_options=EnvOptions({"max_frames_without_reward": 400},
                                                 allow_non_saber=True))  # fmt: skip
    assert result.finished == 1
    assert not [str(w.message) for w in caught if "8787" in str(w.message)]
