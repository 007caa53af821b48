"""saber.version: saber's own version is one number everywhere it is shown; a library's
installed version, read from its metadata without importing it, is the version the library
itself reports (what run.json and the quick probe's key record)."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import ale_py
import cv2
import gymnasium
import numpy
from click.testing import CliRunner

import saber
from saber.cli import main
from saber.harness.store import run_provenance
from saber.version import installed_version

CHANGELOG = Path(__file__).resolve().parents[1] / "CHANGELOG.md"


def test_the_version_is_one_number_everywhere_it_is_shown() -> None:
    """``saber --version``, ``saber.__version__``, the installed metadata (what pip and
    run.json's readers see) and the CHANGELOG's top release heading agree: a release whose
    package says 0.3.0 under a CHANGELOG that heads 0.4.0 fails here."""
    printed = CliRunner().invoke(main, ["--version"])
    assert printed.exit_code == 0, printed.output
    (from_cli,) = re.findall(r"version (\S+)", printed.output)
    heading = re.search(r"^## (\d+\.\d+\.\d+)\b", CHANGELOG.read_text(encoding="utf-8"), re.M)
    assert heading is not None, "CHANGELOG.md has no '## X.Y.Z' release heading"
    versions = {
        "saber --version": from_cli,
        "saber.__version__": saber.__version__,
        "installed metadata (pip install -e . again after a bump)": importlib.metadata.version(
            "saber-ale"
        ),
        "CHANGELOG.md top heading": heading.group(1),
    }
    assert len(set(versions.values())) == 1, versions


def test_installed_versions_are_the_libraries_own() -> None:
    assert installed_version("ale_py", "ale-py") == ale_py.__version__
    assert installed_version("gymnasium") == gymnasium.__version__
    assert installed_version("numpy") == numpy.__version__


def test_a_library_under_no_known_distribution_is_imported_for_its_version() -> None:
    assert installed_version("cv2", "no-such-distribution-of-opencv") == cv2.__version__


def test_run_json_records_the_versions_of_the_libraries_that_play() -> None:
    run = run_provenance(
        settings={}, deviations={}, agent="random", games=["pong"], episodes=1,
        base_seed=0, seed_scheme="x",
    )  # fmt: skip
    assert run["ale_py"] == ale_py.__version__
    assert run["gymnasium"] == gymnasium.__version__
    assert run["numpy"] == numpy.__version__
    assert run["sessions"][0]["ale_py"] == ale_py.__version__
