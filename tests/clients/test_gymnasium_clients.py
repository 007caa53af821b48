"""Real Gymnasium clients against the SABER envs: real ROMs through ale-py, no mocks.

What RL code does with an env: ``check_env``, ``SyncVectorEnv`` / ``AsyncVectorEnv``
(fork and spawn), ``make_vec`` in every mode, ``RecordEpisodeStatistics``, pickled env
factories and specs, rendering. Short stuck timeouts (non-SABER overrides) make episodes
end within a few hundred steps, so the whole file runs in well under a minute.
"""

from __future__ import annotations

import functools
import pickle
import subprocess
import sys
import warnings
from typing import Any

import cloudpickle
import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv

import saber
from saber.envs import SaberVectorEnv

# Breakout with a 400-frame stuck timeout (not SABER): over STEPS steps of actions_for(),
# sub-env 0 (seed 0) ends by a game over (step 248, score 3) and the idle sub-env 1 by
# stuck timeouts, so both autoreset paths are crossed.
BREAKOUT_KW = {"max_frames_without_reward": 400}
# Pong scores every ~35 steps; 320 frames without reward cut one episode of sub-env 0.
PONG_KW = {"max_frames_without_reward": 320}
PONG_STEPS = 220
SEED = 0
STEPS = 260
NUM_ENVS = 2


def actions_for(steps: int, num_envs: int, seed: int = 1) -> np.ndarray:
    """Random actions; sub-env 1 mostly idles (NOOP), which hits the stuck timeout."""
    actions = np.random.default_rng(seed).integers(0, 18, (steps, num_envs))
    if num_envs > 1:
        actions[:, 1] = np.where(np.arange(steps) % 40 == 0, actions[:, 1], 0)
    return actions


class Trajectory:
    """Observations, rewards, ends and episode records of a run, batched ``(steps, n, ...)``."""

    def __init__(self) -> None:
        self.obs: list[np.ndarray] = []
        self.rewards: list[np.ndarray] = []
        self.terminated: list[np.ndarray] = []
        self.truncated: list[np.ndarray] = []
        self.episodes: list[tuple[int, int, dict[str, Any]]] = []  # (step, sub-env, record)

    def add(self, step: int, obs, rewards, terminated, truncated, records) -> None:
        self.obs.append(np.asarray(obs))
        self.rewards.append(np.asarray(rewards, dtype=np.float64))
        self.terminated.append(np.asarray(terminated, dtype=bool))
        self.truncated.append(np.asarray(truncated, dtype=bool))
        self.episodes.extend((step, i, record) for i, record in records)

    def assert_equal(self, other: Trajectory) -> None:
        np.testing.assert_array_equal(np.stack(self.obs), np.stack(other.obs))
        np.testing.assert_array_equal(np.stack(self.rewards), np.stack(other.rewards))
        np.testing.assert_array_equal(np.stack(self.terminated), np.stack(other.terminated))
        np.testing.assert_array_equal(np.stack(self.truncated), np.stack(other.truncated))
        assert _without_time(self.episodes) == _without_time(other.episodes)

    def ends(self) -> set[str]:
        return {record["end"] for _, _, record in self.episodes}


