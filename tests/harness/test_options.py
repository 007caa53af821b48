"""evaluate()'s option objects (backend, EnvOptions, Recording), the CLI options' mapping
to a backend object. No emulator."""

from __future__ import annotations

from pathlib import Path

import pytest

from saber.errors import ProtocolError, SaberError
from saber.harness import Dask, EnvOptions, Inline, Processes, Recording, evaluate
from saber.harness.backends import backend_for
from saber.harness.options import MAX_EPISODES


def test_a_plain_dict_of_settings_is_refused_with_the_object_to_use(tmp_path: Path) -> None:
    with pytest.raises(SaberError, match=r"Expect `env_options` to be EnvOptions\(overrides"):
        evaluate("random", "pong", 1, out=tmp_path, env_options={"frame_skip": 4})  # type: ignore[arg-type]
    with pytest.raises(SaberError, match=r"Expect `recording` to be Recording\(\.\.\.\)"):
        evaluate("random", "pong", 1, out=tmp_path, recording=True)  # type: ignore[arg-type]


def test_env_options_refuse_settings_that_break_saber_unless_allowed() -> None:
    assert EnvOptions().settings().is_compliant
    with pytest.raises(ProtocolError, match=r"frame_skip=2 \(SABER: 4\).*allow_non_saber=True"):
        EnvOptions({"frame_skip": 2}).settings()
    assert not EnvOptions({"frame_skip": 2}, allow_non_saber=True).settings().is_compliant
    with pytest.raises(SaberError, match="Expect `EnvOptions\\(overrides\\)` to be a mapping"):
        EnvOptions("frame_skip=2")  # type: ignore[arg-type]


def test_each_backend_takes_only_the_options_it_honours() -> None:
    with pytest.raises(TypeError):
        Inline(unit_timeout=10)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Dask(emulation_threads=2)  # type: ignore[call-arg]
    assert Dask(workers=3).threads_per_env() == 1
    assert Inline().threads_per_env() == 0 and Inline(emulation_threads=2).threads_per_env() == 2
    assert Processes(1).threads_per_env() == 0 and Processes(2).threads_per_env() == 1
    assert Processes(2, emulation_threads=3).threads_per_env() == 3


@pytest.mark.parametrize(
    ("made", "message"),
    [
        (lambda: Processes(envs_per_worker=0), "Expect `Processes(envs_per_worker)` to be an integer >= 1, actually: 0"),
        (lambda: Inline(emulation_threads=0), "Expect `Inline(emulation_threads)` to be an integer >= 1, actually: 0"),
        (lambda: Dask(workers=True), "Expect `Dask(workers)` to be an integer >= 1, actually: True"),
        (lambda: Processes(unit_timeout=0), "Expect `Processes(unit_timeout)` to be positive or None, actually: 0"),
        (lambda: Recording(video=-1), "Expect `Recording(video)` to be an integer >= 0, actually: -1"),
    ],
)  # fmt: skip
def test_bad_options_are_refused_when_made(made, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SaberError) as error:
        made()
    assert str(error.value) == message


def test_the_cli_options_map_to_one_backend_object() -> None:
    assert backend_for("processes", 0, envs_per_worker=2, unit_timeout=9) == Inline(2)
    assert backend_for("processes", None) == Processes()
    assert backend_for("processes", 2, policy_process=True, envs_per_worker=4, unit_timeout=9) == (
        Processes(2, True, 4, unit_timeout=9)
    )
    tls = {"tls_ca_file": "ca.pem"}
    assert backend_for("dask", 3, address="tcp://h:8786", timeout=5, security=tls) == Dask(
        "tcp://h:8786", 3, 5, tls
    )
    with pytest.raises(SaberError, match="Expect a backend `processes` or `dask`, actually: 'ray'"):
        backend_for("ray", 1)


def test_episodes_beyond_the_bound_are_refused_before_anything_is_planned(tmp_path: Path) -> None:
    # 10**9 episodes planned at once would be a MemoryError after minutes of swapping.
    with pytest.raises(
        SaberError,
        match=rf"Expect `episodes` to be at most {MAX_EPISODES:,} per game \(every episode is "
        r"planned in memory before any plays; the protocol asks for 100\), actually: "
        r"1,000,000,000$",
    ):
        evaluate("random", "pong", 10**9, out=tmp_path / "run")
    assert not (tmp_path / "run").exists()
