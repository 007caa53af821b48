"""The JAX agent: examples/pqn_jax.py trains on saber.jax, logs, saves; saber eval plays it.

Marked ``jax`` (deselected by default; CI's jax stage runs ``-m jax``). JAX and optax are
imported inside the tests, so collecting this file needs neither; selecting it without
them is a failure with the install command, never a skip. Episodes are capped at 1,000
frames (``max_episode_frames``, not SABER) so that a run of 3,000 agent steps sees 12.
"""

from __future__ import annotations

import importlib.util
import json
import pickle
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from click.testing import CliRunner

from saber.cli import main as saber_cli
from tests.clients.test_examples import CAP, check_training_log, read_lines, run_example
from tests.script_modules import load_script

pytestmark = pytest.mark.jax

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def jax_train_installed() -> None:
    """Fail, with the install command, where JAX or optax is missing."""
    missing = [m for m in ("jax", "optax") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.fail(f'-m jax needs {" and ".join(missing)}: pip install ".[test,jax-train]"')


def load_example(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    return load_script("pqn_jax", EXAMPLES / "pqn_jax.py", monkeypatch)


@pytest.mark.usefixtures("jax_train_installed")
def test_q_lambda_returns_known_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    import jax.numpy as jnp

    pqn = load_example(monkeypatch)
    # Three steps of three envs, gamma 0.5, lambda 0.5; max Q of the observations at steps
    # 0, 1, 2 is 10, 4, 8 (step 0's never enters a target) and of the last next one 6.
    # Env 0 plays on:      G2 = 2 + .5*6 = 5;  G1 = 0 + .5*(.5*8 + .5*5) = 3.25;
    #                      G0 = 1 + .5*(.5*4 + .5*3.25) = 2.8125.
    # Env 1 ends (game over) at step 1: G2 = 0 + .5*6 = 3; G1 = -1;
    #                      G0 = 1 + .5*(.5*4 + .5*-1) = 1.75.
    # Env 2 is truncated at step 0 (bootstrap, trace cut): G2 = 3;
    #                      G1 = 0 + .5*(.5*8 + .5*3) = 2.75; G0 = 1 + .5*4 = 3.
    transitions = pqn.Transition(
        obs=None,
        action=None,
        reward=jnp.array([[1.0, 1.0, 1.0], [0.0, -1.0, 0.0], [2.0, 0.0, 0.0]]),
        terminated=jnp.array([[False] * 3, [False, True, False], [False] * 3]),
        truncated=jnp.array([[False, False, True], [False] * 3, [False] * 3]),
        valid=None,
        max_q=jnp.array([[10.0] * 3, [4.0] * 3, [8.0] * 3]),
    )
    targets = pqn.q_lambda_returns(transitions, jnp.full(3, 6.0), gamma=0.5, lam=0.5)
    expected = [[2.8125, 1.75, 3.0], [3.25, -1.0, 2.75], [5.0, 3.0, 3.0]]
    np.testing.assert_array_equal(np.asarray(targets), np.array(expected, dtype=np.float32))


@pytest.mark.usefixtures("jax_train_installed")
def test_pqn_trains_logs_and_saber_eval_plays_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stdout = run_example(
        "pqn_jax.py",
        *("--game", "Pong", "--frames", "12000", "--num-envs", "4", "--seed", "3"),
        *("--num-steps", "16", "--minibatches", "2", "--epochs", "1", "--chunk-updates", "10"),
        *("--env-option", f"max_episode_frames={CAP}", "--out", "pqn"),
        cwd=tmp_path,
        timeout=600,
    )
    out = tmp_path / "pqn"
    # The loop stops at the first update that reaches 12,000 frames, not at the end of a
    # 10-update chunk: 47 updates of 16 steps, 752 steps per env, whose steps 250 and 501
    # are reset steps (no frame) after 250-step episodes: 4 envs x 4 frames x 750 steps =
    # 12,000 frames exactly (46 updates: 4 x 4 x 734 = 11,744), 3 episodes per env.
    lines = check_training_log(out / "training.jsonl", num_envs=4, episodes=12)
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["updates"], summary["episodes"]) == (47, 12)
    assert summary["frames"] == 4 * 4 * (752 - 2) == 12_000
    assert summary["frames_per_second"] > 0 and "frames/s" in stdout

    # What `saber training` makes of the log.
    result = CliRunner().invoke(saber_cli, ["training", str(out / "training.jsonl"), "--at", "8k"])
    assert result.exit_code == 0, result.output
    mean = sum(line["score"] for line in lines[:8]) / 8
    assert f"| pong | 8,000 | {mean:,.1f} | 8 (fewer than 100) |" in result.output

    # The saved parameters, through the adapter: saber eval (the CLI, in this process)...
    from saber.harness import EnvOptions, Processes, evaluate
    from saber.jax.policy import JaxQPolicy

    monkeypatch.setenv("SABER_JAX_PARAMS", str(out / "params.npz"))
    result = CliRunner().invoke(
        saber_cli,
        [
            *("eval", "--agent", "saber.jax.policy:load_policy", "--games", "pong"),
            *("--episodes", "2", "--out", str(tmp_path / "eval"), "--workers", "0"),
            *("--env-option", f"max_episode_frames={CAP}", "--allow-non-saber"),
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    records = read_lines(tmp_path / "eval" / "episodes.jsonl")
    assert sorted(r["episode"] for r in records) == [0, 1]
    assert all((r["frames"], r["end"]) == (CAP, "time_cap") for r in records)
    # ...plays exactly as saber.evaluate of the policy object in a worker process: the
    # parameters travel as the file's path and exploration is seeded per episode.
    again = evaluate(
        JaxQPolicy(out / "params.npz"),
        "pong",
        2,
        out=tmp_path / "again",
        backend=Processes(workers=1),
        env_options=EnvOptions({"max_episode_frames": CAP}, allow_non_saber=True),
        progress=False,
    )
    assert [(r["episode"], r["score"]) for r in again.records] == [
        (r["episode"], r["score"]) for r in sorted(records, key=lambda r: r["episode"])
    ]


@pytest.mark.usefixtures("jax_train_installed")
def test_params_round_trip_and_clear_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import jax

    from saber.errors import PolicyError, SaberError
    from saber.jax.policy import JaxQPolicy, load_policy
    from saber.jax.qnetwork import init_params, load_params, q_values, save_params

    params = jax.device_get(init_params(jax.random.PRNGKey(7)))
    path = save_params(tmp_path / "params.npz", params, game="pong", frames=123)
    loaded, header = load_params(path)
    assert (header["game"], header["frames"]) == ("pong", 123)
    assert jax.tree_util.tree_structure(loaded) == jax.tree_util.tree_structure(params)
    for a, b in zip(
        jax.tree_util.tree_leaves(loaded), jax.tree_util.tree_leaves(params), strict=True
    ):
        np.testing.assert_array_equal(a, b)

    # Greedy actions are the argmax of the network's Q-values, also after pickling.
    observations = np.random.default_rng(0).integers(0, 256, (3, 4, 84, 84), dtype=np.uint8)
    greedy = np.asarray(q_values(params, observations)).argmax(axis=1)
    policy = pickle.loads(pickle.dumps(JaxQPolicy(path, epsilon=0.0)))
    np.testing.assert_array_equal(policy(observations), greedy)

    other = tmp_path / "other.npz"
    np.savez(other, __header__=np.array(json.dumps({"architecture": "something-else"})))
    with pytest.raises(SaberError, match="something-else"):
        load_params(other)
    with pytest.raises(PolicyError, match="no such parameter file"):
        JaxQPolicy(tmp_path / "missing.npz")
    monkeypatch.delenv("SABER_JAX_PARAMS", raising=False)
    with pytest.raises(PolicyError, match="Set SABER_JAX_PARAMS"):
        load_policy()


@pytest.mark.usefixtures("jax_train_installed")
def test_scanned_updates_equal_unrolled(monkeypatch: pytest.MonkeyPatch) -> None:
    # The GPU path (epochs, minibatches and updates in lax.scan) is the algorithm the CPU
    # path (unrolled) runs. Epsilon 1 throughout: every action comes from the keys, so
    # both play the same transitions and only float rounding may differ in the weights.
    import jax

    pqn = load_example(monkeypatch)
    results = []
    for unroll in ("yes", "no"):
        args = pqn.parse_args(
            [
                *("--num-envs", "2", "--num-steps", "8", "--minibatches", "2"),
                *("--eps-start", "1", "--eps-finish", "1", "--chunk-updates", "2"),
                *("--unroll", unroll),
            ]
        )
        env = pqn.make("Breakout", num_envs=2, clip_rewards=True)
        chunk, optimizer, per_call = pqn.make_chunk(env, args, total_updates=10)
        runner = pqn.start(env, optimizer, seed=5)
        initial = jax.device_get(runner.params)
        frames = []
        for _ in range(2 // per_call):
            runner, episodes = chunk(runner)
            frames.append(np.asarray(episodes[2]))
        results.append((jax.device_get(runner), np.concatenate(frames)))
    (unrolled, frames_unrolled), (scanned, frames_scanned) = results
    assert int(unrolled.update) == int(scanned.update) == 2
    np.testing.assert_array_equal(np.asarray(unrolled.obs), np.asarray(scanned.obs))
    np.testing.assert_array_equal(frames_unrolled, frames_scanned)
    assert frames_unrolled.sum() == 2 * 8 * 2 * 4  # 2 updates x 8 steps x 2 envs x 4 frames
    for a, b in zip(
        jax.tree_util.tree_leaves(unrolled.params),
        jax.tree_util.tree_leaves(scanned.params),
        strict=True,
    ):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    # It learned something: the weights moved.
    assert not np.allclose(unrolled.params["head"]["w"], initial["head"]["w"])


@pytest.mark.usefixtures("jax_train_installed")
def test_doctests_of_the_agent_modules() -> None:
    # CI's jax stage selects -m jax, which leaves saber/'s (unmarked) doctests out.
    import doctest

    from saber.jax import policy, qnetwork

    for module in (qnetwork, policy):
        result = doctest.testmod(module)
        assert result.failed == 0, module.__name__
    assert doctest.testmod(qnetwork).attempted >= 4
