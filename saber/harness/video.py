"""Deprecated: moved to :mod:`saber.training.video` in saber 0.3 (this path goes in 0.4)."""

from __future__ import annotations

import warnings

from saber.training.video import *  # noqa: F403
from saber.training.video import __all__  # noqa: F401

warnings.warn(
    "saber.harness.video moved to saber.training.video (saber.training for the public "
    "names); this import path will be removed in saber 0.4",
    DeprecationWarning,
    stacklevel=2,
)
