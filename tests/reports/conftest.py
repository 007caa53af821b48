"""Helpers of the report tests."""

from __future__ import annotations

from collections.abc import Callable

import pytest


def _cells(markdown: str) -> list[list[str]]:
    return [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in markdown.splitlines()
        if line.startswith("|")
    ]


@pytest.fixture
def cells() -> Callable[[str], list[list[str]]]:
    """The rows of every Markdown table of a text, as lists of stripped cells (columns of
    the report's tables are padded to line up, so tests compare cells, not lines)."""
    return _cells
