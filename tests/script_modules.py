"""Loading a script of the repository (scripts/, benchmarks/) as a module, for its tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest


def load_script(name: str, path: Path, monkeypatch: pytest.MonkeyPatch | None = None) -> ModuleType:
    """The module of the file at ``path``, registered as ``name`` (dataclasses and the
    like look their module up in ``sys.modules``): for good, or with ``monkeypatch``
    until the end of the test."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    if monkeypatch is None:
        sys.modules[name] = module
    else:
        monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module
