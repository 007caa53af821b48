"""saber.agents.convnet: numpy inference against a naive convolution, the policy file's
checks (one line naming the file and what is wrong), and reproducible sampling."""

from __future__ import annotations

import json
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import saber
from saber.agents import ConvActorPolicy, PolicyFileError, read_policy_file
from saber.agents.convnet import FORMAT, QUANTIZED_FORMAT, write_policy_file
from saber.agents.pretrained import PRETRAINED, agent_provenance
from saber.cli import main as saber_cli
from saber.errors import ExitCode
from saber.games import get_game


def random_layers(
    seed: int = 0, channels: tuple[int, int, int] = (3, 5, 4), hidden: int = 6
) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    c1, c2, c3 = channels
    shapes = {
        "conv1": ((c1, 4, 8, 8), (c1,)),
        "conv2": ((c2, c1, 4, 4), (c2,)),
        "conv3": ((c3, c2, 3, 3), (c3,)),
        "fc": ((hidden, c3 * 7 * 7), (hidden,)),
        "policy": ((18, hidden), (18,)),
    }
    layers = {}
    for name, (weight, bias) in shapes.items():
        layers[f"{name}.weight"] = rng.normal(0, 0.3, weight).astype(np.float32)
        layers[f"{name}.bias"] = rng.normal(0, 0.1, bias).astype(np.float32)
    return layers


def naive_logits(layers: dict[str, np.ndarray], observation: np.ndarray) -> np.ndarray:
    """One observation through the network, one output pixel at a time (float64)."""
    x = observation.astype(np.float64) / 255.0  # (C, H, W)
    for name, size, stride in (("conv1", 8, 4), ("conv2", 4, 2), ("conv3", 3, 1)):
        weight, bias = layers[f"{name}.weight"].astype(np.float64), layers[f"{name}.bias"]
        side = (x.shape[1] - size) // stride + 1
        out = np.empty((len(weight), side, side))
        for i in range(side):
            for j in range(side):
                patch = x[:, i * stride : i * stride + size, j * stride : j * stride + size]
                out[:, i, j] = np.tensordot(weight, patch, axes=3) + bias
        x = np.maximum(out, 0.0)
    hidden = np.maximum(layers["fc.weight"] @ x.reshape(-1) + layers["fc.bias"], 0.0)
    return layers["policy.weight"] @ hidden + layers["policy.bias"]


@pytest.fixture
def policy_file(tmp_path: Path) -> Path:
    return write_policy_file(tmp_path / "policy.npz", random_layers(), {"seed": 0})


def observations(count: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (count, 4, 84, 84), dtype=np.uint8)


def test_logits_equal_a_naive_convolution(policy_file: Path) -> None:
    actor = read_policy_file(policy_file)
    batch = observations(3)
    expected = np.stack([naive_logits(actor.layers, obs) for obs in batch])
    np.testing.assert_allclose(actor.logits(batch), expected, rtol=1e-4, atol=1e-5)
    assert actor.provenance == {"seed": 0}


def test_actions_depend_on_the_episode_seed_only(policy_file: Path) -> None:
    batch = observations(4)
    first, second = ConvActorPolicy(policy_file), ConvActorPolicy(policy_file)
    first.start_episodes(np.arange(4), np.array([10, 11, 12, 13]))
    second.start_episodes(np.arange(4), np.array([13, 12, 11, 10]))  # rows swapped
    played = [first(batch) for _ in range(5)]
    replayed = [second(batch[::-1]) for _ in range(5)]
    assert all((a == b[::-1]).all() for a, b in zip(played, replayed, strict=True))
    assert len({tuple(actions) for actions in played}) > 1  # it samples: not one fixed action


def test_greedy_plays_the_largest_logit(policy_file: Path) -> None:
    batch = observations(5)
    actor = read_policy_file(policy_file)
    greedy = ConvActorPolicy(policy_file, greedy=True)
    assert (greedy(batch) == actor.logits(batch).argmax(1)).all()


