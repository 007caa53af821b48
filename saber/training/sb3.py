"""Stable-Baselines3 on SABER (extra ``sb3``): envs that log raw scores, and SABER's metrics.

:func:`make_sb3_vec_env`, :class:`SaberVecEnv`, :func:`check_sb3_env` and
:class:`SaberMetricsCallback`; docs/rl-libraries.md ("Stable-Baselines3") shows their use.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

from saber.envs.wrappers import RAW_REWARD, ClipRewardKeepRaw
from saber.errors import SaberError
from saber.protocol.training import TRAINING_CHECKPOINTS
from saber.training.episode_log import FrameCounter, TrainingLog
from saber.training.recorders import saber_record

try:
    from stable_baselines3.common import atari_wrappers
    from stable_baselines3.common import env_util as sb3_env_util
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper, VecFrameStack
    from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvStepReturn
except ImportError:  # importable without SB3 (doctests); using it says what to do
    BaseCallback = object  # type: ignore[assignment,misc]
    VecEnv = object  # type: ignore[assignment,misc]

__all__ = ["SaberMetricsCallback", "SaberVecEnv", "check_sb3_env", "make_sb3_vec_env"]

_NEEDS_SB3 = (
    "{} needs Stable-Baselines3: install PyTorch first, then "
    'pip install "saber-ale[sb3]" or, from a checkout, pip install ".[sb3]"'
)


def _require_sb3(what: str) -> None:
    if BaseCallback is object:
        raise SaberError(_NEEDS_SB3.format(what))


def make_sb3_vec_env(
    env_id: str | Callable[..., gym.Env],
    n_envs: int = 1,
    seed: int | None = None,
    start_index: int = 0,
    monitor_dir: str | None = None,
    wrapper_class: Callable[..., gym.Env] | None = None,
    env_kwargs: dict[str, Any] | None = None,
    vec_env_cls: type | None = None,
    vec_env_kwargs: dict[str, Any] | None = None,
    monitor_kwargs: dict[str, Any] | None = None,
    wrapper_kwargs: dict[str, Any] | None = None,
) -> VecEnv:
    """SB3's ``make_vec_env`` for SABER envs: same arguments, raw scores in SB3's logs.

    Named for what it returns, an SB3 ``VecEnv``.

    ``env_kwargs["clip_rewards"]`` is taken out of the env's arguments and done by
    :class:`~saber.envs.ClipRewardKeepRaw` right above SB3's ``Monitor`` (then
    ``wrapper_class``): the agent gets clipped rewards, ``Monitor``'s ``info["episode"]["r"]``
    (``rollout/ep_rew_mean``, ``evaluate_policy``, ``EvalCallback``) is SABER's raw score,
    and each step's ``info["raw_reward"]`` holds the raw reward. ``"SABER/<Game>"`` ids
    become ``"saber:SABER/<Game>"``, so that ``SubprocVecEnv``'s workers register the envs.

    Raises:
        SaberError: SB3 missing, or ``wrapper_class`` brings SB3's Atari wrappers (one line).
    """
    _require_sb3("saber.training.sb3.make_sb3_vec_env")
    env_kwargs = dict(env_kwargs or {})
    clip = bool(env_kwargs.pop("clip_rewards", False))
    if isinstance(env_id, str) and env_id.startswith("SABER/"):
        env_id = f"saber:{env_id}"
    if clip:
        wrapper_class = functools.partial(
            _clip_above_monitor, wrapper_class=wrapper_class, wrapper_kwargs=wrapper_kwargs or {}
        )
        wrapper_kwargs = None
    venv = sb3_env_util.make_vec_env(
        env_id,
        n_envs=n_envs,
        seed=seed,
        start_index=start_index,
        monitor_dir=monitor_dir,
        wrapper_class=wrapper_class,
        env_kwargs=env_kwargs,
        vec_env_cls=vec_env_cls,  # type: ignore[arg-type]
        vec_env_kwargs=vec_env_kwargs,
        monitor_kwargs=monitor_kwargs,
        wrapper_kwargs=wrapper_kwargs,
    )
    try:
        check_sb3_env(venv)
    except SaberError:
        venv.close()
        raise
    return venv


def _clip_above_monitor(
    env: gym.Env, wrapper_class: Callable[..., gym.Env] | None, wrapper_kwargs: dict[str, Any]
) -> gym.Env:
    """SB3's ``wrapper_class`` hook (applied on ``Monitor``): clip, then the user's wrapper."""
    env = ClipRewardKeepRaw(env)
    return env if wrapper_class is None else wrapper_class(env, **wrapper_kwargs)


# SB3's Atari preprocessing, each a second one over SABER's (or a protocol break).
_ATARI_WRAPPER_NAMES = (
    "AtariWrapper",
    "ClipRewardEnv",
    "EpisodicLifeEnv",
    "FireResetEnv",
    "MaxAndSkipEnv",
    "NoopResetEnv",
    "StickyActionEnv",
    "WarpFrame",
)


def check_sb3_env(venv: Any) -> None:
    """Refuse SB3 wrappers that would break SABER over a SABER ``VecEnv`` (one-line errors).

    ``VecFrameStack`` stacks SABER's 4-frame stacks into (16, 84, 84); SB3's Atari wrappers
    (``make_atari_env``, ``AtariWrapper`` and its parts) redo the preprocessing, add
    no-op and FIRE starts, episodes per life and a clipping below ``Monitor``.

    Warns (``UserWarning``, one line) where SB3's ``Monitor`` sits above a SABER env's own
    ``clip_rewards=True`` (SB3's ``make_vec_env``): its episode sums are clipped.

    Raises:
        SaberError: such a wrapper is there (the message names it and what to do).
    """
    _require_sb3("check_sb3_env")
    layer = venv
    while isinstance(layer, VecEnvWrapper):
        if isinstance(layer, VecFrameStack):
            raise SaberError(
                f"VecFrameStack over a SABER env stacks its 4-frame stacks into "
                f"{layer.observation_space.shape}: remove it (SABER envs already give 4 stacked 84x84 frames)"
            )
        layer = layer.venv
    for name in _ATARI_WRAPPER_NAMES:
        if any(venv.env_is_wrapped(getattr(atari_wrappers, name))):
            raise SaberError(
                f"SB3's {name} over a SABER env redoes Atari preprocessing SABER already does or "
                "forbids: remove it (and make_atari_env); use saber.training.sb3.make_sb3_vec_env"
            )
    if not isinstance(layer, SaberVecEnv) and any(venv.env_is_wrapped(Monitor)):
        try:
            settings = venv.get_attr("saber_settings")
        except AttributeError:  # not SABER envs: nothing to say about their rewards
            settings = []
        if any(getattr(each, "clip_rewards", False) for each in settings):
            # The training is right; only the logs are not SABER's scores: warn, not refuse.
            warnings.warn(
                "SB3's Monitor over gym.make('SABER/<Game>', clip_rewards=True) sums clipped "
                "rewards (ep_rew_mean, evaluate_policy): use saber.training.sb3.make_sb3_vec_env",
                stacklevel=2,
            )


class SaberVecEnv(VecEnv):
    """SB3's ``VecEnv`` interface on a SABER vector env made with autoreset disabled.

    When sub-envs end, their last observation goes to ``info["terminal_observation"]``
    (SB3 bootstraps from it after a truncation: ``info["TimeLimit.truncated"]``), SABER's
    episode record to ``info["saber"]``, SB3's ``info["episode"]`` (``r``, ``l``, ``t``) from
    it (raw score, steps, seconds), and they are reset at once, as SB3 expects, with the
    SABER seeding rule (no explicit seed). Every step's infos carry
    ``episode_frame_number`` (so :class:`SaberMetricsCallback` works on it) and, under
    ``clip_rewards``, ``raw_reward``. Since it writes ``Monitor``'s ``info["episode"]`` (raw),
    it answers ``env_is_wrapped(Monitor)`` with True: SB3's ``evaluate_policy`` then reads
    it instead of summing the clipped rewards.

    Args:
        envs: ``gymnasium.make_vec("SABER/<Game>", n, autoreset_mode=AutoresetMode.DISABLED)``,
            optionally inside a :class:`~saber.training.VectorTrainingRecorder`.

    Raises:
        SaberError: SB3 missing.
        ValueError: the vector env autoresets.
    """

    def __init__(self, envs: gym.vector.VectorEnv) -> None:
        _require_sb3("SaberVecEnv")
        if envs.unwrapped.metadata.get("autoreset_mode") != AutoresetMode.DISABLED:
            raise ValueError("Make the SABER vector env with autoreset_mode=DISABLED")
        self.envs = envs
        self._actions = np.zeros(envs.num_envs, dtype=np.int64)
        super().__init__(envs.num_envs, envs.single_observation_space, envs.single_action_space)

    def reset(self) -> np.ndarray:
        # SB3's seed(s) means sub-env i gets s + i; SABER's reset(seed=s) does the same.
        seed = self._seeds[0]
        obs, _ = self.envs.reset(seed=seed)
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)

    def step_wait(self) -> VecEnvStepReturn:
        obs, rewards, terminated, truncated, info = self.envs.step(self._actions)
        dones = terminated | truncated
        frames = info["episode_frame_number"].tolist()
        if RAW_REWARD in info:
            raw = info[RAW_REWARD].tolist()
            infos = [
                {"episode_frame_number": f, RAW_REWARD: r} for f, r in zip(frames, raw, strict=True)
            ]
        else:
            infos = [{"episode_frame_number": f} for f in frames]
        if dones.any():
            for row in np.flatnonzero(dones).tolist():
                record = {key: values[row] for key, values in info["saber"].items()}
                infos[row].update(
                    terminal_observation=obs[row].copy(),
                    saber=record,
                    episode={"r": record["score"], "l": record["steps"], "t": record["seconds"]},
                )
                infos[row]["TimeLimit.truncated"] = bool(truncated[row] and not terminated[row])
            # Only the ended rows; the others keep their episodes (and frame counts).
            obs, _ = self.envs.reset(options={"reset_mask": dones})
        return obs, rewards.astype(np.float32), dones, infos

    def close(self) -> None:
        self.envs.close()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        # One env object serves all rows: the same value for each.
        return [getattr(self.envs, attr_name)] * len(list(self._get_indices(indices)))

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        setattr(self.envs, attr_name, value)

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        result = getattr(self.envs, method_name)(*method_args, **method_kwargs)
        return [result] * len(list(self._get_indices(indices)))

    def env_is_wrapped(
        self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None
    ) -> list[bool]:
        # No per-env gymnasium wrappers; but step_wait gives Monitor's info["episode"].
        wrapped = issubclass(Monitor, wrapper_class)
        return [wrapped] * len(list(self._get_indices(indices)))


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
        _require_sb3("SaberMetricsCallback")
        super().__init__(verbose)
        self.log_path = log_path
        self.game = game
        self.checkpoints = tuple(checkpoints)
        self.start_frames = start_frames
        self.log: TrainingLog | None = None
        self._counter: FrameCounter | None = None

    def _on_training_start(self) -> None:
        if self.log is None:  # a second learn() call continues the same count
            check_sb3_env(self.training_env)
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
