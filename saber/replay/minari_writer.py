"""The process that writes one Minari dataset (``python -m saber.replay.minari_writer``),
apart from the caller (:func:`saber.replay.export.export_minari`), since h5py can crash on
a full disk; every error h5py only prints is caught, and the dataset read back.

Input: one JSON argument (``directory``, ``game``, ``identifier``, ``author``, ``final``);
``MINARI_DATASETS_PATH`` is the staging folder. Answer, the last line on stdout:
``{"episodes": N, "steps": S}``, or ``{"error": "one line"}``.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from saber.errors import SaberError, os_error_message
from saber.games import get_game
from saber.replay.dataset import recorded_episodes
from saber.replay.simulate import replay_settings
from saber.rundir.reading import read_run_file


def write_dataset(directory: Path, game: str, identifier: str, author: str | None) -> int:
    """Write the dataset ``identifier`` of one game's finished episodes (under
    ``MINARI_DATASETS_PATH``); return its steps."""
    import minari
    from minari.data_collector import EpisodeBuffer

    run = read_run_file(directory)
    dataset = None
    count = steps = 0
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
        buffer = EpisodeBuffer(
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
        steps += len(actions)
    if dataset is None:
        raise SaberError(f"{directory}: no finished {game} episode to export")
    return steps


def _read_back(identifier: str) -> tuple[int, int]:
    """Episodes and steps of the dataset as Minari reads it from disk."""
    import minari

    dataset = minari.load_dataset(identifier)
    return dataset.total_episodes, dataset.total_steps


def _answer(task: dict[str, Any]) -> dict[str, Any]:
    """Write the dataset of ``task``; what to tell the caller."""
    final = task["final"]
    printed: list[BaseException] = []  # what h5py could only print (a failed write)
    sys.unraisablehook = lambda unraisable: printed.append(unraisable.exc_value)
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # Minari's prints
            steps = write_dataset(
                Path(task["directory"]), task["game"], task["identifier"], task["author"]
            )
            failed = [error for error in printed if isinstance(error, OSError)]
            if failed:
                raise failed[0]
            episodes, steps_read = _read_back(task["identifier"])
    except SaberError as error:
        return {"error": str(error)}
    except OSError as error:
        # h5py's errors name the staging file, or none: name the dataset's folder.
        message = os_error_message(OSError(error.errno, error.strerror, final))
        return {"error": message, "unwritten": True}  # the caller's StoreWriteError
    if steps_read != steps:
        return {
            "unwritten": True,
            "error": f"Cannot write {final}: it read back with {steps_read} of {steps} steps "
            f"({episodes} episodes), so a write failed unseen (a full disk?); free some "
            "space and run the same command again",
        }
    return {"episodes": episodes, "steps": steps}


def main() -> None:
    """``python -m saber.replay.minari_writer TASK``: see the module docstring."""
    answer = _answer(json.loads(sys.argv[1]))
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
    # The dataset is read back whole (or the answer is an error): the interpreter's
    # teardown, where h5py frees what is left and can crash, has nothing more to do.
    os._exit(0)


if __name__ == "__main__":
    main()
