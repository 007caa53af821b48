"""Collection settings for the whole repository (tests/ and saber/'s doctests).

saber.jax imports JAX, which only the ``jax`` extra installs: without it, its modules
are not collected for doctests (the ``-m jax`` tests fail instead, saying what to install).
"""

from __future__ import annotations

import importlib.util

collect_ignore_glob = [] if importlib.util.find_spec("jax") else ["saber/jax/*"]
