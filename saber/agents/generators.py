"""Per-episode random generators: what makes a stochastic policy reproducible.

:class:`PerEpisodeGenerators` keeps one generator per batch row, re-seeded from the
episode's seed at ``start_episodes``, so an episode's actions depend on its seed alone.
"""

from __future__ import annotations

import numpy as np

from saber.protocol.settings import NUM_ACTIONS

# Mixed into each episode seed so a policy's generator never shares a stream with the env's.
POLICY_STREAM = 0x5ABE


class PerEpisodeGenerators:
    """Base of stochastic policies: one random generator per batch row, re-seeded from the
    episode seed at each episode start, so actions do not depend on workers or rows.

    Subclasses draw from :meth:`generator` and may set :attr:`stream`, mixed into each
    episode seed so that the policy's stream never equals the environment's.
    """

    stream: int = POLICY_STREAM

    def __init__(self) -> None:
        self._generators: dict[int, np.random.Generator] = {}

    def start_episodes(self, rows: np.ndarray, seeds: np.ndarray) -> None:
        """Seed the generators of ``rows`` from their episodes' ``seeds``."""
        for row, seed in zip(rows.tolist(), seeds.tolist(), strict=True):
            self._generators[row] = np.random.default_rng([int(seed), self.stream])

    def generator(self, row: int) -> np.random.Generator:
        """The generator of batch row ``row``."""
        # Used outside the harness (no start_episodes call): still valid, not reproducible.
        if row not in self._generators:
            self._generators[row] = np.random.default_rng()
        return self._generators[row]

    def explore(self, actions: np.ndarray, epsilon: float) -> np.ndarray:
        """Replace each of ``actions`` (n,) by a uniformly random one with probability
        ``epsilon``, in place; returns ``actions``."""
        for row in range(len(actions)):
            generator = self.generator(row)
            # Two draws per step whatever the outcome, so the streams stay aligned.
            explore, random_action = generator.random(), generator.integers(NUM_ACTIONS)
            if explore < epsilon:
                actions[row] = random_action
        return actions

    def _uniform_actions(self, count: int) -> np.ndarray:
        return np.array(
            [self.generator(row).integers(NUM_ACTIONS) for row in range(count)], dtype=np.int64
        )
