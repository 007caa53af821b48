"""No module of saber imports another module's private names: a helper that several
modules need has one public home inside the package (an internal module, out of every
``__all__``), so that a module's underscore names are its own to change.

Every ``from saber... import _name`` and every import of an underscore module
(``saber.board._site``), at module level or inside a function, is a finding; a module's
own names (``from saber.x import _y`` inside saber/x.py) are its own.
"""

from __future__ import annotations

import ast
from pathlib import Path

SABER = Path(__file__).parents[1] / "saber"

# Imports that their modules' owners are rewriting now; each goes when its module is
# rewritten, and a stale entry fails below. Empty when every module keeps the rule.
KNOWN: set[tuple[str, str]] = set()


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _module_of(path: Path) -> str:
    if not path.is_relative_to(SABER):
        return ""
    parts = path.relative_to(SABER.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _private_imports(path: Path) -> set[tuple[str, str]]:
    """``(module, name)`` of each private name or module that ``path`` imports from
    another module of saber."""
    own = _module_of(path)
    found: set[tuple[str, str]] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module != "saber" and not node.module.startswith("saber."):
                continue
            if any(_private(part) for part in node.module.split(".")):
                found.add((node.module, "*"))
            if node.module != own:
                found |= {(node.module, a.name) for a in node.names if _private(a.name)}
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "saber" and any(_private(part) for part in parts):
                    found.add((alias.name, "*"))
    return found


def _offenders() -> dict[str, set[tuple[str, str]]]:
    offenders = {}
    for path in sorted(SABER.rglob("*.py")):
        found = _private_imports(path)
        if found:
            offenders[str(path.relative_to(SABER.parent))] = found
    return offenders


def test_no_module_imports_another_modules_private_names() -> None:
    wrong = {path: sorted(found - KNOWN) for path, found in _offenders().items() if found - KNOWN}
    assert not wrong, (
        "private names imported from another module (give the helper a public home):\n"
        + "\n".join(f"{path}: {found}" for path, found in wrong.items())
    )


def test_the_known_exceptions_are_still_there() -> None:
    found = set().union(*_offenders().values())
    assert not KNOWN - found, f"no longer imported, remove from KNOWN: {sorted(KNOWN - found)}"


def test_the_check_finds_each_form(tmp_path: Path) -> None:
    module = tmp_path / "example.py"
    module.write_text(
        "from saber.envs.vector import SaberVectorEnv, _helper\n"
        "import saber.board._site\n"
        "def f():\n"
        "    from saber.jax._inner import thing\n"
        "from saber.envs import make_env\n",
        encoding="utf-8",
    )
    assert _private_imports(module) == {
        ("saber.envs.vector", "_helper"),
        ("saber.board._site", "*"),
        ("saber.jax._inner", "*"),
    }
