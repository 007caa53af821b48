"""``SABER/<Game>`` in Gymnasium's registry, without making ``import saber`` import Gymnasium.

Registered at once when Gymnasium is already imported, else by a one-shot import hook
right after Gymnasium's own import, so a process that never imports it never pays for it.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
from collections.abc import Sequence
from types import ModuleType

from saber.games import ale_id_to_env_name, game_sets, supported_rom_ids

_lock = threading.Lock()


def env_id(rom_id: str) -> str:
    """The Gymnasium id of a ROM: ``"ms_pacman"`` -> ``"SABER/MsPacman"``.

    >>> env_id("ms_pacman")
    'SABER/MsPacman'
    """
    return f"SABER/{ale_id_to_env_name(rom_id)}"


def register_saber_envs() -> None:
    """Register ``SABER/<Game>`` (single: ``gym.make``, vector: ``gym.make_vec``) for every
    game, and the ids of many games in one vector env: ``SABER/<Set>`` for every set of
    :func:`saber.games.game_sets` (``SABER/Atari5``, ``SABER/Atari57``, ``SABER/Saber61``,
    ...) and ``SABER/Games`` (``games=[...]``), for ``gym.make_vec`` only.

    Safe to call more than once. The 61 games of the SABER paper are among them; the
    others (ale-py ships more ROMs) run under the same protocol but have no SABER baseline.
    """
    for rom_id in supported_rom_ids():
        # make_env under a name RL Zoo recognizes as Atari (see saber.envs.factory).
        _register(
            env_id(rom_id),
            "saber.envs.factory:make_AtariEnv",
            "saber.envs.vector:SaberVectorEnv",
            {"game": rom_id},
        )
    # Many games in one vector env (saber.envs.multigame): a named set's id
    # (SABER/Atari5, ..., SABER/Saber61) and SABER/Games, whose games the caller gives.
    # gymnasium.make on them is refused in one line (a set is not one env).
    for name, game_set in [("SABER/Games", None), *((env_id(s), s) for s in game_sets())]:
        _register(
            name,
            "saber.envs.multigame:_no_single_env",
            "saber.envs.multigame:SaberMultiGameVectorEnv",
            {} if game_set is None else {"game_set": game_set},
        )


def _register(name: str, entry_point: str, vector_entry_point: str, kwargs: dict[str, str]) -> None:
    """Register one SABER id, unless it is registered already."""
    import gymnasium as gym

    if name in gym.registry:
        return
    gym.register(
        name,
        entry_point,
        vector_entry_point=vector_entry_point,
        kwargs=kwargs,
        # Episodes end at game over or by SABER's own frame-based limits, not steps.
        max_episode_steps=None,
        nondeterministic=False,
    )


class _RegisterAfterGymnasium(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the spec of ``gymnasium`` so that registering follows
    the execution of Gymnasium's ``__init__``, then leaves ``sys.meta_path``."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "gymnasium":
            return None
        with _lock:
            if self in sys.meta_path:
                sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)  # by the other finders
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        execute = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            execute(module)
            register_saber_envs()

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def register_when_gymnasium_loads() -> None:
    """Register the envs now if Gymnasium is imported, else as soon as it is."""
    if "gymnasium" in sys.modules:
        register_saber_envs()
        return
    with _lock:
        if not any(isinstance(finder, _RegisterAfterGymnasium) for finder in sys.meta_path):
            sys.meta_path.insert(0, _RegisterAfterGymnasium())
