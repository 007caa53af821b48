"""The run directory: durable appends, resume, refusal of a different run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from saber.errors import RunMismatchError, SaberError
from saber.harness.store import ResultsStore, run_provenance
from saber.rundir.records import EPISODES_FILE, TORN_ERROR
from saber.rundir.torn import complete_torn_line

SABER_SETTINGS = {"repeat_action_probability": 0.25, "max_frames_without_reward": 18000}


def _run(**changes: object) -> dict:
    fields = dict(
        settings=SABER_SETTINGS,
        deviations={},
        agent="random",
        games=["pong"],
        episodes=2,
        base_seed=0,
        seed_scheme="v1",
        command=["saber", "eval"],
    )
    fields.update(changes)
    return run_provenance(**fields)  # type: ignore[arg-type]


def _record(episode: int, **extra: object) -> dict:
    return {
        "game": "pong",
        "episode": episode,
        "seed": episode,
        "agent": "random",
        "score": -21.0,
        "score_5min": -21.0,
        "score_30min": -21.0,
        **extra,
    }


def test_resume_never_rewrites_and_derives_finished_and_failures(tmp_path: Path) -> None:
    with ResultsStore.open(tmp_path, _run()) as store:
        store.write(_record(0))
        store.write({"game": "pong", "episode": 1, "seed": 1, "error": "RuntimeError: boom"})
        store.write(_record(2))
    before = (tmp_path / EPISODES_FILE).read_bytes()
    with ResultsStore.open(tmp_path, _run(episodes=4, games=["pong", "breakout"])) as store:
        assert sorted(store.finished) == [("pong", 0), ("pong", 2)]
        assert list(store.log.unresolved()) == [("pong", 1)]
        assert [r["error"] for r in store.log.failures] == ["RuntimeError: boom"]
        assert store.run["episodes"] == 4 and store.run["games"] == ["pong", "breakout"]
        assert len(store.run["sessions"]) == 2 and not store.recovered
        store.write(_record(1))  # the retry succeeds: the failure stays in the history
    after = (tmp_path / EPISODES_FILE).read_bytes()
    assert after.startswith(before)
    with ResultsStore.open(tmp_path, _run(episodes=4, games=["breakout", "pong"])) as store:
        assert sorted(store.finished) == [("pong", 0), ("pong", 1), ("pong", 2)]
        assert not store.log.unresolved() and len(store.log.failures) == 1
    assert (tmp_path / EPISODES_FILE).read_bytes() == after


def test_a_torn_last_line_is_completed_by_appending(tmp_path: Path) -> None:
    with ResultsStore.open(tmp_path, _run()) as store:
        store.write(_record(0))
    with (tmp_path / EPISODES_FILE).open("a") as handle:
        handle.write('{"game": "pong", "episode": 3, "sc')  # power loss in the middle of a write
    before = (tmp_path / EPISODES_FILE).read_bytes()
    with ResultsStore.open(tmp_path, _run(episodes=4)) as store:
        assert store.recovered and sorted(store.finished) == [("pong", 0)]
        # A torn record is no episode's: nothing in it is trusted, nothing failed.
        assert store.log.unresolved() == {} and store.log.failures == []
        assert len(store.log.torn) == 1
        store.write(_record(3))
    text = (tmp_path / EPISODES_FILE).read_text()
    assert text.encode().startswith(before)
    records = [json.loads(line) for line in text.splitlines()]  # every line is whole JSON
    assert [(r["episode"], "error" in r) for r in records] == [(0, False), (3, True), (3, False)]
    assert records[1]["torn"] is True and records[1]["error"] == TORN_ERROR
    from saber.scoring import read_scores  # the report reads it too, skipping the torn record

    table = read_scores(tmp_path)
    assert sorted({r.episode for r in table.records}) == [0, 3]


FULL_RECORD = {
    "game": "ms_pacman",
    "episode": 12,
    "seed": 1775716468,
    "agent": "module:Agent",
    "score": -21.5,
    "score_5min": 1e-05,
    "infinite": False,
    "end": None,
    "error": 'Boom: "quoted" \\ back\tslash \u00e9t\u00e9 \u2603',
}


def test_every_cut_of_a_record_is_completed_to_one_json_object() -> None:
    # Records are flat objects of strings, numbers, booleans and nulls.
    for line in (json.dumps(FULL_RECORD), json.dumps(FULL_RECORD, ensure_ascii=False)):
        for cut in range(1, len(line)):
            fragment = line[:cut]
            record = json.loads(fragment + complete_torn_line(fragment))
            assert record["torn"] is True and record["error"] == TORN_ERROR, fragment
        assert complete_torn_line(line) == "\n"


@pytest.mark.parametrize(
    ("tail", "message"),
    [
        ("\x00\x00\x00\x00", r"1 line\(s\) holding NUL bytes \(line 2\)"),
        ("garbage", r"1 line\(s\) that are not a JSON record \(line 2: not the start of a JSON"),
    ],
)
def test_a_last_line_that_is_no_record_is_a_clear_error(
    tmp_path: Path, tail: str, message: str
) -> None:
    ResultsStore.open(tmp_path, _run()).close()
    (tmp_path / EPISODES_FILE).write_text(json.dumps(_record(0)) + "\n" + tail)
    with pytest.raises(SaberError, match=f"episodes.jsonl is damaged: {message}.*saber repair"):
        ResultsStore.open(tmp_path, _run())
    assert (tmp_path / EPISODES_FILE).read_text().endswith(tail)  # left alone


def test_damaged_run_file_or_another_version_is_a_clear_error(tmp_path: Path) -> None:
    ResultsStore.open(tmp_path, _run()).close()
    run_file = tmp_path / "run.json"
    good = run_file.read_text()
    run_file.write_text(good[: len(good) // 2])  # cut short
    with pytest.raises(
        SaberError, match=r"run.json is damaged \(not valid JSON: .*the episodes in"
    ):
        ResultsStore.open(tmp_path, _run())
    run_file.write_text(json.dumps({**json.loads(good), "format": "saber-run/9"}))
    with pytest.raises(
        SaberError, match=r"written by another version of saber \(format 'saber-run/9'"
    ):
        ResultsStore.open(tmp_path, _run())
    run_file.write_text("[1, 2]")
    with pytest.raises(SaberError, match="not the provenance of a saber run"):
        ResultsStore.open(tmp_path, _run())
    assert run_file.read_text() == "[1, 2]"  # nothing was changed


def test_run_name_is_part_of_the_run(tmp_path: Path) -> None:
    ResultsStore.open(tmp_path, _run()).close()
    assert "run" not in json.loads((tmp_path / "run.json").read_text())  # unnamed: no key
    with pytest.raises(RunMismatchError, match="run: None in the directory, 'seed-1' now"):
        ResultsStore.open(tmp_path, _run(run="seed-1"))
    ResultsStore.open(tmp_path / "named", _run(run="seed-1")).close()
    assert json.loads((tmp_path / "named" / "run.json").read_text())["run"] == "seed-1"


def test_refuses_a_different_run_naming_each_difference(tmp_path: Path) -> None:
    ResultsStore.open(tmp_path, _run()).close()
    changed = _run(
        agent="noop",
        base_seed=1,
        settings={**SABER_SETTINGS, "max_frames_without_reward": 400},
    )
    with pytest.raises(RunMismatchError) as error:
        ResultsStore.open(tmp_path, changed)
    message = str(error.value)
    assert "holds a run made with different settings" in message
    assert "settings.max_frames_without_reward: 18000 in the directory, 400 now" in message
    assert "agent: 'random' in the directory, 'noop' now" in message
    assert "base_seed: 0 in the directory, 1 now" in message


def test_one_run_per_directory_at_a_time(tmp_path: Path) -> None:
    with (
        ResultsStore.open(tmp_path, _run()),
        pytest.raises(SaberError, match="used by another saber run"),
    ):
        ResultsStore.open(tmp_path, _run())
    ResultsStore.open(tmp_path, _run()).close()  # released


def test_refuses_results_without_provenance_and_damaged_lines(tmp_path: Path) -> None:
    (tmp_path / EPISODES_FILE).write_text(json.dumps(_record(0)) + "\n")
    with pytest.raises(SaberError, match="not a saber run directory"):
        ResultsStore.open(tmp_path, _run())
    other = tmp_path / "other"
    ResultsStore.open(other, _run()).close()
    (other / EPISODES_FILE).write_text("garbage\n" + json.dumps(_record(0)) + "\n")
    with pytest.raises(SaberError, match=r"1 line\(s\) that are not a JSON record \(line 1:"):
        ResultsStore.open(other, _run())


def test_records_must_be_valid_json(tmp_path: Path) -> None:
    with ResultsStore.open(tmp_path, _run()) as store, pytest.raises(ValueError):
        store.write(_record(0, score=float("nan")))
    assert (tmp_path / EPISODES_FILE).read_text() == ""
