"""The vector env gives exactly what the single env gives, for the same seeds and actions."""

from __future__ import annotations

import os

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.vector import AutoresetMode

from saber.envs import SaberVectorEnv

# A short stuck timeout (non-SABER, 400 frames) so that a few hundred steps cross both a
# game over and a stuck timeout; the code path is the same as with 18,000 frames.
SHORT_STUCK = {"max_frames_without_reward": 800}


def actions_for(game: str, steps: int, num_envs: int) -> np.ndarray:
    """Random actions, except sub-env 1 which mostly idles (NOOP) to hit the stuck timeout."""
    actions = np.random.default_rng(1).integers(0, 18, (steps, num_envs))
    actions[:, 1] = np.where(np.arange(steps) % 50 == 0, actions[:, 1], 0)
    return actions


# Skiing rewards (negative) nearly every frame, so it never gets stuck: a short 100-hour
# cap (5,000 frames) checks the other truncation there.
SHORT_CAP = {"max_episode_frames": 5_000}


# Non-default options of every kind at once: reward clipping, other checkpoints (inside
# a short episode, so that they differ from the score), a short stuck timeout and cap.
OTHER_OPTIONS = {
    "clip_rewards": True,
    "checkpoint_frames": {"early": 1_000, "late": 2_400},
    "max_frames_without_reward": 800,
    "max_episode_frames": 3_000,
}


@pytest.mark.parametrize(
    ("game", "seeds", "overrides", "ends"),
    [
        ("Breakout", [10, 11, 12], SHORT_STUCK, {"game_over", "stuck_timeout"}),
        ("Breakout", [0, 7, 2**31], OTHER_OPTIONS, {"game_over", "stuck_timeout"}),
        ("Pong", [10, 11, 12], SHORT_STUCK, {"game_over", "stuck_timeout"}),
        ("Pong", [3, 4, 5], OTHER_OPTIONS, {"time_cap"}),
        ("Skiing", [10, 11, 12], SHORT_CAP, {"game_over", "time_cap"}),
        # OTHER_OPTIONS' ends are already met in the default suite (Breakout: game over and
        # stuck; Pong: the cap): these two more games run under -m slow.
        pytest.param("Skiing", [1, 2, 3], OTHER_OPTIONS, {"time_cap"}, marks=pytest.mark.slow),
        ("SpaceInvaders", [10, 11, 12], SHORT_STUCK, {"game_over", "stuck_timeout"}),
        pytest.param(
            "SpaceInvaders",
            [5, 6, 8],
            OTHER_OPTIONS,
            {"game_over", "stuck_timeout"},
            marks=pytest.mark.slow,
        ),
    ],
    ids=[
        "breakout",
        "breakout-other-options",
        "pong",
        "pong-other-options",
        "skiing-9-legal-actions",
        "skiing-other-options",
        "space-invaders",
        "space-invaders-other-options",
    ],
)
def test_vector_env_matches_single_envs_step_for_step(
    game: str, seeds: list[int], overrides: dict, ends: set
) -> None:
    num_envs, steps = 3, 3_000
    vector = gym.make_vec(f"SABER/{game}", num_envs=num_envs, **overrides)
    singles = [gym.make(f"SABER/{game}", **overrides) for _ in range(num_envs)]
    assert vector.unwrapped.uses_threads == (game != "Skiing")

    obs, _ = vector.reset(seed=np.array(seeds))
    for i, env in enumerate(singles):
        np.testing.assert_array_equal(obs[i], env.reset(seed=seeds[i])[0])

    ended = [False] * num_envs
    ends_seen: set[str] = set()
    steps_after_both_ends = 0
    for actions in actions_for(game, steps, num_envs):
        if ends <= ends_seen:
            steps_after_both_ends += 1  # a few more, to check the autoreset steps too
            if steps_after_both_ends > 5:
                break
        obs, rewards, terminated, truncated, info = vector.step(actions)
        for i, env in enumerate(singles):
            if ended[i]:  # NEXT_STEP autoreset: this step starts the next episode
                expected_obs, _ = env.reset()
                expected = (expected_obs, 0.0, False, False, {})
            else:
                expected = env.step(int(actions[i]))
            np.testing.assert_array_equal(obs[i], expected[0])
            assert (rewards[i], terminated[i], truncated[i]) == expected[1:4]
            # Under clip_rewards, both give the raw reward beside the clipped one.
            assert ("raw_reward" in info) == overrides.get("clip_rewards", False)
            if "raw_reward" in info:
                assert info["raw_reward"][i] == expected[4].get("raw_reward", 0.0)
            ended[i] = expected[2] or expected[3]
            if ended[i]:
                assert info["_saber"][i]
                record = {key: info["saber"][key][i] for key in expected[4]["saber"]}
                assert {k: v for k, v in record.items() if k != "seconds"} == {
                    k: v for k, v in expected[4]["saber"].items() if k != "seconds"
                }
                ends_seen.add(record["end"])
                if "checkpoint_frames" in overrides:
                    assert {"score_early", "score_late"} <= set(record)
    assert ends <= ends_seen, ends_seen


