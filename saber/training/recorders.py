"""Training recorders: log every training episode, score 100 at checkpoints.

SABER reports an agent during training as the mean score of 100 consecutive training
episodes at 10M, 50M, 100M and 200M training frames. Put a recorder on the training env::

    env = TrainingRecorder(gymnasium.make("SABER/Pong"), "runs/pong/training.jsonl")
    venv = VectorTrainingRecorder(gymnasium.make_vec("SABER/Pong", 8), "runs/pong/training.jsonl")

Each line of the log is one finished episode: ``game``, ``episode`` (0-based, in order of
ending), ``score`` (raw, rollovers corrected, whatever reward clipping the agent sees),
``episode_frames``, ``end``, and ``frames``: the cumulative emulator frames of the whole
training (all sub-envs) when it ended. Then ``training_scores(log, [10_000_000, ...])``,
or ``saber training LOG --at 10M,50M,100M,200M``.

The recorders count frames from ``info["episode_frame_number"]``, which SABER envs give
at every step, so they need a SABER env underneath.

Live metrics for whatever logger a training uses: ``recorder.metrics()`` (the plain-Python
hook) returns :class:`TrainingMetrics`' dict of ``saber/...`` numbers (mean of the last
100 episodes, raw and world-record-normalized, the 5- and 30-minute scores, the scores at
the 10M/50M/100M/200M-frame checkpoints once reached, infinite and stuck episodes), e.g.
for TensorBoard's ``SummaryWriter``::

    for key, value in envs.metrics().items():
        writer.add_scalar(key, value, envs.total_frames)

With Stable-Baselines3, :class:`saber.training.sb3.SaberMetricsCallback` writes the same
dict through SB3's logger (TensorBoard, CSV, W&B, as SB3 is configured).

With ``replays=True`` a recorder also keeps every training episode's replay beside the
log and seeds every episode (:mod:`saber.training.replays` says why that is needed), so
that ``saber verify LOG`` can play each one again and check its line.
"""

from __future__ import annotations

import json
import math
import os
from collections import deque
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

from saber.envs import saber_settings
from saber.envs.rules import is_infinite
from saber.errors import SaberError
from saber.protocol.limits import checkpoint_limits
from saber.protocol.training import TRAINING_CHECKPOINTS, WINDOW, checkpoint_label
from saber.rundir.durable import append_whole
from saber.training.replays import TrainingReplays

# The log's readers (training_scores, ...) live in saber.reports.training_log, their layer,
# and the checkpoints in saber.protocol.training; saber.training exports them all.


