"""`saber export`: Minari datasets from a run directory, and bad input named in one line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from saber.cli import main
from saber.errors import ExitCode


def test_saber_export_writes_minari_datasets_and_names_bad_input_in_one_line(
    recorded_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    minari = pytest.importorskip("minari")
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))

    def export(*args: str) -> tuple[int, str]:
        result = CliRunner().invoke(main, ["export", *args])
        assert result.exception is None or isinstance(result.exception, SystemExit), result.output
        return result.exit_code, result.output

    code, output = export(str(recorded_run), "--games", "Breakout", "--author", "me")
    assert (code, output) == (
        0,
        "wrote Minari dataset saber/breakout/seed_0-v0: "
        "minari.load_dataset('saber/breakout/seed_0-v0')\n",
    )
    dataset = minari.load_dataset("saber/breakout/seed_0-v0")
    assert dataset.total_episodes == 2 and "me" in str(dataset.storage.metadata["author"])
    damaged = Path(shutil.copytree(recorded_run, tmp_path / "damaged"))
    replay = damaged / "replays" / "breakout" / "episode-1.saber-replay"
    replay.write_bytes(replay.read_bytes()[:-1])
    (tmp_path / "empty").mkdir()
    for args, message in [
        ([str(recorded_run)], "A Minari dataset 'saber/breakout/seed_0-v0' exists already"),
        ([str(recorded_run), "--dataset-id", "bad id!"], "Malformed dataset id 'bad id!'"),
        ([str(recorded_run), "--games", "pong"], "the run did not play pong (its games: breakout)"),
        ([str(tmp_path / "empty")], "no run.json, so this is not a run directory"),
        (
            [str(damaged), "--dataset-id", "saber/damaged-v0"],
            "episode-1.saber-replay is not the replay",
        ),
    ]:
        code, output = export(*args)
        assert code == ExitCode.BAD_INPUT and message in output, output
        assert len(output.strip().splitlines()) == 1, output
    # A failed export leaves no dataset (whole or absent), nor a malformed id's folder.
    assert list(minari.list_local_datasets()) == ["saber/breakout/seed_0-v0"]