def _without_time(episodes: list[tuple[int, int, dict[str, Any]]]) -> list:
    """Episode records without the wall-clock ``seconds``, with plain Python values."""
    return [
        (step, i, {key: _plain(value) for key, value in record.items() if key != "seconds"})
        for step, i, record in episodes
    ]


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def vector_records(info: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """``(sub-env, record)`` for each sub-env that ended, by the ``_saber`` mask.

    Sync/Async nest a mask per key (``info["saber"]["_score"]``); SaberVectorEnv does not:
    both are read the same way here, keeping only the record's own keys.
    """
    if "saber" not in info:
        assert "_saber" not in info
        return []
    episode, mask = info["saber"], info["_saber"]
    keys = [key for key in episode if not key.startswith("_")]
    return [(int(i), {key: episode[key][i] for key in keys}) for i in np.flatnonzero(mask)]


def run_vector(envs: gym.vector.VectorEnv, actions: np.ndarray, seed: int = SEED) -> Trajectory:
    """Reset with ``seed`` and play ``actions`` (steps, n) under NEXT_STEP autoreset."""
    trajectory = Trajectory()
    obs, info = envs.reset(seed=seed)
    assert obs.shape == (envs.num_envs, 4, 84, 84) and obs.dtype == np.uint8
    no_end = np.zeros(envs.num_envs, dtype=bool)
    trajectory.add(-1, obs, np.zeros(envs.num_envs), no_end, no_end, [])
    for step, action in enumerate(actions):
        obs, rewards, terminated, truncated, info = envs.step(action)
        assert obs.shape == (envs.num_envs, 4, 84, 84) and obs.dtype == np.uint8
        assert "lives" not in info
        records = vector_records(info)
        np.testing.assert_array_equal(
            [i for i, _ in records], np.flatnonzero(terminated | truncated)
        )
        trajectory.add(step, obs, rewards, terminated, truncated, records)
    envs.close()
    return trajectory


def run_singles(make: Any, actions: np.ndarray, seed: int = SEED) -> Trajectory:
    """One single env per column of ``actions``, seeded ``seed + i``, with NEXT_STEP autoreset
    done by hand (the step after an end resets unseeded, reward 0, action ignored)."""
    num_envs = actions.shape[1]
    columns = []
    for i in range(num_envs):
        env = make()
        obs, _ = env.reset(seed=seed + i)
        rows = [(obs, 0.0, False, False, None)]
        ended = False
        for action in actions[:, i]:
            if ended:
                obs, _ = env.reset()
                rows.append((obs, 0.0, False, False, None))
                ended = False
                continue
            obs, reward, terminated, truncated, info = env.step(action)
            ended = terminated or truncated
            rows.append((obs, reward, terminated, truncated, info.get("saber")))
            assert ("saber" in info) == ended
        env.close()
        columns.append(rows)
    trajectory = Trajectory()
    for step, row in enumerate(zip(*columns, strict=True)):
        records = [(i, record) for i, (*_, record) in enumerate(row) if record is not None]
        obs, rewards, terminated, truncated = (np.array([r[k] for r in row]) for k in range(4))
        trajectory.add(step - 1, obs, rewards, terminated, truncated, records)
    return trajectory


# --------------------------------------------------------------------------- check_env
def _check_env_warnings(env: gym.Env) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env)
    return [str(warning.message) for warning in caught]


# check_env on a wrapped env always warns that it is wrapped; that is the only warning.
WRAPPED_WARNING = "is different from the unwrapped version"


def test_check_env_passes_on_gym_make() -> None:
    """Spaces, reset/step types, seeding (``reset(seed=s)`` also seeds ``env.np_random``),
    determinism and close all pass Gymnasium's checker."""
    messages = _check_env_warnings(gym.make("SABER/Pong"))
    assert len(messages) == 1 and WRAPPED_WARNING in messages[0], messages


def test_check_env_passes_on_the_vector_env_reset_seeding() -> None:
    """``SaberVectorEnv.reset(seed=s)`` seeds Gymnasium's ``np_random`` as VectorEnv does."""
    envs = gym.make_vec("SABER/Pong", num_envs=2)
    envs.reset(seed=3)
    first = envs.np_random.integers(1 << 30)
    envs.reset(seed=3)
    assert envs.np_random.integers(1 << 30) == first and envs.np_random_seed == 3
    envs.close()


# ------------------------------------------------------------- Sync / Async vector envs
def _breakout() -> gym.Env:
    return gym.make("SABER/Breakout", **BREAKOUT_KW)


@pytest.fixture(scope="module")
def breakout_singles() -> Trajectory:
    trajectory = run_singles(_breakout, actions_for(STEPS, NUM_ENVS))
    # The run crosses both kinds of end, so the autoreset after each is compared too.
    assert trajectory.ends() == {"game_over", "stuck_timeout"}
    return trajectory


