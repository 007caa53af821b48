"""`saber check`: a thin command over saber.check, with its exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from saber.cli import main
from saber.errors import ExitCode

ROOT = Path(__file__).resolve().parents[2]


def test_quick_json_of_a_saber_env_names_the_rules_not_probed_and_exits_unfinished() -> None:
    """--quick never calls an env SABER: the rules it leaves out are listed, no verdict."""
    outcome = CliRunner().invoke(main, ["check", "SABER/Pong", "--quick", "--json"])
    assert outcome.exit_code == ExitCode.UNFINISHED, outcome.output
    result = json.loads(outcome.output[outcome.output.index("{") :])
    assert result["target"] == "SABER/Pong" and not result["passed"]
    left_out = ["sticky_actions", "action_set", "stuck_timeout"]
    assert result["not_probed"] == left_out
    states = {rule["rule"]: rule["status"] for rule in result["rules"]}
    assert len(states) == 12
    assert {states.pop(rule) for rule in left_out} == {"not_probed"}
    assert set(states.values()) == {"pass"}


def test_quick_table_says_not_shown_to_be_saber() -> None:
    outcome = CliRunner().invoke(main, ["check", "SABER/Pong", "--quick"])
    assert outcome.exit_code == ExitCode.UNFINISHED, outcome.output
    first = outcome.output.splitlines()[0]
    assert first.startswith(
        "SABER/Pong: not shown to be SABER: every rule probed passes; not probed: "
        "sticky_actions, action_set, stuck_timeout (run without --quick) "
        "(9 pass, 0 fail, 0 unknown, 3 not probed;"
    )
    assert "sticky_actions  not probed" in outcome.output


def test_a_failing_env_prints_the_table_and_exits_one() -> None:
    outcome = CliRunner().invoke(main, ["check", "ALE/Pong-v5", "--quick"])
    assert outcome.exit_code == ExitCode.FAILED
    assert "ALE/Pong-v5: not SABER" in outcome.output
    assert "frame_cap" in outcome.output and "FAIL" in outcome.output
    assert "truncated at 108,000 frames" in outcome.output


def test_bad_targets_say_what_is_wrong() -> None:
    runner = CliRunner()
    outcome = runner.invoke(main, ["check", "SABER/NoSuchGame"])
    assert outcome.exit_code == ExitCode.BAD_INPUT
    assert "No registered env 'SABER/NoSuchGame'" in outcome.output
    outcome = runner.invoke(main, ["check", "SABER/Pong", "--game", "breakout"])
    assert outcome.exit_code == ExitCode.BAD_INPUT
    assert "--game is for 'module:factory' targets" in outcome.output
    outcome = runner.invoke(main, ["check", "tests.check.stacks:nothing_here"])
    assert outcome.exit_code == ExitCode.BAD_INPUT
    assert "Cannot load 'tests.check.stacks:nothing_here'" in outcome.output


def test_a_module_factory_with_a_game_in_a_real_process() -> None:
    command = [sys.executable, "-m", "saber.cli", "check", "tests.check.stacks:saber_env"]
    done = subprocess.run(
        [*command, "--game", "breakout", "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == ExitCode.UNFINISHED, done.stdout + done.stderr
    assert (
        "tests.check.stacks:saber_env: not shown to be SABER: every rule probed passes"
        in done.stdout
    )
