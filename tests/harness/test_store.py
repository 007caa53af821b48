"""The run directory: durable appends, resume, refusal of a different run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from saber.errors import SaberError
from saber.harness.store import EPISODES_FILE, ResultsStore, RunMismatchError, provenance

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
    return provenance(**fields)  # type: ignore[arg-type]


def _record(episode: int, **extra: object) -> dict:
    return {
        "game": "pong",
        "episode": episode,
        "seed": episode,
        "agent": "random",
        "score": -21.0,
        **extra,
    }


def test_resume_keeps_finished_and_drops_errors_and_a_torn_line(tmp_path: Path) -> None:
    with ResultsStore.open(tmp_path, _run()) as store:
        store.write(_record(0))
        store.write({"game": "pong", "episode": 1, "seed": 1, "error": "RuntimeError: boom"})
        store.write(_record(2))
    with (tmp_path / EPISODES_FILE).open("a") as handle:
        handle.write('{"game": "pong", "episode": 3, "sc')  # a crash in the middle of a write
    with ResultsStore.open(tmp_path, _run(episodes=4, games=["pong", "breakout"])) as store:
        assert sorted(store.finished) == [("pong", 0), ("pong", 2)]
        assert store.run["episodes"] == 4 and store.run["games"] == ["pong", "breakout"]
        assert len(store.run["sessions"]) == 2
        store.write(_record(3))
    lines = (tmp_path / EPISODES_FILE).read_text().splitlines()
    assert [json.loads(line)["episode"] for line in lines] == [0, 2, 3]


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
    with pytest.raises(SaberError, match=r"episodes.jsonl:1: not an episode record"):
        ResultsStore.open(other, _run())


def test_records_must_be_valid_json(tmp_path: Path) -> None:
    with ResultsStore.open(tmp_path, _run()) as store, pytest.raises(ValueError):
        store.write(_record(0, score=float("nan")))
    assert (tmp_path / EPISODES_FILE).read_text() == ""
