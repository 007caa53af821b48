"""Play saber.jax and make_vec side by side with the same seeds and actions."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np


def compare_with_make_vec(
    game: str | list[str], num_envs: int, seed: int, steps: int, **overrides: Any
) -> dict[str, int]:
    """Step both envs ``steps`` times with the same random actions and assert every output
    equal (records: every field but ``seconds``). Returns counts of what was crossed.

    ``game``: one game, or a list of games (``SABER/Games`` against saber.jax's many-games
    env, whose ``info["game"]`` is also compared)."""
    # JAX is imported here, not at the top: the default suite collects this module (its
    # doctests) on machines without the jax extra.
    import jax

    from saber.jax import make, records

    if isinstance(game, list):
        vec = gymnasium.make_vec("SABER/Games", num_envs=num_envs, games=game, **overrides)
    else:
        vec = gymnasium.make_vec(f"SABER/{game}", num_envs=num_envs, **overrides)
    env = make(game, num_envs, **overrides)
    settings_clip = bool(overrides.get("clip_rewards", False))
    try:
        obs_np, info_np = vec.reset(seed=seed)
        state, obs, info = env.reset(seed)
        step = jax.jit(env.step)  # eager JAX dispatches op by op: 100x slower
        np.testing.assert_array_equal(np.asarray(obs), obs_np)
        rng = np.random.default_rng(seed)
        counts = {"game_over": 0, "truncated": 0, "episodes": 0}
        for t in range(steps):
            actions = rng.integers(0, 18, num_envs).astype(np.int32)
            obs_np, reward_np, term_np, trunc_np, info_np = vec.step(actions)
            state, obs, reward, term, trunc, info = step(state, actions)
            where = f"{game} seed {seed} step {t}"
            np.testing.assert_array_equal(np.asarray(obs), obs_np, err_msg=where)
            np.testing.assert_array_equal(np.asarray(reward), reward_np, err_msg=where)
            np.testing.assert_array_equal(np.asarray(term), term_np, err_msg=where)
            np.testing.assert_array_equal(np.asarray(trunc), trunc_np, err_msg=where)
            np.testing.assert_array_equal(
                np.asarray(info["episode_frame_number"]),
                info_np["episode_frame_number"],
                err_msg=where,
            )
            np.testing.assert_array_equal(
                np.asarray(info["_saber"]), info_np.get("_saber", np.zeros(num_envs, bool))
            )
            if isinstance(game, list):
                names = np.asarray(env.games, dtype=object)[np.asarray(info["game"])]
                np.testing.assert_array_equal(names, info_np["game"], err_msg=where)
            # Under clip_rewards both give the raw rewards, under the same key.
            assert ("raw_reward" in info) == ("raw_reward" in info_np) == settings_clip, where
            if settings_clip:
                np.testing.assert_array_equal(
                    np.asarray(info["raw_reward"]), info_np["raw_reward"], err_msg=where
                )
            ours = records(info)
            if ours:
                mask = info_np["_saber"]
                theirs = [
                    {key: values[row] for key, values in info_np["saber"].items()}
                    for row in np.flatnonzero(mask)
                ]
                assert [r.keys() for r in ours] == [r.keys() for r in theirs]
                for mine, ref in zip(ours, theirs, strict=True):
                    mine.pop("seconds"), ref.pop("seconds")
                    assert mine == ref, where
                counts["episodes"] += len(ours)
            counts["game_over"] += int(term_np.sum())
            counts["truncated"] += int(trunc_np.sum())
        return counts
    finally:
        vec.close()
        env.close()
