"""The pieces saber.jax shares with make_vec, on jax.numpy: the resize, the rules; and its
refusals (Skiing, bad actions, bad seeds)."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import pytest

from saber.envs import rules
from saber.envs.bilinear import bilinear_tables, resize_bilinear
from tests.envs.frames import real_frames

pytestmark = pytest.mark.jax


def test_jax_resize_equals_cv2_on_real_frames() -> None:
    import jax
    import jax.numpy as jnp

    frames = real_frames()
    tables = bilinear_tables((210, 160), 84)
    resize = jax.jit(lambda f: resize_bilinear(f, tables, jnp))
    expected = np.stack([cv2.resize(f, (84, 84), interpolation=cv2.INTER_LINEAR) for f in frames])
    np.testing.assert_array_equal(np.asarray(resize(jnp.asarray(frames))), expected)


def test_rules_on_int32_jax_arrays_equal_the_scalar_rules() -> None:
    import jax.numpy as jnp

    rewards = [-999_950, -100_000, -9_999_000, -123_456_789, -1_000_000, -100_001]
    for mode in ("correct", "ignore", "off"):
        got = rules.correct_rollover(jnp.asarray(rewards, jnp.int32), mode)
        assert got.dtype == jnp.int32
        expected = [rules.correct_rollover(float(r), mode) for r in rewards]
        assert np.asarray(got).tolist() == expected
    # By hand: the smallest power of ten at or above -reward, added back.
    assert np.asarray(rules.correct_rollover(jnp.asarray(rewards), "correct")).tolist() == [
        50, 0, 1_000, 876_543_211, 0, 899_999,
    ]  # fmt: skip
    flags = [(True, True, True), (False, True, True), (False, False, True), (False, False, False)]
    game_over, stuck, capped = (jnp.asarray(column) for column in zip(*flags, strict=True))
    codes = rules.end_code(game_over=game_over, stuck=stuck, capped=capped, xp=jnp)
    names = [rules.end_reason(game_over=g, stuck=s, capped=c) for g, s, c in flags]
    assert [rules.END_REASONS[code] for code in np.asarray(codes)] == names
    frames = jnp.asarray([rules.SABER_CAP_FRAMES, rules.SABER_CAP_FRAMES - 1])
    assert np.asarray(rules.is_infinite(jnp.asarray([2, 2]), frames)).tolist() == [True, False]


def test_skiing_is_refused_with_the_way_out() -> None:
    from saber.jax import make

    with pytest.raises(ValueError, match=r"SABER/Skiing: ale-py calls only 9 of its 18.*make_vec"):
        make("Skiing", 2)


def test_life_signal_is_refused_with_the_way_out() -> None:
    from saber.errors import ProtocolError
    from saber.jax import make

    with pytest.raises(ProtocolError, match=r"saber\.jax gives no life signal.*make_vec"):
        make("Breakout", 2, life_signal=True)


def test_bad_actions_and_seeds_are_clear_errors() -> None:
    import jax.numpy as jnp

    from saber.jax import make

    env = make("Pong", 2)
    with pytest.raises(ValueError, match=r"seed in \[0, 2\*\*31"):
        env.reset(-1)
    state, _, _ = env.reset(0)
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        env.step(state, jnp.zeros(3, jnp.int32))
    with pytest.raises(ValueError, match=r"integers"):
        env.step(state, jnp.zeros(2, jnp.float32))
    with pytest.raises(ValueError, match=r"in \[0, 17\].*\[0, 18\]"):
        env.step(state, jnp.asarray([0, 18], jnp.int32))
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.step(state, jnp.zeros(2, jnp.int32))


def test_contract_shapes_dtypes_and_record_keys() -> None:
    import gymnasium
    import jax.numpy as jnp

    from saber.jax import make

    env = make("Pong", 2)
    state, obs, info = env.reset(seed=3)
    assert obs.shape == (2, 4, 84, 84) and obs.dtype == jnp.uint8
    assert env.observation_space.contains(np.asarray(obs))
    state, obs, reward, terminated, truncated, info = env.step(state, jnp.zeros(2, jnp.int32))
    assert (reward.dtype, terminated.dtype, truncated.dtype) == (jnp.float32, bool, bool)
    assert info["_saber"].shape == (2,) and info["episode_frame_number"].tolist() == [4, 4]
    dtypes = {key: str(value.dtype) for key, value in info["saber"].items()}
    assert dtypes.pop("infinite") == "bool" and dtypes.pop("seconds") == "float32"
    assert set(dtypes.values()) == {"int32"}
    # make_vec's record keys, in its order.
    vec = gymnasium.make_vec("SABER/Pong", num_envs=1, max_episode_frames=4)
    vec.reset(seed=0)
    keys = list(vec.step(np.zeros(1, np.int64))[4]["saber"])
    assert list(info["saber"]) == keys
    env.close(), vec.close()


def test_spaces_equal_make_vecs_and_their_samples_step() -> None:
    import gymnasium

    from saber.jax import make

    env = make("Pong", 3)
    vec = gymnasium.make_vec("SABER/Pong", num_envs=3)
    assert env.action_space == vec.action_space == gymnasium.spaces.MultiDiscrete([18] * 3)
    assert env.observation_space == vec.observation_space
    assert env.single_action_space == vec.single_action_space
    assert env.single_observation_space == vec.single_observation_space
    state, obs, _ = env.reset(seed=0)
    env.action_space.seed(0)
    sample = env.action_space.sample()  # int64, as make_vec's
    state, obs, *_ = env.step(state, sample)
    assert env.observation_space.contains(np.asarray(obs))
    env.close(), vec.close()


def test_the_seed_callback_calls_no_jax(monkeypatch: pytest.MonkeyPatch) -> None:
    """The host callback of the seed stream works on numpy only: outside jit JAX hands it
    jax Arrays, and a JAX operation inside a callback can deadlock with the caller (it
    hung CI at random in env.reset). Indexing a jax Array inside it now fails loudly."""
    import jax
    import jax.numpy as jnp

    from saber.envs.emulator import SeedStream
    from saber.jax.seeding import ale_seeds

    seeds, positions = jnp.array([5, 6, 7]), jnp.array([0, 2, 1])
    mask = jnp.array([True, False, True])
    calls = []
    original = type(seeds).__getitem__

    def counted(self: Any, index: Any) -> Any:
        calls.append(index)
        return original(self, index)

    stream_of_7 = SeedStream(7)
    stream_of_7.next_ale_seed()  # position 0; row 2 asks for position 1
    expected = [SeedStream(5).next_ale_seed(), -1, stream_of_7.next_ale_seed()]
    monkeypatch.setattr(type(seeds), "__getitem__", counted)
    eager = ale_seeds(seeds, positions, mask)
    jitted = jax.jit(ale_seeds)(seeds, positions, mask)
    assert calls == []  # no jax Array indexed, inside the callback or out
    assert np.asarray(eager).tolist() == np.asarray(jitted).tolist() == expected


def test_a_jax_older_than_the_floor_is_refused_with_the_way_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ale-py 0.12.1's XLA handlers need JAX >= 0.9.1 (0.4.38: no jax.ffi; 0.8.3, 0.9.0:
    their FFI API version is rejected): an older JAX is one clear ImportError at import."""
    import importlib

    import jax

    import saber.jax

    assert saber.jax._release("0.10.0rc1") == (0, 10, 0) >= saber.jax.JAX_FLOOR
    assert saber.jax._release("0.9.1") == saber.jax.JAX_FLOOR
    assert saber.jax._release(jax.__version__) >= saber.jax.JAX_FLOOR
    for old in ("0.9.0", "0.4.38"):
        monkeypatch.setattr(jax, "__version__", old)
        with pytest.raises(ImportError, match=rf"needs JAX >= 0\.9\.1 .* jax {old}\. Upgrade"):
            importlib.reload(saber.jax)
    monkeypatch.undo()
    importlib.reload(saber.jax)
