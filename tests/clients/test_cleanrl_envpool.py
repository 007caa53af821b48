"""CleanRL's envpool scripts train on saber.envpool with the diff docs/rl-libraries.md shows.

Each script is CleanRL's own (tests/clients/cleanrl/), patched by that very diff block
and run for a few thousand steps of Breakout (random games end in about 180 steps, so
every run logs finished games). CI runs these in a stage of their own (.ci/run).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.clients.cleanrl_envpool import SCRIPT_NAMES, SCRIPTS, apply_diff, saber_script

pytestmark = pytest.mark.cleanrl

# A short budget: one iteration of 8 envs x 256 steps, one epoch of updates (the scripts'
# training, not the envs, takes most of a run's time on 2 cores).
ARGS = (
    *("--env-id", "Breakout-v5", "--total-timesteps", "2048", "--num-envs", "8"),
    *("--num-steps", "256", "--update-epochs", "1"),
)
EXTRA = {"ppo_rnd_envpool.py": ("--num-iterations-obs-norm-init", "1")}


@pytest.fixture(scope="module")
def cleanrl_installed() -> None:
    """Fail, with the install command, where a library of the scripts is missing."""
    missing = [
        name
        for name in ("torch", "gym", "tyro", "tensorboard")
        if importlib.util.find_spec(name) is None
    ]
    if missing:
        pytest.fail(
            f"-m cleanrl needs {' and '.join(missing)}: pip install torch==<a CPU or CUDA "
            "build> then pip install gym==0.23.1 tyro tensorboard"
        )


def test_the_diff_changes_only_the_import_and_episodic_life():
    for name in SCRIPT_NAMES:
        original = (SCRIPTS / name).read_text(encoding="utf-8").splitlines()
        patched = apply_diff("\n".join(original) + "\n", _diff()).splitlines()
        changed = [(a, b) for a, b in zip(original, patched, strict=True) if a != b]
        assert changed == [
            ("import envpool", "from saber import envpool"),
            ("        episodic_life=True,", "        episodic_life=False,"),
        ], name


@pytest.mark.parametrize("name", SCRIPT_NAMES)
def test_cleanrl_script_trains_on_saber(name: str, tmp_path: Path, cleanrl_installed) -> None:
    script = saber_script(name, tmp_path)
    done = subprocess.run(
        [sys.executable, str(script), *ARGS, *EXTRA.get(name, ())],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    returns = [float(r) for r in re.findall(r"episodic_return=([-0-9.]+)", done.stdout)]
    assert returns, done.stdout[-3000:]  # finished games were logged ...
    assert all(r >= 0 and r == int(r) for r in returns)  # ... with Breakout's raw scores
    assert re.search(r"SPS: \d+", done.stdout), done.stdout[-3000:]
    assert list((tmp_path / "runs").iterdir())  # and the TensorBoard log was written


def _diff() -> str:
    from tests.clients.cleanrl_envpool import documented_diff

    return documented_diff()
