"""saber 0.4's names that saber 0.5 renamed: each still works, warns once per use, names
the one to use instead, and is the very thing of the new name (the CHANGELOG's migration
table lists them; saber 0.6 removes them)."""

from __future__ import annotations

import pytest

import saber
import saber.envs
from saber.cli.eval_options import _backend_word
from saber.envs import SaberVectorEnv
from saber.reports import make_report
from saber.scoring import reference_table


@pytest.mark.parametrize("module", [saber, saber.envs], ids=["saber", "saber.envs"])
def test_make_vec_env_warns_and_makes_the_vector_env(module: object) -> None:
    with pytest.warns(DeprecationWarning, match=r'use gymnasium.make_vec\("SABER/<Game>"'):
        make_vec_env = module.make_vec_env  # type: ignore[attr-defined]
    env = make_vec_env("pong", 2)
    try:
        assert isinstance(env, SaberVectorEnv) and env.num_envs == 2
    finally:
        env.close()


def test_build_report_warns_and_is_the_reports_json_document() -> None:
    table = reference_table("saber-paper")
    from saber.reports import build_report  # type: ignore[attr-defined]

    with pytest.warns(
        DeprecationWarning, match=r"use saber.reports.make_report\(...\).to_dict\(\)"
    ):
        document = build_report(table, n_resamples=10)
    assert document == make_report(table, n_resamples=10).to_dict()


@pytest.mark.sb3
def test_sb3_make_vec_env_warns_and_is_make_sb3_vec_env() -> None:
    sb3 = pytest.importorskip("saber.training.sb3")
    with pytest.warns(DeprecationWarning, match="use saber.training.sb3.make_sb3_vec_env"):
        assert sb3.make_vec_env is sb3.make_sb3_vec_env


def test_backend_local_is_processes_with_a_warning(capsys: pytest.CaptureFixture[str]) -> None:
    assert _backend_word("processes") == "processes" and _backend_word("dask") == "dask"
    assert capsys.readouterr().err == ""
    assert _backend_word("local") == "processes"
    assert capsys.readouterr().err == (
        "Warning: --backend local is deprecated and goes in saber 0.6: use --backend processes\n"
    )


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'make_vector_env'"):
        saber.envs.make_vector_env  # type: ignore[attr-defined]  # noqa: B018
