"""Every file saber writes is whole or absent, and every OS error is one line.

Real file systems, no mocks: a tiny tmpfs filled to the last byte (a full disk), a
read-only tmpfs, a directory made immutable with ``chattr +i`` (tests run as root, who
writes through permission bits), a file where a directory should be. Each writer is run
through the real ``saber`` command (click's CliRunner), and each test checks the same
things: exit status 1, no traceback, one ``Error:`` line naming the path and what to do,
nothing new under the final name (nor a temporary file left), and what was there before
untouched.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from saber.cli import main
from saber.errors import ExitCode
from tests.mounts import Mounts, fill

UNFINISHED = ExitCode.UNFINISHED  # results that could not be written, in every command

SHORT = ["--env-option", "max_frames_without_reward=400", "--allow-non-saber"]
REMEDY = {
    "full": "No space left on device; free some space and run the same command again",
    "read-only": "Read-only file system; choose a writable place",
    "immutable": "Operation not permitted; choose a place you may write",
    "file": "choose another path",  # Not a directory or File exists, by the call
}


def saber(*args: str | Path, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, [str(arg) for arg in args], env=env)


def eval_args(out: Path, episodes: int = 1, *more: str) -> list[str | Path]:
    return [
        "eval", "--agent", "random", "--games", "breakout", "--episodes", str(episodes),
        "--out", out, "--workers", "0", "--no-progress", *SHORT, *more,
    ]  # fmt: skip


def assert_one_line_error(result: Result, text: str, status: ExitCode = ExitCode.BAD_INPUT) -> None:
    """Exit ``status``, no traceback, and an ``Error:`` line holding ``text``."""
    assert result.exit_code == status, result.output
    assert "Traceback" not in result.output, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and text in errors[0], result.output


def leftovers(directory: Path) -> list[str]:
    """Temporary files that a failed write left behind (there must be none)."""
    return sorted(p.name for p in directory.rglob("*") if p.name.endswith((".tmp", ".partial")))


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run of two short Breakout episodes, with replays."""
    out = tmp_path_factory.mktemp("run") / "run"
    result = saber(*eval_args(out, 2))
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture
def training_log(tmp_path: Path) -> Path:
    """150 Pong episodes of a training log, one ending every 100,000 frames."""
    lines = [
        json.dumps({"game": "pong", "episode": i, "frames": (i + 1) * 100_000, "score": float(i)})
        for i in range(150)
    ]
    path = tmp_path / "training.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


# --- a full disk, at each writer -------------------------------------------------------

REPORT_FILES = [
    ("--json", "report.json"),
    ("--markdown", "report.md"),
    ("--csv", "report.csv"),
    ("--latex", "report.tex"),
    ("--html", "report.html"),
]


@pytest.mark.parametrize(("flag", "name"), REPORT_FILES)
def test_a_report_file_on_a_full_disk_keeps_the_old_one(
    mounts: Mounts, run_dir: Path, flag: str, name: str
) -> None:
    disk = mounts.room()
    old = disk / name
    old.write_text("the previous report\n")
    fill(disk)
    result = saber("report", run_dir, flag, old, "--force")
    assert_one_line_error(result, f"Cannot write {old}: {REMEDY['full']}", UNFINISHED)
    assert old.read_text() == "the previous report\n"
    assert leftovers(disk) == []


def test_figures_on_a_full_disk_leave_no_half_figure(mounts: Mounts, run_dir: Path) -> None:
    disk = mounts.room()
    old = disk / "classes_5min.png"
    old.write_bytes(b"the previous figure")
    fill(disk)
    result = saber("report", run_dir, "--plots", disk, "--force")
    assert_one_line_error(result, f"Cannot write {disk}/", UNFINISHED)
    assert REMEDY["full"] in result.output
    assert old.read_bytes() == b"the previous figure"
    assert sorted(p.name for p in disk.iterdir()) == ["classes_5min.png", "filler"]


def test_training_json_on_a_full_disk(mounts: Mounts, training_log: Path) -> None:
    disk = mounts.full()
    result = saber("training", training_log, "--at", "10M", "--json", disk / "t.json")
    assert_one_line_error(result, f"Cannot write {disk / 't.json'}: {REMEDY['full']}", UNFINISHED)
    assert sorted(p.name for p in disk.iterdir()) == ["filler"]