@pytest.mark.parametrize(
    "vector",
    [
        pytest.param(lambda fns: SyncVectorEnv(fns), id="sync"),
        pytest.param(lambda fns: AsyncVectorEnv(fns), id="async-default-context"),
        pytest.param(lambda fns: AsyncVectorEnv(fns, context="spawn"), id="async-spawn"),
        pytest.param(lambda fns: SaberVectorEnv("breakout", NUM_ENVS, **BREAKOUT_KW), id="saber"),
    ],
)
def test_vector_envs_match_the_single_env(vector, breakout_singles: Trajectory) -> None:
    """Same seeds and actions: Sync, Async (fork, spawn), SaberVectorEnv and the single env
    give identical observations, rewards, ends and ``info["saber"]`` (except ``seconds``).

    A spawned worker is a fresh interpreter: ``gym.make("SABER/Breakout")`` fails there with
    ``NamespaceNotFound`` (Gymnasium 1.x loads no ``gymnasium.envs`` entry points, so
    nothing imports saber); ``"saber:SABER/Breakout"`` makes Gymnasium import it first.
    """
    fns = [lambda: gym.make("saber:SABER/Breakout", **BREAKOUT_KW) for _ in range(NUM_ENVS)]
    envs = vector(fns)
    assert envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    trajectory = run_vector(envs, actions_for(STEPS, NUM_ENVS))
    trajectory.assert_equal(breakout_singles)


PONG_ACTIONS = actions_for(PONG_STEPS, NUM_ENVS, seed=2)


@pytest.fixture(scope="module")
def pong_singles() -> Trajectory:
    trajectory = run_singles(lambda: gym.make("SABER/Pong", **PONG_KW), PONG_ACTIONS)
    assert trajectory.ends() == {"stuck_timeout"}
    assert (np.stack(trajectory.rewards) != 0).sum(axis=0).min() >= 3  # points on both sides
    return trajectory


@pytest.mark.parametrize("mode", ["sync", "async", None], ids=["sync", "async", "default"])
def test_make_vec_modes_agree(mode: str | None, pong_singles: Trajectory) -> None:
    """``make_vec`` in every mode (the default is SaberVectorEnv) gives the single envs'
    observations, rewards, ends and episode records, step for step.

    The ``info`` dicts differ beyond that: Sync/Async carry each sub-env's own flags
    (``stuck_timeout``, ``time_cap``, ``rollover`` with ``_``-masks) and a mask per key
    inside ``info["saber"]`` (``_score``, ...); SaberVectorEnv gives
    ``episode_frame_number`` (int32, not int64), ``saber`` and ``_saber`` only.
    ``info["saber"][key][info["_saber"]]`` reads both.
    """
    envs = gym.make_vec("SABER/Pong", NUM_ENVS, vectorization_mode=mode, **PONG_KW)
    assert isinstance(envs, SaberVectorEnv) == (mode is None)
    run_vector(envs, PONG_ACTIONS).assert_equal(pong_singles)


# ------------------------------------------------------------- RecordEpisodeStatistics
def test_record_episode_statistics_single_env() -> None:
    """Gymnasium's ``RecordEpisodeStatistics`` on ``gym.make("SABER/Breakout")``, as written.

    saber 0.1 wrote its record to ``info["episode"]``, the key this wrapper reserves, and
    it failed with a bare ``AssertionError`` at the first episode end. Now both records
    survive side by side: ``info["episode"]`` (Gymnasium: r, l, t) and ``info["saber"]``;
    without reward clipping ``r`` is SABER's ``score`` and ``l`` its ``steps``.
    """
    actions = actions_for(STEPS, NUM_ENVS)
    records = []
    for i in range(NUM_ENVS):  # the same episodes as sub-env i of the vector tests
        env = gym.wrappers.RecordEpisodeStatistics(_breakout())
        env.reset(seed=SEED + i)
        ended = []
        for action in actions[:, i]:
            _, _, terminated, truncated, info = env.step(action)
            assert ("episode" in info) == ("saber" in info) == (terminated or truncated)
            if terminated or truncated:
                saber_record, gym_record = info["saber"], info["episode"]
                assert set(gym_record) == {"r", "l", "t"}
                assert saber_record["rollovers"] == 0
                assert gym_record["r"] == saber_record["score"]
                assert gym_record["l"] == saber_record["steps"]
                ended.append(saber_record)
                env.reset()
        assert list(env.return_queue) == [record["score"] for record in ended]
        assert list(env.length_queue) == [record["steps"] for record in ended]
        records += ended
    assert {record["end"] for record in records} == {"game_over", "stuck_timeout"}
    assert max(record["score"] for record in records) > 0


