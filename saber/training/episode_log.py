"""The training log: one JSON line per finished training episode, and the live metrics.

:class:`TrainingLog` (one game) and :class:`GameLogs` (a multi-game env's) answer the same
calls; the format: docs/harness.md ("Training-time scores").
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from saber.envs.rules import is_infinite
from saber.errors import SaberError
from saber.protocol.limits import checkpoint_limits
from saber.protocol.training import TRAINING_CHECKPOINTS
from saber.rundir.durable import append_whole
from saber.training.metrics import TrainingMetrics


class FrameCounter:
    """Emulator frames played by N envs, from their ``episode_frame_number`` at each step."""

    def __init__(self, num_envs: int) -> None:
        self.last = np.zeros(num_envs, dtype=np.int64)

    def played(self, frames: Any) -> int:
        """Frames played since the last call; a number below the last one is a new episode."""
        return int(self.played_rows(frames).sum())

    def played_rows(self, frames: Any) -> np.ndarray:
        """:meth:`played`, env by env (int64, (num_envs,))."""
        now = np.asarray(frames, dtype=np.int64).reshape(self.last.shape)
        played = np.where(now >= self.last, now - self.last, now)
        self.last = now
        return played

    def restart(self, rows: Any = slice(None)) -> None:
        """``rows`` start a new episode from frame 0."""
        self.last[rows] = 0


class TrainingLog:
    """One game's JSON-lines training log (optional) and its live metrics.

    Args:
        path: the log to append to, or None for metrics only.
        game: ale id.
        start_frames: training frames already done.
        checkpoints: training frames at which the metrics keep the score.
        start_episodes: training episodes already logged (a resumed training numbers its
            episodes on from there, so that ``episode`` stays unique in the log).
    """

    def __init__(
        self,
        path: str | Path | None,
        game: str,
        start_frames: int = 0,
        checkpoints: Iterable[int] = TRAINING_CHECKPOINTS,
        start_episodes: int = 0,
    ) -> None:
        self.path = None if path is None else Path(path)
        self.game = game
        self.metrics = TrainingMetrics(game, checkpoints)
        self.metrics.advance(start_frames)
        self._start_episodes = int(start_episodes)
        self._fd: int | None = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    @property
    def frames(self) -> int:
        """Cumulative training frames."""
        return self.metrics.frames

    @property
    def episodes(self) -> int:
        """Episodes logged, those before a resume (``start_episodes``) included."""
        return self._start_episodes + self.metrics.episodes

    def advance(self, played: int) -> None:
        """``played`` more frames were played."""
        self.metrics.advance(self.metrics.frames + played)

    def advance_rows(self, played: np.ndarray) -> None:
        """Each sub-env played ``played[row]`` more frames."""
        self.advance(int(played.sum()))

    def episode_number(self, row: int) -> int:
        """The number the next episode that ends (on any row) gets."""
        return self.episodes

    def write(
        self, episode: dict[str, Any], row: int | None = None, extra: dict[str, Any] | None = None
    ) -> None:
        """Log one finished episode (its SABER record) at the current frame count; ``extra``:
        more fields of its line (its replay's)."""
        record = {
            "game": self.game,
            "episode": self.episodes,
            "frames": self.frames,
            "score": float(episode["score"]),
            **{
                limit.record_field: float(episode[limit.record_field])
                for limit in checkpoint_limits()
                if limit.record_field in episode
            },
            "episode_frames": int(episode["frames"]),
            "end": str(episode["end"]),
        }
        if row is not None:
            record["env"] = row
        if extra:
            record.update(extra)
        if self._fd is not None:
            # Each line whole or absent, at once (a crashed training keeps its log); not
            # fsynced: a training may end several episodes a second.
            append_whole(self._fd, (json.dumps(record) + "\n").encode("utf-8"), self.path or "")
        self.metrics.add(episode)

    def numbers(self) -> dict[str, float]:
        """The metrics so far (:meth:`TrainingMetrics.as_dict`)."""
        return self.metrics.as_dict()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class GameLogs:
    """The :class:`TrainingLog` of each game of a multi-game vector env
    (``gymnasium.make_vec("SABER/Atari5", ...)``), all appending to one file.

    Each game's lines carry the frames that game has played (``frames``) and its own
    episode numbers, so that each game's curve and checkpoints read as a training of that
    game alone would (``saber training`` reads the log game by game).

    A resumed training gives each game's frames and episodes so far (``start_frames``,
    ``start_episodes``: ``{game: count}``, what :attr:`frames_by_game` and
    :attr:`episodes_by_game` said when it saved); the log's lines are then read back into
    each game's metrics, so that they go on as those of a training that never stopped.

    Raises:
        SaberError: counts that are not one per game, or a log that does not hold them.
    """

    def __init__(
        self,
        path: str | Path | None,
        row_games: list[str],
        checkpoints: Iterable[int],
        start_frames: int | Mapping[str, int] = 0,
        start_episodes: int | Mapping[str, int] = 0,
    ) -> None:
        games = list(dict.fromkeys(row_games))
        frames = _per_game(start_frames, games, "start_frames")
        episodes = _per_game(start_episodes, games, "start_episodes")
        self.path = None if path is None else Path(path)
        self.game = ",".join(games)
        self.row_games = list(row_games)
        checkpoints = list(checkpoints)
        # With a log, its lines are the episodes so far: read back, they number the next.
        read_back = self.path is not None and any(episodes.values())
        self.logs = {
            game: TrainingLog(path, game, 0, checkpoints, 0 if read_back else episodes[game])
            for game in games
        }
        if self.path is not None and read_back:
            self._read_back(self.path, episodes)
        for game, log in self.logs.items():
            log.metrics.advance(frames[game])
        self._row_logs = [self.logs[game] for game in row_games]
        self._row_index = np.array([games.index(game) for game in row_games])

    def _read_back(self, path: Path, episodes: dict[str, int]) -> None:
        """Each game's metrics fed with its lines of the log, in order (a resume's); the
        log must hold ``episodes[game]`` lines of each game."""
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                entry = json.loads(line)
                log = self.logs.get(entry["game"])
                if log is None:
                    raise SaberError(
                        f"{path}: a line of {entry['game']}, which this env does not play "
                        f"({self.game}): resume with the env of the log's training"
                    )
                infinite = bool(is_infinite(entry["end"], entry["episode_frames"]))
                log.metrics.advance(int(entry["frames"]))
                log.metrics.add(dict(entry, infinite=infinite))
        found = {game: log.episodes for game, log in self.logs.items()}
        if found != episodes:
            raise SaberError(
                f"{path} holds {found} episodes by game, the resume gives {episodes} "
                "(start_episodes): cut the log back to the checkpoint's size first"
            )

    @property
    def frames(self) -> int:
        """Frames played by every game together."""
        return sum(log.frames for log in self.logs.values())

    @property
    def episodes(self) -> int:
        return sum(log.episodes for log in self.logs.values())

    @property
    def frames_by_game(self) -> dict[str, int]:
        """Each game's frames so far (a resume's ``start_frames``, less the frames of the
        episodes in progress, which the recorder counts again from their first frame)."""
        return {game: log.frames for game, log in self.logs.items()}

    @property
    def episodes_by_game(self) -> dict[str, int]:
        """Each game's episodes logged so far (a resume's ``start_episodes``)."""
        return {game: log.episodes for game, log in self.logs.items()}

    def episode_number(self, row: int) -> int:
        """The number the next episode that ends on ``row`` gets (its game's count)."""
        return self._row_logs[row].episodes

    def advance_rows(self, played: np.ndarray) -> None:
        """Each row played ``played[row]`` more frames (its game's log counts them)."""
        per_game = np.bincount(self._row_index, weights=played, minlength=len(self.logs))
        for log, frames in zip(self.logs.values(), per_game.tolist(), strict=True):
            log.advance(int(frames))

    def write(
        self, episode: dict[str, Any], row: int | None = None, extra: dict[str, Any] | None = None
    ) -> None:
        """Log one finished episode of sub-env ``row`` in its game's log."""
        if row is None:
            raise SaberError("A multi-game env's episode is logged with its sub-env (row)")
        self._row_logs[row].write(episode, row=row, extra=extra)

    def numbers(self) -> dict[str, float]:
        """Each game's :meth:`TrainingMetrics.as_dict` under ``saber/<game>/...``, then
        ``saber/frames`` and ``saber/episodes`` (all games) and the median and mean over
        games of the world-record-normalized mean score (``saber/median_wr_normalized``,
        ``saber/mean_wr_normalized``: games with a record and an episode ended)."""
        metrics: dict[str, float] = {}
        normalized = []
        for game, log in self.logs.items():
            game_metrics = log.metrics.as_dict()
            for key, value in game_metrics.items():
                metrics[key.replace("saber/", f"saber/{game}/", 1)] = value
            if "saber/mean_score_wr_normalized" in game_metrics:
                normalized.append(game_metrics["saber/mean_score_wr_normalized"])
        metrics["saber/frames"] = float(self.frames)
        metrics["saber/episodes"] = float(self.episodes)
        if normalized:
            metrics["saber/median_wr_normalized"] = float(np.median(normalized))
            metrics["saber/mean_wr_normalized"] = float(np.mean(normalized))
        return metrics

    def close(self) -> None:
        for log in self.logs.values():
            log.close()


def _per_game(count: int | Mapping[str, int], games: list[str], name: str) -> dict[str, int]:
    """A multi-game resume's ``start_frames`` or ``start_episodes``: one count per game.

    Raises:
        SaberError: a single number other than 0, or not every game (and only them).
    """
    if isinstance(count, Mapping):
        if set(count) != set(games):
            raise SaberError(
                f"Expect {name} to give each game of the env once ({', '.join(games)}), "
                f"actually: {', '.join(map(str, count)) or 'none'}"
            )
        return {game: int(count[game]) for game in games}
    if count:
        raise SaberError(
            f"A multi-game env's training recorder resumes game by game: {name}="
            "{game: count} (what recorder.log.frames_by_game and .episodes_by_game gave), "
            f"actually: {count!r}"
        )
    return dict.fromkeys(games, 0)
