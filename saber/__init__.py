"""saber: the SABER Atari benchmark (Toromanoff, Wirbel and Moutarde, 2019) for Gymnasium.

Importing saber registers ``SABER/<Game>`` (:mod:`saber.registration`); code that has not
imported it names the module in the id, ``gymnasium.make("saber:SABER/Pong")``. The names
below load when first used, so ``import saber.scoring`` loads no emulator.
"""

from __future__ import annotations

import importlib
from typing import Any

from saber.errors import (
    ProtocolError,
    SaberError,
    ScoreFileError,
    UnknownGameError,
)
from saber.registration import register_when_gymnasium_loads
from saber.version import __version__

# Public name -> the module that owns it (imported on first access).
_LAZY = {
    "GameInfo": "saber.games",
    "get_game": "saber.games",
    "resolve_games": "saber.games",
    "SaberSettings": "saber.protocol",
    "EpisodeRecord": "saber.protocol",
    "SaberVectorEnv": "saber.envs",
    "make_env": "saber.envs",
    "saber_settings": "saber.envs",
    "evaluate": "saber.harness",
}
__all__ = [
    "EpisodeRecord",
    "GameInfo",
    "ProtocolError",
    "SaberError",
    "SaberSettings",
    "SaberVectorEnv",
    "ScoreFileError",
    "UnknownGameError",
    "__version__",
    "check",
    "evaluate",
    "get_game",
    "make_env",
    "resolve_games",
    "saber_settings",
]


def __getattr__(name: str) -> Any:
    if name == "check":
        # saber.check(env) is the probe's package itself, made callable: importing it binds
        # the name here, as every subpackage's import does.
        return importlib.import_module("saber.check")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'saber' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once: later reads are plain attribute lookups
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | {"check"})


register_when_gymnasium_loads()
