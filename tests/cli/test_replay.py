"""`saber replay`: a film of a recorded episode, made after the fact from its replay."""

from __future__ import annotations

from pathlib import Path

import imageio_ffmpeg
import pytest
from click.testing import CliRunner

from saber.cli import main
from saber.errors import ExitCode, SaberError
from saber.replay import recorded_episode


def test_saber_replay_films_a_recorded_episode_after_the_fact(
    recorded_run: Path, tmp_path: Path
) -> None:
    record = recorded_episode(recorded_run, "Breakout", 1).record
    video = tmp_path / "episode-1.mp4"
    result = CliRunner().invoke(
        main,
        [
            "replay",
            str(recorded_run),
            "--game",
            "breakout",
            "--episode",
            "1",
            "--video",
            str(video),
        ],
    )
    assert result.exit_code == 0, result.output
    assert f"breakout episode 1: seed {record['seed']}, {record['steps']} steps" in result.output
    frames = imageio_ffmpeg.read_frames(str(video))
    assert next(frames)["size"] == (160, 210)
    assert sum(1 for _ in frames) == record["frames"]  # every emulator frame
    missing = CliRunner().invoke(
        main, ["replay", str(recorded_run), "--game", "breakout", "--episode", "7"]
    )
    assert (
        missing.exit_code == ExitCode.BAD_INPUT
        and "no finished episode 7 of breakout (finished: 0-1)" in missing.output
    )
    with pytest.raises(SaberError, match="no finished episode 7"):
        recorded_episode(recorded_run, "breakout", 7)
