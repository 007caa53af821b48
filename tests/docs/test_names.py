"""Every ``saber.x.y`` name and every ``saber <command> --flag`` that the README and the
docs show exists: a renamed or removed name fails here, not in a reader's session.

Names of modules that need an optional dependency missing here (JAX, PyTorch, ...) are
checked in the module's source (a top-level definition, assignment or import), so the
default suite checks them too without installing the extras.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import warnings
from functools import cache
from pathlib import Path

import click
import pytest

from saber.cli import main

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# A dotted name that starts with the package: not part of a path (saber/x.py), a file name
# (saber.egg-info) or a longer word.
NAME = re.compile(r"(?<![\w/.-])saber(?:\.[A-Za-z_]\w*)+")
FROM_IMPORT = re.compile(r"from (saber(?:\.\w+)*) import (?:\(([\w,\s]+)\)|([\w, ]+))")
CODE = re.compile(r"```[^\n]*\n(.*?)```|`([^`\n]+)`", re.DOTALL)
# `saber <command> ...` at the start of a shell command inside code; the command line runs
# to the end of the line (with backslash continuations) or to a shell separator.
COMMAND = re.compile(
    r"(?:^[ \t]*(?:\$[ \t]+)?|(?:&&|\||;|\$\()[ \t]*)saber ([a-z][a-z-]*)((?:[^\n|;&#`]|\\\n)*)",
    re.MULTILINE,
)


def _relative(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _shown_names() -> list[tuple[str, str]]:
    shown = set()
    for document in DOCUMENTS:
        text = document.read_text()
        shown |= {(_relative(document), name) for name in NAME.findall(text)}
        for module, *imported in FROM_IMPORT.findall(text):
            for item in "".join(imported).split(","):
                name = item.split(" as ")[0].strip()  # `import x as y` shows x
                if name:
                    shown.add((_relative(document), f"{module}.{name}"))
    return sorted(shown)


def _shown_commands() -> list[tuple[str, str, tuple[str, ...]]]:
    shown = set()
    for document in DOCUMENTS:
        for block, span in CODE.findall(document.read_text()):
            for command, rest in COMMAND.findall(block or span):
                flags = tuple(sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", rest))))
                shown.add((_relative(document), command, flags))
    return sorted(shown)


@cache
def _defined_in_source(module: str) -> set[str]:
    """The top-level names a module's source defines, assigns or imports (no import)."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin, module
    tree = ast.parse(Path(spec.origin).read_text())
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            names |= {e.value for e in node.value.elts}  # type: ignore[attr-defined]
    return names


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    # The longest importable module prefix, then attributes.
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        try:
            spec = importlib.util.find_spec(module)
        except ModuleNotFoundError:
            spec = None
        if spec is None:
            continue
        try:
            with warnings.catch_warnings():  # a deprecated home the docs describe as such
                warnings.simplefilter("ignore", DeprecationWarning)
                value = importlib.import_module(module)
        except ImportError as error:  # an optional dependency: read the source instead
            assert error.name and not error.name.startswith("saber"), error
            rest = parts[cut:]
            return not rest or rest[0] in _defined_in_source(module)
        for attribute in parts[cut:]:
            if not hasattr(value, attribute):
                return False
            value = getattr(value, attribute)
        return True
    return False


@pytest.mark.parametrize(("document", "name"), _shown_names(), ids=lambda v: str(v))
def test_every_name_the_docs_show_exists(document: str, name: str) -> None:
    assert _resolves(name), f"{document} shows {name}, which saber does not have"


@pytest.mark.parametrize(("document", "command", "flags"), _shown_commands(), ids=lambda v: str(v))
def test_every_command_and_flag_the_docs_show_exists(
    document: str, command: str, flags: tuple[str, ...]
) -> None:
    assert isinstance(main, click.Group)
    assert command in main.commands, f"{document} shows `saber {command}`, which is no command"
    known = {"--help"}
    for parameter in main.commands[command].params:
        known |= {o for o in [*parameter.opts, *parameter.secondary_opts] if o.startswith("--")}
    unknown = sorted(set(flags) - known)
    assert not unknown, f"{document} shows `saber {command}` with {unknown}, which it does not take"


def test_the_docs_show_names_and_commands_at_all() -> None:
    # The extraction itself: a regex that stopped matching would pass every test above.
    names = {name for _, name in _shown_names()}
    assert {"saber.evaluate", "saber.check", "saber.jax.make"} <= names
    commands = {(command, flags) for _, command, flags in _shown_commands()}
    assert any(command == "eval" and "--agent" in flags for command, flags in commands)
