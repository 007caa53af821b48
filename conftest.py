"""pytest's configuration for the whole checkout (the tests, and saber's doctests)."""

from __future__ import annotations

import importlib.util

# Deprecated import paths: importing them warns (tests/test_layers.py checks that), so the
# doctest collector, which imports every module of saber/, leaves them alone.
collect_ignore = ["saber/harness/training.py", "saber/harness/video.py", "saber/harness/sb3.py"]

# saber.jax imports JAX, which only the ``jax`` extra installs: without it, its modules are
# not collected for doctests (the ``-m jax`` tests fail instead, saying what to install).
collect_ignore_glob = [] if importlib.util.find_spec("jax") else ["saber/jax/*"]
# CleanRL's envpool scripts, vendored as they are: programs to run (-m cleanrl), not modules.
collect_ignore_glob.append("tests/clients/cleanrl/*")


_SESSION_CACHE: list[str] = []  # the verdict folder this session made (removed at its end)


def pytest_configure(config) -> None:
    """Kept quick-probe verdicts (saber.check.verdicts) go to a folder of this session, not
    to the user's ~/.cache: every session probes afresh, and its runs share the verdict."""
    import os
    import tempfile

    if "SABER_CACHE_DIR" not in os.environ:
        _SESSION_CACHE.append(tempfile.mkdtemp(prefix="saber-test-cache-"))
        os.environ["SABER_CACHE_DIR"] = _SESSION_CACHE[0]


def pytest_unconfigure(config) -> None:
    import shutil

    for folder in _SESSION_CACHE:
        shutil.rmtree(folder, ignore_errors=True)
