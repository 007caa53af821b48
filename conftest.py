"""pytest's configuration for the whole checkout (the tests, and saber's doctests)."""

from __future__ import annotations

import importlib.util
import os

# Deprecated import paths: importing them warns (tests/test_layers.py checks that), so the
# doctest collector, which imports every module of saber/, leaves them alone.
collect_ignore = ["saber/harness/training.py", "saber/harness/video.py", "saber/harness/sb3.py"]

# saber.jax imports JAX, which only the ``jax`` extra installs: without it, its modules are
# not collected for doctests (the ``-m jax`` tests fail instead, saying what to install).
collect_ignore_glob = [] if importlib.util.find_spec("jax") else ["saber/jax/*"]

# XLA's CPU backend can wedge its multithreaded Eigen pool: an intermittent hang, in
# CI's jax stage once (a PQN test never returned), and reported upstream with the same
# cure (PyAutoLabs/PyAutoFit#1528: hangs in block_until_ready, gone with this flag alone).
# Single-threaded Eigen avoids it; set before JAX starts its backend, inherited by worker
# processes. A choice of the flag already in XLA_FLAGS is kept. docs/jax.md says the same
# to users.
_EIGEN_FLAG = "--xla_cpu_multi_thread_eigen=false"
if "xla_cpu_multi_thread_eigen" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {_EIGEN_FLAG}".strip()