def test_eval_on_a_full_disk_keeps_the_episodes_and_resumes(mounts: Mounts) -> None:
    disk = mounts.room(size="1m")
    out = disk / "run"
    assert saber(*eval_args(out, 1)).exit_code == 0
    before = {p.name: p.read_bytes() for p in (out / "episodes.jsonl", out / "report.json")}
    fill(disk)
    result = saber(*eval_args(out, 2))
    assert result.exit_code == ExitCode.UNFINISHED, result.output  # the same command resumes
    assert "Traceback" not in result.output, result.output
    [error] = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert f"Cannot write {out}/" in error and "free some space" in error
    assert {p: (out / p).read_bytes() for p in before} == before  # the records intact
    assert leftovers(disk) == []
    (disk / "filler").unlink()  # space freed: the same command resumes
    assert saber(*eval_args(out, 2)).exit_code == 0
    assert len((out / "episodes.jsonl").read_text().splitlines()) == 2


def test_a_video_that_the_disk_cannot_hold_is_absent_and_made_on_resume(mounts: Mounts) -> None:
    """The reported case: ffmpeg's failed write was renamed to its final .mp4 name
    ("moov atom not found"), listed in run.json, never made again, exit status 0."""
    disk = mounts.room(size="1m")
    reserve = disk / "reserve"
    reserve.write_bytes(b"\0" * 48 * 1024)  # room for the records, not for the video
    fill(disk)
    reserve.unlink()
    out = disk / "run"
    with pytest.warns(RuntimeWarning, match=r"No video of .*No space left on device"):
        result = saber(*eval_args(out, 1, "--video", "1", "--no-report"))  # in this process
    video = out / "videos" / "breakout" / "episode-0.mp4"
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert f"no video {video}: " in result.output
    assert "run the same command again to film it" in result.output
    assert not video.exists() and leftovers(disk) == []
    assert not json.loads((out / "run.json").read_text()).get("videos")
    assert len((out / "episodes.jsonl").read_text().splitlines()) == 1  # the record kept
    (disk / "filler").unlink()
    result = saber(*eval_args(out, 1, "--video", "1", "--no-report"))
    assert result.exit_code == 0, result.output
    run = json.loads((out / "run.json").read_text())
    assert run["videos"] == ["videos/breakout/episode-0.mp4"] and "video_errors" not in run
    assert _frames(video) == json.loads((out / "episodes.jsonl").read_text())["frames"]


def _frames(video: Path) -> int:
    """The frames of a video, decoded by ffmpeg (a half-written MP4 does not decode)."""
    import imageio_ffmpeg

    frames = imageio_ffmpeg.read_frames(str(video))
    next(frames)
    return sum(1 for _ in frames)


def test_replay_video_on_a_full_disk(mounts: Mounts, run_dir: Path) -> None:
    disk = mounts.full()
    video = disk / "episode.mp4"
    result = saber("replay", run_dir, "--game", "breakout", "--episode", "0", "--video", video)
    assert_one_line_error(result, f"Cannot write {video}: {REMEDY['full']}", UNFINISHED)
    assert sorted(p.name for p in disk.iterdir()) == ["filler"]


def test_minari_export_on_a_full_disk(mounts: Mounts, run_dir: Path) -> None:
    pytest.importorskip("minari")
    disk = mounts.full(size="512k")
    result = saber("export", run_dir, env={"MINARI_DATASETS_PATH": str(disk)})
    dataset = disk / "saber" / "breakout" / "random-v0"
    assert_one_line_error(result, f"Cannot write {dataset}: {REMEDY['full']}", UNFINISHED)
    assert not dataset.exists() and leftovers(disk) == []


def test_a_training_log_on_a_full_disk_keeps_whole_lines(mounts: Mounts) -> None:
    """A line that the disk cannot hold is cut off again: the log ends with a whole line."""
    from saber.training import TrainingLog

    disk = mounts.room(size="64k")
    log = TrainingLog(disk / "training.jsonl", "pong")
    episode = {"score": 1.0, "frames": 400, "end": "game_over"}
    log.write(episode)
    fill(disk)  # the log's last page still has room: lines go there until it is full
    with pytest.raises(OSError, match="No space left on device") as error:
        for _ in range(100):  # about 190 bytes a line: a 4 kB page holds 21
            log.write({**episode, "padding": "x" * 80})
    log.close()
    assert error.value.filename == str(disk / "training.jsonl")
    text = (disk / "training.jsonl").read_text()
    assert text.endswith("\n") and all(json.loads(line) for line in text.splitlines())


