"""``saber board``: one line per entry and what it wrote; bad input is one clear line and a
visible status, never a traceback."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from saber.cli import main
from saber.errors import ExitCode


def _board(*arguments: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        main, ["board", "--no-figures", "--resamples", "10", "--workers", "0", *arguments]
    )
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def test_bad_entries_are_shown_with_their_status(tmp_path: Path) -> None:
    uncited = tmp_path / "scores.csv"
    uncited.write_text("agent,game,score\nmine,pong,3\n")
    site = tmp_path / "site"
    code, output = _board(
        "saber-paper", str(tmp_path / "nowhere"), str(uncited), "saber-paper",
        "--out", str(site), "--cache", str(tmp_path / "cache"),
    )  # fmt: skip
    assert code == ExitCode.FAILED, output  # after writing the site whole
    lines = output.splitlines()
    assert lines[:2] == [
        "published, not verifiable: rainbow@saber-paper (saber-paper): a shipped reference "
        "(published per-game means)",
        "published, not verifiable: rainbow-iqn@saber-paper (saber-paper): a shipped "
        "reference (published per-game means)",
    ]
    assert lines[2] == (
        f"failed: {tmp_path / 'nowhere'} ({tmp_path / 'nowhere'}): no such file or directory, "
        "nor a shipped reference (saber report --list-references) or shipped agent (saber list)"
    )
    assert lines[3].startswith(f"failed: mine ({uncited}): a score table without a citation")
    assert lines[4] == "saber-paper: the same reference as saber-paper: counted once"
    assert lines[5].startswith(f"wrote {site}: 4 entries (2 published, not verifiable, 2 failed)")
    assert (site / "index.html").is_file()


def test_one_entry_is_counted_in_the_singular(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    site = tmp_path / "site"
    code, output = _board(str(tmp_path / "empty"), "--out", str(site))
    assert code == ExitCode.FAILED, output
    assert output.splitlines()[-1].startswith(f"wrote {site}: 1 entry (1 failed), "), output
    assert "<p>1 entry: " in (site / "entries" / "index.html").read_text()


def test_a_folder_of_someone_elses_files_is_refused_in_one_line(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("my own page")
    code, output = _board("saber-paper", "--out", str(site))
    assert code == ExitCode.BAD_INPUT
    assert output == (
        f"Error: {site} holds files saber board did not write (index.html); nothing was "
        "written: choose a new or empty --out, or move them away\n"
    )
    assert (site / "index.html").read_text() == "my own page"


def test_no_entry_is_a_usage_error(tmp_path: Path) -> None:
    code, output = _board("--out", str(tmp_path / "site"))
    assert code == 2 and "Missing argument 'ENTRY...'" in output
    assert not (tmp_path / "site").exists()


def test_only_verified_published_or_not_saber_entries_exit_0(tmp_path: Path) -> None:
    code, output = _board("saber-paper", "dopamine:dqn", "--out", str(tmp_path / "site"))
    assert code == ExitCode.OK, output
    assert "not SABER: dqn@dopamine-200M" in output


def test_text_from_an_entry_never_starts_a_console_line(tmp_path: Path) -> None:
    """A name holding a newline and a forged status line stays on its entry's line."""
    table = tmp_path / "scores.csv"
    table.write_text('agent,game,score\n"x\nverified: forged (runs/x): all 100 replays",pong,3\n')
    (tmp_path / "scores.board.json").write_text('{"citation": "me\\nverified: forged"}')
    _, output = _board(str(table), "--out", str(tmp_path / "site"))
    assert not any(line.startswith("verified") for line in output.splitlines()), output
    assert len(output.splitlines()) == 2, output


def test_a_score_table_that_is_a_symbolic_link_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real.csv"
    real.write_text("agent,game,score\nmine,pong,3\n")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    code, output = _board(str(link), "--out", str(tmp_path / "site"))
    assert code == ExitCode.FAILED
    assert f"failed: {link} ({link}): a symbolic link: give the score table itself" in output


def test_the_help_states_the_budget_and_the_sample_seed() -> None:
    output = " ".join(CliRunner().invoke(main, ["board", "--help"]).output.split())
    assert "--budget" in output and "20000000" in output
    assert "drawn at build time" in output


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux's /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.parametrize(
    ("signal_number", "status"),
    [(signal.SIGTERM, ExitCode.TERMINATED), (signal.SIGINT, ExitCode.INTERRUPTED)],
    ids=["SIGTERM", "SIGINT"],
)
def test_a_stop_ends_the_build_within_seconds_and_writes_nothing(
    tmp_path: Path, signal_number: int, status: int
) -> None:
    """SIGTERM or Ctrl-C while runs are verified in worker processes: the workers are
    stopped at once, the exit status is the signal's, and no site (nor a half of one)."""
    from tests.board.conftest import make_run

    for seed, name in enumerate("abc"):  # more runs than jobs kept here: workers verify them
        make_run(tmp_path / "runs" / name, episodes=3, base_seed=seed)
    process = subprocess.Popen(
        [sys.executable, "-m", "saber.cli", "board", str(tmp_path / "runs" / "a"),
         str(tmp_path / "runs" / "b"), str(tmp_path / "runs" / "c"), "--out",
         str(tmp_path / "site"), "--no-figures", "--workers", "2", "--cache",
         str(tmp_path / "cache")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while len(_children(process.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)  # until the worker processes verify the runs
    time.sleep(0.5)
    sent = time.monotonic()
    process.send_signal(signal_number)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == status, output
    assert time.monotonic() - sent < 15
    assert "Traceback" not in output and "wrote" not in output
    assert not (tmp_path / "site").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site")] == []
