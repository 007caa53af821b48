"""Training recorders: log every training episode of a SABER env, and its live metrics.

:class:`TrainingRecorder` (a single env) and :class:`VectorTrainingRecorder` (a vector env)
write the log that ``saber training`` reads; docs/harness.md ("Training-time scores").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

from saber.envs import saber_settings
from saber.errors import SaberError
from saber.protocol.training import TRAINING_CHECKPOINTS
from saber.training.episode_log import FrameCounter, GameLogs, TrainingLog
from saber.training.replays import TrainingReplays

# The log's readers (training_scores, ...) live in saber.reports.training_log, their layer,
# and the checkpoints in saber.protocol.training; saber.training exports them all.


def saber_record(info: dict[str, Any]) -> dict[str, Any] | None:
    """The SABER episode record in a single env's ``info``, if an episode ended there."""
    record = info.get("saber")
    if record is None and "score" in info.get("episode", {}):
        record = info["episode"]  # saber before info["saber"]; Monitor's has no score
    return record


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


class TrainingRecorder(gym.Wrapper):
    """Log every episode of a single SABER env with the cumulative training frames.

    Args:
        env: a SABER env (possibly wrapped).
        path: the JSON-lines log, appended to; None keeps only :meth:`metrics`.
        start_frames: training frames already done (when resuming a training: the
            ``frames`` of the log's last line, or your own count).
        checkpoints: training frames at which :meth:`metrics` keeps the score.
        start_episodes: episodes already in the log (when resuming a training).
        replays: also keep every episode's replay beside the log, so that ``saber verify
            LOG`` checks them (:mod:`saber.training.replays`); the env must seed every
            episode (``env.unwrapped.seed_each_episode = True``) and the recorder see
            every reset: put it outermost.

    Raises:
        SaberError: ``replays`` without a log path or without every episode seeded, or
            counts per game for one game's env.
    """

    def __init__(
        self,
        env: gym.Env,
        path: str | Path | None,
        start_frames: int = 0,
        checkpoints: Iterable[int] = TRAINING_CHECKPOINTS,
        start_episodes: int = 0,
        replays: bool = False,
    ) -> None:
        super().__init__(env)
        if isinstance(start_frames, Mapping) or isinstance(start_episodes, Mapping):
            raise SaberError(_COUNTS_FOR_ONE_GAME)
        self.log = TrainingLog(path, saber_game(env), start_frames, checkpoints, start_episodes)
        self._counter = FrameCounter(1)
        self.replays = _replays(env, self.log.path, self.log.game, 1) if replays else None

    @property
    def total_frames(self) -> int:
        """Emulator frames played since the start of the training."""
        return self.log.frames

    def metrics(self) -> dict[str, float]:
        """SABER's training-time numbers so far (:meth:`TrainingMetrics.as_dict`)."""
        return self.log.numbers()

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._counter.restart()
        result = self.env.reset(**kwargs)
        if self.replays is not None:
            self.replays.start([0], [self.env.unwrapped.episode_seed])
        return result

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.log.advance(self._counter.played(_frame_numbers(info)))
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


