"""A rollout inside ``jax.lax.scan`` under ``jax.jit`` equals stepping eagerly, op by op
(two envs with the same seed and actions), across truncations (reloads inside the scan)."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.jax


def test_scan_rollout_equals_eager_steps() -> None:
    import jax

    from saber.jax import make

    steps, num_envs = 70, 3
    actions = np.random.default_rng(2).integers(0, 18, (steps, num_envs)).astype(np.int32)
    # A 200-frame (50-step) stuck timeout: every row is truncated and reloaded in the run.
    settings = {"max_frames_without_reward": 200}
    scanned_env, eager_env = make("Pong", num_envs, **settings), make("Pong", num_envs, **settings)

    @jax.jit
    def rollout(seed: jax.Array, actions: jax.Array) -> tuple:
        state, _, _ = scanned_env.reset(seed)

        def one_step(state, action):
            state, obs, reward, terminated, truncated, info = scanned_env.step(state, action)
            return state, (obs, reward, terminated, truncated, info["saber"]["score"])

        return jax.lax.scan(one_step, state, actions)[1]

    scanned = jax.tree.map(np.asarray, rollout(np.int32(4), actions))
    state, _, _ = eager_env.reset(4)
    eager = []
    for action in actions:
        state, obs, reward, terminated, truncated, info = eager_env.step(state, action)
        eager.append((obs, reward, terminated, truncated, info["saber"]["score"]))
    for name, got, expected in zip(
        ("obs", "reward", "terminated", "truncated", "score"),
        scanned,
        zip(*eager, strict=True),
        strict=True,
    ):
        np.testing.assert_array_equal(got, np.stack(expected), err_msg=name)
    assert scanned[3].sum() >= num_envs  # truncations happened (and reloads in the scan)
    scanned_env.close(), eager_env.close()
