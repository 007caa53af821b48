"""Sphinx configuration of saber's documentation site.

Built from the Markdown user guide in this folder (MyST) and the package's docstrings
(autodoc, Google style through napoleon), with warnings as errors in CI:

    pip install ".[docs]" && sphinx-build -W --keep-going -b html docs build/site

Sphinx and MyST because Gymnasium's and Stable-Baselines3's sites are built with Sphinx:
the ecosystem's readers and contributors know it, and autodoc reads the docstrings that
the doctests already run.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
from pathlib import Path
from typing import Any

import saber

project = "saber"
author = "saber developers"
release = saber.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
]
root_doc = "index"
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
html_theme = "furo"
html_title = f"saber {release}"
myst_heading_anchors = 4  # the guide links to sections by their GitHub-style anchors
autodoc_member_order = "bysource"
autodoc_typehints = "description"
napoleon_google_docstring = True
napoleon_numpy_docstring = False
nitpicky = False

# The guide links to files of the repository outside docs/ (../examples, ../roms_license.md)
# for readers on GitHub; on the site they cannot be pages, so such a link keeps its text and
# loses its target. Only paths that exist are let through: a link to a missing file still
# fails the build (MyST reads nitpick_ignore for its own references).
_repository = Path(__file__).resolve().parent.parent
nitpick_ignore = [
    ("myst", target)
    for entry in _repository.iterdir()
    if entry.name != "docs" and not entry.name.startswith(".")
    for target in (f"../{entry.name}", str(entry.with_suffix("")))
]


def _board() -> list[str]:
    """The project's own board (saber.board.shipped: the shipped entries and the
    repository's runs, a seeded sample of each verified by replay), built beside the pages
    so that docs/board.md links it (``board/index.html``): the site's extra files."""
    import os
    import tempfile

    from saber.board import build_board
    from saber.board.shipped import SAMPLE, project_runs

    folder = Path(tempfile.mkdtemp(prefix="saber-docs-board-"))
    here = Path.cwd()
    os.chdir(_repository)  # the runs named as in the repository: baselines/evals/...
    try:
        runs = project_runs(_repository)
        # No processes under Sphinx: workers=0.
        build_board(runs, folder / "board", shipped=True, sample=SAMPLE, workers=0)
    finally:
        os.chdir(here)
    return [str(folder)]


html_extra_path = _board()


def _defining_module(module: str, name: str) -> str:
    """The module that assigns ``name``, following ``from x import name`` from ``module``
    (a package re-exports its modules' constants; their doc comments are where they are
    assigned)."""
    for _ in range(8):
        spec = importlib.util.find_spec(module)
        if spec is None or spec.origin is None:
            return module
        tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
        source = next(
            (
                node.module
                for node in tree.body
                if isinstance(node, ast.ImportFrom)
                and node.module
                and any((alias.asname or alias.name) == name for alias in node.names)
            ),
            None,
        )
        if source is None:
            return module
        module = source
    return module


def _data_docstring(
    app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    """A public constant shows its ``#:`` doc comment (or a command its help), never the
    docstring of its type (dict's, int's), which autodoc takes for an instance's own."""
    if what != "data":
        return
    from sphinx.pycode import ModuleAnalyzer

    module, _, attribute = name.rpartition(".")
    home = _defining_module(module, attribute)
    comment = ModuleAnalyzer.for_module(home).find_attr_docs().get(("", attribute))
    if comment:
        lines[:] = list(comment)
    elif isinstance(getattr(obj, "help", None), str):
        lines[:] = inspect.cleandoc(obj.help).splitlines()
    elif not isinstance(obj, type) and inspect.getdoc(type(obj)) == "\n".join(lines).strip():
        lines[:] = []


def setup(app: Any) -> None:
    app.connect("autodoc-process-docstring", _data_docstring)