def test_record_episode_statistics_inside_sync_vector_env() -> None:
    """CleanRL's pattern: each sub-env of a ``SyncVectorEnv`` wrapped in
    ``RecordEpisodeStatistics``; ``info["episode"]`` and ``info["saber"]`` agree."""
    actions = actions_for(STEPS, NUM_ENVS)
    envs = SyncVectorEnv(
        [lambda: gym.wrappers.RecordEpisodeStatistics(_breakout()) for _ in range(NUM_ENVS)]
    )
    envs.reset(seed=SEED)
    ended = 0
    for action in actions:
        _, _, terminated, truncated, info = envs.step(action)
        done = terminated | truncated
        if done.any():
            np.testing.assert_array_equal(info["_episode"], done)
            np.testing.assert_array_equal(info["_saber"], done)
            np.testing.assert_array_equal(info["episode"]["r"][done], info["saber"]["score"][done])
            np.testing.assert_array_equal(info["episode"]["l"][done], info["saber"]["steps"][done])
            ended += int(done.sum())
    envs.close()
    assert ended >= 3


@pytest.mark.parametrize("mode", ["sync", None], ids=["sync", "default"])
def test_record_episode_statistics_vector_env(mode: str | None) -> None:
    """``gymnasium.wrappers.vector.RecordEpisodeStatistics`` over ``make_vec``, default key:
    its ``r`` and ``l`` (which skip the autoreset step) equal SABER's ``score`` and
    ``steps`` for every ended sub-env (rewards are not clipped)."""
    actions = actions_for(STEPS, NUM_ENVS)
    envs = gym.wrappers.vector.RecordEpisodeStatistics(
        gym.make_vec("SABER/Breakout", NUM_ENVS, vectorization_mode=mode, **BREAKOUT_KW)
    )
    envs.reset(seed=SEED)
    ended = 0
    for action in actions:
        _, _, terminated, truncated, info = envs.step(action)
        done = terminated | truncated
        assert ("episode" in info) == done.any() == ("saber" in info)
        if done.any():
            np.testing.assert_array_equal(info["_episode"], done)
            np.testing.assert_array_equal(info["_saber"], done)
            saber_record, gym_record = info["saber"], info["episode"]
            np.testing.assert_array_equal(gym_record["r"][done], saber_record["score"][done])
            np.testing.assert_array_equal(gym_record["l"][done], saber_record["steps"][done])
            ended += int(done.sum())
    envs.close()
    assert ended >= 3