class TrainingMetrics:
    """SABER's training-time numbers, kept up to date episode by episode.

    Feed it the cumulative training frames (:meth:`advance`) and each finished episode's
    record (:meth:`add`); :meth:`as_dict` gives the numbers. The checkpoint rule is
    :func:`training_scores`': at C frames, the mean of the last 100 episodes that ended
    at or before C.

    Args:
        game: ale id (for the world-record normalization).
        checkpoints: training frames at which to keep the score.
        window: episodes averaged (the protocol: 100).

    Example:
        >>> metrics = TrainingMetrics("pong", checkpoints=[10_000])
        >>> metrics.advance(6_000)
        >>> metrics.add({"score": -21.0, "end": "game_over", "infinite": False})
        >>> metrics.advance(14_000)
        >>> metrics.add({"score": -19.0, "end": "stuck_timeout", "infinite": False})
        >>> numbers = metrics.as_dict()
        >>> numbers["saber/mean_score"], numbers["saber/score_at_10k"]
        (-20.0, -21.0)
        >>> round(numbers["saber/mean_score_wr_normalized"], 2)  # random -20.34, record 21
        0.82
        >>> numbers["saber/stuck_episodes"], numbers["saber/frames"]
        (1.0, 14000.0)
    """

    def __init__(
        self, game: str, checkpoints: Iterable[int] = TRAINING_CHECKPOINTS, window: int = WINDOW
    ) -> None:
        self.game = game
        self.frames = 0
        self.episodes = 0
        self.infinite = 0
        self.stuck = 0
        self._fields = ["score", *(limit.record_field for limit in checkpoint_limits())]
        self._window: deque[tuple[float, ...]] = deque(maxlen=window)
        self._checkpoints: dict[int, float | None] = dict.fromkeys(sorted(checkpoints))
        self._reached: set[int] = set()

    def advance(self, frames: int) -> None:
        """The training has played ``frames`` emulator frames in all (cumulative)."""
        self.frames = int(frames)

    def add(self, episode: dict[str, Any]) -> None:
        """An episode (its SABER record) ended at the current :attr:`frames`."""
        self._capture(lambda checkpoint: checkpoint < self.frames)
        self._window.append(tuple(float(episode.get(key, math.nan)) for key in self._fields))
        self.episodes += 1
        self.infinite += bool(episode.get("infinite", False))
        self.stuck += episode.get("end") == "stuck_timeout"

    def _capture(self, passed: Any) -> None:
        for checkpoint in self._checkpoints:
            if checkpoint not in self._reached and passed(checkpoint):
                self._reached.add(checkpoint)
                self._checkpoints[checkpoint] = self._mean(0)

    def _mean(self, column: int) -> float | None:
        if not self._window:
            return None
        return float(np.mean([scores[column] for scores in self._window]))

    def as_dict(self) -> dict[str, float]:
        """The ``saber/...`` numbers; a mean is left out until an episode has ended.

        Keys: ``saber/frames``, ``saber/episodes``, ``saber/infinite_episodes``,
        ``saber/stuck_episodes``; ``saber/mean_score`` (raw, last 100 episodes),
        ``saber/mean_score_wr_normalized`` (percent of the world record; games with a
        record), ``saber/mean_score_5min``, ``saber/mean_score_30min``; and
        ``saber/score_at_10M`` ... ``saber/score_at_200M`` once the training passed them.
        """
        self._capture(lambda checkpoint: checkpoint <= self.frames)
        metrics: dict[str, float] = {
            "saber/frames": float(self.frames),
            "saber/episodes": float(self.episodes),
            "saber/infinite_episodes": float(self.infinite),
            "saber/stuck_episodes": float(self.stuck),
        }
        for column, field in enumerate(self._fields):
            mean = self._mean(column)
            if mean is not None:
                metrics[f"saber/mean_{field}"] = mean
        if "saber/mean_score" in metrics:
            normalized = _world_record_normalized(self.game, metrics["saber/mean_score"])
            if normalized is not None:
                metrics["saber/mean_score_wr_normalized"] = normalized
        for checkpoint, mean in self._checkpoints.items():
            if mean is not None:
                metrics[f"saber/score_at_{checkpoint_label(checkpoint)}"] = mean
        return metrics


def _world_record_normalized(game: str, score: float) -> float | None:
    from saber.scoring.normalize import normalize  # numpy only, but only when asked

    try:
        value = float(normalize([[score]], [game], "world_record")[0, 0])
    except Exception:  # a game outside the SABER tables
        return None
    return None if math.isnan(value) else value


