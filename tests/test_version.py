"""saber.version: a library's installed version, read from its metadata without importing
it, is the version the library itself reports (what run.json and the quick probe's key
record)."""

from __future__ import annotations

import ale_py
import cv2
import gymnasium
import numpy

from saber.harness.store import provenance
from saber.version import installed_version


def test_installed_versions_are_the_libraries_own() -> None:
    assert installed_version("ale_py", "ale-py") == ale_py.__version__
    assert installed_version("gymnasium") == gymnasium.__version__
    assert installed_version("numpy") == numpy.__version__


def test_a_library_under_no_known_distribution_is_imported_for_its_version() -> None:
    assert installed_version("cv2", "no-such-distribution-of-opencv") == cv2.__version__


def test_run_json_records_the_versions_of_the_libraries_that_play() -> None:
    run = provenance(
        settings={}, deviations={}, agent="random", games=["pong"], episodes=1,
        base_seed=0, seed_scheme="x",
    )  # fmt: skip
    assert run["ale_py"] == ale_py.__version__
    assert run["gymnasium"] == gymnasium.__version__
    assert run["numpy"] == numpy.__version__
    assert run["sessions"][0]["ale_py"] == ale_py.__version__