def test_the_policy_pickles_by_path(policy_file: Path) -> None:
    policy = pickle.loads(pickle.dumps(ConvActorPolicy(policy_file, greedy=True)))
    assert policy.path == policy_file and policy.greedy
    assert len(pickle.dumps(policy)) < 1_000  # the weights do not travel


def _rewrite(path: Path, **changes: np.ndarray | None) -> None:
    with np.load(path) as archive:
        contents = {name: archive[name] for name in archive.files}
    for name, value in changes.items():
        if value is None:
            contents.pop(name.replace("__", "."))
        else:
            contents[name.replace("__", ".")] = value
    with path.open("wb") as handle:
        np.savez(handle, **contents)


BAD_FILES = {
    "not a zip": (lambda p: p.write_bytes(b"garbage"), "not a readable policy file"),
    "truncated": (lambda p: p.write_bytes(p.read_bytes()[:500]), "not a readable policy file"),
    "foreign npz": (
        lambda p: np.savez(p, weights=np.zeros(3)),
        "expect a saber/conv-actor/1 policy file, actually format 'none'",
    ),
    "other format": (
        lambda p: _rewrite(p, format=np.array("saber/conv-actor/9")),
        "actually format 'saber/conv-actor/9'",
    ),
    "missing layer": (lambda p: _rewrite(p, fc__bias=None), "missing arrays fc.bias"),
    "wrong shape": (
        lambda p: _rewrite(p, conv2__weight=np.zeros((5, 3, 3, 3), np.float32)),
        "conv2 has weights (5, 3, 3, 3)",
    ),
    "six actions": (
        lambda p: _rewrite(
            p, policy__weight=np.zeros((6, 6), np.float32), policy__bias=np.zeros(6, np.float32)
        ),
        "6 logits; SABER plays all 18 actions",
    ),
    "nan": (
        lambda p: _rewrite(p, fc__weight=np.full((6, 196), np.nan, np.float32)),
        "fc.weight holds NaN",
    ),
    "pickled object": (
        lambda p: _rewrite(p, provenance=np.array([{"a": 1}], dtype=object)),
        "not a readable policy file",
    ),
}


@pytest.mark.parametrize("damage", BAD_FILES, ids=list(BAD_FILES))
def test_a_bad_policy_file_is_one_line_naming_it(policy_file: Path, damage: str) -> None:
    spoil, message = BAD_FILES[damage]
    spoil(policy_file)
    with pytest.raises(PolicyFileError, match=str(policy_file)) as error:
        read_policy_file(policy_file)
    assert message in str(error.value)
    result = CliRunner().invoke(
        saber_cli,
        [
            "eval",
            "--agent",
            f"conv-actor:{policy_file}",
            "--games",
            "pong",
            "--episodes",
            "1",
            "--out",
            str(policy_file.parent / "run"),
        ],
    )
    assert result.exit_code == ExitCode.BAD_INPUT
    assert message in result.output and "Traceback" not in result.output
    assert not (policy_file.parent / "run" / "episodes.jsonl").exists()


def test_an_int8_file_holds_each_dense_row_to_half_its_step(tmp_path: Path) -> None:
    layers = random_layers(hidden=64)
    layers["fc.weight"][3] = 0.0  # a row of zeros (a dead unit) stays zeros
    files = {
        dtype: write_policy_file(tmp_path / f"{dtype.__name__}.npz", layers, {}, dtype)
        for dtype in (np.float32, np.float16, np.int8)
    }
    with np.load(files[np.int8], allow_pickle=False) as archive:
        assert str(archive["format"]) == QUANTIZED_FORMAT
        assert archive["fc.weight"].dtype == np.int8
        scale = archive["fc.weight_scale"]
    # Each row's largest magnitude is 127 steps of its scale.
    np.testing.assert_allclose(scale[[0, 1]], np.abs(layers["fc.weight"][[0, 1]]).max(1) / 127)
    actor, half = read_policy_file(files[np.int8]), read_policy_file(files[np.float16])
    error = np.abs(actor.layers["fc.weight"] - layers["fc.weight"])
    assert np.all(error <= scale[:, None] / 2 * (1 + 1e-6))
    assert not actor.layers["fc.weight"][3].any()
    for name, array in actor.layers.items():  # every other array as the float16 file has it
        if name != "fc.weight":
            np.testing.assert_array_equal(array, half.layers[name])
    sizes = {dtype: path.stat().st_size for dtype, path in files.items()}
    assert sizes[np.int8] < sizes[np.float16] < sizes[np.float32]


