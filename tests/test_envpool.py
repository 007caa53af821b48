"""saber.envpool: envpool's API over SABER, sync and async, against make_vec itself."""

from __future__ import annotations

import subprocess
import sys
import threading

import gymnasium as gym
import numpy as np
import pytest

from saber import envpool
from saber.errors import EnvPoolError, ProtocolError, UnknownSettingError

STUCK_STEPS = 18_000 // 4  # SABER's stuck timeout (5 minutes of frames), in agent steps


def _actions(steps: int, num_envs: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 18, size=(steps, num_envs))


def _play_sync(task: str, actions: np.ndarray, seed: int) -> dict[str, list]:
    """Each env's per-step results of a synchronous pool given ``actions[t, env]``."""
    steps, num_envs = actions.shape
    pool = envpool.make(task, "gymnasium", num_envs=num_envs, seed=seed)
    pool.reset()
    played = _empty(num_envs)
    for t in range(steps):
        _, reward, terminated, truncated, info = pool.step(actions[t])
        _record(played, info["env_id"], reward, terminated, truncated, info)
    pool.close()
    return played


def _play_async(task: str, actions: np.ndarray, seed: int, batch_size: int) -> dict[str, list]:
    """The same, through async_reset/recv/send, each env given its actions in order."""
    steps, num_envs = actions.shape
    pool = envpool.make(task, "gymnasium", num_envs=num_envs, batch_size=batch_size, seed=seed)
    pool.async_reset()
    played = _empty(num_envs)
    sent = np.zeros(num_envs, dtype=int)
    received = 0
    while received < steps * num_envs // batch_size:
        _, reward, terminated, truncated, info = pool.recv()
        ids = info["env_id"]
        if sent[ids[0]]:  # a step's results (the first recv of each batch is its reset)
            _record(played, ids, reward, terminated, truncated, info)
            received += 1
        if sent[ids[0]] < steps:
            pool.send(actions[sent[ids], ids], ids)
            sent[ids] += 1
    pool.close()
    return played


def _empty(num_envs: int) -> dict[str, list]:
    keys = ("reward", "raw", "terminated", "truncated", "elapsed", "records")
    return {key: [[] for _ in range(num_envs)] for key in keys}


def _record(played, ids, reward, terminated, truncated, info) -> None:
    for row, env in enumerate(ids.tolist()):
        played["reward"][env].append(float(reward[row]))
        played["raw"][env].append(float(info["reward"][row]))
        played["terminated"][env].append(bool(terminated[row]))
        played["truncated"][env].append(bool(truncated[row]))
        played["elapsed"][env].append(int(info["elapsed_step"][row]))
        if "saber" in info and info["_saber"][row]:
            record = {key: values[row] for key, values in info["saber"].items()}
            record.pop("seconds")  # wall-clock time: the only field that may differ
            played["records"][env].append(record)


def test_raw_rewards_and_ends_are_make_vecs():
    """Rewards (raw in info, as make_vec's), ends and records: make_vec's, seed for seed."""
    actions = _actions(300, 3)
    pool = envpool.make("Breakout-v5", "gymnasium", num_envs=3, seed=7, reward_clip=True)
    vector = gym.make_vec("SABER/Breakout", num_envs=3)
    pool_obs, _ = pool.reset()
    vector_obs, _ = vector.reset(seed=7)
    np.testing.assert_array_equal(pool_obs, vector_obs)
    ended = 0
    for step_actions in actions:
        obs, reward, terminated, truncated, info = pool.step(step_actions)
        v_obs, v_reward, v_terminated, v_truncated, v_info = vector.step(step_actions)
        np.testing.assert_array_equal(obs, v_obs)
        np.testing.assert_array_equal(info["reward"], v_reward.astype(np.float32))
        assert info["raw_reward"] is info["reward"]  # saber's key under clipping, as every env
        np.testing.assert_array_equal(reward, np.sign(v_reward))  # clipped: the agent's
        np.testing.assert_array_equal(terminated, v_terminated)
        np.testing.assert_array_equal(info["terminated"], v_terminated)
        np.testing.assert_array_equal(truncated, v_truncated)
        assert ("saber" in info) == ("saber" in v_info)
        ended += int(terminated.sum())
    assert ended > 0  # random Breakout games end within 300 steps
    pool.close()
    vector.close()


