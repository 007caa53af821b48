"""A run directory as a Minari dataset (Farama's offline-RL format; extra ``minari``).

One dataset per game, its episodes re-simulated from their replays, written whole or
absent by a process of its own (:mod:`saber.replay.minari_writer`); docs/verify.md
describes the datasets and how they are written.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from saber.errors import OutputExistsError, SaberError, StoreWriteError, os_error_message
from saber.games import get_game
from saber.rundir.reading import read_run_file

MINARI_EXTRA_HINT = (
    'pip install "saber-ale[minari]" (Minari, h5py and Pillow; from a checkout, pip install '
    '".[minari]")'
)


def _require_minari() -> Any:
    try:
        import h5py  # noqa: F401  (Minari's default storage)
        import minari
        import PIL  # noqa: F401  (Minari's HDF5 storage imports it; Minari does not require it)
        from minari.data_collector import EpisodeBuffer  # noqa: F401
    except ImportError:
        raise SaberError(
            f"Exporting to Minari needs the minari extra: {MINARI_EXTRA_HINT}"
        ) from None
    return minari


def export_minari(
    directory: str | Path,
    dataset_id: str | None = None,
    games: list[str] | None = None,
    author: str | None = None,
    replace: bool = False,
) -> list[str]:
    """Write the finished episodes of a run directory as Minari datasets, one per game.

    Args:
        directory: the run directory (``saber eval --out``), recorded with replays.
        dataset_id: the id of the dataset when the run has one game (or ``games`` names
            one); None: ``saber/<game>/<run or agent>-v0``.
        games: the games to export (any spelling); None: every game of the run.
        author: the dataset's author, in its metadata.
        replace: delete a dataset of the same id first (``saber export --force``);
            without it, an existing dataset is an error and nothing is written.

    Returns:
        The ids of the datasets written (``minari.load_dataset(id)`` reads one).

    A dataset is written whole or not at all: one that fails half-way (a damaged replay)
    is deleted, so the same call can be made again once the cause is mended.

    Raises:
        SaberError: Minari is not installed (naming the extra), no ``run.json``, a game
            the run did not play, a malformed or taken dataset id, a run without replays
            (or a damaged one), or several games for one ``dataset_id``.
    """
    minari = _require_minari()
    directory = Path(directory)
    run = _read_run(directory)
    wanted = _wanted_games(directory, run, games, dataset_id)
    name = re.sub(r"[^A-Za-z0-9_.]+", "_", run.run or run.agent).strip("_") or "run"
    root = _dataset_path("")  # Minari's folder of datasets (made if missing)
    _remove_abandoned_staging(root)
    written: list[str] = []
    for game in wanted:
        identifier = dataset_id or f"saber/{game}/{name}-v0"
        _check_dataset_id(minari, identifier, replace)
        staging = root / f"{_STAGING}{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            try:
                staging.mkdir()
            except OSError as error:  # named as the dataset: the staging folder is ours
                raise OSError(error.errno, error.strerror, str(root / identifier)) from None
            _write_aside(directory, game, identifier, author, staging, root)
            _move_into_place(minari, staging, root, identifier, replace)
        finally:
            shutil.rmtree(staging, ignore_errors=True)  # whole or absent
        written.append(identifier)
    return written


_STAGING = ".saber-export-"  # hidden: Minari lists no dataset in it


def _remove_abandoned_staging(root: Path) -> None:
    """Remove the staging folders of exports killed outright (their process is gone)."""
    for folder in root.glob(f"{_STAGING}*"):
        pid = folder.name[len(_STAGING) :].split("-")[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists (this machine's)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's: alive
        return True
    return True


def _write_aside(
    directory: Path, game: str, identifier: str, author: str | None, staging: Path, root: Path
) -> None:
    """Write dataset ``identifier`` under ``staging`` in a process of its own, which reads
    it back; a SaberError (one line) if it could not."""
    final = root / identifier
    task = {"directory": str(directory.resolve()), "game": game, "identifier": identifier,
            "author": author, "final": str(final)}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "saber.replay.minari_writer", json.dumps(task)],
        env={**os.environ, "MINARI_DATASETS_PATH": str(staging)},
        capture_output=True,
        text=True,
        check=False,
    )
    lines = done.stdout.strip().splitlines()
    answer = json.loads(lines[-1]) if done.returncode == 0 and lines else None
    if answer is not None and "error" not in answer:
        return
    if answer is not None:
        raise (StoreWriteError if answer.get("unwritten") else SaberError)(answer["error"])
    free = shutil.disk_usage(root).free
    if done.returncode < 0:
        try:
            cause = f"killed by {signal.Signals(-done.returncode).name}"
        except ValueError:
            cause = f"killed by signal {-done.returncode}"
        raise StoreWriteError(
            f"Cannot write {final}: the HDF5 writer crashed ({cause}), as h5py does on a full "
            f"disk ({free:,} bytes free there); nothing was written: free some space and run "
            "the same command again"
        )
    said = done.stderr.strip().splitlines()
    raise StoreWriteError(
        f"Cannot write {final}: the dataset writer failed (exit code {done.returncode}"
        + (f": {said[-1]}" if said else "")
        + "); nothing was written"
    )


def _move_into_place(
    minari: Any, staging: Path, root: Path, identifier: str, replace: bool
) -> None:
    """Rename the staged dataset to its place (after an fsync of every file), with the
    namespace metadata Minari keeps beside it; an existing dataset is deleted first when
    ``replace``."""
    staged, final = staging / identifier, root / identifier
    for path in sorted(staged.rglob("*")):
        if path.is_file():
            _fsync(path)
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        for level in [*reversed(Path(identifier).parents)][1:]:  # the namespaces, outermost first
            metadata = staging / level / "namespace_metadata.json"
            if metadata.is_file() and not (root / level / metadata.name).exists():
                os.replace(metadata, root / level / metadata.name)
        if replace and final.exists():
            with contextlib.redirect_stdout(io.StringIO()):  # Minari prints "deleted!"
                minari.delete_dataset(identifier)
        os.rename(staged, final)
        _fsync(final.parent)
    except OSError as error:
        raise StoreWriteError(os_error_message(error)) from None


def _fsync(path: Path) -> None:
    """Make ``path`` (a file, or a directory's renames) durable."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _read_run(directory: Path) -> Any:
    """The run file of ``directory``; a SaberError where it has none."""
    try:
        return read_run_file(directory)
    except FileNotFoundError:
        raise SaberError(
            f"{directory}: no run.json, so this is not a run directory of saber eval"
        ) from None


def _wanted_games(
    directory: Path, run: Any, games: list[str] | None, dataset_id: str | None
) -> list[str]:
    """The ALE ids of the games to export, checked against the run and ``dataset_id``
    before any work (a SaberError saying what is wrong)."""
    from minari.dataset.minari_dataset import parse_dataset_id

    wanted = [get_game(game).ale_id for game in (games or run.games)]
    absent = [game for game in wanted if game not in run.games]
    if absent:
        raise SaberError(
            f"{directory}: the run did not play {', '.join(absent)} (its games: "
            f"{', '.join(run.games)})"
        )
    if dataset_id is not None and len(wanted) != 1:
        raise SaberError(
            f"One dataset id for {len(wanted)} games: pass games=[one game], or no dataset_id "
            "(then each game gets saber/<game>/<name>-v0)"
        )
    if dataset_id is not None:
        try:  # before any work: Minari leaves a malformed id's folder behind otherwise
            parse_dataset_id(dataset_id)
        except ValueError:
            raise SaberError(
                f"Malformed dataset id {dataset_id!r}: Minari ids are "
                "namespace/name-v<version> (the namespace optional), e.g. saber/breakout/mine-v0"
            ) from None
    return wanted


def _check_dataset_id(minari: Any, identifier: str, replace: bool) -> None:
    """An OutputExistsError for an existing dataset ``identifier`` without ``replace``
    (with it, the dataset is replaced once the new one is whole: _move_into_place)."""
    if replace or identifier not in minari.list_local_datasets():
        return
    raise OutputExistsError(
        f"A Minari dataset {identifier!r} exists already; pass --force (replace=True) "
        f"to replace it, delete it (minari.delete_dataset({identifier!r})) or choose "
        "another dataset_id"
    )


def _dataset_path(identifier: str) -> Path:
    """The folder of Minari dataset ``identifier`` (under MINARI_DATASETS_PATH)."""
    from minari.storage import get_dataset_path

    return Path(get_dataset_path(identifier))
