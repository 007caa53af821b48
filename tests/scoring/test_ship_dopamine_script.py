"""scripts/release/ship_dopamine_reference.py stops on any surprise in Dopamine's layout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from saber.scoring import dopamine
from tests.script_modules import load_script

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "release" / "ship_dopamine_reference.py"


@pytest.fixture(scope="module")
def script():
    return load_script("ship_dopamine_reference", SCRIPT)


def records(iterations: int = 199, runs: int = 5) -> list[dict]:
    """A file in Dopamine's layout: per agent, the runs one after the other from iteration 0."""
    return [
        {"Iteration": k, "Value": float(100 * r + k), "Agent": name}
        for name in dopamine.AGENTS.values()
        for r in range(runs)
        for k in range(iterations)
    ]


def test_parses_the_layout(script):
    curves = script.parse_game("pong", json.dumps(records()).encode())
    assert len(curves["Rainbow"]) == 5 and curves["Rainbow"][2][9] == 209.0


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (records(iterations=200), r"runs x iterations \[200, 200, 200, 200, 200\]"),
        (records(runs=4), r"runs x iterations \[199, 199, 199, 199\]"),
        (records()[:5] + records()[6:], "iteration 6 out of order"),
        ([{"Iteration": 0, "Value": float("nan"), "Agent": "DQN"}], "value nan"),
        ([{"Iteration": 0, "Value": 1.0, "Agent": "PPO"}], "agents"),
    ],
)
def test_refuses_another_layout(script, broken, message):
    with pytest.raises(script.LayoutError, match=message):
        script.parse_game("pong", json.dumps(broken).encode())


def test_maps_game_names(script):
    mapping, outside, missing = script.map_games(["mspacman", "upndown", "notagame"])
    assert mapping == {"mspacman": "ms_pacman", "upndown": "up_n_down"}
    assert outside == ["notagame"] and "defender" in missing