INT8_DAMAGE = {
    "no scale": ({"fc__weight_scale": None}, "fc.weight_scale is none; expect float32 (64,)"),
    "a scale a column": (
        {"fc__weight_scale": np.ones(196, np.float32)},
        "fc.weight_scale is float32 (196,)",
    ),
    "float weights": (
        {"fc__weight": np.zeros((64, 196), np.float32)},
        "fc.weight holds float32 values (64, 196); a saber/conv-actor/2 file holds it as int8",
    ),
    "infinite scale": (
        {"fc__weight_scale": np.full(64, np.inf, np.float32)},
        "fc.weight_scale holds values that are not positive numbers",
    ),
}


@pytest.mark.parametrize("damage", INT8_DAMAGE, ids=list(INT8_DAMAGE))
def test_a_bad_int8_file_is_one_line_naming_it(tmp_path: Path, damage: str) -> None:
    path = write_policy_file(tmp_path / "int8.npz", random_layers(hidden=64), {}, np.int8)
    changes, message = INT8_DAMAGE[damage]
    _rewrite(path, **changes)
    with pytest.raises(PolicyFileError, match=str(path)) as error:
        read_policy_file(path)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_a_missing_policy_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(PolicyFileError, match="no such policy file"):
        read_policy_file(tmp_path / "absent.npz")


def test_the_file_holds_float32_and_no_code(policy_file: Path) -> None:
    with zipfile.ZipFile(policy_file) as archive:
        names = set(archive.namelist())
    assert "format.npy" in names and "provenance.npy" in names
    with np.load(policy_file, allow_pickle=False) as archive:
        assert str(archive["format"]) == FORMAT
        assert archive["conv1.weight"].dtype == np.float32
        json.loads(str(archive["provenance"]))


@pytest.mark.parametrize("name", sorted(PRETRAINED))
def test_every_shipped_agent_is_listed_with_its_checked_provenance(name: str) -> None:
    result = CliRunner().invoke(saber_cli, ["list", "--json"])
    assert result.exit_code == 0
    agents = json.loads(result.output)["agents"]
    assert name in agents and "conv-actor:PATH" in agents
    agent = PRETRAINED[name]
    record = agent_provenance(name)  # raises if the hash does not match the file
    assert record["name"] == name and record["policy_file"] == agent.policy_file
    assert agent.path.stat().st_size <= 2_000_000
    training = record["training"]
    for key in ("script", "commit", "seed", "frames", "wall_seconds", "machine", "seconds"):
        assert key in training
    assert training["script"] == "examples/ppo_saber.py"
    assert training["seed"] == agent.training_seed
    assert get_game(training["game"]).ale_id == agent.game
    assert read_policy_file(agent.path).num_actions == 18


@pytest.mark.parametrize("name", sorted(PRETRAINED))
def test_a_shipped_agent_trained_outside_saber_says_so_and_stays_out_of_saber_ppo(
    name: str,
) -> None:
    """Its training provenance's setup, its deviations, its description and its reference
    agree: what saber report and the board label it by (training_deviations)."""
    from saber.agents.pretrained import training_deviations
    from saber.scoring.references import ppo_runs

    record = agent_provenance(name)
    setup = record["training"].get("setup", "saber")
    deviations = training_deviations(name)
    assert (setup == "saber") == (not deviations)
    assert ("not SABER" in record["description"]) == bool(deviations)
    if deviations:
        assert record["reference"] is None
        assert name not in {run["agent"] for run in ppo_runs()}


def test_the_installed_package_weighs_under_25_mb() -> None:
    """Code, game data, references and every shipped agent (docs/baselines.md)."""
    package = Path(saber.__file__).parent
    files = [
        path for path in package.rglob("*") if path.is_file() and "__pycache__" not in path.parts
    ]
    assert sum(path.stat().st_size for path in files) < 25_000_000