# ---------------------------------------------------------------- pickling, subprocesses
def _play(env: gym.Env, actions: np.ndarray, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """Observations and rewards of ``actions`` from ``reset(seed=seed)`` (no episode end)."""
    observations, rewards = [env.reset(seed=seed)[0]], []
    for action in actions:
        obs, reward, terminated, truncated, _ = env.step(action)
        assert not (terminated or truncated)
        observations.append(obs)
        rewards.append(reward)
    env.close()
    return np.stack(observations), np.array(rewards)


SHORT_ACTIONS = actions_for(60, 1)[:, 0]


@pytest.fixture(scope="module")
def pong_play() -> tuple[np.ndarray, np.ndarray]:
    return _play(gym.make("SABER/Pong"), SHORT_ACTIONS)


def test_env_instances_do_not_pickle_with_a_clear_error() -> None:
    """An env holds a live emulator: pickling it says so and names the way out.

    (Gymnasium's AsyncVectorEnv pickles env *factories*, never envs, so it is unaffected.)
    """
    with pytest.raises(TypeError, match=r"Cannot pickle SaberAtariEnv.*Pickle a factory"):
        pickle.dumps(gym.make("SABER/Pong"))
    with pytest.raises(TypeError, match=r"Cannot pickle SaberVectorEnv.*Pickle a factory"):
        pickle.dumps(gym.make_vec("SABER/Pong", 1))


@pytest.mark.parametrize(
    "dumps",
    [
        pytest.param(
            lambda: cloudpickle.dumps(lambda: gym.make("SABER/Pong")), id="cloudpickle-lambda"
        ),
        pytest.param(
            lambda: pickle.dumps(functools.partial(gym.make, "SABER/Pong")), id="pickle-partial"
        ),
    ],
)
def test_pickled_factories_make_the_same_env(dumps, pong_play) -> None:
    factory = pickle.loads(dumps())
    observations, rewards = _play(factory(), SHORT_ACTIONS)
    np.testing.assert_array_equal(observations, pong_play[0])
    np.testing.assert_array_equal(rewards, pong_play[1])


# Run in a fresh interpreter, as a spawned AsyncVectorEnv worker is: saber is not imported.
_FRESH_INTERPRETER = """
import pickle, sys
import gymnasium as gym
factories = pickle.load(sys.stdin.buffer)
out = sys.argv[1]
results = {}
try:
    gym.make("SABER/Pong")
except gym.error.NamespaceNotFound as error:
    results["plain_id"] = type(error).__name__
assert "saber" not in sys.modules
for name, factory in factories.items():
    env = factory()
    observations, rewards = [env.reset(seed=0)[0]], []
    for action in ACTIONS:
        obs, reward, *_ = env.step(action)
        observations.append(obs)
        rewards.append(reward)
    results[name] = (observations, rewards)
with open(out, "wb") as file:
    pickle.dump(results, file)
"""


def test_factories_in_a_fresh_interpreter(pong_play, tmp_path) -> None:
    """What a spawned (or, from Python 3.14, forkserver) worker sees.

    ``gym.make("SABER/Pong")`` raises ``NamespaceNotFound`` until saber is imported:
    Gymnasium 1.x loads no ``gymnasium.envs`` entry points. Factories that name the module
    (``"saber:SABER/Pong"``) or carry the spec (whose entry point imports saber) work.
    """
    factories = {
        "module_prefix": functools.partial(gym.make, "saber:SABER/Pong"),
        "spec": functools.partial(gym.make, gym.spec("SABER/Pong")),
    }
    code = _FRESH_INTERPRETER.replace("ACTIONS", repr(SHORT_ACTIONS.tolist()))
    process = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "results.pickle")],
        input=pickle.dumps(factories),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert process.returncode == 0, process.stderr.decode()[-2000:]
    results = pickle.loads((tmp_path / "results.pickle").read_bytes())
    assert results.pop("plain_id") == "NamespaceNotFound"
    for observations, rewards in results.values():
        np.testing.assert_array_equal(np.stack(observations), pong_play[0])
        np.testing.assert_array_equal(rewards, pong_play[1])


def test_make_vec_async_spawn() -> None:
    envs = gym.make_vec(
        "SABER/Pong", NUM_ENVS, vectorization_mode="async", vector_kwargs={"context": "spawn"}
    )
    actions = actions_for(40, NUM_ENVS)
    trajectory = run_vector(envs, actions)
    trajectory.assert_equal(run_vector(gym.make_vec("SABER/Pong", NUM_ENVS), actions))


def test_spec_round_trip_gives_the_same_env() -> None:
    """``env.spec`` (as is, pickled, or through JSON) records the override, and
    ``gym.make(spec)`` rebuilds the same stack (not a second one on top of it), with the
    same settings, which plays the same trajectory."""
    env = gym.make("SABER/Pong", max_frames_without_reward=100)
    spec = env.spec
    assert spec.kwargs == {"game": "pong", "max_frames_without_reward": 100}
    assert pickle.loads(pickle.dumps(spec)) == spec
    from_json = gym.envs.registration.EnvSpec.from_json(spec.to_json())
    assert from_json == spec
    rebuilt = gym.make(from_json)
    assert str(rebuilt) == str(env)
    assert rebuilt.spec == spec
    assert saber.saber_settings(rebuilt).deviations() == {
        "max_frames_without_reward": (18_000, 100)
    }
    actions = SHORT_ACTIONS[:30, None]  # 100 frames without reward: a stuck timeout at step 25
    original = run_singles(lambda: env, actions)
    original.assert_equal(run_singles(lambda: rebuilt, actions))
    assert original.ends() == {"stuck_timeout"}


# ------------------------------------------------------------------------- rendering
def test_render_rgb_array() -> None:
    env = gym.make("SABER/Pong", render_mode="rgb_array")
    assert env.render_mode == "rgb_array"
    env.reset(seed=SEED)
    first = env.render()
    assert first.shape == (210, 160, 3) and first.dtype == np.uint8
    for action in SHORT_ACTIONS:
        env.step(action)
    last = env.render()
    assert last.shape == (210, 160, 3) and last.dtype == np.uint8
    assert not np.array_equal(first, last)  # the current screen, not a stale one
    env.close()
