"""docs/measurements/ is rendered from benchmarks/results/ by scripts/docs/measurements_pages.py:
a page edited by hand, or a result file added without rendering, fails here."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.script_modules import load_script

ROOT = Path(__file__).resolve().parents[2]


GENERATOR = load_script("measurements_pages", ROOT / "scripts" / "docs" / "measurements_pages.py")
PAGES = GENERATOR.render()


@pytest.mark.parametrize("path", sorted(PAGES), ids=lambda p: p.name)
def test_every_page_is_what_the_results_render(path: Path) -> None:
    assert path.is_file(), (
        f"{path.relative_to(ROOT)} is missing: run scripts/docs/measurements_pages.py"
    )
    assert path.read_text(encoding="utf-8") == PAGES[path], (
        f"{path.relative_to(ROOT)} differs from its results: edit benchmarks/results/ and run "
        "scripts/docs/measurements_pages.py"
    )


def test_no_page_without_results() -> None:
    on_disk = set((ROOT / "docs" / "measurements").glob("*.md"))
    assert on_disk == set(PAGES), sorted(p.name for p in on_disk ^ set(PAGES))


def test_every_result_names_its_benchmark_command_and_page() -> None:
    pages = json.loads((GENERATOR.RESULTS / "pages.json").read_text(encoding="utf-8"))
    for path in sorted(GENERATOR.RESULTS.glob("*.json")):
        if path.name == "pages.json":
            continue
        result = json.loads(path.read_text(encoding="utf-8"))
        assert result["page"] in pages, path.name
        if result.get("date"):  # a measurement, not a method: what ran, and where
            assert result.get("commands") and result.get("machine"), path.name


def test_a_table_row_of_the_wrong_width_is_refused() -> None:
    table = {"columns": ["a", "b"], "align": ["left", "right"], "rows": [["1"]]}
    with pytest.raises(ValueError, match="a row of 1 cells under 2 columns"):
        GENERATOR.render_result({"title": "t", "blocks": [{"table": table}]})


# Who ran what, and beside whom, is no reader's business: a page says what was measured,
# the command and the machine (its load included) in a user's words.
WHO = re.compile(
    r"\bengineers?'?s?\b|\bthe team'?s?\b|\bteammates?\b|\bCPU lock\b|\bdevelopment machine\b"
    r"|\b(?:working|this) session\b|\blent\b|\b(?:we|our)\b",
    re.IGNORECASE,
)


@pytest.mark.parametrize("path", sorted(PAGES), ids=lambda p: p.name)
def test_every_page_speaks_a_users_words(path: Path) -> None:
    found = [" ".join(PAGES[path][max(0, m.start() - 40) : m.end() + 20].split())
             for m in WHO.finditer(PAGES[path])]  # fmt: skip
    assert not found, f"{path.name}: say it in a user's words: " + " | ".join(found)
