"""Deprecated: moved to :mod:`saber.training.sb3` in saber 0.3 (this path goes in 0.4)."""

from __future__ import annotations

import warnings

from saber.training.sb3 import *  # noqa: F403
from saber.training.sb3 import __all__  # noqa: F401

warnings.warn(
    "saber.harness.sb3 moved to saber.training.sb3 (saber.training for the public "
    "names); this import path will be removed in saber 0.4",
    DeprecationWarning,
    stacklevel=2,
)
