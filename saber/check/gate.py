"""The quick probe ``saber eval`` runs before playing: is the env it will play SABER?

Settings are checked before this (``SaberSettings.deviations``); the probe catches what
settings cannot show, such as wrappers above SABER's env, by behaviour.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

from saber.check.result import CheckResult
from saber.check.table import format_table
from saber.check.verdicts import probe_key, remember_pass, was_passed
from saber.errors import ProtocolError

GAME = "pong"


def require_saber(factory: Callable[[], Any], target: str) -> CheckResult:
    """Run the quick probe on ``factory``'s env; raise unless every rule it probes passes.

    The rules the quick probe leaves out (sticky actions, the action set, the stuck
    timeout) are settings of saber's env, checked before (``SaberSettings.deviations``).

    Args:
        factory: makes the env the run will play (a fresh one per probe).
        target: its name in the message.

    Raises:
        ProtocolError: a rule failed or could not be measured, with the table, and the way
            to run anyway (``env_options=EnvOptions(allow_non_saber=True)``, ``--allow-non-saber``).
    """
    from saber.check.api import check  # the probes and the envs: only when probing

    result = check(factory, quick=True, target=target)
    if not result.probed_passed:
        raise ProtocolError(
            f"The env to evaluate does not behave as SABER:\n{format_table(result)}\n"
            "Pass --allow-non-saber (EnvOptions(allow_non_saber=True)) to run anyway; the results are "
            "then marked as not SABER."
        )
    return result


def require_saber_env(overrides: dict[str, Any] | None = None) -> None:
    """:func:`require_saber` on the env the harness plays, ``make_env(game, **overrides)``.

    The harness plays the vector env, which runs the same code and gives the same steps
    (tested); its emulators are out of reach, so the single env is probed. The game is
    Pong whatever the run plays: saber's env code is the same for every game, and the
    probes load the games they need under it anyway (a few games have taller screens,
    which those games cannot run under). Reward clipping is probed like any option: the
    agent's rewards are clipped, the score recorded in ``info["saber"]`` stays raw (what
    the raw-reward rule checks). The verdict is kept for the process: the same settings
    are probed once. A pass is also kept on disk under a key of saber's source, the
    libraries' versions and the settings (:mod:`saber.check.verdicts`), so that later
    runs of the same code skip the probe (about 0.8 s of CPU).
    """
    _require_once(GAME, json.dumps(overrides or {}, sort_keys=True, default=repr))


@functools.lru_cache(maxsize=64)
def _require_once(game: str, options: str) -> None:
    key = probe_key(game, options)
    if was_passed(key):
        return  # without importing the emulator: this process may play nothing
    import ale_py

    from saber.envs import make_env

    # As the harness's workers do: ale-py's banner would tear saber eval's progress bar.
    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)
    overrides = json.loads(options)
    require_saber(functools.partial(make_env, game, **overrides), f"saber env of {game}")
    remember_pass(key)
