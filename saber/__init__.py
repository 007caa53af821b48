"""saber: the SABER Atari benchmark (Toromanoff, Wirbel and Moutarde, 2019) for Gymnasium.

Importing saber registers ``SABER/<Game>`` with Gymnasium. Gymnasium 1.x loads no plugins,
so code that has not imported saber (a spawned worker, say) names the module in the id:
``gymnasium.make("saber:SABER/Pong")``.
"""

from __future__ import annotations

__version__ = "0.2.0"

from saber.envs import SaberSettings, SaberVectorEnv, make_env, make_vec_env, saber_settings
from saber.errors import ProtocolError, SaberError, ScoreFileError, UnknownGameError
from saber.games import GameInfo, get_game, resolve_games
from saber.harness import evaluate

__all__ = [
    "GameInfo",
    "ProtocolError",
    "SaberError",
    "SaberSettings",
    "SaberVectorEnv",
    "ScoreFileError",
    "UnknownGameError",
    "__version__",
    "evaluate",
    "get_game",
    "make_env",
    "make_vec_env",
    "resolve_games",
    "saber_settings",
]


def __getattr__(name: str) -> object:
    if name == "check":  # saber.check(env): the probe, imported on first use
        import saber.check

        return saber.check
    raise AttributeError(f"module 'saber' has no attribute {name!r}")
