"""``saber repair``: each damage of a finished run gets one advice from eval, report and
verify, and the repair keeps every intact episode (known answer: which, with its score).

Every test starts from a real run directory written by ``saber eval`` (random play of three
Breakout episodes through ale-py) and damages it as a copy cut short, a power loss or an
edit would.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from saber.cli import main
from saber.errors import ExitCode, SaberError
from saber.replay.verify import why_unproven
from saber.rundir import EPISODES_FILE, RUN_FILE, durable, read_run_file
from saber.rundir.repair import repair_run, salvage_json_object
from saber.scoring import read_scores

EPISODES = 3
EVAL_ARGS = ["eval", "--agent", "random", "--games", "breakout", "--episodes", str(EPISODES),
             "--workers", "0", "--env-option", "max_frames_without_reward=400",
             "--allow-non-saber", "--no-report"]  # fmt: skip


def _lines(directory: Path) -> list[bytes]:
    return (directory / EPISODES_FILE).read_bytes().splitlines(keepends=True)


def _scores(records: list[dict]) -> list[tuple[str, int, float]]:
    return sorted((r["game"], r["episode"], r["score"]) for r in records if "error" not in r)


# Each damage: what it does to a copy of the clean run, what every command says about it,
# what saber repair says it dropped, and the lines of the clean file that are intact.
def _torn_last_line(run: Path) -> None:
    data = (run / EPISODES_FILE).read_bytes()
    (run / EPISODES_FILE).write_bytes(data[:-40])  # a copy cut short inside the last record


def _cut_in_the_middle(run: Path) -> None:
    lines = _lines(run)
    # The bytes from inside line 1's frames to line 2's steps are lost.
    first, second = lines[0].index(b'"frames": ') + 11, lines[1].index(b'"steps": ')
    (run / EPISODES_FILE).write_bytes(lines[0][:first] + lines[1][second:] + b"".join(lines[2:]))


def _nul_bytes(run: Path) -> None:
    with (run / EPISODES_FILE).open("ab") as handle:  # a power loss extended the file
        handle.write(b"\x00" * 512)


def _not_json(run: Path) -> None:
    lines = _lines(run)
    (run / EPISODES_FILE).write_bytes(lines[0] + b"some text\n" + b"".join(lines[1:]))


def _contradicts_the_counts(run: Path) -> None:
    record = json.loads(_lines(run)[0])  # episode 0 again, with another score
    with (run / EPISODES_FILE).open("a") as handle:
        handle.write(json.dumps({**record, "score": record["score"] + 7}) + "\n")


def _truncated_run_json(run: Path) -> None:
    data = (run / RUN_FILE).read_bytes()
    (run / RUN_FILE).write_bytes(data[: len(data) * 2 // 3])


DAMAGES: dict[str, tuple[Callable[[Path], None], list[str], list[str], list[int]]] = {
    "torn": (
        _torn_last_line,
        ["40 byte(s) of what run.json attests missing", "1 last line cut short (line 3)"],
        ["found 40 byte(s) of what", "dropped 1 last line cut short (line 3)"],
        [0, 1],
    ),
    "middle": (
        _cut_in_the_middle,
        [
            "byte(s) of what run.json attests missing",
            "1 line(s) that are not a JSON record (line 1",
        ],
        ["found ", "dropped 1 line(s) that are not a JSON record (line 1"],
        [2],
    ),
    "nul": (
        _nul_bytes,
        ["1 line(s) holding NUL bytes (line 4)"],
        ["dropped 1 line(s) holding NUL bytes (line 4)"],
        [0, 1, 2],
    ),
    "not_json": (
        _not_json,
        ["1 line(s) that are not a JSON record (line 2: not JSON"],
        ["dropped 1 line(s) that are not a JSON record (line 2"],
        [0, 1, 2],
    ),
    "counts": (
        _contradicts_the_counts,
        ["1 record(s) written after the run's last session ended, which run.json does not count"],
        ["dropped 1 record(s) written after the run's last session ended"],
        [0, 1, 2],
    ),
    "run_json": (
        _truncated_run_json,
        ["run.json is damaged (not valid JSON"],
        ["rebuilt ", "run.json from its whole part"],
        [0, 1, 2],
    ),
}


def _advice(directory: Path) -> list[str]:
    """What eval, report and verify say about the directory (each exits with status 1)."""
    said = []
    for args in (
        [*EVAL_ARGS, "--out", str(directory)],
        ["report", str(directory)],
        ["verify", str(directory), "--workers", "0"],
    ):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == ExitCode.BAD_INPUT, (args, result.output)
        assert "Traceback" not in result.output
        said.append(result.output)
    return said


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_each_damage_gets_one_advice_and_saber_repair_keeps_every_intact_episode(
    clean_run: Path, tmp_path: Path, damage: str
) -> None:
    make, advice, dropped, intact = DAMAGES[damage]
    clean = [json.loads(line) for line in _lines(clean_run)]
    directory = Path(shutil.copytree(clean_run, tmp_path / "run"))
    make(directory)
    damaged = {p.name: p.read_bytes() for p in directory.iterdir() if p.is_file()}
    # eval, report and verify: the same one line, which names the damage and the command.
    said = _advice(directory)
    assert said[0] == said[1] == said[2], said
    assert len(said[0].strip().splitlines()) == 1 and f"saber repair {directory}" in said[0]
    for clause in advice:
        assert clause in said[0], said[0]
    # saber repair: one line per kind of damage, the intact episodes kept, evidence aside.
    repaired = CliRunner().invoke(main, ["repair", str(directory)])
    assert repaired.exit_code == 0, repaired.output
    for clause in dropped:
        assert clause in repaired.output, repaired.output
    expected = _scores([clean[i] for i in intact])
    assert f"kept {len(intact)} finished episode(s)" in repaired.output
    assert _scores(json.loads(line) for line in _lines(directory)) == expected  # type: ignore[arg-type]
    table = read_scores(directory)
    assert sorted((r.game, r.episode, r.score) for r in table.records if r.time_limit == "saber") == expected  # fmt: skip
    aside = sorted(p for p in directory.iterdir() if ".damaged-" in p.name)
    assert aside and all(p.read_bytes() == damaged[p.name.split(".damaged-")[0]] for p in aside)
    assert not list(directory.glob("*.tmp"))
    run = read_run_file(directory)
    assert run.sessions[-1].status == "repaired"
    assert run.sessions[-1].summary is not None
    assert run.sessions[-1].summary["finished"] == len(intact)
    missing = EPISODES - len(intact)
    assert (f"{missing} episode(s) the run asks for are not finished" in repaired.output) == bool(missing)  # fmt: skip
    again = CliRunner().invoke(main, ["repair", str(directory)])
    assert again.exit_code == 0 and "nothing to repair" in again.output
    # The run's eval command plays exactly the dropped episodes; the scores are the clean run's.
    resumed = CliRunner().invoke(main, [*EVAL_ARGS, "--out", str(directory)])
    assert resumed.exit_code == 0, resumed.output
    assert ("1 new episode in" if missing == 1 else f"{missing} new episodes in") in resumed.output
    records = [json.loads(line) for line in _lines(directory)]
    assert _scores(records) == _scores(clean)
    assert CliRunner().invoke(main, ["report", str(directory)]).exit_code == 0


@pytest.mark.parametrize("damage", ["middle", "nul"])
def test_a_full_disk_at_any_write_of_a_repair_leaves_it_to_finish_on_a_second_try(
    clean_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    make, _, _, intact = DAMAGES[damage]
    clean = [json.loads(line) for line in _lines(clean_run)]
    real = durable._write_all
    for n in (1, 2, 3):  # the original set aside, run.json, episodes.jsonl
        directory = Path(shutil.copytree(clean_run, tmp_path / f"run-{n}"))
        make(directory)
        calls = []

        def full_disk(fd: int, data: bytes, n: int = n, calls: list = calls) -> None:
            calls.append(fd)
            if len(calls) == n:
                real(fd, data[: len(data) // 2])
                raise OSError(28, "No space left on device")
            real(fd, data)

        monkeypatch.setattr(durable, "_write_all", full_disk)
        with pytest.raises(SaberError, match="No space left on device") as error:
            repair_run(directory, prove=why_unproven)
        assert "\n" not in str(error.value)
        monkeypatch.setattr(durable, "_write_all", real)
        assert not list(directory.glob("*.tmp"))
        said = _advice(directory)  # still damage, with the same advice from every command
        assert said[0] == said[1] == said[2] and "saber repair" in said[0], (n, said)
        repair_run(directory, prove=why_unproven)
        records = [json.loads(line) for line in _lines(directory)]
        assert _scores(records) == _scores([clean[i] for i in intact]), n
        assert CliRunner().invoke(main, ["report", str(directory)]).exit_code == 0


def test_a_run_json_of_another_run_is_not_repaired(clean_run: Path, tmp_path: Path) -> None:
    directory = Path(shutil.copytree(clean_run, tmp_path / "run"))
    text = (directory / EPISODES_FILE).read_text()
    (directory / EPISODES_FILE).write_text(text.replace('"score": ', '"score": 1', 1))
    before = (directory / EPISODES_FILE).read_bytes()
    result = CliRunner().invoke(main, ["repair", str(directory)])
    assert result.exit_code == ExitCode.BAD_INPUT and "does not belong to" in result.output
    assert (directory / EPISODES_FILE).read_bytes() == before
    assert not [p for p in directory.iterdir() if ".damaged-" in p.name]


def test_a_whole_run_needs_no_repair(clean_run: Path) -> None:
    before = {p.name: p.read_bytes() for p in clean_run.iterdir() if p.is_file()}
    result = CliRunner().invoke(main, ["repair", str(clean_run)])
    assert result.exit_code == 0 and "nothing to repair" in result.output
    assert {p.name: p.read_bytes() for p in clean_run.iterdir() if p.is_file()} == before


def test_a_cut_run_json_is_rebuilt_from_every_cut_point_after_its_settings(
    clean_run: Path,
) -> None:
    text = (clean_run / RUN_FILE).read_text()
    whole = json.loads(text)
    start = text.index('"command"')  # after the settings, agent, games, episodes, seeds
    for cut in range(start, len(text)):
        rebuilt = salvage_json_object(text[:cut])
        assert rebuilt is not None, cut
        for key in ("settings", "agent", "games", "episodes", "base_seed", "seed_scheme"):
            assert rebuilt[key] == whole[key], (cut, key)


def test_a_run_json_cut_inside_its_settings_is_refused(clean_run: Path, tmp_path: Path) -> None:
    directory = Path(shutil.copytree(clean_run, tmp_path / "run"))
    text = (directory / RUN_FILE).read_text()
    (directory / RUN_FILE).write_text(text[: text.index('"settings"') + 40])
    before = {p.name: p.read_bytes() for p in directory.iterdir() if p.is_file()}
    result = CliRunner().invoke(main, ["repair", str(directory)])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "damaged before the run's settings end" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert {p.name: p.read_bytes() for p in directory.iterdir() if p.is_file()} == before


def _write_reports(directory: Path) -> None:
    args = ["report", str(directory), "--json", str(directory / "report.json"),
            "--markdown", str(directory / "report.md")]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output


def test_repair_removes_the_reports_of_records_it_dropped_and_says_how_to_remake_them(
    clean_run: Path, tmp_path: Path
) -> None:
    directory = Path(shutil.copytree(clean_run, tmp_path / "run"))
    _write_reports(directory)
    before = json.loads((directory / "report.json").read_text())
    assert before["agents"]["random"]["saber"]["episodes"] == EPISODES
    _torn_last_line(directory)
    repaired = CliRunner().invoke(main, ["repair", str(directory)])
    assert repaired.exit_code == 0, repaired.output
    assert not (directory / "report.json").exists() and not (directory / "report.md").exists()
    said = [line for line in repaired.output.splitlines() if line.startswith("removed report")]
    assert len(said) == 1, repaired.output
    assert said[0].startswith("removed report.json and report.md: made from the records before")
    remake = said[0].split("; ")[-1].removesuffix(" makes them again").split()
    assert remake[:2] == ["saber", "report"]
    assert CliRunner().invoke(main, remake[1:]).exit_code == 0
    report = json.loads((directory / "report.json").read_text())
    assert report["agents"]["random"]["saber"]["episodes"] == EPISODES - 1
    # A repair that drops nothing leaves the reports alone.
    again = CliRunner().invoke(main, ["repair", str(directory)])
    assert "nothing to repair" in again.output and (directory / "report.json").exists()


_KILL_AT_WRITE = """
import os, signal, sys
from saber.rundir import durable
from saber.rundir.repair import repair_run
real, calls = durable._write_all, []
def dies(fd, data):
    calls.append(fd)
    if len(calls) == int(sys.argv[2]):
        real(fd, data[: len(data) // 2])
        os.kill(os.getpid(), signal.SIGKILL)
    real(fd, data)
durable._write_all = dies
repair_run(sys.argv[1])
"""


@pytest.mark.parametrize("write", [1, 2, 3])  # the original set aside, run.json, episodes.jsonl
def test_a_repair_killed_at_a_write_leaves_temporary_files_that_the_next_one_removes(
    clean_run: Path, tmp_path: Path, write: int
) -> None:
    import subprocess
    import sys

    directory = Path(shutil.copytree(clean_run, tmp_path / "run"))
    _nul_bytes(directory)
    killed = subprocess.run([sys.executable, "-c", _KILL_AT_WRITE, str(directory), str(write)],
                            capture_output=True, timeout=120)  # fmt: skip
    assert killed.returncode == -9, killed.stderr
    left = sorted(path.name for path in directory.glob("*.tmp"))
    assert len(left) == 1, left  # a kill -9 leaves the file it was writing
    repaired = CliRunner().invoke(main, ["repair", str(directory)])
    assert repaired.exit_code == 0, repaired.output
    assert f"removed 1 temporary file(s) of a write cut short: {left[0]}" in repaired.output
    assert not list(directory.glob("*.tmp"))
    assert "nothing to repair" in CliRunner().invoke(main, ["repair", str(directory)]).output


def test_the_advice_quotes_a_directory_with_spaces(clean_run: Path, tmp_path: Path) -> None:
    directory = Path(shutil.copytree(clean_run, tmp_path / "my runs" / "run 1"))
    _torn_last_line(directory)
    said = CliRunner().invoke(main, ["report", str(directory)]).output
    assert f"Run saber repair '{directory}': it keeps" in said, said


def test_an_edit_that_shortens_the_file_is_set_aside_not_kept_as_a_cut(
    clean_run: Path, tmp_path: Path
) -> None:
    """A score edited to fewer digits looks like a cut (fewer bytes than run.json
    attests): the edited record is dropped with its reason, the others are kept because
    their replays reproduce them, and the report no longer shows the edit."""
    directory = Path(shutil.copytree(clean_run, tmp_path / "run"))
    lines = [json.loads(line) for line in _lines(directory)]
    edited = {**lines[1], "score": 9.0, "seconds": 0}  # fewer bytes than the honest line
    text = "".join(json.dumps(line) + "\n" for line in [lines[0], edited, *lines[2:]])
    assert len(text.encode()) < len((directory / EPISODES_FILE).read_bytes())
    (directory / EPISODES_FILE).write_text(text)
    repaired = CliRunner().invoke(main, ["repair", str(directory)])
    assert repaired.exit_code == 0, repaired.output
    assert "dropped 1 record(s) past what run.json attests" in repaired.output
    assert (
        f"line 2: breakout episode {edited['episode']}: score: 9.0 in the record" in repaired.output
    )
    assert f"kept {EPISODES - 1} record(s) past what run.json attests" in repaired.output
    kept = [json.loads(line) for line in _lines(directory)]
    assert _scores(kept) == _scores([lines[0], *lines[2:]])
    aside = [p for p in directory.iterdir() if ".damaged-" in p.name]
    assert [p.read_text() for p in aside] == [text]  # the evidence, kept as it was
    # Without a replay to prove them, the library keeps none of the unattested records.
    again = Path(shutil.copytree(clean_run, tmp_path / "again"))
    (again / EPISODES_FILE).write_text(text)
    result = repair_run(again)
    assert result.finished == 0 and "no replay was played to prove it" in result.dropped["unproven"]
