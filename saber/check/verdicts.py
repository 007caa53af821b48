"""Passed quick-probe verdicts kept on disk, so that ``saber eval`` probes an env stack once.

A pass is kept under a key of everything the verdict depends on (saber's source, the
libraries, the Python, the settings); a failure never is. docs/check.md gives the key,
the folder (``$SABER_CACHE_DIR``) and how to turn it off.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import platform
import sys
import time
from pathlib import Path

from saber.rundir.durable import write_atomically
from saber.version import installed_version

# The names OpenCV (cv2) is installed under, in the order looked up.
_OPENCV = (
    "opencv-python-headless",
    "opencv-python",
    "opencv-contrib-python-headless",
    "opencv-contrib-python",
)

_PACKAGE = Path(__file__).resolve().parent.parent  # saber/
_OFF = "off"


def cache_dir() -> Path | None:
    """The folder of kept verdicts; None when ``SABER_CACHE_DIR=off``."""
    chosen = os.environ.get("SABER_CACHE_DIR")
    if chosen == _OFF:
        return None
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "saber"


@functools.cache
def _source_digest() -> str:
    """SHA-256 of every ``.py`` file of the installed saber package (names and bytes):
    about 3 ms for its hundred files."""
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE.rglob("*.py")):
        digest.update(str(path.relative_to(_PACKAGE)).encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def probe_key(game: str, options: str) -> str | None:
    """The key of a quick probe of ``make_env(game, **json.loads(options))``; None when
    its verdict must not be kept (``ALE_ROMS_DIR`` set, or ``SABER_CACHE_DIR=off``)."""
    if "ALE_ROMS_DIR" in os.environ or cache_dir() is None:
        return None
    inputs = {
        "saber_source": _source_digest(),
        # From the libraries' metadata, without importing them (saber.version).
        "ale_py": installed_version("ale_py", "ale-py"),
        "numpy": installed_version("numpy"),
        "gymnasium": installed_version("gymnasium"),
        "opencv": installed_version("cv2", *_OPENCV),
        "python": sys.version,
        "machine": platform.machine(),
        "game": game,
        "options": options,
    }
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:32]


def _path(key: str) -> Path | None:
    folder = cache_dir()
    return None if folder is None else folder / f"quick-probe-{key}.json"


def was_passed(key: str | None) -> bool:
    """Whether a pass was kept under ``key`` (an unreadable or foreign file: no)."""
    path = None if key is None else _path(key)
    if path is None:
        return False
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(kept, dict) and kept.get("key") == key and kept.get("verdict") == "passed"


def remember_pass(key: str | None) -> None:
    """Keep a pass under ``key``, whole or not at all (written aside, then renamed)."""
    path = None if key is None else _path(key)
    if path is None:
        return
    record = {
        "key": key,
        "verdict": "passed",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    with contextlib.suppress(OSError):  # a read-only home: probe every time, say nothing
        path.parent.mkdir(parents=True, exist_ok=True)
        # Two runs keeping the same key at once share the temporary file and write records
        # that differ only in their time; a rename that fails then only means that run
        # did not keep it, and a reader checks the key and the verdict alone.
        write_atomically(path, json.dumps(record))