# --- every command x every kind of OS error -------------------------------------------


def _read_only(mounts: Mounts, tmp_path: Path) -> Path:
    return mounts.read_only()


def _full(mounts: Mounts, tmp_path: Path) -> Path:
    return mounts.full()


def _file(mounts: Mounts, tmp_path: Path) -> Path:
    path = tmp_path / "a-file"
    path.write_text("not a directory\n")
    return path


def _immutable(mounts: Mounts, tmp_path: Path) -> Path:
    """A directory nobody may write into, root included (``chattr +i``, EPERM)."""
    if shutil.which("chattr") is None:
        pytest.skip("chattr is not installed (e2fsprogs)")
    path = tmp_path / "immutable"
    path.mkdir()
    done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"chattr +i is not supported here: {done.stderr.decode().strip()}")
    return path


PLACES: dict[str, Callable[[Mounts, Path], Path]] = {
    "read-only": _read_only,
    "full": _full,
    "file": _file,
    "immutable": _immutable,
}


def _command(name: str, place: Path, run_dir: Path, log: Path) -> tuple[list, Path, dict]:
    """The command line of ``name`` writing into ``place``, the path its error names, and
    its environment."""
    if name == "eval":
        return eval_args(place / "run"), place, {}
    if name == "report":
        return ["report", run_dir, "--json", place / "r.json"], place / "r.json", {}
    if name == "report --plots":
        return ["report", run_dir, "--plots", place / "figures"], place / "figures", {}
    if name == "training":
        return ["training", log, "--at", "10M", "--json", place / "t.json"], place / "t.json", {}
    if name == "replay":
        args = ["replay", run_dir, "--game", "breakout", "--episode", "0"]
        return [*args, "--video", place / "e.mp4"], place / "e.mp4", {}
    if name == "export":
        return ["export", run_dir], place, {"MINARI_DATASETS_PATH": str(place / "minari")}
    raise AssertionError(name)


@pytest.mark.parametrize("kind", list(PLACES))
@pytest.mark.parametrize(
    "command", ["eval", "report", "report --plots", "training", "replay", "export"]
)
def test_every_os_error_is_one_line_naming_the_path(
    mounts: Mounts,
    tmp_path: Path,
    run_dir: Path,
    training_log: Path,
    command: str,
    kind: str,
) -> None:
    if command == "export":
        pytest.importorskip("minari")
    place = PLACES[kind](mounts, tmp_path)
    args, named, env = _command(command, place, run_dir, training_log)
    try:
        result = saber(*args, env=env)
    finally:
        if kind == "immutable":
            subprocess.run(["chattr", "-i", str(place)], check=True)
    # Results that cannot be written leave the command unfinished, in every command alike
    # (docs/exit-codes.md): what is on disk is whole, the same command goes on once mended.
    assert result.exit_code == UNFINISHED and "Traceback" not in result.output, result.output
    [error] = [line for line in result.output.splitlines() if line.startswith("Error:")]
    # The path: the file asked for, or the first part of it that could not be made.
    assert str(place) in error, error
    if kind == "full" and command == "eval":  # the store's own words, with the remedy
        assert "free some space" in error, error
    else:
        assert REMEDY[kind] in error, error
    assert str(named).startswith(str(place))


def test_the_reported_read_only_cases(mounts: Mounts, run_dir: Path) -> None:
    """The reported tracebacks: ``--out`` an existing read-only directory (``OSError ...
    .lock``), ``saber report --plots`` into a read-only place."""
    read_only = mounts.read_only()
    result = saber(*eval_args(read_only))
    assert_one_line_error(
        result, f"Cannot write {read_only}/.lock: {REMEDY['read-only']}", UNFINISHED
    )
    result = saber("report", run_dir, "--plots", read_only)
    assert_one_line_error(result, f"Cannot write {read_only}/", UNFINISHED)
    assert REMEDY["read-only"] in result.output
    assert list(read_only.iterdir()) == []


