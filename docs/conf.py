"""Sphinx configuration of saber's documentation site.

Built from the Markdown user guide in this folder (MyST) and the package's docstrings
(autodoc, Google style through napoleon), with warnings as errors in CI:

    pip install ".[docs]" && sphinx-build -W --keep-going -b html docs build/site

Sphinx and MyST because Gymnasium's and Stable-Baselines3's sites are built with Sphinx:
the ecosystem's readers and contributors know it, and autodoc reads the docstrings that
the doctests already run.
"""

from __future__ import annotations

from pathlib import Path

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
    """The project's own board (``saber board --shipped``), built beside the pages so that
    docs/board.md links it (``board/index.html``): the site's extra files."""
    import tempfile

    from saber.board import build_board

    folder = Path(tempfile.mkdtemp(prefix="saber-docs-board-"))
    build_board([], folder / "board", shipped=True, workers=0)  # no processes under Sphinx
    return [str(folder)]


html_extra_path = _board()