def saber_record(info: dict[str, Any]) -> dict[str, Any] | None:
    """The SABER episode record in a single env's ``info``, if an episode ended there."""
    record = info.get("saber")
    if record is None and "score" in info.get("episode", {}):
        record = info["episode"]  # saber before info["saber"]; Monitor's has no score
    return record


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
    """The JSON-lines training log (optional) and the live metrics, shared by every recorder.

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
            # fsynced, as before: a training may end several episodes a second.
            append_whole(self._fd, (json.dumps(record) + "\n").encode("utf-8"), self.path or "")
        self.metrics.add(episode)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class _GameLogs:
    """The :class:`TrainingLog` of each game of a multi-game vector env
    (``gymnasium.make_vec("SABER/Atari5", ...)``), all appending to one file.

    Each game's lines carry the frames that game has played (``frames``) and its own
    episode numbers, so that each game's curve and checkpoints read as a training of that
    game alone would (``saber training`` reads the log game by game).

    A resumed training gives each game's frames and episodes so far (``start_frames``,
    ``start_episodes``: ``{game: count}``, what :attr:`frames_by_game` and
    :attr:`episodes_by_game` said when it saved); the log's lines are then read back into
    each game's metrics, so that they go on as those of a training that never stopped.
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
        checkpoints = list(checkpoints)
        # With a log, its lines are the episodes so far: read back, they number the next.
        read_back = self.path is not None and any(episodes.values())
        self.logs = {
            game: TrainingLog(path, game, 0, checkpoints, 0 if read_back else episodes[game])
            for game in games
        }
        if read_back:
            assert self.path is not None
            self._read_back(self.path, episodes)
        for game, log in self.logs.items():
            log.metrics.advance(frames[game])
        self._row_logs = [self.logs[game] for game in row_games]
        self._row_index = np.array([games.index(game) for game in row_games])

    def _read_back(self, path: Path, episodes: dict[str, int]) -> None:
        """Each game's metrics fed with its lines of the log, in order (a resume's); the
        log must hold ``episodes[game]`` lines of each game.

        Raises:
            SaberError: another game in the log, or another number of lines.
        """
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
        assert row is not None  # a vector env's episode always has its row
        self._row_logs[row].write(episode, row=row, extra=extra)

    def metrics(self) -> dict[str, float]:
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


def _frame_numbers(info: dict[str, Any]) -> Any:
    if "episode_frame_number" not in info:
        raise SaberError(
            "The training recorder needs a SABER env (info['episode_frame_number'] at every "
            "step): gymnasium.make('SABER/<Game>') or saber.make_env."
        )
    return info["episode_frame_number"]


class _EpisodeLogging:
    """What both recorders share: their log, frame counter and replays, one row per
    sub-env (a single env: one), and what they tell of the training so far."""

    def __init__(
        self,
        env: Any,
        path: str | Path | None,
        start_frames: int | Mapping[str, int] = 0,
        checkpoints: Iterable[int] = TRAINING_CHECKPOINTS,
        start_episodes: int | Mapping[str, int] = 0,
        replays: bool = False,
    ) -> None:
        super().__init__(env)  # type: ignore[call-arg]  # the gym wrapper's
        rows = self._prepare_rows(env)
        row_games = getattr(env.unwrapped, "row_games", None)  # a multi-game vector env's
        self.log: TrainingLog | _GameLogs
        if row_games is None:
            if isinstance(start_frames, Mapping) or isinstance(start_episodes, Mapping):
                raise SaberError(
                    "start_frames and start_episodes are numbers for one game's env (a "
                    "count per game is for a multi-game env)"
                )
            self.log = TrainingLog(path, saber_game(env), start_frames, checkpoints, start_episodes)
        else:
            saber_settings(env)  # raises TypeError for an env saber did not make
            self.log = _GameLogs(
                path, [str(game) for game in row_games], checkpoints, start_frames, start_episodes
            )
        self._counter = FrameCounter(rows)
        self.replays = _replays(env, self.log, rows) if replays else None

    def _advance(self, info: dict[str, Any]) -> None:
        """Count the frames the step played (each game's own, in a multi-game env)."""
        frames = _frame_numbers(info)
        if isinstance(self.log, _GameLogs):
            self.log.advance_rows(self._counter.played_rows(frames))
        else:
            self.log.advance(self._counter.played(frames))

    def _prepare_rows(self, env: Any) -> int:
        """The rows of ``env`` (a single env: 1); a recorder with per-row state sets it up."""
        return 1

    @property
    def total_frames(self) -> int:
        """Emulator frames played (by all sub-envs) since the start of the training."""
        return self.log.frames

    def metrics(self) -> dict[str, float]:
        """SABER's training-time numbers so far (:meth:`TrainingMetrics.as_dict`; of a
        multi-game env, each game's under ``saber/<game>/`` and the median and mean over
        games of the world-record-normalized scores)."""
        if isinstance(self.log, _GameLogs):
            return self.log.metrics()
        return self.log.metrics.as_dict()


