"""RL Zoo's Atari hyperparameters for SABER: ``--conf-file saber.training.zoo`` (extra ``sb3``).

Each ``SABER/<Game>`` id gets RL Zoo's ``atari:`` block adapted to an env that is its own
preprocessing (:data:`ATARI_HYPERPARAMS`, :func:`saber_hyperparams`); docs/rl-libraries.md
("RL Zoo") gives the command and why each change.
"""

from __future__ import annotations

import copy
import inspect
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from saber.envs import env_id
from saber.errors import SaberError
from saber.games import supported_rom_ids

__all__ = [
    "hyperparams",
    "saber_hyperparams",
]

# What RL Zoo's atari: blocks carry beside the algorithm's own settings, made SABER's.
SABER_CHANGES: dict[str, Any] = {
    "env_wrapper": ["saber.envs.ClipRewardKeepRaw"],  # not AtariWrapper; no frame_stack
    "callback": ["saber.training.sb3.SaberMetricsCallback"],
}

# rl_zoo3 2.9.2's hyperparams/<algo>.yml, atari: (10M agent steps = 40M emulator frames).
ATARI_HYPERPARAMS: dict[str, dict[str, Any]] = {
    "ppo": {
        "policy": "CnnPolicy",
        "n_envs": 8,
        "n_steps": 128,
        "n_epochs": 4,
        "batch_size": 256,
        "n_timesteps": 1e7,
        "learning_rate": "lin_2.5e-4",
        "clip_range": "lin_0.1",
        "vf_coef": 0.5,
        "ent_coef": 0.01,
    },
    "a2c": {
        "policy": "CnnPolicy",
        "n_envs": 16,
        "n_timesteps": 1e7,
        "ent_coef": 0.01,
        "vf_coef": 0.25,
        "policy_kwargs": "dict(optimizer_class=RMSpropTFLike, optimizer_kwargs=dict(eps=1e-5))",
    },
    "dqn": {
        "policy": "CnnPolicy",
        "n_timesteps": 1e7,
        "buffer_size": 100_000,
        "learning_rate": 1e-4,
        "batch_size": 32,
        "learning_starts": 100_000,
        "target_update_interval": 1_000,
        "train_freq": 4,
        "gradient_steps": 1,
        "exploration_fraction": 0.1,
        "exploration_final_eps": 0.01,
        "optimize_memory_usage": False,
    },
    "qrdqn": {
        "policy": "CnnPolicy",
        "n_timesteps": 1e7,
        "learning_starts": 50_000,
        "exploration_fraction": 0.025,
        "optimize_memory_usage": False,
    },
}


def saber_hyperparams(algo: str) -> dict[str, dict[str, Any]]:
    """RL Zoo's ``hyperparams`` for ``algo``: every ``SABER/<Game>`` id -> a fresh block.

    Fresh dicts on each call: RL Zoo deletes keys from the block it reads.

    Example:
        >>> block = saber_hyperparams("ppo")["SABER/Pong"]
        >>> block["policy"], block["n_envs"], block["env_wrapper"]
        ('CnnPolicy', 8, ['saber.envs.ClipRewardKeepRaw'])

    Raises:
        SaberError: no Atari hyperparameters for ``algo`` (one line).
    """
    if algo not in ATARI_HYPERPARAMS:
        raise SaberError(
            f"saber.training.zoo has RL Zoo's Atari hyperparameters for "
            f"{', '.join(ATARI_HYPERPARAMS)}, not {algo!r}: pick one of them, or pass your own "
            "--conf-file"
        )
    block = {**ATARI_HYPERPARAMS[algo], **SABER_CHANGES}
    return {env_id(rom_id): copy.deepcopy(block) for rom_id in supported_rom_ids()}


def _algo_being_read() -> str:
    """The algorithm of the RL Zoo ``ExperimentManager`` up the stack, else ``--algo``."""
    frame = inspect.currentframe()
    while frame is not None:
        reader = frame.f_locals.get("self")
        if type(reader).__name__ == "ExperimentManager" and isinstance(
            getattr(reader, "algo", None), str
        ):
            return reader.algo
        frame = frame.f_back
    argv = sys.argv
    for index, arg in enumerate(argv):
        if arg == "--algo" and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith("--algo="):
            return arg.split("=", 1)[1]
    raise SaberError(
        "saber.training.zoo.hyperparams is read by RL Zoo (--conf-file saber.training.zoo "
        "--algo ppo); elsewhere call saber_hyperparams('ppo')"
    )


class ZooHyperparams(Mapping[str, dict[str, Any]]):
    """RL Zoo's ``hyperparams`` dict: each ``SABER/<Game>`` id -> a fresh block of the
    algorithm the zoo is training (looked up when the zoo reads the block)."""

    def __init__(self) -> None:
        self._ids = tuple(env_id(rom_id) for rom_id in supported_rom_ids())

    def __getitem__(self, key: str) -> dict[str, Any]:
        if key not in self._ids:
            raise KeyError(key)
        return saber_hyperparams(_algo_being_read())[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)


#: RL Zoo's hyperparameters with SABER's changes (``--conf-file saber.training.zoo``).
hyperparams = ZooHyperparams()
