"""The Python snippets of docs/jax.md run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.jax

DOCS = Path(__file__).parents[2] / "docs" / "jax.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", DOCS.read_text(), flags=re.DOTALL)


def test_the_page_has_its_snippets() -> None:
    assert len(SNIPPETS) == 3


@pytest.mark.parametrize("index", range(len(SNIPPETS)))
def test_snippet_runs(index: int) -> None:
    exec(compile(SNIPPETS[index], f"docs/jax.md snippet {index + 1}", "exec"), {})