class TrainingRecorder(_EpisodeLogging, gym.Wrapper):
    """Log every episode of a single SABER env with the cumulative training frames.

    Args:
        env: a SABER env (possibly wrapped).
        path: the JSON-lines log, appended to; None keeps only :meth:`metrics`.
        start_frames: training frames already done (when resuming a training: the
            ``frames`` of the log's last line, or your own count).
        checkpoints: training frames at which :meth:`metrics` keeps the score.
        start_episodes: episodes already in the log (when resuming a training).
        replays: also keep every episode's replay beside the log and seed every episode
            (:mod:`saber.training.replays`), so that ``saber verify LOG`` checks them. The
            recorder must see every reset: put it outermost.
    """

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._counter.restart()
        result = self.env.reset(**kwargs)
        if self.replays is not None:
            self.replays.start([0], [self.env.unwrapped.episode_seed])
        return result

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._advance(info)
        if self.replays is not None:
            self.replays.add([int(action)])
        record = saber_record(info)
        if record is not None:
            extra = None
            if self.replays is not None:
                extra = self.replays.finish(0, self.log.episodes, int(record["steps"]))
            self.log.write(record, extra=extra)
        return obs, reward, terminated, truncated, info

    def close(self) -> None:
        self.log.close()
        super().close()


class VectorTrainingRecorder(_EpisodeLogging, gym.vector.VectorWrapper):
    """Log every episode of a SABER vector env (any autoreset mode) with cumulative frames.

    Episodes are numbered in the order they end; ``env`` in each line is the sub-env.
    Over a multi-game env (``gymnasium.make_vec("SABER/Atari5", ...)``) each line's
    ``game`` is its sub-env's, and its ``frames`` and ``episode`` count that game's alone
    (each game's curve reads as a training of that game would; its replays lie under
    ``<log stem>.replays/<game>/``). Such a log resumes game by game: ``start_frames``
    and ``start_episodes`` are ``{game: count}`` (what ``recorder.log.frames_by_game``
    and ``recorder.log.episodes_by_game`` give), and the metrics go on from the log's
    lines (``examples/ppo_multigame.py`` resumes so).

    Args:
        env: ``SaberVectorEnv`` or ``gymnasium.make_vec("SABER/<Game>", ...)``.
        path: the JSON-lines log, appended to; None keeps only :meth:`metrics`.
        start_frames: training frames already done (a multi-game env: ``{game: frames}``).
        checkpoints: training frames at which :meth:`metrics` keeps the score.
        start_episodes: episodes already in the log (when resuming a training; a
            multi-game env: ``{game: episodes}``, which the log must hold).
        replays: also keep every episode's replay beside the log and seed every episode
            (:mod:`saber.training.replays`), so that ``saber verify LOG`` checks them, in
            either autoreset mode (``NEXT_STEP``'s reset step after an end plays no action
            and is not recorded). Needs ``SaberVectorEnv`` underneath.
    """

    def _prepare_rows(self, env: Any) -> int:
        # Rows whose next step is NEXT_STEP's reset step (their episode ended at this one).
        self._resetting = np.zeros(env.num_envs, dtype=bool)
        self._autoreset = getattr(env.unwrapped, "autoreset_mode", None) == AutoresetMode.NEXT_STEP
        return env.num_envs

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        # Only the rows reset start from frame 0: a partial reset (``reset_mask``) leaves
        # the others mid-episode, and their frames since the last step are still to count.
        mask = (kwargs.get("options") or {}).get("reset_mask")
        rows = slice(None) if mask is None else np.asarray(mask, dtype=bool)
        self._counter.restart(rows)
        self._resetting[rows] = False
        if self.replays is not None:
            started = np.arange(self.num_envs)[rows].tolist()
            seeds = self.env.unwrapped.episode_seeds
            self.replays.start(started, [int(seeds[row]) for row in started])
        return obs, info

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        self._advance(info)
        replays = self.replays
        if replays is not None:
            resetting = self._resetting
            replays.add(np.asarray(actions).tolist(), (~resetting).tolist())
            if resetting.any():  # their new episode starts now, from the seed it drew
                started = np.flatnonzero(resetting).tolist()
                seeds = self.env.unwrapped.episode_seeds
                replays.start(started, [int(seeds[row]) for row in started])
        key = "saber" if "_saber" in info else "episode"  # saber before info["saber"]
        if f"_{key}" in info:
            episode = info[key]
            for row in np.flatnonzero(info[f"_{key}"]).tolist():
                record = {name: values[row] for name, values in episode.items()}
                extra = None
                if replays is not None:
                    number = (
                        self.log.episode_number(row)
                        if isinstance(self.log, _GameLogs)
                        else self.log.episodes
                    )
                    extra = replays.finish(row, number, int(record["steps"]))
                self.log.write(record, row=row, extra=extra)
        if self._autoreset:
            self._resetting = np.logical_or(terminated, truncated)
        return obs, rewards, terminated, truncated, info

    def close(self, **kwargs: Any) -> None:
        self.log.close()
        super().close(**kwargs)


