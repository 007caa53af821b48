"""A run directory as an offline dataset: its recorded episodes, re-simulated on demand.

:func:`recorded_episodes` gives each :class:`RecordedEpisode` (its record and replay);
iterating one plays it again, step by step, without the policy (docs/verify.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from saber.errors import ReplayError, RunDirectoryError, SaberError, shown
from saber.protocol.replay import MAX_REPLAY_BYTES, Replay, decode_replay, sha256_of
from saber.replay.simulate import Resimulation, Transition
from saber.rundir.contained import contained_path, read_regular
from saber.rundir.reading import read_episode_lines
from saber.rundir.records import EPISODES_FILE


@dataclass(frozen=True)
class RecordedEpisode:
    """One finished episode of a run directory, with its replay.

    Attributes:
        record: its line of ``episodes.jsonl`` (score, frames, steps, end, seed, ...).
        replay: its replay (:class:`~saber.protocol.replay.Replay`: header and actions).
    """

    record: dict[str, Any]
    replay: Replay

    @property
    def game(self) -> str:
        """Its game (ale id)."""
        return str(self.record["game"])

    @property
    def episode(self) -> int:
        """Its index in its game."""
        return int(self.record["episode"])

    def __iter__(self) -> Iterator[Transition]:
        """Its steps, re-simulated (:class:`~saber.replay.simulate.Transition`)."""
        return iter(Resimulation(self.replay))

    def simulation(self, **options: Any) -> Resimulation:
        """A :class:`~saber.replay.simulate.Resimulation` of it (``on_frame``,
        ``render_mode``), whose :attr:`~Resimulation.record` is set once iterated."""
        return Resimulation(self.replay, **options)


def _load(directory: Path, record: dict[str, Any]) -> RecordedEpisode:
    where = f"{shown(record.get('game'))} episode {record.get('episode')}"
    relative = record.get("replay")
    if not relative:
        raise ReplayError(f"{directory}: {where} has no replay (recorded without replays)")
    path = directory / str(relative)
    try:  # only a regular file inside the run directory, to the most a replay takes
        data = read_regular(contained_path(directory, relative), MAX_REPLAY_BYTES)
    except RunDirectoryError as why:
        raise ReplayError(f"{shown(path)}: {why}") from None
    except OSError as error:
        raise ReplayError(f"{shown(path)}: {error.strerror or error}") from None
    if sha256_of(data) != record.get("replay_sha256"):
        raise ReplayError(
            f"{shown(path)} is not the replay that {where}'s record names (its SHA-256 "
            "differs); saber verify says more"
        )
    return RecordedEpisode(record, decode_replay(data, shown(path)))


def _finished(directory: Path) -> dict[tuple[str, int], dict[str, Any]]:
    return read_episode_lines(directory / EPISODES_FILE).finished()


def recorded_episodes(directory: str | Path) -> Iterator[RecordedEpisode]:
    """Every finished episode of a run directory, by game and episode.

    Raises:
        ReplayError: an episode without its replay, or whose replay is not the one its
            record names (when it is reached).
        RunDirectoryError: ``episodes.jsonl`` cannot be read.
    """
    directory = Path(directory)
    records = _finished(directory)
    for key in sorted(records):
        yield _load(directory, records[key])


def recorded_episode(directory: str | Path, game: str, episode: int) -> RecordedEpisode:
    """One finished episode of a run directory.

    Args:
        directory: the run directory.
        game: any spelling of the game (``pong``, ``MsPacman``).
        episode: its index.

    Raises:
        SaberError: no such finished episode; or see :func:`recorded_episodes`.
    """
    from saber.games import get_game

    directory = Path(directory)
    game_id = get_game(game).ale_id
    records = _finished(directory)
    if (game_id, episode) not in records:
        have = sorted(e for g, e in records if g == game_id)
        raise SaberError(
            f"{directory}: no finished episode {episode} of {game_id}"
            + (f" (finished: {_ranges(have)})" if have else f" (no finished {game_id} episode)")
        )
    return _load(directory, records[(game_id, episode)])


def _ranges(numbers: list[int]) -> str:
    """``0-4, 7, 9-10``."""
    parts: list[str] = []
    for number in numbers:
        if parts and number == int(parts[-1].split("-")[-1]) + 1:
            parts[-1] = f"{parts[-1].split('-')[0]}-{number}"
        else:
            parts.append(str(number))
    return ", ".join(parts)
