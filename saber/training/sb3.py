"""Stable-Baselines3: SABER's training-time metrics through SB3's logger (extra ``sb3``).

:class:`SaberMetricsCallback` reads every sub-env's ``info`` at every step, counts the
training's emulator frames, and records :class:`~saber.training.TrainingMetrics`'
``saber/...`` numbers with ``self.logger.record``: they reach TensorBoard
(``tensorboard_log=...``), CSV, stdout or W&B, wherever SB3's logger is configured to
write, at SB3's own dump points (PPO: every rollout; DQN: every ``log_interval`` episodes).

Example (illustration, not run as a doctest)::

    from stable_baselines3 import PPO
    from saber.training.sb3 import SaberMetricsCallback
    model = PPO("CnnPolicy", venv, tensorboard_log="runs/tb")
    model.learn(10_000_000, callback=SaberMetricsCallback("runs/pong/training.jsonl"))

It needs SABER's episode record in each ``info``: a ``VecEnv`` of ``gymnasium.make
("SABER/<Game>")`` envs (``DummyVecEnv``, ``SubprocVecEnv``, ``make_vec_env``; SB3's
``Monitor`` may be there). The training log it writes (optional) is the recorders' format,
for ``saber training LOG``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from saber.errors import SaberError
from saber.protocol.training import TRAINING_CHECKPOINTS
from saber.training.recorders import FrameCounter, TrainingLog, saber_record

try:
    from stable_baselines3.common.callbacks import BaseCallback
except ImportError:  # importable without SB3 (doctests); building the callback says what to do
    BaseCallback = object  # type: ignore[assignment,misc]

__all__ = ["SaberMetricsCallback"]


class SaberMetricsCallback(BaseCallback):
    """Record SABER's training metrics through SB3's logger; optionally write the training log.

    Args:
        log_path: the JSON-lines training log to append to (None: metrics only).
        game: ale id (default: read from the envs' spec, ``SABER/<Game>``).
        checkpoints: training frames at which to keep the score (10M, 50M, 100M, 200M).
        start_frames: training frames already done (when resuming).
        verbose: SB3's verbosity.
    """

    def __init__(
        self,
        log_path: str | Path | None = None,
        game: str | None = None,
        checkpoints: Iterable[int] = TRAINING_CHECKPOINTS,
        start_frames: int = 0,
        verbose: int = 0,
    ) -> None:
        if BaseCallback is object:
            raise SaberError(
                "SaberMetricsCallback needs Stable-Baselines3: install PyTorch first, then "
                'pip install "saber-ale[sb3]" or, from a checkout, pip install ".[sb3]"'
            )
        super().__init__(verbose)
        self.log_path = log_path
        self.game = game
        self.checkpoints = tuple(checkpoints)
        self.start_frames = start_frames
        self.log: TrainingLog | None = None
        self._counter: FrameCounter | None = None

    def _on_training_start(self) -> None:
        if self.log is None:  # a second learn() call continues the same count
            game = self.game or _game_of(self.training_env)
            self.log = TrainingLog(self.log_path, game, self.start_frames, self.checkpoints)
            self._counter = FrameCounter(self.training_env.num_envs)

    def metrics(self) -> dict[str, float]:
        """The numbers recorded (the plain-Python hook, also usable here)."""
        if self.log is None:
            raise SaberError("No metrics before model.learn(..., callback=...) has started")
        return self.log.metrics.as_dict()

    def _on_step(self) -> bool:
        assert self.log is not None and self._counter is not None
        infos, dones = self.locals["infos"], np.asarray(self.locals["dones"])
        try:
            frames = [info["episode_frame_number"] for info in infos]
        except KeyError:
            raise SaberError(
                "SaberMetricsCallback needs SABER envs (info['episode_frame_number'] at every "
                "step): a VecEnv of gymnasium.make('SABER/<Game>')"
            ) from None
        self.log.advance(self._counter.played(frames))
        for row, info in enumerate(infos):
            record = saber_record(info)
            if dones[row] and record is not None:
                self.log.write(record, row=row)
        # SB3 resets a finished env at once: its next frame numbers start from 0.
        self._counter.restart(dones.astype(bool))
        if dones.any():  # DQN dumps its logs on the steps that end episodes
            self._record()
        return True

    def _on_rollout_end(self) -> None:
        self._record()  # on-policy algorithms dump their logs after each rollout

    def _record(self) -> None:
        assert self.log is not None
        for key, value in self.log.metrics.as_dict().items():
            self.logger.record(key, value)

    def _on_training_end(self) -> None:
        self._record()

    def close(self) -> None:
        """Close the training log (a later ``learn`` then logs metrics only)."""
        if self.log is not None:
            self.log.close()


def _game_of(venv: Any) -> str:
    spec = venv.get_attr("spec")[0]
    game = getattr(spec, "kwargs", {}).get("game") if spec is not None else None
    if not game:
        raise SaberError(
            "SaberMetricsCallback could not tell the game from the envs' spec; pass game='pong'"
        )
    return str(game)
