"""What saber 0.5 deprecated is gone in saber 0.6 (the CHANGELOG's migration table says
what to use instead): the old names are attribute errors, ``--backend local`` a usage error."""

from __future__ import annotations

import importlib

import pytest
from click.testing import CliRunner

from saber.cli import main
from saber.errors import ExitCode

REMOVED = [
    ("saber", "make_vec_env"),
    ("saber.envs", "make_vec_env"),
    ("saber.reports", "build_report"),
    ("saber.reports.report", "build_report"),
]


@pytest.mark.parametrize(("module", "name"), REMOVED, ids=[".".join(pair) for pair in REMOVED])
def test_a_removed_name_is_an_attribute_error(module: str, name: str) -> None:
    with pytest.raises(AttributeError, match=f"has no attribute '{name}'"):
        getattr(importlib.import_module(module), name)


@pytest.mark.sb3
def test_sb3_make_vec_env_is_gone_for_make_sb3_vec_env() -> None:
    sb3 = pytest.importorskip("saber.training.sb3")
    assert callable(sb3.make_sb3_vec_env)
    with pytest.raises(AttributeError, match="has no attribute 'make_vec_env'"):
        sb3.make_vec_env  # noqa: B018


def test_backend_local_is_refused_in_one_line() -> None:
    result = CliRunner().invoke(main, ["eval", "--backend", "local", "--games", "pong"])
    assert result.exit_code == ExitCode.USAGE
    assert "Invalid value for '--backend': 'local' is not one of 'processes', 'dask'." in (
        result.output
    ), result.output
    assert "Traceback" not in result.output
