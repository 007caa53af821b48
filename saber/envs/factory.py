"""``make_env(game, **overrides)``: ale-py -> SABER preprocessing -> one wrapper per rule."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from saber.envs.core import SaberAtariEnv
from saber.envs.wrappers import (
    ClipRewardKeepRaw,
    FrameLimit,
    NoRewardTimeout,
    RolloverCorrection,
    SaberEpisodeStatistics,
)
from saber.games import get_game
from saber.protocol.settings import SaberSettings


def resolve_rom_id(game: str) -> str:
    """The ale-py ROM id of ``game`` in any spelling (``"SABER/MsPacman"`` -> ``"ms_pacman"``).

    :func:`saber.games.get_game` knows every ROM of :func:`supported_rom_ids`.

    Raises:
        UnknownGameError: no ROM matches; the message names the closest games.
    """
    return get_game(game).ale_id


def make_env(
    game: str,
    *,
    render_mode: str | None = None,
    checkpoint_frames: dict[str, int] | None = None,
    **overrides: Any,
) -> gym.Env:
    """The SABER environment of a game, with optional overrides of the protocol's settings.

    The stack, innermost first: :class:`SaberAtariEnv` (the core: emulator, 4-frame
    repeat with max-pooling, resize, frame stack; ``env.unwrapped``) ->
    :class:`RolloverCorrection` -> :class:`NoRewardTimeout` -> :class:`FrameLimit` ->
    :class:`SaberEpisodeStatistics` -> :class:`ClipRewardKeepRaw` when ``clip_rewards``
    (Gymnasium's ``ClipReward``, the raw reward in ``info["raw_reward"]``).
    Each wrapper applies one rule, by the function of :mod:`saber.envs.rules` that the
    vector env applies too. To put a wrapper of your own under the rules (say
    ``TransformReward``), build the same stack by hand on ``SaberAtariEnv(game)``.

    Args:
        game: any spelling of a game (``"pong"``, ``"Pong"``, ``"SABER/Pong"``).
        render_mode: ``"rgb_array"`` or ``"human"``.
        checkpoint_frames: ``{name: emulator frame}`` at which the episode record also
            keeps the score (default: 5 and 30 minutes, from the time-limit registry).
        **overrides: fields of :class:`SaberSettings`; anything but ``clip_rewards`` makes
            the env non-compliant (see :func:`saber_settings`).

    Raises:
        UnknownGameError: unknown game, with the closest names.
        ProtocolError: an invalid or unknown setting.
    """
    settings = SaberSettings.from_overrides(**overrides)
    env: gym.Env = SaberAtariEnv(game, settings, render_mode=render_mode)
    env = RolloverCorrection(
        env, threshold=settings.rollover_threshold, mode=settings.rollover_mode
    )
    if settings.max_frames_without_reward is not None:
        env = NoRewardTimeout(env, max_frames=settings.max_frames_without_reward)
    if settings.max_episode_frames is not None:
        env = FrameLimit(env, max_frames=settings.max_episode_frames)
    env = SaberEpisodeStatistics(env, checkpoint_frames=checkpoint_frames)
    if settings.clip_rewards:
        env = ClipRewardKeepRaw(env, -1.0, 1.0)
    return env


# The registered entry point (saber.registration): RL Zoo treats an env as Atari when its
# entry point contains "AtariEnv" (rl_zoo3's ExperimentManager.is_atari), and then plays it
# as Atari: stochastic evaluation and `enjoy`, `enjoy` printing Monitor's episode score.
make_AtariEnv = make_env


def saber_settings(env: gym.Env | gym.vector.VectorEnv) -> SaberSettings:
    """The settings an env made by saber runs with; ``.is_compliant`` tells if it is SABER.

    Raises:
        TypeError: the env was not made by saber (a Gymnasium vector env of SABER envs
            counts, if all its sub-envs have the same settings).
    """
    settings = getattr(env.unwrapped, "saber_settings", None)
    if settings is None and isinstance(env, gym.vector.VectorEnv):
        # Gymnasium's SyncVectorEnv / AsyncVectorEnv over SABER envs: ask the sub-envs.
        try:
            every = set(env.get_attr("saber_settings"))
        except (AttributeError, NotImplementedError):
            every = set()
        settings = every.pop() if len(every) == 1 else None
    if not isinstance(settings, SaberSettings):
        raise TypeError(
            f"{env} was not made by saber (gymnasium.make('SABER/<Game>') or saber.make_env)."
        )
    return settings
