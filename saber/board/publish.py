"""Writing the site whole or not at all, and never deleting what saber did not make.

The site is written into a new folder beside ``--out`` and renamed into place when every
file is there; a failure on the way removes that folder (saber made all of it) and leaves
``--out`` as it was. The site's list of files (:data:`MANIFEST`) is how the next build
knows what it may replace: a folder that holds a file the list does not name (or no list,
and anything in it) is refused, and nothing in it is touched. An old site is moved aside
first and only the files its list names are deleted, then the folders they leave empty.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import uuid
from pathlib import Path

from saber.errors import OutputExistsError

MANIFEST = ".saber-board.json"
MANIFEST_FORMAT = "saber-board/1"
SHOWN = 3  # foreign files named in the refusal; past that, counted


def _present(folder: Path) -> set[str]:
    """Every file and link under ``folder`` (relative paths); folders are not files."""
    return {
        str(path.relative_to(folder))
        for path in folder.rglob("*")
        if path.is_symlink() or not path.is_dir()
    }


def _manifest(folder: Path) -> set[str] | None:
    """The files a site saber wrote lists, or None when ``folder`` holds no such list."""
    try:
        found = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(found, dict) or found.get("format") != MANIFEST_FORMAT:
        return None
    files = found.get("files")
    return {str(f) for f in files} if isinstance(files, list) else None


def check_out(out: Path) -> None:
    """Refuse, before any work, a ``--out`` that saber may not replace.

    Raises:
        OutputExistsError: ``out`` is a file, or a folder that holds files saber did not
            write (one line, naming some).
    """
    if not out.exists() and not out.is_symlink():
        return
    if not out.is_dir() or out.is_symlink():
        raise OutputExistsError(f"{out} is not a folder: choose another --out")
    present = _present(out)
    if not present:
        return
    listed = _manifest(out)
    foreign = sorted(present - (listed or set()) - ({MANIFEST} if listed is not None else set()))
    if foreign:
        more = f" and {len(foreign) - SHOWN} more" if len(foreign) > SHOWN else ""
        raise OutputExistsError(
            f"{out} holds files saber board did not write ({', '.join(foreign[:SHOWN])}{more}); "
            "nothing was written: choose a new or empty --out, or move them away"
        )


def publish(files: dict[str, str | bytes], out: Path) -> None:
    """Write ``files`` (path relative to the site -> content) as the site ``out``, whole.

    Raises:
        OutputExistsError: as :func:`check_out` (checked again just before the rename).
        OSError: the files cannot be written; ``out`` is left as it was.
    """
    out = Path(out)
    check_out(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    aside = out.parent / f".{out.name}.building-{uuid.uuid4().hex[:8]}"
    aside.mkdir()
    try:
        for relative, content in files.items():
            path = aside / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        manifest = {"format": MANIFEST_FORMAT, "files": sorted(files)}
        (aside / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        check_out(out)  # a file put there while the site was built
        _swap(aside, out)
    except BaseException:
        shutil.rmtree(aside, ignore_errors=True)  # all of it is ours: made above
        raise


def _swap(aside: Path, out: Path) -> None:
    """Put ``aside`` in the place of ``out``; delete only what the old site listed."""
    if not out.exists():
        os.replace(aside, out)
        return
    listed = _manifest(out)
    if listed is None:  # an empty folder: nothing of anyone's is in it
        out.rmdir()
        os.replace(aside, out)
        return
    old = out.parent / f".{out.name}.old-{uuid.uuid4().hex[:8]}"
    os.replace(out, old)
    os.replace(aside, out)
    for relative in sorted(listed | {MANIFEST}):
        if Path(relative).is_absolute() or ".." in Path(relative).parts:
            continue  # a list edited to point outside the site: not saber's to delete
        with contextlib.suppress(OSError):
            (old / relative).unlink()
    folders = sorted((p for p in old.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts))
    for folder in [*folders, old]:
        with contextlib.suppress(OSError):
            folder.rmdir()  # only when empty: a file someone added stays where it is
