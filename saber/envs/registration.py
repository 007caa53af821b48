"""Registers ``SABER/<Game>`` with Gymnasium for every single-player ROM of ale-py."""

from __future__ import annotations

import gymnasium as gym

from saber.envs.factory import env_id, supported_rom_ids

__all__ = ["register_saber_envs"]


def register_saber_envs() -> None:
    """Register ``SABER/<Game>`` (single: ``gym.make``, vector: ``gym.make_vec``) for every game.

    Safe to call more than once. The 61 games of the SABER paper are among them; the
    others (ale-py ships more ROMs) run under the same protocol but have no SABER baseline.
    """
    for rom_id in supported_rom_ids():
        name = env_id(rom_id)
        if name in gym.registry:
            continue
        gym.register(
            id=name,
            entry_point="saber.envs.factory:make_env",
            vector_entry_point="saber.envs.vector:SaberVectorEnv",
            kwargs={"game": rom_id},
            # Episodes end at game over or by SABER's own frame-based limits, not steps.
            max_episode_steps=None,
            nondeterministic=False,
        )