def test_disabled_autoreset_takes_per_episode_seeds_through_reset_mask() -> None:
    vector = SaberVectorEnv("breakout", 2, autoreset_mode=AutoresetMode.DISABLED, **SHORT_STUCK)
    vector.reset(seed=np.array([1, 2]))
    single = gym.make("SABER/Breakout", **SHORT_STUCK)
    single.reset(seed=2)
    while True:
        _, _, terminated, truncated, info = vector.step(np.array([0, 0]))
        if terminated[1] or truncated[1]:
            break
    with pytest.raises(ResetNeeded, match=r"Sub-envs \[.*1.*\] have ended"):
        vector.step(np.array([0, 0]))
    frames_of_row_0 = info["episode_frame_number"][0]
    obs, info = vector.reset(seed=np.array([99]), options={"reset_mask": np.array([False, True])})
    np.testing.assert_array_equal(obs[1], single.reset(seed=99)[0])
    # The row not reset keeps its frame count (training recorders count frames from it).
    assert frames_of_row_0 > 0
    assert info["episode_frame_number"].tolist() == [frames_of_row_0, 0]


@pytest.mark.parametrize(
    "actions",
    [np.array([0, 18]), np.array([-1, 0]), np.array([0.0, 1.0]), np.array([0, 1, 2]), [np.nan, 0]],
)
def test_vector_env_rejects_invalid_actions(actions: object) -> None:
    vector = SaberVectorEnv("pong", 2)
    vector.reset(seed=0)
    with pytest.raises(ValueError, match="Expect actions"):
        vector.step(actions)


def test_vector_env_refuses_to_step_before_reset() -> None:
    with pytest.raises(ResetNeeded):
        SaberVectorEnv("pong", 2).step(np.array([0, 0]))


def _threads() -> set[str]:
    """Ids of this process's threads, C++ ones included (Linux)."""
    return set(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_close_stops_the_engine_threads_at_once() -> None:
    # The engine's own threads, by id: a thread of an earlier test that ends meanwhile
    # (seen once in CI, on Python 3.13) must not count.
    before = _threads()
    vector = SaberVectorEnv("pong", 2, num_threads=2)
    vector.reset(seed=0)
    engine = _threads() - before
    assert len(engine) >= 2
    vector.close()
    assert not engine & _threads()  # joined by close(), not left to garbage collection
    with pytest.raises(RuntimeError, match="SaberVectorEnv is closed"):
        vector.step(np.zeros(2, dtype=np.int64))
    vector.close()  # closing twice is harmless


@pytest.mark.parametrize("game", ["Breakout", "Skiing"], ids=["threaded", "sequential-engine"])
def test_step_async_then_step_wait_plays_steps_episodes(game: str) -> None:
    """The two halves of a step (saber.envpool's async mode uses them) give exactly step's
    results, autoresets and stuck timeouts included, even when the caller's action array
    changes while the step is in flight."""
    actions = actions_for(game, 260, 2)
    short = {**SHORT_STUCK, "max_episode_frames": 1_000}  # Skiing is never stuck: capped
    split = SaberVectorEnv(game, 2, **short)
    whole = SaberVectorEnv(game, 2, **short)
    split.reset(seed=4)
    whole.reset(seed=4)
    ended = 0
    for step_actions in actions:
        sent = step_actions.copy()
        split.step_async(sent)
        sent[:] = 17  # the caller reuses its array before step_wait
        got = split.step_wait()
        expected = whole.step(step_actions)
        for part, expected_part in zip(got[:4], expected[:4], strict=True):
            np.testing.assert_array_equal(part, expected_part)
        assert got[4].keys() == expected[4].keys()
        ended += int((got[2] | got[3]).sum())
    assert ended > 0  # the stuck timeout or the cap (1,000 frames) at the least
    split.close()
    whole.close()


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_step_async_and_step_wait_refuse_misuse_and_close_in_flight() -> None:
    before = _threads()
    vector = SaberVectorEnv("pong", 2, num_threads=2)
    vector.reset(seed=0)
    engine = _threads() - before
    zeros = np.zeros(2, dtype=np.int64)
    with pytest.raises(RuntimeError, match="without step_async"):
        vector.step_wait()
    vector.step_async(zeros)
    with pytest.raises(RuntimeError, match="in flight"):
        vector.step_async(zeros)
    with pytest.raises(RuntimeError, match="in flight"):
        vector.step(zeros)
    with pytest.raises(RuntimeError, match="in flight"):
        vector.reset()
    vector.step_wait()
    vector.step_async(zeros)
    vector.close()  # the step in flight is received, then the threads joined
    assert not engine & _threads()


def test_frames_count_from_the_reset_in_a_game_with_starting_actions() -> None:
    """ALE plays Double Dunk's starting actions at every reset (about 20 frames) and
    ale-py's engine counts them; the single env does not, nor do the cap and the records."""
    overrides = {"max_episode_frames": 400}  # 100 steps: the cap, a reload, the next episode
    vector = gym.make_vec("SABER/DoubleDunk", num_envs=2, **overrides)
    singles = [gym.make("SABER/DoubleDunk", **overrides) for _ in range(2)]
    vector.reset(seed=5)
    for i, env in enumerate(singles):
        env.reset(seed=5 + i)
    ended = [False, False]
    for _ in range(130):
        _, _, _, truncated, info = vector.step(np.zeros(2, dtype=np.int64))
        for i, env in enumerate(singles):
            expected = ({}, 0.0, False, False, {}) if ended[i] else env.step(0)
            if ended[i]:
                env.reset()
            assert info["episode_frame_number"][i] == expected[4].get("episode_frame_number", 0)
            assert truncated[i] == expected[3]
            if expected[3]:
                assert info["saber"]["frames"][i] == expected[4]["saber"]["frames"] == 400
            ended[i] = expected[2] or expected[3]
    vector.close()
