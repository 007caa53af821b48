"""Text from entries is data: every fragment of the board's HTML comes from a template of
saber/board/templates (autoescaped), never from Python formatting or joining strings, and
nothing is marked safe but a template's output (saber.board.pages.render)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

BOARD = Path(__file__).parents[2] / "saber" / "board"
# An HTML element's tag (<p>, </a>, <span class=...) or a declaration (<!DOCTYPE): not
# "<Game>" or "<id>" in a message or a path pattern, which are text.
ELEMENTS = (
    "a|abbr|b|body|br|button|caption|code|dd|details|div|dl|dt|em|figure|footer|form|h[1-6]|"
    "head|header|html|i|img|input|li|link|main|meta|nav|ol|p|pre|script|section|small|span|"
    "strong|style|sub|summary|sup|svg|table|tbody|td|th|thead|title|tr|ul"
)
TAG = re.compile(rf"<(/?(?:{ELEMENTS})(?=[\s>/])|!)")
# The one tag a string may hold: the search key that places the way back to the board at the
# start of a report page's content (entry_pages.MAIN); what goes there is a template's.
SEARCH_KEYS = {"<main>"}


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of the docstrings' nodes (text about HTML, not HTML)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _offences(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        where = f"{path.name}:{getattr(node, 'lineno', '?')}"
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and node.value not in SEARCH_KEYS
            and TAG.search(node.value)
        ):
            found.append(f"{where}: HTML in a Python string: {node.value[:60]!r}")
        if isinstance(node, ast.Import) and any(a.name == "html" for a in node.names):
            found.append(f"{where}: imports html (escape in a template instead)")
        if isinstance(node, ast.ImportFrom) and node.module == "markupsafe":
            names = {a.name for a in node.names} - {"Markup"}  # Markup: for type hints
            if names:
                found.append(f"{where}: imports {sorted(names)} from markupsafe")
    allowed = {  # the one place a template's output is marked as HTML: pages.render
        id(inner)
        for node in ast.walk(tree)
        if path.name == "pages.py" and isinstance(node, ast.FunctionDef) and node.name == "render"
        for inner in ast.walk(node)
    }
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and id(node) not in allowed
            and (
                (isinstance(node.func, ast.Name) and node.func.id == "Markup")
                or (isinstance(node.func, ast.Attribute) and node.func.attr == "Markup")
            )
        ):
            found.append(f"{path.name}:{node.lineno}: Markup(...) outside pages.render")
    return sorted(set(found))


def test_no_module_of_the_board_formats_markup_in_python() -> None:
    modules = sorted(BOARD.rglob("*.py"))
    assert modules
    found = [line for path in modules for line in _offences(path)]
    assert not found, "markup built in Python (make it a template):\n" + "\n".join(found)


def test_the_scan_finds_what_it_forbids(tmp_path: Path) -> None:
    """The scan is not vacuous: each way of making markup in Python is caught."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        '"""A <p> in a docstring is text."""\n'
        "import html\n"
        "from markupsafe import Markup, escape\n"
        "def f(name):\n"
        '    """<b>docs</b>"""\n'
        '    a = f"<p>{html.escape(name)}</p>"\n'
        '    b = "<h2>Notes</h2>" + name\n'
        "    c = Markup(a)\n"
        '    d = "<Game> and <id>, as text"\n'
        '    return "<!DOCTYPE html>" + a + b + c + d\n',
        encoding="utf-8",
    )
    found = "\n".join(_offences(bad))
    for offence in (
        "bad.py:6: HTML in a Python string: '<p>'",
        "bad.py:6: HTML in a Python string: '</p>'",
        "bad.py:7: HTML in a Python string: '<h2>Notes</h2>'",
        "bad.py:10: HTML in a Python string: '<!DOCTYPE html>'",
        "bad.py:2: imports html",
        "bad.py:3: imports ['escape'] from markupsafe",
        "bad.py:8: Markup(...) outside pages.render",
    ):
        assert offence in found
    assert "docs" not in found and "<Game>" not in found and found.count("\n") == 6
