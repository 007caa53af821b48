"""The public names of saber: one home and one meaning each, few of them, and the rest private.

A public name is one that a public module lists in its ``__all__``. The public modules
are :data:`PUBLIC_MODULES` and no other: every other module of saber is internal, so it
has no ``__all__`` or a name that starts with an underscore. A package that re-exports
its own modules' names is one home; the top-level ``saber`` re-exports the few names a
user needs first (:data:`FIRST_NEEDED`), each the very object of its home.

The ``__all__`` lists are read from the source, so modules that need an optional
dependency (JAX, Stable-Baselines3, matplotlib) are checked without it.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest

SABER = Path(__file__).resolve().parents[1] / "saber"
API_PAGE = SABER.parent / "docs" / "api" / "index.md"

# The modules whose ``__all__`` makes names public. A new one is a decision: add it here,
# and its names to the API page (docs/api.md).
PUBLIC_MODULES = (
    "saber",
    "saber.agents",
    "saber.board",
    "saber.check",
    "saber.cli",
    "saber.envpool",
    "saber.envs",
    "saber.games",
    "saber.harness",
    "saber.jax",
    "saber.protocol",
    "saber.replay",
    "saber.reports",
    "saber.reports.plots",
    "saber.rundir",
    "saber.scoring",
    "saber.training",
    "saber.training.sb3",
    "saber.training.zoo",
)
# The top level's re-exports: name -> its home (the errors' home is the top level itself).
FIRST_NEEDED = {
    "EpisodeRecord": "saber.protocol",
    "SaberSettings": "saber.protocol",
    "GameInfo": "saber.games",
    "get_game": "saber.games",
    "resolve_games": "saber.games",
    "SaberVectorEnv": "saber.envs",
    "make_env": "saber.envs",
    "saber_settings": "saber.envs",
    "check": "saber.check",
    "evaluate": "saber.harness",
}
# One name, two things, on purpose: saber.envpool mirrors envpool's API (``envpool.make``)
# and saber.jax gymnax's (``gymnax.make``), so that code written for either runs as it is.
MIRRORED = {"make": {"saber.envpool", "saber.jax"}}
MOST_NAMES = 150


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(SABER.parent).with_suffix("").parts).removesuffix(".__init__")


@cache
def _exports() -> dict[str, list[str]]:
    """Module -> its ``__all__``, for every module of saber that has one."""
    exports = {}
    for path in sorted(SABER.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                    assert node.value is not None
                    exports[_module_name(path)] = list(ast.literal_eval(node.value))
    return exports


def _homes() -> dict[str, list[str]]:
    """Public name -> the public modules that export it."""
    homes: dict[str, list[str]] = defaultdict(list)
    for module, names in _exports().items():
        if module in PUBLIC_MODULES:
            for name in names:
                homes[name].append(module)
    return homes


def test_only_the_public_modules_have_an_all() -> None:
    private = [
        module
        for module in _exports()
        if module not in PUBLIC_MODULES and not any(p.startswith("_") for p in module.split("."))
    ]
    assert private == [], (
        f"internal modules with an __all__ (drop it, or make it public): {private}"
    )


def test_the_public_modules_have_an_all() -> None:
    assert sorted(set(PUBLIC_MODULES) - set(_exports())) == []


def test_each_public_name_has_one_home() -> None:
    """Exported by one public module, or by that one and the top level (a re-export)."""
    shared = {}
    for name, modules in _homes().items():
        homes = [m for m in modules if m != "saber"] if name in FIRST_NEEDED else modules
        if len(homes) > 1 and set(homes) != MIRRORED.get(name):
            shared[name] = homes
    assert shared == {}, f"names with more than one home: {shared}"


def test_the_top_level_reexports_only_first_needed_names_from_their_homes() -> None:
    for name, home in FIRST_NEEDED.items():
        assert name in _exports()["saber"], name
        assert name in _exports()[home], f"{name}'s home {home} does not export it"


def test_the_top_level_names_are_their_homes_objects() -> None:
    """A re-export is the same object as its home's, not a second thing of one name."""
    saber = importlib.import_module("saber")
    for name, home in FIRST_NEEDED.items():
        if name == "check":
            # saber.check is the probe's package made callable: saber.check(env) is
            # saber.check.check(env), one thing under its one name.
            assert saber.check is importlib.import_module("saber.check") and callable(saber.check)
            continue
        assert getattr(saber, name) is getattr(importlib.import_module(home), name), name


