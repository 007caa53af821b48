"""Reading score CSVs and harness results, and the errors for bad input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from saber.errors import ScoreFileError, UnknownGameError
from saber.scoring import read_harness_results, read_score_csv, read_scores


def write(tmp_path: Path, text: str, name: str = "scores.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def harness_record(**overrides) -> dict:
    record = {
        "game": "pong",
        "episode": 0,
        "seed": 0,
        "agent": "dqn",
        "score": 21.0,
        "score_5min": 3.0,
        "score_30min": 15.0,
        "frames": 200_000,
        "steps": 50_000,
        "end": "game_over",
        "rollovers": 0,
        "infinite": False,
    }
    record.update(overrides)
    return record


def write_run(tmp_path: Path, records: list[dict], run: dict | None = None) -> Path:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    lines = [json.dumps(r) for r in records]
    (run_dir / "episodes.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if run is not None:
        (run_dir / "run.json").write_text(json.dumps(run), encoding="utf-8")
    return run_dir


# --- CSV ------------------------------------------------------------------------------


def test_minimal_csv_defaults_to_one_agent_at_the_saber_limit(tmp_path):
    table = read_score_csv(write(tmp_path, "game,score\nPong,21\nSABER/Breakout,400.5\n"))
    assert table.agents() == ["agent"]
    assert table.time_limits() == ["saber"]
    episodes = table.episodes("agent", "saber")
    assert list(episodes) == ["breakout", "pong"]
    assert episodes["breakout"].mean == 400.5


def test_episodes_are_averaged_and_infinite_marks_the_game(tmp_path):
    text = (
        "Agent,Game,Episode,Score,time_limit\n"
        "a,pong,0,10,saber\na,pong,1,20,saber\n"
        "a,battle_zone,0,5000,saber\na,battle_zone,1,Infinite,saber\n"
        "a,pong,0,1,5min\n"
    )
    table = read_score_csv(write(tmp_path, text))
    saber = table.episodes("a", "saber")
    assert saber["pong"].mean == 15.0 and not saber["pong"].infinite
    assert saber["battle_zone"].infinite and saber["battle_zone"].mean == math.inf
    assert table.time_limits() == ["5min", "saber"]


def test_infinite_column_keeps_a_finite_score(tmp_path):
    table = read_score_csv(write(tmp_path, "game,score,infinite\nbattle_zone,900000,true\n"))
    game = table.episodes("agent", "saber")["battle_zone"]
    assert game.infinite and game.mean == 900000.0


def test_bom_and_blank_lines_are_tolerated(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes("\ufeffgame,score\n\npong,1\n".encode())
    assert read_score_csv(path).episodes("agent", "saber")["pong"].mean == 1.0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the file is empty"),
        ("game,points\npong,1\n", "scores.csv:1: missing column(s) score"),
        ("game,score\n", "no scores, only a header"),
        ("game,score\npong,abc\n", "scores.csv:2: score 'abc' of game pong is not a number"),
        ("game,score\npong,\n", "scores.csv:2: score '' of game pong is not a number"),
        ("game,score\npong,nan\n", "scores.csv:2: score 'nan' of game pong is not a number"),
        ("game,score\npong,-inf\n", "score '-inf' of game pong is not a number"),
        ("game,score,time_limit\npong,1,10min\n", "scores.csv:2: unknown time limit '10min'"),
        ("game,score,time_limit\npong,1,\n", "scores.csv:2: unknown time limit ''"),
        ("game,score,episode\npong,1,first\n", "scores.csv:2: episode 'first' is not an integer"),
        ("game,score\npong,1,2\n", "scores.csv:2: 3 cells where the header has 2"),
        ("agent,game,score\n,pong,1\n", "scores.csv:2: empty agent name for game pong"),
        (
            "game,score,time_limit\nbattle_zone,inf,30min\n",
            "scores.csv:2: infinite score for game battle_zone at time limit 30min",
        ),
    ],
)
def test_bad_csv_errors_name_the_line(tmp_path, text, message):
    with pytest.raises(ScoreFileError) as error:
        read_score_csv(write(tmp_path, text))
    assert message in str(error.value)


def test_unknown_game_names_the_line_and_suggests(tmp_path):
    with pytest.raises(UnknownGameError) as error:
        read_score_csv(write(tmp_path, "game,score\npong,1\npongg,2\n"))
    assert "scores.csv:3: Unknown game 'pongg'. Did you mean: pong" in str(error.value)


def test_a_game_given_twice_without_episodes_is_an_error(tmp_path):
    # Typically the 5-minute and SABER scores of a game pasted without a time_limit column.
    with pytest.raises(ScoreFileError) as error:
        read_score_csv(write(tmp_path, "game,score\nPong,3\npong,21\n"))
    message = str(error.value)
    assert "scores.csv:3: game pong given twice for agent 'agent' at time limit saber" in message
    assert "first at " in message and "scores.csv:2" in message
    assert "time_limit" in message


def test_the_same_episode_twice_is_an_error(tmp_path):
    text = "game,score,episode\npong,3,0\npong,5,1\npong,21,1\n"
    with pytest.raises(ScoreFileError, match=r"scores.csv:4: game pong given twice .* episode 1"):
        read_score_csv(write(tmp_path, text))


def test_different_time_limits_of_one_game_are_fine(tmp_path):
    text = "game,score,time_limit\npong,3,5min\npong,15,30min\npong,21,saber\n"
    table = read_score_csv(write(tmp_path, text))
    assert table.time_limits() == ["5min", "30min", "saber"]


# --- harness results -------------------------------------------------------------------


def test_harness_records_become_three_time_limits(tmp_path):
    run = write_run(
        tmp_path,
        [
            harness_record(),
            harness_record(episode=1, score=19.0, score_5min=1.0, score_30min=11.0),
            harness_record(game="battle_zone", score=9e5, infinite=True),
        ],
    )
    table = read_scores(run)
    assert table.agents() == ["dqn"]
    assert table.saber_compliant
    assert table.episodes("dqn", "5min")["pong"].mean == 2.0
    assert table.episodes("dqn", "30min")["pong"].mean == 13.0
    assert table.episodes("dqn", "saber")["pong"].mean == 20.0
    assert table.episodes("dqn", "saber")["battle_zone"].infinite
    assert not table.episodes("dqn", "30min")["battle_zone"].infinite
    # the file itself reads the same
    assert read_scores(run / "episodes.jsonl").records == table.records


def test_failed_episodes_are_skipped_with_a_warning(tmp_path):
    run = write_run(tmp_path, [harness_record(), {"game": "pong", "episode": 1, "error": "crash"}])
    table = read_harness_results(run)
    assert len(table.episodes("dqn", "saber")["pong"].scores) == 1
    assert "no run.json beside episodes.jsonl" in table.warnings[0]  # a bare file: said so
    assert table.warnings[1].endswith(
        "1 failed attempt(s) (1x crash); 0 episode(s) finished on a retry; "
        "1 failed episode(s) skipped: pong episode 1"
    )


def test_failed_attempts_are_reported_after_a_successful_retry(tmp_path):
    """episodes.jsonl is append-only: an attempt that failed stays on record, and the
    report says so although its retry finished."""
    records = [
        {"game": "pong", "episode": 0, "error": "timeout", "attempt": 0},
        harness_record(),
        {"game": "pong", "episode": 1, "error": "timeout", "attempt": 0},
        {"game": "pong", "episode": 1, "error": "crash", "attempt": 1},
    ]
    table = read_harness_results(write_run(tmp_path, records))
    assert len(table.episodes("dqn", "saber")["pong"].scores) == 1
    assert table.warnings[1].endswith(
        "3 failed attempt(s) (2x timeout; 1x crash); 1 episode(s) finished on a retry; "
        "1 failed episode(s) skipped: pong episode 1"
    )


def test_non_saber_run_is_marked(tmp_path):
    table = read_harness_results(write_run(tmp_path, [harness_record()], {"non_saber": True}))
    assert not table.saber_compliant
    assert "break the SABER protocol" in table.warnings[0]


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"episode": 0}, "episodes.jsonl:1: record without a game"),
        (harness_record(score="lots"), "score of game pong must be a finite number"),
        (harness_record(score_5min=None), "score_5min of game pong must be a finite number"),
        (harness_record(episode="x"), "episode 'x' of game pong is not an integer"),
    ],
)
def test_bad_harness_records(tmp_path, record, message):
    with pytest.raises(ScoreFileError) as error:
        read_harness_results(write_run(tmp_path, [record]))
    assert message in str(error.value)


def test_broken_json_line_and_duplicates(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "episodes.jsonl").write_text(json.dumps(harness_record()) + "\n{oops\n")
    with pytest.raises(
        ScoreFileError,
        match=r"episodes\.jsonl is damaged: 1 line\(s\) that are not a JSON record \(line 2: "
        r"not JSON.*Run saber repair",
    ):
        read_harness_results(run)
    (run / "episodes.jsonl").write_text(
        json.dumps(harness_record()) + "\n" * 2 + json.dumps(harness_record())
    )
    with pytest.raises(ScoreFileError, match=r"episodes\.jsonl:3: game pong given twice"):
        read_harness_results(run)


def test_directory_without_results(tmp_path):
    with pytest.raises(ScoreFileError, match=r"no episodes\.jsonl"):
        read_scores(tmp_path)
    with pytest.raises(ScoreFileError, match="no such file"):
        read_scores(tmp_path / "missing.csv")


def test_merging_two_runs_keeps_agents_apart_and_refuses_overlap(tmp_path):
    a = write(tmp_path, "agent,game,score\nx,pong,1\n", "a.csv")
    b = write(tmp_path, "agent,game,score\ny,pong,2\n", "b.csv")
    assert read_scores(a, b).agents() == ["x", "y"]
    with pytest.raises(ScoreFileError, match="given twice"):
        read_scores(a, a)


def test_games_outside_saber_are_read(tmp_path):
    table = read_score_csv(write(tmp_path, "game,score\nBasic Math,3\nSABER/Tetris,0\npong,1\n"))
    assert table.games() == ["basic_math", "pong", "tetris"]
