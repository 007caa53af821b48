"""Shared test settings: real ROMs through ale-py, no emulator mocks."""

from __future__ import annotations

import saber  # noqa: F401  (registers the SABER/* ids)
