"""The Dask backend on local clusters: a hung unit, a worker that cannot import the agent, TLS."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from saber.cli import main
from saber.harness import BackendError, Dask, PolicyError, evaluate
from tests.harness.helpers import SleepOnEpisode, check_hung_episode_1, read_records

distributed = pytest.importorskip("distributed")


def _cluster(**kwargs: object) -> distributed.LocalCluster:
    return distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None, **kwargs
    )


def test_hung_unit_is_stopped_retried_then_recorded_and_the_run_goes_on(tmp_path: Path) -> None:
    with _cluster() as cluster:
        result = evaluate(
            SleepOnEpisode("breakout", episode=1),
            "breakout",
            3,
            out=tmp_path,
            backend=Dask(cluster.scheduler_address),
            envs_per_worker=1,
            unit_timeout=10,
            progress=False,
        )
    check_hung_episode_1(result, unit_timeout=10)


AGENT = "import numpy as np\n\ndef policy(observations):\n    return np.zeros(len(observations), dtype=np.int64)\n"


def test_agent_module_missing_on_the_workers_fails_early_with_one_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _cluster() as cluster:
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
    assert "cannot import module 'only_here_agent'" in message
    assert "Every worker needs saber and the agent's module importable" in message
    assert read_records(tmp_path / "run") == []
    sys.modules.pop("only_here_agent", None)


def test_tls_scheduler_with_certificates(tmp_path: Path) -> None:
    pytest.importorskip("cryptography")  # Security.temporary() makes its certificates
    security = distributed.Security.temporary()
    files = {}
    for name in ("tls_ca_file", "tls_client_cert", "tls_client_key"):
        files[name] = tmp_path / f"{name}.pem"
        files[name].write_text(getattr(security, name))
    with _cluster(security=security) as cluster:
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