@pytest.mark.parametrize("command", ["verify", "report", "replay", "export"])
def test_a_directory_where_a_file_is_read_is_one_line(
    tmp_path: Path, run_dir: Path, command: str
) -> None:
    """The readers of a run directory: ``episodes.jsonl`` that is a directory."""
    broken = Path(shutil.copytree(run_dir, tmp_path / "run"))
    (broken / "episodes.jsonl").unlink()
    (broken / "episodes.jsonl").mkdir()
    args = {
        "verify": ["verify", broken, "--workers", "0"],
        "report": ["report", broken],
        "replay": ["replay", broken, "--game", "breakout", "--episode", "0"],
        "export": ["export", broken],
    }[command]
    if command == "export":
        pytest.importorskip("minari")
    result = saber(*args, env={"MINARI_DATASETS_PATH": str(tmp_path / "minari")})
    assert_one_line_error(result, f"{broken}")


def test_missing_parent_directories_are_created(tmp_path: Path, run_dir: Path) -> None:
    """Decided: a missing parent is not an error; every writer creates it (as --out does)."""
    json_out = tmp_path / "a" / "b" / "report.json"
    assert saber("report", run_dir, "--json", json_out).exit_code == 0
    video = tmp_path / "c" / "d" / "episode.mp4"
    args = ["replay", run_dir, "--game", "breakout", "--episode", "0", "--video", video]
    assert saber(*args).exit_code == 0
    assert json.loads(json_out.read_text()) and video.stat().st_size > 0


# --- no silent overwrite ---------------------------------------------------------------


def test_replay_video_refuses_to_overwrite_without_force(tmp_path: Path, run_dir: Path) -> None:
    """The reported case: ``saber replay --video FILE`` overwrote FILE without a word."""
    video = tmp_path / "mine.mp4"
    video.write_bytes(b"someone else's file")
    args = ["replay", run_dir, "--game", "breakout", "--episode", "0", "--video", video]
    result = saber(*args)
    assert_one_line_error(result, f"{video} exists already; pass --force to replace it")
    assert video.read_bytes() == b"someone else's file"
    assert saber(*args, "--force").exit_code == 0
    assert _frames(video) > 0


@pytest.mark.parametrize(("flag", "name"), [*REPORT_FILES, ("--plots", "classes_5min.png")])
def test_report_refuses_to_overwrite_without_force(
    tmp_path: Path, run_dir: Path, flag: str, name: str
) -> None:
    existing = tmp_path / name
    existing.write_text("mine\n")
    fresh = tmp_path / "new" / "report.csv"
    target = tmp_path if flag == "--plots" else existing
    result = saber("report", run_dir, "--csv", fresh, flag, target)
    assert_one_line_error(result, f"{existing} exists already; pass --force to replace it")
    assert existing.read_text() == "mine\n"
    assert not fresh.exists()  # refused before any file was written
    assert saber("report", run_dir, "--csv", fresh, flag, target, "--force").exit_code == 0
    assert existing.read_bytes() != b"mine\n"


def test_training_refuses_to_overwrite_without_force(tmp_path: Path, training_log: Path) -> None:
    existing = tmp_path / "t.json"
    existing.write_text("mine\n")
    args = ["training", training_log, "--at", "10M", "--json", existing]
    assert_one_line_error(saber(*args), f"{existing} exists already; pass --force")
    assert existing.read_text() == "mine\n"
    assert saber(*args, "--force").exit_code == 0
    assert json.loads(existing.read_text())[0]["game"] == "pong"
    figure = tmp_path / "training_pong.png"
    figure.write_text("mine\n")
    args = ["training", training_log, "--at", "10M", "--plots", tmp_path]
    assert_one_line_error(saber(*args), f"{figure} exists already; pass --force")
    assert figure.read_text() == "mine\n"
    assert saber(*args, "--force").exit_code == 0
    assert figure.read_bytes().startswith(b"\x89PNG")


def test_eval_rewrites_its_own_report_on_resume(tmp_path: Path) -> None:
    """A file the same command made in its run directory is its own: no --force needed."""
    out = tmp_path / "run"
    assert saber(*eval_args(out, 1)).exit_code == 0
    first = (out / "report.json").read_text()
    assert saber(*eval_args(out, 2)).exit_code == 0
    assert (out / "report.json").read_text() != first
