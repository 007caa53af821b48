"""tests/cli mirrors the command line: each `saber` command has its tests in
tests/cli/test_<command>.py, where a reader of the command looks for them."""

from __future__ import annotations

from pathlib import Path

import click

from saber.cli import main

HERE = Path(__file__).parent


def test_every_command_has_its_test_file() -> None:
    assert isinstance(main, click.Group)
    missing = [
        f"tests/cli/test_{command.replace('-', '_')}.py"
        for command in sorted(main.commands)
        if not (HERE / f"test_{command.replace('-', '_')}.py").is_file()
    ]
    assert missing == []
