"""docs/cli-and-api.md names every option of every `saber` command: the table of the CLI's
words and the Python API's cannot fall behind a new option."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from saber.cli import main

PAGE = Path(__file__).resolve().parents[2] / "docs" / "cli-and-api.md"


def _options(command: click.Command) -> list[str]:
    options = []
    for parameter in command.params:
        if isinstance(parameter, click.Option):
            options.append(parameter.opts[0])
    return options


def _section_of(command: str, text: str) -> str:
    """The text of the heading that names `saber <command>` (a heading may name several)."""
    sections = re.split(r"\n(?=## )", text)
    named = [s for s in sections if re.search(rf"`saber {command}`", s.split("\n", 1)[0])]
    assert named, f"docs/cli-and-api.md has no section for `saber {command}`"
    return named[0]


@pytest.mark.parametrize("command", sorted(main.commands))  # type: ignore[attr-defined]
def test_every_option_of_every_command_is_in_the_table(command: str) -> None:
    section = _section_of(command, PAGE.read_text())
    listed = set(re.findall(r"`(--[a-z][a-z0-9-]*)", section))
    missing = [o for o in _options(main.commands[command]) if o not in listed]  # type: ignore[attr-defined]
    assert missing == [], f"`saber {command}` options missing from docs/cli-and-api.md: {missing}"
