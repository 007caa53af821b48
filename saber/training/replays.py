"""Replays of training episodes: what the training recorders keep when asked (``replays=True``).

Each is written beside the log before the line that names it, for ``saber verify LOG``
(docs/verify.md, "Training episodes").
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from saber.envs.emulator import rom_sha256
from saber.errors import SaberError, counted
from saber.protocol.replay import ReplayHeader, encode_replay, replay_path, sha256_of
from saber.replay.verify import versions_here
from saber.rundir.durable import write_replay

TRAINING_AGENT = "training"  # the agent named in a training replay's header


def replays_directory(log: Path) -> str:
    """Where the replays of training log ``log`` go, relative to its directory."""
    return f"{log.stem}.replays"


class TrainingReplays:
    """The actions of the episodes ``rows`` (sub-)envs play, and each episode's replay file.

    Args:
        log: the training log (its replays go beside it).
        game: ale id.
        rows: (sub-)envs.
        settings: the env's settings (:meth:`SaberSettings.as_dict`).
    """

    def __init__(self, log: Path, game: str, rows: int, settings: dict[str, Any]) -> None:
        self.directory = log.parent
        self.prefix = replays_directory(log)
        self.game = game
        self.run = log.stem
        self.settings = settings
        self.rom_sha256 = rom_sha256(game)
        self.versions = versions_here()
        self._logs: list[bytearray | None] = [None] * rows
        self._seeds: list[int | None] = [None] * rows

    def start(self, rows: Iterable[int], seeds: Iterable[int | None]) -> None:
        """These rows start an episode from these seeds (None: not replayable, not recorded)."""
        for row, seed in zip(rows, seeds, strict=True):
            self._seeds[row] = seed
            self._logs[row] = None if seed is None or seed < 0 else bytearray()

    def add(self, actions: list[int], acting: list[bool] | None = None) -> None:
        """The actions just played, one per row; rows not ``acting`` (a vector env's reset
        step after an end) played none."""
        for row, log in enumerate(self._logs):
            if log is not None and (acting is None or acting[row]):
                log.append(actions[row])

    def finish(self, row: int, episode: int, steps: int) -> dict[str, Any]:
        """Write the replay of the episode that just ended on ``row``, numbered ``episode``
        in the log; returns the fields its log line gains.

        Raises:
            SaberError: the episode did not start from a seed, so it has no replay (an env
                whose resets the recorder does not see), or the file cannot be written.
            RuntimeError: the actions recorded are not the episode's ``steps`` (a bug).
        """
        log, seed = self._logs[row], self._seeds[row]
        self._logs[row] = None
        if log is None or seed is None:
            raise SaberError(
                f"{self.game} training episode {episode} (env {row}) did not start from a "
                "seed, so it cannot be replayed: put the recorder outermost, so that it sees "
                "every reset, on a SABER env (gymnasium.make or make_vec of SABER/<Game>)"
            )
        if len(log) != steps:
            raise RuntimeError(
                f"Recorded {counted(len(log), 'action')} for {self.game} training episode {episode}, "
                f"whose record has {counted(steps, 'step')}: please report this"
            )
        header = ReplayHeader(
            self.game, episode, seed, TRAINING_AGENT, self.run, self.settings,
            self.rom_sha256, self.versions, steps,
        )  # fmt: skip
        data = encode_replay(header, log)
        relative = f"{self.prefix}/{replay_path(self.game, episode).partition('/')[2]}"
        try:
            write_replay(self.directory, relative, data)
        except OSError as error:
            raise SaberError(
                f"Cannot write {self.directory / relative}: {error.strerror or error}"
            ) from error
        return {"seed": seed, "steps": steps, "replay": relative, "replay_sha256": sha256_of(data)}
