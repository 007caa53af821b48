"""No ale-py banner on a ``saber`` command's output.

:func:`silence_ale_banner`, called before any command, sets ale-py's logger mode the moment
ale-py is imported, whoever imports it, without importing it itself.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any


def _quiet(ale_py: ModuleType) -> None:
    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)


class _QuietLoader(importlib.abc.Loader):
    """ale-py's own loader, then the logger mode set; everything else is the inner loader's
    (its resource reader: ale-py finds its ROMs through it)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._inner.create_module(spec)  # type: ignore[no-any-return]

    def exec_module(self, module: ModuleType) -> None:
        self._inner.exec_module(module)
        _quiet(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _WhenAleImports(importlib.abc.MetaPathFinder):
    """Finds ``ale_py`` as the other finders do, with :class:`_QuietLoader` around its loader."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "ale_py":
            return None
        sys.meta_path.remove(self)  # once: the finders below find the real module
        import importlib.util

        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _QuietLoader(spec.loader)
        return spec


def silence_ale_banner() -> None:
    """Set ale-py's logger mode to ``Error`` in this process: now if ale-py is imported,
    else as soon as it is. Worker processes set it themselves
    (:func:`saber.harness.runner.quiet_ale`)."""
    if "ale_py" in sys.modules:
        _quiet(sys.modules["ale_py"])
    elif not any(isinstance(finder, _WhenAleImports) for finder in sys.meta_path):
        sys.meta_path.insert(0, _WhenAleImports())
