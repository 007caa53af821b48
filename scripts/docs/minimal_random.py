"""A random agent over a game's *minimal* action set, as DQN-era random agents played.

Maintainers' tool for ``docs/random-agent.md`` ("Why they differ"): saber's built-in
random agent draws from all 18 actions, as SABER asks; this one draws uniformly from
``ale.getMinimalActionSet()`` of the game named by ``SABER_MINIMAL_GAME`` (one game per
run; worker processes inherit the variable), seeded per episode like the built-in one::

    cd scripts/docs
    SABER_MINIMAL_GAME=amidar saber eval --agent minimal_random:MinimalRandom \\
        --games amidar --episodes 100 --out ../../runs/minimal/amidar
"""

from __future__ import annotations

import os

import ale_py
import numpy as np
from ale_py import roms

from saber.agents.generators import PerEpisodeGenerators


class MinimalRandom(PerEpisodeGenerators):
    """Uniformly random actions over the minimal action set of ``$SABER_MINIMAL_GAME``."""

    def __init__(self) -> None:
        super().__init__()
        ale = ale_py.ALEInterface()
        ale.setLoggerMode(ale_py.LoggerMode.Error)
        ale.loadROM(roms.get_rom_path(os.environ["SABER_MINIMAL_GAME"]))
        self.actions = np.array([a.value for a in ale.getMinimalActionSet()], dtype=np.int64)

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        count = len(self.actions)
        rows = range(len(observations))
        return np.array([self.actions[self.generator(r).integers(count)] for r in rows])
