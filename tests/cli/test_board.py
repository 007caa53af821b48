"""``saber board``: one line per entry and what it wrote; bad input is one clear line and a
visible status, never a traceback."""

from __future__ import annotations

from pathlib import Path

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
    assert code == 0, output
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
