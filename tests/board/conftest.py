"""The board's test site: real runs (random Pong through ale-py, replays recorded), each bad
input the board must show rather than crash on, and the shipped references."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import pytest

from saber.board import Board, build_board
from saber.harness import Inline, evaluate
from saber.rundir import EPISODES_FILE, RUN_FILE
from saber.rundir.reading import episodes_log_checkpoint

RESAMPLES = 50  # intervals are not what these tests look at: few resamples, fast reports


def make_run(out: Path, episodes: int = 2, **options: object) -> Path:
    """Random play of Pong under SABER's settings, in this process, replays recorded."""
    evaluate("random", "pong", episodes, out=out, backend=Inline(), progress=False, **options)
    return out


def another_run(run: Path, out: Path, change: object = None, keep_id: bool = False) -> Path:
    """A copy of ``run`` that is another run (its own ``run_id``; ``keep_id``: the copied
    run's), with ``change`` applied to its records (a function of the list of records) and
    the hashes made to agree again, as a careful cheat would."""
    shutil.copytree(run, out)
    records = [json.loads(line) for line in (out / EPISODES_FILE).read_text().splitlines()]
    if callable(change):
        records = change(records)
    (out / EPISODES_FILE).write_text("".join(json.dumps(r) + "\n" for r in records))
    found = json.loads((out / RUN_FILE).read_text())
    if not keep_id:
        found["run_id"] = uuid.uuid4().hex
    found["sessions"][-1]["episodes_log"] = episodes_log_checkpoint(out / EPISODES_FILE)
    (out / RUN_FILE).write_text(json.dumps(found))
    return out


def cheated(records: list[dict]) -> list[dict]:
    return [{**records[0], "score": records[0]["score"] + 1}, *records[1:]]


@pytest.fixture(scope="session")
def good_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("runs") / "good")


@pytest.fixture(scope="session")
def inputs(tmp_path_factory: pytest.TempPathFactory, good_run: Path) -> dict[str, Path]:
    """Every kind of ENTRY, good and bad, by what it is."""
    folder = tmp_path_factory.mktemp("inputs")
    found = {"good": good_run}
    found["copy"] = Path(shutil.copytree(good_run, folder / "copy"))  # the same run again
    found["cheat"] = another_run(good_run, folder / "cheat", cheated)
    damaged = another_run(good_run, folder / "damaged")
    with (damaged / EPISODES_FILE).open("ab") as handle:
        handle.write(b"\x00\x00{not json\n")
    found["damaged"] = damaged
    deviating = another_run(good_run, folder / "deviating")
    run = json.loads((deviating / RUN_FILE).read_text())
    run["deviations"] = {"repeat_action_probability": [0.25, 0.0]}
    run["non_saber"] = True
    (deviating / RUN_FILE).write_text(json.dumps(run))
    found["deviating"] = deviating
    table = folder / "paper.csv"
    table.write_text("agent,game,score\nmy-dqn,pong,12\nmy-dqn,breakout,300\n")
    (folder / "paper.board.json").write_text(
        json.dumps({"citation": "A. Author (2024), Table 3", "training_frames": 10_000_000})
    )
    found["table"] = table
    uncited = folder / "uncited.csv"
    uncited.write_text("agent,game,score\nother,pong,3\n")
    found["uncited"] = uncited
    found["missing"] = folder / "no-such-run"
    # A path longer than a phone is wide, in no word breaks: its cell wraps (test_layout).
    found["long"] = folder / ("a_folder_whose_name_is_longer_than_a_phone_is_wide_" * 2)
    return found


def build(entries: list[str | Path], out: Path, cache: Path, **options: object) -> Board:
    """The board of ``entries`` in ``out``, verified in this process, without figures."""
    return build_board(
        entries, out, resamples=RESAMPLES, figures=False, workers=0, cache=cache, **options
    )


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory, inputs: dict[str, Path]) -> tuple[Path, Board]:
    """The board of every input and the SABER paper's agents."""
    folder = tmp_path_factory.mktemp("site")
    order = ["good", "copy", "cheat", "damaged", "deviating", "table", "uncited", "missing", "long"]
    board = build([*(inputs[k] for k in order), "saber-paper"], folder / "site", folder / "cache")
    return folder / "site", board


@pytest.fixture
def chromium() -> str:
    """Debian's chromium, or a skip (a failure under CI, which installs it: .ci/run), as the
    report tests find it (tests/reports/conftest.py)."""
    import os
    import shutil

    path = shutil.which("chromium")
    if path is None:
        message = "chromium not installed (Debian: apt-get install chromium)"
        if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
            pytest.fail(f"CI: {message}; .ci/run installs it", pytrace=False)
        pytest.skip(message)
    return path
