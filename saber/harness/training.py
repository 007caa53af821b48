"""The training-time protocol: log every training episode, score 100 at checkpoints.

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
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import gymnasium as gym
import numpy as np

from saber.envs import saber_settings
from saber.errors import SaberError

__all__ = [
    "TRAINING_CHECKPOINTS",
    "CheckpointScore",
    "TrainingRecorder",
    "VectorTrainingRecorder",
    "format_training_scores",
    "parse_frames",
    "saber_game",
    "training_scores",
]

TRAINING_CHECKPOINTS = (10_000_000, 50_000_000, 100_000_000, 200_000_000)  # frames
WINDOW = 100  # consecutive training episodes averaged at each checkpoint


class _Log:
    """The JSON-lines writer and the cumulative frame count shared by both recorders."""

    def __init__(self, path: str | Path, game: str, start_frames: int) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.game = game
        self.frames = int(start_frames)
        self.episodes = 0
        self._handle: TextIO | None = self.path.open("a", encoding="utf-8")

    def write(self, episode: dict[str, Any], row: int | None = None) -> None:
        record = {
            "game": self.game,
            "episode": self.episodes,
            "frames": self.frames,
            "score": float(episode["score"]),
            "episode_frames": int(episode["frames"]),
            "end": str(episode["end"]),
        }
        if row is not None:
            record["env"] = row
        if self._handle is not None:
            self._handle.write(json.dumps(record) + "\n")
            self._handle.flush()  # a crashed training keeps its log
        self.episodes += 1

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def _frame_numbers(info: dict[str, Any]) -> Any:
    if "episode_frame_number" not in info:
        raise SaberError(
            "The training recorder needs a SABER env (info['episode_frame_number'] at every "
            "step): gymnasium.make('SABER/<Game>') or saber.make_env."
        )
    return info["episode_frame_number"]


class TrainingRecorder(gym.Wrapper):
    """Log every episode of a single SABER env with the cumulative training frames.

    Args:
        env: a SABER env (possibly wrapped).
        path: the JSON-lines log; appended to.
        start_frames: training frames already done (when resuming a training: the
            ``frames`` of the log's last line, or your own count).
    """

    def __init__(self, env: gym.Env, path: str | Path, start_frames: int = 0) -> None:
        super().__init__(env)
        self.log = _Log(path, saber_game(env), start_frames)
        self._last_frame = 0

    @property
    def total_frames(self) -> int:
        """Emulator frames played since the start of the training."""
        return self.log.frames

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._last_frame = 0
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        frame = int(_frame_numbers(info))
        self.log.frames += frame - self._last_frame
        self._last_frame = frame
        if "episode" in info:
            self.log.write(info["episode"])
        return obs, reward, terminated, truncated, info

    def close(self) -> None:
        self.log.close()
        super().close()


class VectorTrainingRecorder(gym.vector.VectorWrapper):
    """Log every episode of a SABER vector env (any autoreset mode) with cumulative frames.

    Episodes are numbered in the order they end; ``env`` in each line is the sub-env.

    Args:
        env: ``SaberVectorEnv`` or ``gymnasium.make_vec("SABER/<Game>", ...)``.
        path: the JSON-lines log; appended to.
        start_frames: training frames already done.
    """

    def __init__(self, env: gym.vector.VectorEnv, path: str | Path, start_frames: int = 0) -> None:
        super().__init__(env)
        self.log = _Log(path, saber_game(env), start_frames)
        self._last_frames = np.zeros(env.num_envs, dtype=np.int64)

    @property
    def total_frames(self) -> int:
        """Emulator frames played by all sub-envs since the start of the training."""
        return self.log.frames

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        # Only the rows reset start from frame 0: a partial reset (``reset_mask``) leaves
        # the others mid-episode, and their frames since the last step are still to count.
        mask = (kwargs.get("options") or {}).get("reset_mask")
        rows = slice(None) if mask is None else np.asarray(mask, dtype=bool)
        self._last_frames[rows] = 0
        return obs, info

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        frames = np.asarray(_frame_numbers(info), dtype=np.int64)
        # A frame number below the last one is a new episode (an autoreset): count from 0.
        played = np.where(frames >= self._last_frames, frames - self._last_frames, frames)
        self.log.frames += int(played.sum())
        self._last_frames = frames
        if "_episode" in info:
            episode = info["episode"]
            for row in np.flatnonzero(info["_episode"]).tolist():
                self.log.write({key: values[row] for key, values in episode.items()}, row=row)
        return obs, rewards, terminated, truncated, info

    def close(self, **kwargs: Any) -> None:
        self.log.close()
        super().close(**kwargs)


def saber_game(env: gym.Env | gym.vector.VectorEnv) -> str:
    """The ale id of a SABER env (checked to be one)."""
    saber_settings(env)  # raises TypeError for an env saber did not make
    unwrapped = env.unwrapped
    # SaberVectorEnv has rom_id; ale-py's AtariEnv (under the single env) has _game.
    game = getattr(unwrapped, "rom_id", None) or getattr(unwrapped, "_game", None)
    if game is None:
        spec = getattr(env, "spec", None)
        game = spec.id if spec is not None else "unknown"
    return str(game)


_SUFFIXES = {"k": 1_000, "m": 1_000_000, "b": 1_000_000_000, "g": 1_000_000_000}


def parse_frames(text: str) -> int:
    """``"10M"`` -> 10,000,000; also ``"500k"``, ``"1.5e6"``, ``"200000000"``, ``"1_000"``.

    Raises:
        SaberError: not a non-negative number of frames.
    """
    match = re.fullmatch(r"\s*([0-9_.eE+]+)\s*([kKmMbBgG]?)\s*", text)
    try:
        if match is None:
            raise ValueError
        value = float(match.group(1).replace("_", "")) * _SUFFIXES.get(match.group(2).lower(), 1)
    except ValueError:
        raise SaberError(
            f"Expect a number of frames like 10M, 500k, 1.5e6 or 200000000, actually: {text!r}"
        ) from None
    if value < 0 or value != int(value):
        raise SaberError(f"Expect a whole, non-negative number of frames, actually: {text!r}")
    return int(value)


@dataclass(frozen=True)
class CheckpointScore:
    """The training score of one game at one checkpoint.

    Attributes:
        game: ale id.
        at_frames: the checkpoint, in cumulative training frames.
        mean: mean score of the episodes averaged (None when none had ended).
        episodes: how many were averaged (100, or fewer if fewer had ended).
        first_episode, last_episode: the ``episode`` numbers of the window.
    """

    game: str
    at_frames: int
    mean: float | None
    episodes: int
    first_episode: int | None
    last_episode: int | None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return dict(self.__dict__)


def _read_log(path: Path) -> dict[str, list[dict[str, Any]]]:
    by_game: dict[str, list[dict[str, Any]]] = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                by_game.setdefault(str(record["game"]), []).append(
                    {
                        "frames": int(record["frames"]),
                        "score": float(record["score"]),
                        "episode": int(record.get("episode", number - 1)),
                    }
                )
            except (ValueError, KeyError, TypeError):
                raise SaberError(
                    f"{path}:{number}: not a training-log line (game, frames, score)"
                ) from None
    return by_game


def training_scores(
    path: str | Path, at_frames: Iterable[int | str] = TRAINING_CHECKPOINTS
) -> list[CheckpointScore]:
    """The paper's training-time scores from a recorder log.

    At each checkpoint C (cumulative training frames), the mean score of the ``WINDOW``
    (100) consecutive episodes that ended last at or before C; fewer when fewer had ended
    (``episodes`` says how many).

    Args:
        path: a log written by :class:`TrainingRecorder` or :class:`VectorTrainingRecorder`.
        at_frames: checkpoints, as ints or strings like ``"10M"``.

    Returns:
        One :class:`CheckpointScore` per game of the log and checkpoint, game by game.
    """
    path = Path(path)
    if not path.is_file():
        raise SaberError(f"{path}: no such training log")
    checkpoints = [parse_frames(c) if isinstance(c, str) else int(c) for c in at_frames]
    results = []
    for game, episodes in _read_log(path).items():
        episodes.sort(key=lambda e: (e["frames"], e["episode"]))
        ends = np.array([e["frames"] for e in episodes])
        for checkpoint in checkpoints:
            stop = int(np.searchsorted(ends, checkpoint, side="right"))
            window = episodes[max(0, stop - WINDOW) : stop]
            results.append(
                CheckpointScore(
                    game=game,
                    at_frames=checkpoint,
                    mean=float(np.mean([e["score"] for e in window])) if window else None,
                    episodes=len(window),
                    first_episode=window[0]["episode"] if window else None,
                    last_episode=window[-1]["episode"] if window else None,
                )
            )
    return results


def format_training_scores(scores: Sequence[CheckpointScore]) -> str:
    """A Markdown table of :func:`training_scores` (game, frames, mean, episodes)."""
    lines = ["| game | frames | mean score | episodes |", "|---|---:|---:|---:|"]
    for score in scores:
        mean = "n/a" if score.mean is None else f"{score.mean:,.1f}"
        note = "" if score.episodes == WINDOW else " (fewer than 100)"
        lines.append(f"| {score.game} | {score.at_frames:,} | {mean} | {score.episodes}{note} |")
    return "\n".join(lines) + "\n"
