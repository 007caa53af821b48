"""The version of saber, in a module of its own so that any layer can read it without
importing the top package (which would run up the layers)."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.3.0"