class _GameReplays:
    """The :class:`TrainingReplays` of each game of a multi-game vector env, row by row:
    each game's replays lie under ``<log stem>.replays/<game>/``, numbered as its log lines."""

    def __init__(self, log: _GameLogs, settings: dict[str, Any]) -> None:
        assert log.path is not None
        rows = len(log._row_logs)
        by_game = {game: TrainingReplays(log.path, game, rows, settings) for game in log.logs}
        games = list(log.logs)
        self._row_replays = [by_game[games[index]] for index in log._row_index.tolist()]
        self._replays = list(by_game.values())

    def start(self, rows: Iterable[int], seeds: Iterable[int | None]) -> None:
        for row, seed in zip(rows, seeds, strict=True):
            self._row_replays[row].start([row], [seed])

    def add(self, actions: list[int], acting: list[bool] | None = None) -> None:
        for replays in self._replays:  # each records the rows it started, no others
            replays.add(actions, acting)

    def finish(self, row: int, episode: int, steps: int) -> dict[str, Any]:
        return self._row_replays[row].finish(row, episode, steps)


def _replays(
    env: gym.Env | gym.vector.VectorEnv, log: TrainingLog | _GameLogs, rows: int
) -> TrainingReplays | _GameReplays:
    """Replays for a recorder of ``env``, which now seeds every episode."""
    if log.path is None:
        raise SaberError("Recording training replays needs a log path: they are written beside it")
    unwrapped = env.unwrapped
    if not hasattr(unwrapped, "seed_each_episode"):
        raise SaberError(
            f"Recording training replays needs a SABER env underneath, actually "
            f"{type(unwrapped).__name__}: use gymnasium.make or make_vec of SABER/<Game>"
        )
    unwrapped.seed_each_episode = True
    if isinstance(log, _GameLogs):
        return _GameReplays(log, saber_settings(env).as_dict())
    return TrainingReplays(log.path, log.game, rows, saber_settings(env).as_dict())


def saber_game(env: gym.Env | gym.vector.VectorEnv) -> str:
    """The ale id of a SABER env (checked to be one)."""
    saber_settings(env)  # raises TypeError for an env saber did not make
    unwrapped = env.unwrapped
    # SaberVectorEnv and the single env's core (SaberAtariEnv) both have rom_id.
    game = getattr(unwrapped, "rom_id", None)
    if game is None:
        spec = getattr(env, "spec", None)
        game = spec.id if spec is not None else "unknown"
    return str(game)