def test_envpool_shapes_and_info_keys():
    pool = envpool.make("SABER/Pong", "gymnasium", num_envs=2)
    assert isinstance(pool.observation_space, gym.spaces.Box)
    assert pool.observation_space.shape == (4, 84, 84)
    assert pool.action_space == gym.spaces.Discrete(18)
    obs, info = pool.reset()
    assert obs.shape == (2, 4, 84, 84) and obs.dtype == np.uint8
    np.testing.assert_array_equal(info["env_id"], [0, 1])
    _, reward, terminated, truncated, info = pool.step(np.array([0, 1]))
    assert reward.dtype == np.float32 and terminated.dtype == truncated.dtype == np.bool_
    for key in ("env_id", "lives", "reward", "terminated", "elapsed_step", "TimeLimit.truncated"):
        assert info[key].shape == (2,), key
    np.testing.assert_array_equal(info["players"]["env_id"], [0, 1])
    np.testing.assert_array_equal(info["lives"], [0, 0])  # no life signal (docs/protocol.md)
    np.testing.assert_array_equal(info["elapsed_step"], [1, 1])
    pool.close()


def test_async_plays_the_episodes_of_sync():
    """Same seeds, same per-env actions: the same rewards, ends and records, env by env."""
    actions = _actions(400, 4, seed=3)
    sync = _play_sync("Breakout-v5", actions, seed=11)
    played = _play_async("Breakout-v5", actions, seed=11, batch_size=2)
    assert sum(len(records) for records in sync["records"]) > 4  # episodes ended
    assert played == sync


def test_a_truncation_stays_a_truncation_in_async_mode():
    """The stuck timeout (Breakout without FIRE scores nothing): truncated, not terminated,
    in every key a script reads; the next step, an autoreset, has elapsed_step 0."""
    actions = _actions(STUCK_STEPS + 2, 2, seed=5)
    actions[:, 0] = 0  # env 0: NOOP, stuck; env 1: random, its games end
    played = _play_async("Breakout-v5", actions, seed=0, batch_size=1)
    last = STUCK_STEPS - 1
    assert played["truncated"][0][last] and not played["terminated"][0][last]
    assert not any(played["truncated"][0][:last])
    assert played["elapsed"][0][last] == STUCK_STEPS
    assert played["elapsed"][0][last + 1] == 0  # envpool's mark of the autoreset step
    assert played["records"][0][0]["end"] == "stuck_timeout"
    assert played["records"][0][0]["steps"] == STUCK_STEPS


@pytest.mark.cleanrl  # the stage that installs CleanRL's gym==0.23.1 runs it
def test_old_gym_api_gives_done_and_time_limit_key():
    """With gym < 0.26 installed (CleanRL's gym==0.23.1), the 4-tuple envpool 0.x gave."""
    import gym as gym_old  # the old package: pip install gym==0.23.1

    assert tuple(int(p) for p in gym_old.__version__.split(".")[:2]) < (0, 26)
    pool = envpool.make("Pong-v5", env_type="gym", num_envs=2, seed=1, reward_clip=True)
    assert isinstance(pool.action_space, gym_old.spaces.Discrete)
    obs = pool.reset()
    assert obs.shape == (2, 4, 84, 84)
    _, _, done, info = pool.step(np.zeros(2, dtype=np.int64))
    assert done.dtype == np.bool_ and "TimeLimit.truncated" in info
    pool.close()


