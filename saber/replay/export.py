"""A run directory as a Minari dataset (Farama's offline-RL format; extra ``minari``).

Each game of the run becomes one Minari dataset, ``saber/<game>/<name>-v0`` by default
(``<name>``: the run name, else the agent's), stored where Minari keeps its datasets
(``MINARI_DATASETS_PATH``, by default ``~/.minari/datasets``). Its episodes are the run's
finished episodes, re-simulated from their replays (:mod:`saber.replay.simulate`): the
observations ``uint8`` (4, 84, 84) the agent saw (one more than actions: the first one
after the reset), the actions, the rewards (raw points, as the run's settings give them)
and the terminations and truncations; each episode's ``seed`` is the episode's seed, and
the dataset's env spec is ``SABER/<Game>`` with the run's settings, so
``dataset.recover_environment()`` gives the env that played it. Episodes are written one
at a time (an episode's observations are held in memory while it is written: 28 KB per
step).
"""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from saber.errors import OutputExistsError, SaberError
from saber.games import get_game
from saber.protocol.reading import read_run_file
from saber.replay.dataset import recorded_episodes
from saber.replay.simulate import replay_settings

__all__ = ["MINARI_EXTRA_HINT", "export_minari"]

MINARI_EXTRA_HINT = (
    'pip install "saber-ale[minari]" (Minari and h5py; from a checkout, pip install ".[minari]")'
)


def _require_minari() -> Any:
    try:
        import h5py  # noqa: F401  (Minari's default storage)
        import minari
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
    from minari.data_collector import EpisodeBuffer

    directory = Path(directory)
    run = _read_run(directory)
    wanted = _wanted_games(directory, run, games, dataset_id)
    name = re.sub(r"[^A-Za-z0-9_.]+", "_", run.run or run.agent).strip("_") or "run"
    written: list[str] = []
    for game in wanted:
        identifier = dataset_id or f"saber/{game}/{name}-v0"
        _clear_dataset_id(minari, identifier, replace)
        try:
            _export_game(minari, EpisodeBuffer, directory, run, game, identifier, author)
        except BaseException as error:
            _remove_dataset(identifier)  # whole or absent
            if isinstance(error, OSError) and error.filename is None and error.errno:
                # h5py's errors name no file: name the dataset's folder, for the message
                path = str(_dataset_path(identifier))
                raise OSError(error.errno, error.strerror, path) from error
            raise
        written.append(identifier)
    return written


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


def _clear_dataset_id(minari: Any, identifier: str, replace: bool) -> None:
    """Make way for dataset ``identifier``: an existing one is deleted with ``replace``,
    an error (OutputExistsError) without."""
    if identifier not in minari.list_local_datasets():
        return
    if not replace:
        raise OutputExistsError(
            f"A Minari dataset {identifier!r} exists already; pass --force (replace=True) "
            f"to replace it, delete it (minari.delete_dataset({identifier!r})) or choose "
            "another dataset_id"
        )
    with contextlib.redirect_stdout(io.StringIO()):  # Minari prints "deleted!"
        minari.delete_dataset(identifier)


def _dataset_path(identifier: str) -> Path:
    """The folder of Minari dataset ``identifier`` (under MINARI_DATASETS_PATH)."""
    from minari.storage import get_dataset_path

    return Path(get_dataset_path(identifier))


def _remove_dataset(identifier: str) -> None:
    """Delete what a failed export left of dataset ``identifier``: a full disk can leave a
    folder that Minari no longer lists as a dataset (only warns about), so it goes too."""
    shutil.rmtree(_dataset_path(identifier), ignore_errors=True)


def _export_game(
    minari: Any,
    episode_buffer: Any,
    directory: Path,
    run: Any,
    game: str,
    identifier: str,
    author: str | None,
) -> None:
    """Write the dataset ``identifier`` of one game's finished episodes."""
    dataset = None
    count = 0
    for recorded in recorded_episodes(directory):
        if recorded.game != game:
            continue
        observations, actions, rewards, terminations, truncations = [], [], [], [], []
        for step in recorded:
            if not observations:
                observations.append(step.observation)
            observations.append(step.next_observation)
            actions.append(step.action)
            rewards.append(step.reward)
            terminations.append(step.terminated)
            truncations.append(step.truncated)
        buffer = episode_buffer(
            id=count,
            seed=int(recorded.record["seed"]),
            # One (steps + 1, 4, 84, 84) array, not a list of frames: Minari 0.5.3 (the
            # last for Python 3.10) JPEG-encodes a list of uint8 2-D/3-D arrays, which
            # is lossy and fails on (4, 84, 84); an array of 4 dimensions whose last is
            # not 1 or 3 is stored as it is by every Minari >= 0.5.
            observations=np.stack(observations),
            actions=actions,
            rewards=rewards,
            terminations=terminations,
            truncations=truncations,
            infos={},
        )
        if dataset is None:
            settings = replay_settings(recorded.replay).as_dict()
            import gymnasium as gym

            env = gym.make(get_game(game).env_id, **settings)
            with warnings.catch_warnings():  # its advice on optional metadata
                warnings.filterwarnings("ignore", category=UserWarning, module="minari")
                dataset = minari.create_dataset_from_buffers(
                    identifier,
                    [buffer],
                    env=env,
                    algorithm_name=run.agent,
                    author=author,
                    description=(
                        f"SABER episodes of {game} by agent {run.agent!r}"
                        + (f", run {run.run!r}" if run.run else "")
                        + f", re-simulated from the replays of {directory.name} "
                        f"(saber {run.versions.get('saber', '?')}, ale-py "
                        f"{run.versions.get('ale_py', '?')})"
                    ),
                    data_format="hdf5",
                )
            env.close()
        else:
            dataset.update_dataset_from_buffer([buffer])
        count += 1
    if dataset is None:
        raise SaberError(f"{directory}: no finished {game} episode to export")
