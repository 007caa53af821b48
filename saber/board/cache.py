"""The board's cache: what a build computed (verifications, reports, report pages), kept
under a key made of the content it was computed from, never of names or dates
(docs/board.md, "A second build is quick")."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from saber.check.verdicts import cache_dir
from saber.rundir.durable import write_atomically
from saber.version import __version__


def default_cache_dir() -> Path | None:
    """The board's cache folder (see the module docstring); None: keep nothing."""
    root = cache_dir()
    return None if root is None else root / "board"


def digest(*parts: Any) -> str:
    """SHA-256 (hex) of ``parts`` as canonical JSON, with saber's version: what saber
    computes may change between versions, so a value of another version is not reused."""
    text = json.dumps([__version__, *parts], sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class Cache:
    """Values by kind and key: JSON documents (``get``/``put``), text (``get_text``/
    ``put_text``) and bytes (``get_bytes``/``put_bytes``) in ``folder/<kind>/<key>``;
    ``folder`` None keeps nothing.

    Attributes:
        hits, misses: lookups that found a value, and that did not (for the build's summary).
    """

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self.hits = 0
        self.misses = 0

    def _path(self, kind: str, key: str, suffix: str) -> Path | None:
        return None if self.folder is None else self.folder / kind / f"{key}{suffix}"

    def get_bytes(self, kind: str, key: str, suffix: str = "") -> bytes | None:
        """The bytes kept under ``key``, or None."""
        path = self._path(kind, key, suffix)
        try:
            data = None if path is None else path.read_bytes()
        except OSError:
            data = None
        if data is None:
            self.misses += 1
        else:
            self.hits += 1
        return data

    def get_text(self, kind: str, key: str, suffix: str = ".txt") -> str | None:
        """The text kept under ``key``, or None."""
        data = self.get_bytes(kind, key, suffix)
        try:
            return None if data is None else data.decode("utf-8")
        except UnicodeDecodeError:
            self.hits -= 1
            self.misses += 1
            return None

    def put_bytes(self, kind: str, key: str, data: str | bytes, suffix: str = "") -> None:
        """Keep ``data`` (text as UTF-8) under ``key``; a cache that cannot be written is
        left alone."""
        path = self._path(kind, key, suffix)
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(path, data)
        except OSError:
            pass  # a read-only or full disk: the next build computes it again

    def put_text(self, kind: str, key: str, text: str, suffix: str = ".txt") -> None:
        """Keep ``text`` under ``key``."""
        self.put_bytes(kind, key, text, suffix)

    def get(self, kind: str, key: str) -> Any | None:
        """The JSON value kept under ``key``, or None."""
        text = self.get_text(kind, key, ".json")
        if text is None:
            return None
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            self.hits -= 1
            self.misses += 1
            return None

    def put(self, kind: str, key: str, value: Any) -> None:
        """Keep the JSON value ``value`` under ``key``."""
        self.put_text(kind, key, json.dumps(value, sort_keys=True), ".json")
