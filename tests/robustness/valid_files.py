"""Small valid files of saber's formats, for the fuzz tests to damage."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from saber.rundir.reading import checkpoint_of
from saber.rundir.records import EPISODES_FILE, RUN_FILE


def small_policy_layers(seed: int | None = None) -> dict[str, np.ndarray]:
    """The arrays of a valid conv-actor policy 2 channels wide: random with a ``seed``,
    else zeros (a few kB instead of the shipped agent's MB)."""
    shapes = {
        "conv1": ((2, 4, 8, 8), (2,)),
        "conv2": ((2, 2, 4, 4), (2,)),
        "conv3": ((2, 2, 3, 3), (2,)),
        "fc": ((4, 2 * 7 * 7), (4,)),
        "policy": ((18, 4), (18,)),
    }
    rng = np.random.default_rng(seed)
    return {
        f"{name}.{kind}": rng.standard_normal(shape) if seed is not None else np.zeros(shape)
        for name, pair in shapes.items()
        for kind, shape in zip(("weight", "bias"), pair, strict=True)
    }


def reseal(run: Path) -> None:
    """Make the checkpoint (``episodes_log``) of every session in ``run/run.json`` that of
    ``run/episodes.jsonl`` as it is now: the run directory saber would have written had
    the file held those bytes, so that a changed line is read on its own (or refused as
    damage) rather than refused whole as another run's ``episodes.jsonl``."""
    run_json = json.loads((run / RUN_FILE).read_text())
    checkpoint = checkpoint_of((run / EPISODES_FILE).read_bytes())
    for session in run_json["sessions"]:
        session["episodes_log"] = dict(checkpoint)
    (run / RUN_FILE).write_text(json.dumps(run_json))
