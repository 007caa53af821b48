"""Helpers of the report tests."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable

import pytest

from saber.reports.model import Report


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


def _external_tool(name: str, *files: str) -> str:
    """The path of program ``name`` (and its TeX ``files``, found by kpsewhich), or a skip.

    A developer's machine may lack Debian's pdflatex or chromium: the test is then skipped
    with the install line. Under CI (``CI=true``, which .ci/run gets) a missing tool is a
    failure, never a skip: .ci/run installs both, and a skip there would hide a broken
    install.
    """
    path = shutil.which(name)
    missing = [] if path else [name]
    if path and files:
        kpsewhich = shutil.which("kpsewhich")
        for file in files:
            found = (
                kpsewhich
                and subprocess.run(
                    [kpsewhich, file], capture_output=True, text=True, check=False
                ).stdout.strip()
            )
            if not found:
                missing.append(file)
    if missing:
        message = (
            f"{', '.join(missing)} not installed (Debian: apt-get install texlive-latex-base "
            "texlive-latex-recommended chromium)"
        )
        if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
            pytest.fail(f"CI: {message}; .ci/run installs them", pytrace=False)
        pytest.skip(message)
    assert path is not None
    return path


@pytest.fixture
def external_tool() -> Callable[..., str]:
    """``external_tool(name, *tex_files)``: the program's path, or a skip (a failure in CI)."""
    return _external_tool


@pytest.fixture(scope="session")
def five_agents_report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    """One run of the user's (Breakout, Q*bert, Pong, 10 episodes each) beside the SABER
    paper's, the random and the PPO references: five agents with short names, published
    means among them (the issue's report of a first hour)."""
    from saber.reports import make_report
    from saber.scoring import merge_tables, read_scores, reference_table

    folder = tmp_path_factory.mktemp("five")
    rows = "agent,game,episode,score\n" + "".join(
        f"my-agent,{game},{e},{base + e}\n"
        for game, base in (("breakout", 12), ("qbert", 500), ("pong", 3))
        for e in range(10)
    )
    (folder / "s.csv").write_text(rows)
    references = ("saber-paper", "saber-random", "saber-ppo")
    table = merge_tables([read_scores(folder / "s.csv"), *map(reference_table, references)])
    return make_report(table, n_resamples=100)
