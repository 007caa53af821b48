"""SaberSettings.life_signal (not SABER): info["lives"] on every env, refused elsewhere."""

from __future__ import annotations

import itertools

import gymnasium as gym
import numpy as np
import pytest

import saber  # noqa: F401  (registers the SABER/ ids)
from saber.envs.engines import SequentialEngine, ThreadedEngine
from saber.envs.vector import SaberVectorEnv
from saber.errors import ProtocolError
from saber.protocol.settings import SaberSettings

FIRE = 1  # launches Breakout's ball; the paddle never moves, so each ball is lost


def test_life_signal_is_a_deviation_and_validated() -> None:
    assert SaberSettings(life_signal=True).deviations() == {"life_signal": (False, True)}
    assert not SaberSettings(life_signal=True).is_compliant
    with pytest.raises(ProtocolError, match="Expect `life_signal` to be a bool"):
        SaberSettings(life_signal=1)  # type: ignore[arg-type]


def test_single_env_gives_lives_that_fall() -> None:
    env = gym.make("SABER/Breakout", life_signal=True)
    _, info = env.reset(seed=0)
    lives = [info["lives"]]
    for _ in range(80):
        info = env.step(FIRE)[4]
        lives.append(info["lives"])
    env.close()
    assert lives[0] == 5 and all(isinstance(n, int) for n in lives)
    assert min(lives) < 5 and all(b <= a for a, b in itertools.pairwise(lives))


def test_default_single_env_gives_no_lives() -> None:
    env = gym.make("SABER/Breakout")
    _, info = env.reset(seed=0)
    assert "lives" not in info and "lives" not in env.step(FIRE)[4]
    env.close()


@pytest.mark.parametrize("game", ["Breakout", "Skiing"])  # threaded, sequential engine
def test_vector_env_lives_equal_the_single_envs(game: str) -> None:
    single = gym.make(f"SABER/{game}", life_signal=True)
    expected = [single.reset(seed=3)[1]["lives"]]
    expected += [single.step(FIRE)[4]["lives"] for _ in range(80)]
    single.close()
    envs = SaberVectorEnv(game, 2, life_signal=True)
    assert envs.uses_threads == (game == "Breakout")
    _, info = envs.reset(seed=3)
    got = [info["lives"][0]]
    for _ in range(80):
        info = envs.step(np.full(2, FIRE))[4]
        assert info["lives"].dtype == np.int32 and info["lives"].shape == (2,)
        got.append(info["lives"][0])
    envs.close()
    assert got == expected and (game != "Breakout" or min(got) < 5)


def test_both_engines_give_the_same_lives() -> None:
    settings = SaberSettings(life_signal=True)
    engines = [
        ThreadedEngine("breakout", 2, settings, 0),
        SequentialEngine("breakout", 2, settings),
    ]
    rows, actions = np.arange(2), np.full(2, FIRE)
    for engine in engines:
        engine.reset(rows, [0, 1])
    assert [e.lives().tolist() for e in engines] == [[5, 5], [5, 5]]
    lives: list[list[list[int]]] = [[], []]
    for _ in range(80):
        for engine, seen in zip(engines, lives, strict=True):
            engine.step(actions, np.zeros(0, dtype=np.int64), [])
            seen.append(engine.lives().tolist())
    for engine in engines:
        engine.close()
    assert lives[0] == lives[1] and min(min(row) for row in lives[0]) < 5


def test_default_vector_env_gives_no_lives() -> None:
    envs = SaberVectorEnv("Breakout", 2)
    _, info = envs.reset(seed=0)
    assert "lives" not in info and "lives" not in envs.step(np.full(2, FIRE))[4]
    envs.close()


def test_envpool_refuses_life_signal() -> None:
    import saber.envpool

    with pytest.raises(ProtocolError, match=r"gives no life signal.*make_vec"):
        saber.envpool.make("Breakout-v5", "gymnasium", life_signal=True)


def test_many_games_env_gives_each_rows_lives() -> None:
    envs = gym.make_vec("SABER/Atari5", num_envs=5, life_signal=True)
    _, info = envs.reset(seed=0)
    first = info["lives"].copy()
    info = envs.step(np.zeros(5, dtype=np.int64))[4]
    envs.close()
    singles = []
    for row, game in enumerate(info["game"]):
        env = SaberVectorEnv(game, 1, life_signal=True)
        singles.append(int(env.reset(seed=row)[1]["lives"][0]))
        env.close()
    assert first.tolist() == singles and info["lives"].shape == (5,)
    plain = gym.make_vec("SABER/Atari5", num_envs=5)
    assert "lives" not in plain.reset(seed=0)[1]
    plain.close()


@pytest.mark.parametrize("vector", [False, True], ids=["make", "make_vec"])
def test_saber_check_says_lives_are_not_saber(vector: bool) -> None:
    from saber.check.probes.lives import probe_lives
    from saber.check.subject import subject_of

    env = (
        gym.make_vec("SABER/Breakout", num_envs=2, life_signal=True)
        if vector
        else gym.make("SABER/Breakout", life_signal=True)
    )
    [rule] = probe_lives(subject_of(env))
    env.close()
    assert rule.status.value == "fail" and "`lives` in" in rule.measured, rule