class VectorTrainingRecorder(gym.vector.VectorWrapper):
    """Log every episode of a SABER vector env (any autoreset mode) with cumulative frames.

    Episodes are numbered in the order they end; ``env`` in each line is the sub-env.
    Over a multi-game env (``gymnasium.make_vec("SABER/Atari5", ...)``) each line's
    ``game`` is its sub-env's, and its ``frames`` and ``episode`` count that game's alone
    (its replays lie under ``<log stem>.replays/<game>/``). Such a log resumes game by
    game: ``start_frames`` and ``start_episodes`` are ``{game: count}`` (what
    ``recorder.log.frames_by_game`` and ``recorder.log.episodes_by_game`` give), and the
    metrics go on from the log's lines (``examples/ppo_multigame.py`` resumes so).

    Args:
        env: ``SaberVectorEnv`` or ``gymnasium.make_vec("SABER/<Game>", ...)``.
        path: the JSON-lines log, appended to; None keeps only :meth:`metrics`.
        start_frames: training frames already done (a multi-game env: ``{game: frames}``).
        checkpoints: training frames at which :meth:`metrics` keeps the score.
        start_episodes: episodes already in the log (when resuming a training; a
            multi-game env: ``{game: episodes}``, which the log must hold).
        replays: also keep every episode's replay beside the log, so that ``saber verify
            LOG`` checks them, in either autoreset mode (``NEXT_STEP``'s reset step after
            an end plays no action and is not recorded); the env must seed every episode
            (``env.unwrapped.seed_each_episode = True``).

    Raises:
        SaberError: ``replays`` without a log path or without every episode seeded, or
            resume counts that do not fit the env.
    """

    def __init__(
        self,
        env: gym.vector.VectorEnv,
        path: str | Path | None,
        start_frames: int | Mapping[str, int] = 0,
        checkpoints: Iterable[int] = TRAINING_CHECKPOINTS,
        start_episodes: int | Mapping[str, int] = 0,
        replays: bool = False,
    ) -> None:
        super().__init__(env)
        row_games = getattr(env.unwrapped, "row_games", None)  # a multi-game vector env's
        self.log: TrainingLog | GameLogs
        if row_games is None:
            if isinstance(start_frames, Mapping) or isinstance(start_episodes, Mapping):
                raise SaberError(_COUNTS_FOR_ONE_GAME)
            self.log = TrainingLog(path, saber_game(env), start_frames, checkpoints, start_episodes)
        else:
            saber_settings(env)  # raises TypeError for an env saber did not make
            games = [str(game) for game in row_games]
            self.log = GameLogs(path, games, checkpoints, start_frames, start_episodes)
        self._counter = FrameCounter(env.num_envs)
        # Rows whose next step is NEXT_STEP's reset step (their episode ended at this one).
        self._resetting = np.zeros(env.num_envs, dtype=bool)
        self._autoreset = getattr(env.unwrapped, "autoreset_mode", None) == AutoresetMode.NEXT_STEP
        self.replays = (
            _replays(env, self.log.path, self.log.game, env.num_envs) if replays else None
        )

    @property
    def total_frames(self) -> int:
        """Emulator frames played (by all sub-envs) since the start of the training."""
        return self.log.frames

    def metrics(self) -> dict[str, float]:
        """SABER's training-time numbers so far (:meth:`TrainingMetrics.as_dict`; of a
        multi-game env, each game's under ``saber/<game>/`` and the median and mean over
        games of the world-record-normalized scores)."""
        return self.log.numbers()

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        # Only the rows reset start from frame 0: a partial reset (``reset_mask``) leaves
        # the others mid-episode, and their frames since the last step are still to count.
        mask = (kwargs.get("options") or {}).get("reset_mask")
        rows = slice(None) if mask is None else np.asarray(mask, dtype=bool)
        self._counter.restart(rows)
        self._resetting[rows] = False
        if self.replays is not None:
            self._start_replays(np.arange(self.num_envs)[rows].tolist())
        return obs, info

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        self.log.advance_rows(self._counter.played_rows(_frame_numbers(info)))
        replays = self.replays
        if replays is not None:
            replays.add(np.asarray(actions).tolist(), (~self._resetting).tolist())
            if self._resetting.any():  # their new episode starts now, from the seed it drew
                self._start_replays(np.flatnonzero(self._resetting).tolist())
        key = "saber" if "_saber" in info else "episode"  # saber before info["saber"]
        if f"_{key}" in info:
            episode = info[key]
            for row in np.flatnonzero(info[f"_{key}"]).tolist():
                record = {name: values[row] for name, values in episode.items()}
                extra = None
                if replays is not None:
                    number = self.log.episode_number(row)
                    extra = replays.finish(row, number, int(record["steps"]))
                self.log.write(record, row=row, extra=extra)
        if self._autoreset:
            self._resetting = np.logical_or(terminated, truncated)
        return obs, rewards, terminated, truncated, info

    def _start_replays(self, rows: list[int]) -> None:
        if self.replays is not None:
            seeds = self.env.unwrapped.episode_seeds
            self.replays.start(rows, [int(seeds[row]) for row in rows])

    def close(self, **kwargs: Any) -> None:
        self.log.close()
        super().close(**kwargs)


_COUNTS_FOR_ONE_GAME = (
    "start_frames and start_episodes are numbers for one game's env (a count per game is "
    "for a multi-game env)"
)


def _frame_numbers(info: dict[str, Any]) -> Any:
    if "episode_frame_number" not in info:
        raise SaberError(
            "The training recorder needs a SABER env (info['episode_frame_number'] at every "
            "step): gymnasium.make('SABER/<Game>') or saber.make_env."
        )
    return info["episode_frame_number"]


class GameReplays:
    """The :class:`TrainingReplays` of each game of a multi-game vector env, row by row:
    each game's replays lie under ``<log stem>.replays/<game>/``, numbered as its log lines."""

    def __init__(self, path: Path, row_games: list[str], settings: dict[str, Any]) -> None:
        rows = len(row_games)
        by_game = {
            game: TrainingReplays(path, game, rows, settings) for game in dict.fromkeys(row_games)
        }
        self._row_replays = [by_game[game] for game in row_games]
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
    env: gym.Env | gym.vector.VectorEnv, path: Path | None, game: str, rows: int
) -> TrainingReplays | GameReplays:
    """The replays of a recorder of ``env`` (``rows`` sub-envs), which must seed every episode.

    Raises:
        SaberError: no log path, not a SABER env, or an env that does not seed every episode.
    """
    if path is None:
        raise SaberError("Recording training replays needs a log path: they are written beside it")
    unwrapped = env.unwrapped
    if not hasattr(unwrapped, "seed_each_episode"):
        raise SaberError(
            f"Recording training replays needs a SABER env underneath, actually "
            f"{type(unwrapped).__name__}: use gymnasium.make or make_vec of SABER/<Game>"
        )
    if not unwrapped.seed_each_episode:
        raise SaberError(
            "Recording training replays needs every episode seeded, so that each replays: "
            "set env.unwrapped.seed_each_episode = True before the recorder"
        )
    settings = saber_settings(env).as_dict()
    row_games = getattr(unwrapped, "row_games", None)  # a multi-game vector env's
    if row_games is not None:
        return GameReplays(path, [str(name) for name in row_games], settings)
    return TrainingReplays(path, game, rows, settings)
