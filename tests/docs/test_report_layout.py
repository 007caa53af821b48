"""docs/reports.md's JSON layout is what scripts/docs/report_layout.py renders from the report's
model: a field added to the model without a meaning in its docstring, or a page edited by
hand, fails here (tests/reports/test_docs.py checks the page against a real report)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tests.script_modules import load_script

ROOT = Path(__file__).resolve().parents[2]


LAYOUT = load_script("report_layout", ROOT / "scripts" / "docs" / "report_layout.py")


def test_the_page_holds_the_layout_the_model_renders() -> None:
    page = LAYOUT.PAGE.read_text(encoding="utf-8")
    expected = f"{LAYOUT.BEGIN}\n\n{LAYOUT.render()}\n\n{LAYOUT.END}"
    assert expected in page, "run scripts/docs/report_layout.py: docs/reports.md is stale"


def test_a_field_without_a_meaning_is_refused() -> None:
    @dataclasses.dataclass
    class Half:
        """Two fields, one documented.

        Attributes:
            kept: documented.
        """

        kept: int
        forgotten: int

    with pytest.raises(ValueError, match=r"Half.forgotten is not in its docstring's Attributes"):
        LAYOUT._rows(Half, "", [], [])


def test_python_words_become_json_words() -> None:
    assert LAYOUT._markdown("``None`` when skipped, else (None, None); False") == (
        "`null` when skipped, else `[null, null]`; `false`"
    )
