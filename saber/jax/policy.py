"""Trained JAX parameters as a saber policy, for ``saber eval`` and ``saber.evaluate``.

:class:`JaxQPolicy` plays ``examples/pqn_jax.py``'s ``params.npz`` epsilon-greedily;
:func:`load_policy` reads the file named by ``SABER_JAX_PARAMS`` (and ``SABER_JAX_EPSILON``)
for ``saber eval --agent saber.jax.policy:load_policy`` (docs/jax.md).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from saber.agents.generators import PerEpisodeGenerators
from saber.errors import PolicyError

# protocol.md fixes the environment, not the agent. Dopamine's Rainbow and IQN (the base
# of the SABER paper's Rainbow-IQN) evaluate with epsilon 0.001: a greedy network can
# otherwise repeat one action forever (sticky actions already make the game stochastic).
DEFAULT_EPSILON = 0.001
PARAMS_VARIABLE = "SABER_JAX_PARAMS"
EPSILON_VARIABLE = "SABER_JAX_EPSILON"


def _padded(count: int) -> int:
    """The batch size compiled for ``count`` observations: the next power of two, so a
    worker whose batch shrinks at the end of its episodes compiles a few shapes, not one
    per count."""
    return 1 << max(0, count - 1).bit_length()


class JaxQPolicy(PerEpisodeGenerators):
    """Epsilon-greedy on the Q-values of a saved :mod:`saber.jax.qnetwork`.

    Picklable (the harness sends it to worker processes): it travels as the file's path,
    and each process loads the parameters and compiles the network on first use.

    Args:
        path: a parameter file of :func:`saber.jax.qnetwork.save_params`.
        epsilon: probability of a uniformly random action at each step (per episode
            generators, so scores do not depend on workers or batch rows).

    Raises:
        PolicyError: epsilon outside [0, 1], or the file is missing or not a parameter file.
    """

    stream = 0x1A8  # mixed into each episode seed: exploration never equals the env's stream

    def __init__(self, path: str | Path, epsilon: float = DEFAULT_EPSILON) -> None:
        super().__init__()
        if not 0.0 <= epsilon <= 1.0:
            raise PolicyError(f"Expect epsilon in [0, 1], actually: {epsilon!r}")
        self.path = str(path)
        self.epsilon = float(epsilon)
        if not Path(self.path).is_file():  # here, not first in a worker minutes later
            raise PolicyError(
                f"{self.path}: no such parameter file (examples/pqn_jax.py writes OUT/params.npz)"
            )
        self._q_values: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "epsilon": self.epsilon}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"], state["epsilon"])  # type: ignore[misc]

    def _network(self) -> Any:
        if self._q_values is None:
            import jax  # the jax extra; imported where the policy first plays

            from saber.jax.qnetwork import load_params, q_values

            try:
                params, _ = load_params(self.path)
            except Exception as error:
                raise PolicyError(str(error)) from None
            # Parameters as an argument, not closed over: XLA would fold 7 MB of constants.
            params = jax.device_put(params)
            compiled = jax.jit(q_values)
            self._q_values = lambda observations: compiled(params, observations)
        return self._q_values

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        count = len(observations)
        batch = np.zeros((_padded(count), *observations.shape[1:]), dtype=np.uint8)
        batch[:count] = observations
        q = np.asarray(self._network()(batch))[:count]
        actions = q.argmax(axis=1).astype(np.int64)
        if self.epsilon > 0.0:
            self.explore(actions, self.epsilon)
        return actions

    def __repr__(self) -> str:
        return f"JaxQPolicy({self.path!r}, epsilon={self.epsilon})"


def load_policy() -> JaxQPolicy:
    """The policy of the file named by ``SABER_JAX_PARAMS`` (for ``saber eval --agent``).

    Raises:
        PolicyError: the variable is unset, or names no parameter file.
    """
    path = os.environ.get(PARAMS_VARIABLE)
    if not path:
        raise PolicyError(
            f"Set {PARAMS_VARIABLE} to the parameter file to evaluate, e.g. "
            f"{PARAMS_VARIABLE}=runs/pqn/params.npz saber eval --agent saber.jax.policy:load_policy ..."
        )
    text = os.environ.get(EPSILON_VARIABLE, str(DEFAULT_EPSILON))
    try:
        epsilon = float(text)
    except ValueError:
        raise PolicyError(f"Expect {EPSILON_VARIABLE} as a number, actually: {text!r}") from None
    return JaxQPolicy(path, epsilon)