def test_gym_missing_is_one_line():
    """env_type='gym' without the gym package: one line naming both ways out."""
    code = (
        "import sys; sys.modules['gym'] = None\n"
        "from saber import envpool\n"
        "try:\n    envpool.make('Pong-v5', env_type='gym')\n"
        "except Exception as error:\n    print(type(error).__name__, error)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out.startswith("EnvPoolError env_type='gym'")
    assert "pip install gym" in out and "env_type='gymnasium'" in out and "\n" not in out


@pytest.mark.parametrize(
    ("argument", "value", "saber_value"),
    [
        ("episodic_life", True, "False"),
        ("repeat_action_probability", 0.0, "0.25"),
        ("noop_max", 30, "0"),
        ("use_fire_reset", True, "False"),
        ("full_action_space", False, "True"),
        ("max_episode_steps", 27_000, "5400000"),
        ("frame_skip", 5, "4"),
        ("stack_num", 1, "4"),
        ("img_height", 96, "84"),
        ("use_inter_area_resize", True, "False"),
        ("zero_discount_on_life_loss", True, "False"),
    ],
)
def test_arguments_that_contradict_saber_are_refused(argument, value, saber_value):
    with pytest.raises(ProtocolError) as raised:
        envpool.make("Pong-v5", "gymnasium", **{argument: value})
    message = str(raised.value)
    assert "\n" not in message
    assert f"{argument}={value!r}" in message and f"{argument}={saber_value}" in message


def test_saber_values_and_unknowns():
    pool = envpool.make(
        "Pong-v5", "gymnasium", repeat_action_probability=0.25, episodic_life=False, noop_max=0
    )
    pool.close()
    with pytest.raises(UnknownSettingError, match="'render_mode'"):
        envpool.make("Pong-v5", "gymnasium", render_mode="rgb_array")
    with pytest.raises(EnvPoolError, match="dm_env"):
        envpool.make("Pong-v5", "dm")
    with pytest.raises(EnvPoolError, match="must divide"):
        envpool.make("Pong-v5", "gymnasium", num_envs=4, batch_size=3)
    with pytest.raises(EnvPoolError, match=r"saber\.jax"):
        envpool.make("Pong-v5", "gymnasium").xla()
    assert "Pong-v5" in envpool.list_all_envs()


def test_async_send_checks_its_env_ids():
    pool = envpool.make("Pong-v5", "gymnasium", num_envs=4, batch_size=2)
    pool.async_reset()
    *_, info = pool.recv()
    with pytest.raises(EnvPoolError, match="one batch"):
        pool.send(np.zeros(2, dtype=np.int64), np.array([info["env_id"][0], 3 - info["env_id"][0]]))
    pool.send(np.zeros(2, dtype=np.int64), info["env_id"][::-1])  # any order within the batch
    pool.recv()
    pool.close()


def test_reset_of_some_envs_resets_only_those():
    pool = envpool.make("Breakout-v5", "gymnasium", num_envs=3, seed=2)
    pool.reset()
    for _ in range(3):
        pool.step(np.array([1, 2, 3]))
    obs, info = pool.reset(np.array([2, 0]))
    assert obs.shape == (2, 4, 84, 84)
    np.testing.assert_array_equal(info["env_id"], [2, 0])
    *_, info = pool.step(np.array([0, 0, 0]))
    np.testing.assert_array_equal(info["elapsed_step"], [1, 4, 1])  # env 1 played on
    pool.close()


def test_async_mode_hands_over_on_no_python_thread():
    """The groups emulate on ale-py's C++ threads, started by send: no Python thread per
    group hands results over (one did, a Future and a wake-up per batch), and a pool
    closed with batches in flight closes."""
    before = threading.active_count()
    pool = envpool.make("Pong-v5", "gymnasium", num_envs=4, batch_size=2, seed=0)
    pool.async_reset()
    for _ in range(6):
        *_, info = pool.recv()
        pool.send(np.ones(2, dtype=np.int64), info["env_id"])
    assert threading.active_count() == before
    pool.close()  # two batches in flight


def test_send_refuses_env_ids_that_are_not_ints():
    """Ids equal in value to a batch's, but floats: refused, as any non-int id."""
    pool = envpool.make("Pong-v5", "gymnasium", num_envs=4, batch_size=2)
    pool.async_reset()
    *_, info = pool.recv()
    with pytest.raises(EnvPoolError, match="env_id must be ints"):
        pool.send(np.zeros(2, dtype=np.int64), info["env_id"].astype(np.float64))
    pool.close()
