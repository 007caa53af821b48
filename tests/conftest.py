"""Shared test settings: real ROMs through ale-py, no emulator mocks."""

from __future__ import annotations

import saber  # noqa: F401  (registers the SABER/* ids)
from tests.mounts import mounts  # noqa: F401  (the fixture, for every test folder)
from tests.recorded import clean_run, recorded_run  # noqa: F401  (the fixtures, for every test folder)
