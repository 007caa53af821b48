"""Recording what every episode of an evaluation plays: its replay (:mod:`saber.protocol.replay`).

The worker encodes each episode's replay; the main process writes it before the record
that names it (by SHA-256), so a record never names a replay that is not on disk.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from saber.envs.emulator import rom_sha256
from saber.errors import counted
from saber.protocol.replay import ReplayHeader, encode_replay, replay_path, sha256_of
from saber.protocol.settings import SaberSettings
from saber.replay.verify import versions_here


class ReplayRecorder:
    """The actions of the episodes one vector env plays, and each episode's replay.

    Args:
        game: ale id.
        rows: sub-envs of the vector env.
        agent: the agent's name (in each replay's header).
        run: the run name, or None.
        settings: the env settings of the run.
    """

    def __init__(
        self, game: str, rows: int, agent: str, run: str | None, settings: SaberSettings
    ) -> None:
        self.game = game
        self.agent = agent
        self.run = run
        self.settings = settings.as_dict()
        self.rom_sha256 = rom_sha256(game)
        self.versions = versions_here()
        self._logs: list[bytearray | None] = [None] * rows
        self._done: dict[int, bytes] = {}

    def start(self, rows: Sequence[int]) -> None:
        """These rows start a new (recorded) episode."""
        for row in rows:
            self._logs[row] = bytearray()

    def stop(self, rows: Sequence[int]) -> None:
        """These rows idle (no episode of the unit left): not recorded."""
        for row in rows:
            self._logs[row] = None

    def add(self, actions: np.ndarray) -> None:
        """The actions just sent to the vector env, one per row."""
        values = actions.tolist()
        for row, log in enumerate(self._logs):
            if log is not None:
                log.append(values[row])

    def finish(self, row: int, episode: int, seed: int, steps: int) -> tuple[str, str]:
        """Encode the replay of the episode that just ended on ``row``; returns its path
        in the run directory and its SHA-256 (for the record). :meth:`take` gives its bytes.

        Raises:
            RuntimeError: the row's actions are not the record's ``steps`` (a bug).
        """
        log = self._logs[row]
        if log is None or len(log) != steps:
            recorded = "no actions" if log is None else counted(len(log), "action")
            raise RuntimeError(
                f"Recorded {recorded} for {self.game} episode {episode}, whose record has "
                f"{counted(steps, 'step')}: please report this"
            )
        header = ReplayHeader(
            self.game, episode, seed, self.agent, self.run, self.settings, self.rom_sha256,
            self.versions, steps,
        )  # fmt: skip
        data = encode_replay(header, log)
        self._logs[row] = None
        self._done[episode] = data
        return replay_path(self.game, episode), sha256_of(data)

    def take(self, episode: int) -> bytes:
        """The replay of a finished episode (once)."""
        return self._done.pop(episode)
