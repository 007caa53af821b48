"""``saber export`` is whole or absent on a disk that fills at any point of the write.

Real full disks: tmpfs mounts (tests/mounts.py) of sizes that end the write at several
points (the first bytes, the first episode, the middle, the last bytes), as measured
from the dataset's size on a disk with room. Each attempt: exit status 1, one line that
names the dataset, no traceback nor h5py's ``Exception ignored``, no crash, and nothing
Minari lists or loads; on a disk with room, the same command writes it whole.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from saber.cli import main
from saber.errors import ExitCode
from tests.harness.helpers import evaluate_short
from tests.mounts import Mounts

minari = pytest.importorskip("minari")

EPISODES = 3
DATASET = "saber/breakout/random-v0"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export") / "run"
    evaluate_short(out, EPISODES)
    return out


def _export(run: Path, datasets: Path) -> tuple[int, str]:
    result = CliRunner().invoke(
        main, ["export", str(run)], env={"MINARI_DATASETS_PATH": str(datasets)}
    )
    return result.exit_code, result.output


def _listed(datasets: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(datasets))
    return minari.list_local_datasets()


def _size(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def test_a_disk_that_fills_at_any_point_leaves_no_dataset(
    run: Path, tmp_path: Path, mounts: Mounts, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, output = _export(run, tmp_path / "room")
    assert code == 0, output
    size = _size(tmp_path / "room")  # the whole dataset, in bytes
    for fraction in (0.0, 0.1, 0.5, 0.97):
        kilobytes = max(64, int(size * fraction) // 1024)
        disk = mounts.room(f"disk-{fraction}", size=f"{kilobytes}k")
        code, output = _export(run, disk)
        assert code == ExitCode.UNFINISHED, (fraction, output)  # results not written
        assert output.startswith(f"Error: Cannot write {disk / DATASET}: "), (fraction, output)
        assert len(output.strip().splitlines()) == 1, (fraction, output)
        assert "free some space and run the same command again" in output, output
        assert not any(disk.iterdir()), (fraction, sorted(disk.rglob("*")))
        assert _listed(disk, monkeypatch) == {}
    # A disk with room: the same command writes it whole.
    disk = mounts.room("enough", size=f"{size // 1024 + 1024}k")
    code, output = _export(run, disk)
    assert code == 0, output
    assert list(_listed(disk, monkeypatch)) == [DATASET]
    dataset = minari.load_dataset(DATASET)
    assert dataset.total_episodes == EPISODES
    assert sorted(path.name for path in disk.iterdir()) == ["saber"]  # nothing staged left


def test_the_staging_folder_of_an_export_killed_outright_goes_at_the_next(
    run: Path, tmp_path: Path
) -> None:
    datasets = tmp_path / "datasets"
    abandoned = datasets / ".saber-export-999999999-0000abcd" / "saber" / "breakout"
    abandoned.mkdir(parents=True)  # no process 999999999: its export was killed
    mine = datasets / f".saber-export-{os.getpid()}-0000abcd"  # a live process's: kept
    mine.mkdir()
    code, output = _export(run, datasets)
    assert code == 0, output
    assert sorted(path.name for path in datasets.iterdir()) == [mine.name, "saber"]