def test_every_exported_name_is_defined() -> None:
    """Each name in a public ``__all__`` is defined, assigned or imported by its module."""
    missing = {}
    for module in PUBLIC_MODULES:
        path = SABER.parent / module.replace(".", "/")
        source = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        defined = set()
        tree = ast.parse(source.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                defined.add(node.name)
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                defined |= {t.id for t in targets if isinstance(t, ast.Name)}
        # Imports at the top and under ``if TYPE_CHECKING:`` (a lazy package's names).
        for node in [*tree.body, *(n for i in tree.body if isinstance(i, ast.If) for n in i.body)]:
            if isinstance(node, ast.ImportFrom | ast.Import):
                defined |= {(a.asname or a.name).split(".")[0] for a in node.names}
        lazy = {"check"} if module == "saber" else set()  # the top level's lazy names
        lazy |= set(FIRST_NEEDED) if module == "saber" else set()
        absent = sorted(set(_exports()[module]) - defined - lazy)
        if absent:
            missing[module] = absent
    assert missing == {}


def test_at_most_150_public_names() -> None:
    names = sorted(_homes())
    assert len(names) <= MOST_NAMES, f"{len(names)} public names: {names}"


@pytest.mark.parametrize("module", ["saber.harness", "saber.scoring", "saber.envs"])
def test_a_second_home_fails_here(module: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above can fail: a name exported twice is found."""
    exports = dict(_exports())
    exports[module] = [*exports[module], "SaberSettings"]
    monkeypatch.setattr(f"{__name__}._exports", lambda: exports)
    with pytest.raises(AssertionError, match="SaberSettings"):
        test_each_public_name_has_one_home()


def test_the_api_page_documents_each_public_module_once_and_the_top_level_without_its_reexports() -> (
    None
):
    page = API_PAGE.read_text(encoding="utf-8")
    documented = re.findall(r"^\.\. automodule:: (\S+)$", page, re.M)
    assert sorted(documented) == sorted(PUBLIC_MODULES)
    (excluded,) = re.findall(r"automodule:: saber\n   :members:\n   :exclude-members: (.*)", page)
    assert sorted(excluded.split(", ")) == sorted(FIRST_NEEDED)


def _doc_comment_in(module: str, name: str) -> bool:
    """``module`` assigns ``name`` under a ``#:`` doc comment (``:members:`` shows it)."""
    path = SABER.parent / module.replace(".", "/")
    source = (path / "__init__.py" if path.is_dir() else path.with_suffix(".py")).read_text()
    return re.search(rf"^#:.*\n{name}\b[^\n]*=", source, re.M) is not None


def test_the_api_page_shows_every_public_name() -> None:
    """autodoc's ``:members:`` shows the classes and functions of ``__all__`` that have a
    docstring, and the constants their module assigns under a ``#:`` doc comment; a
    constant re-exported from another module, an alias or an instance needs an
    ``autodata`` line of its own (autodoc would show it twice otherwise)."""
    page = API_PAGE.read_text(encoding="utf-8")
    listed = set(re.findall(r"^\.\. autodata:: (\S+)$", page, re.M))
    unshown = []
    for module in PUBLIC_MODULES:
        try:
            namespace = importlib.import_module(module)
        except ImportError:  # an extra missing here (JAX): the docs build installs it
            continue
        for name in _exports()[module]:
            if module == "saber" and name in FIRST_NEEDED:
                continue
            value = getattr(namespace, name)
            if isinstance(value, type) or inspect.isfunction(inspect.unwrap(value)):
                if not inspect.getdoc(value):
                    unshown.append(f"{module}.{name} (no docstring)")
            elif f"{module}.{name}" not in listed and not _doc_comment_in(module, name):
                unshown.append(f"{module}.{name} (no autodata line nor #: doc comment)")
    assert unshown == []
