"""The Dask path on a cluster of many workers: 16 single-threaded worker processes of a
``LocalCluster`` play 64 one-episode units of short episodes at once. Every episode is
stored exactly once, each record as an uninterrupted in-process run of the same seeds
(wall time aside), the units spread over the workers, and ``saber verify`` passes.

16, not 64, worker processes: each imports saber and ale-py (about 2 s of CPU), which the
slow stage on 2 cores pays in full. The 64-worker figures (the scheduler's and the main
process's CPU per unit, the store's write rate, the largest cluster they serve) are
``benchmarks/dask_scale.py``'s, on docs/measurements/eval.md.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from saber.harness import Dask, EnvOptions, Inline, evaluate
from tests.harness.dask_cluster import check_run_exactly_once, local_cluster
from tests.harness.helpers import PixelsAndDice, read_records, strip_timing

pytest.importorskip("distributed")
pytestmark = pytest.mark.slow  # 16 worker processes: minutes on 2 loaded cores (CI's slow stage)

WORKERS = 16
EPISODES = 64
# Short episodes (not SABER): the units are nearly all the harness's own work.
SHORT = EnvOptions({"max_episode_frames": 400}, allow_non_saber=True)


class PixelsAndDiceNamingItsProcess(PixelsAndDice):
    """:class:`PixelsAndDice` that leaves a file named by its process id in ``folder`` (so
    the test sees which worker processes played)."""

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.folder = str(folder)

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        Path(self.folder, str(os.getpid())).touch()
        return super().__call__(observations)


def test_many_workers_store_every_episode_exactly_once(tmp_path: Path) -> None:
    processes = tmp_path / "processes"
    processes.mkdir()
    reference = evaluate(PixelsAndDice(), "breakout", EPISODES, out=tmp_path / "inline",
                         agent="dice", backend=Inline(envs_per_worker=1), env_options=SHORT,
                         progress=False)  # fmt: skip
    assert reference.finished == EPISODES
    with local_cluster(WORKERS) as cluster:
        # workers=EPISODES: one episode per unit (saber.harness.work.plan_units).
        backend = Dask(cluster.scheduler_address, workers=EPISODES, envs_per_worker=1, timeout=120)
        result = evaluate(PixelsAndDiceNamingItsProcess(processes), "breakout", EPISODES,
                          out=tmp_path / "cluster", agent="dice", backend=backend,
                          env_options=SHORT, progress=False)  # fmt: skip
    assert result.finished == EPISODES and not result.failed
    records = read_records(tmp_path / "cluster")
    assert sorted((r["game"], r["episode"]) for r in records) == [
        ("breakout", episode) for episode in range(EPISODES)
    ]
    # Exactly once, as the in-process run, saber verify passes.
    assert check_run_exactly_once(tmp_path / "cluster", strip_timing(reference.records)) == []
    # The scheduler hands 64 units to 16 idle workers: most of them play.
    played = [path.name for path in processes.iterdir()]
    assert len(played) >= WORKERS // 2, played
