"""saber.harness.evaluate on real ROMs: same results however it runs, resume, failures."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from saber.errors import ProtocolError, RepeatedFailureError, SaberError
from saber.harness import (
    BackendError,
    Dask,
    EnvOptions,
    Inline,
    PolicyError,
    Processes,
    RunMismatchError,
    evaluate,
)
from saber.protocol.seeds import episode_seed
from saber.replay import verify_run
from tests.harness.dask_cluster import local_cluster
from tests.harness.helpers import (
    AlwaysRaise,
    BrokenInit,
    FailOnEpisode,
    Fire,
    OutOfRange,
    SleepOnEpisode,
    WrongShape,
    check_hung_episode_1,
    read_records,
    short_env,
    short_settings,
    strip_timing,
)

# Breakout ends in ~150-250 random steps; Freeway's random play hits the 400-frame
# stuck timeout of short_settings(): two kinds of ends, a few seconds per run.
GAMES = "breakout,freeway"
SHORT = {"env_options": short_env(), "progress": False}


@pytest.fixture(scope="module")
def inline_run(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    out = tmp_path_factory.mktemp("inline")
    result = evaluate("random", GAMES, 3, out=out, backend=Inline(envs_per_worker=3), **SHORT)
    assert result.new_episodes == 6 and result.non_saber
    return result.records


def test_records_have_the_promised_fields(inline_run: list[dict]) -> None:
    assert [(r["game"], r["episode"]) for r in inline_run] == [
        (game, i) for game in ("breakout", "freeway") for i in range(3)
    ]
    for record in inline_run:
        assert record["seed"] == episode_seed(0, record["game"], record["episode"])
        assert record["agent"] == "random"
        assert record["end"] in {"game_over", "stuck_timeout"}
        assert isinstance(record["score"], float) and isinstance(record["infinite"], bool)
        assert record["score_5min"] == record["score_30min"] == record["score"]  # short episodes
        assert record["frames"] > 0 and record["steps"] * 4 >= record["frames"]
    assert {r["end"] for r in inline_run if r["game"] == "freeway"} == {"stuck_timeout"}


def test_same_records_with_two_worker_processes(inline_run: list[dict], tmp_path: Path) -> None:
    result = evaluate(
        "random", GAMES, 3, out=tmp_path, backend=Processes(2, envs_per_worker=2), **SHORT
    )
    assert strip_timing(result.records) == strip_timing(inline_run)
    assert strip_timing(read_records(tmp_path)) == strip_timing(inline_run)
    # The same replays (their SHA-256 is in the records), and every one reproduces its record.
    assert all(r["replay_sha256"] for r in result.records)
    assert verify_run(tmp_path, workers=0).ok
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["non_saber"] and run["deviations"] == {"max_frames_without_reward": [18000, 400]}
    assert run["games"] == ["breakout", "freeway"] and run["agent"] == "random"


def test_same_records_on_a_local_dask_cluster(inline_run: list[dict], tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    with local_cluster(2) as cluster:
        result = evaluate(
            "random",
            GAMES,
            3,
            out=tmp_path,
            backend=Dask(cluster.scheduler_address, envs_per_worker=2),
            **SHORT,
        )
    assert strip_timing(result.records) == strip_timing(inline_run)
    assert strip_timing(read_records(tmp_path)) == strip_timing(inline_run)
    assert verify_run(tmp_path, workers=0).ok  # the replays came back through Dask


def test_resume_runs_only_the_missing_episodes(inline_run: list[dict], tmp_path: Path) -> None:
    first = evaluate("random", GAMES, 1, out=tmp_path, backend=Inline(), **SHORT)
    second = evaluate("random", GAMES, 3, out=tmp_path, backend=Inline(), **SHORT)
    again = evaluate("random", GAMES, 3, out=tmp_path, backend=Inline(), **SHORT)
    assert (first.new_episodes, second.new_episodes, again.new_episodes) == (2, 4, 0)
    assert strip_timing(again.records) == strip_timing(inline_run)
    assert len(read_records(tmp_path)) == 6
    assert len(json.loads((tmp_path / "run.json").read_text())["sessions"]) == 3
    assert verify_run(tmp_path, workers=0).ok
    with pytest.raises(RunMismatchError, match="agent: 'random' in the directory, 'noop' now"):
        evaluate("noop", GAMES, 3, out=tmp_path, backend=Inline(), **SHORT)
    with pytest.raises(RunMismatchError, match="base_seed: 0 in the directory, 1 now"):
        evaluate("random", GAMES, 3, out=tmp_path, backend=Inline(), base_seed=1, **SHORT)


def test_failing_episode_is_retried_alone_then_recorded(tmp_path: Path) -> None:
    policy = FailOnEpisode("breakout", episode=1)
    result = evaluate(
        policy, "breakout", 3, out=tmp_path, backend=Inline(envs_per_worker=2), progress=False
    )
    # One unit of 3 episodes: episode 1 fails it while 0 and 1 play; each of the three is
    # recorded as failed once (attempt 0), retried alone; episode 1 fails again (attempt 1).
    history = [(r["episode"], r.get("attempt"), "error" in r) for r in read_records(tmp_path)]
    assert sorted(history[:3]) == [(0, 0, True), (1, 0, True), (2, 0, True)]
    assert sorted(history[3:]) == [(0, None, False), (1, 1, True), (2, None, False)]
    records = {r["episode"]: r for r in result.records}
    assert records[1]["error"].startswith("RuntimeError: planned failure (at ")
    assert records[1]["kind"] == "episode" and "score" not in records[1]
    assert "error" not in records[0] and "error" not in records[2]
    assert [r["episode"] for r in result.failed] == [1]
    assert result.summary() == {
        "finished": 2,
        "failed": 1,
        "failed_attempts": 4,
        "recovered": 2,
        "failure_reasons": {records[1]["error"]: 4},
    }
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["sessions"][-1]["summary"] == result.summary()
    # The retries' replays hold their own play only (not the failed attempt's actions).
    verified = verify_run(tmp_path, workers=0)
    assert verified.ok and [c.episode for c in verified.checks] == [0, 2]
    # A resume runs the failed episode again (and it fails again, as planned); the
    # history of the first session is kept.
    again = evaluate(
        policy, "breakout", 3, out=tmp_path, backend=Inline(envs_per_worker=2), progress=False
    )
    assert again.new_episodes == 1 and len(read_records(tmp_path)) == 8
    assert again.summary()["failed_attempts"] == 6 and again.summary()["failed"] == 1


def test_hung_policy_is_stopped_retried_then_recorded_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    policy = SleepOnEpisode("breakout", episode=1)
    # A 4-s deadline: a playing worker reports every second (runner._TICK_SECONDS), and the
    # clock starts at the unit's first message, after the worker's start-up.
    result = evaluate(
        policy,
        "breakout",
        3,
        out=tmp_path,
        backend=Processes(1, envs_per_worker=1, unit_timeout=4),
        progress=False,
    )
    check_hung_episode_1(result, unit_timeout=4)
    assert "no frame progress for 4 s" in result.failed[0]["error"]


def test_the_same_failure_again_and_again_stops_the_run(tmp_path: Path) -> None:
    with pytest.raises(RepeatedFailureError) as error:
        evaluate(
            AlwaysRaise(), "breakout,pong", 4, out=tmp_path, backend=Inline(envs_per_worker=2),
            progress=False,
        )  # fmt: skip
    message = str(error.value)
    assert message.startswith(
        "Stopped: the same failure ended 3 work units in a row, with no episode finishing "
        "in between: RuntimeError: this policy always fails (at "
    )
    assert "0 finished episodes are on disk in" in message and ", 6 failed. Fix" in message
    records = read_records(tmp_path)
    assert all(r["error"] == records[0]["error"] for r in records)
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["sessions"][-1]["summary"]["failed"] == 6


def test_run_name_is_written_in_run_json_and_every_record(tmp_path: Path) -> None:
    result = evaluate(
        "constant:1", "breakout", 2, out=tmp_path, backend=Inline(), run="seed-3", progress=False
    )
    assert [r["run"] for r in read_records(tmp_path)] == ["seed-3", "seed-3"]
    assert json.loads((tmp_path / "run.json").read_text())["run"] == "seed-3"
    assert all(r["run"] == "seed-3" for r in result.records)
    unnamed = evaluate(
        "constant:1", "breakout", 1, out=tmp_path / "u", backend=Inline(), progress=False
    )
    assert "run" not in unnamed.records[0]
    assert "run" not in json.loads((tmp_path / "u" / "run.json").read_text())


def test_worker_that_dies_is_replaced_and_its_episode_reported(tmp_path: Path) -> None:
    policy = FailOnEpisode("breakout", episode=0, kill=True)
    result = evaluate(
        policy, "breakout", 2, out=tmp_path, backend=Processes(1, envs_per_worker=2), progress=False
    )
    records = {r["episode"]: r for r in result.records}
    assert "worker process died (exit code 3)" in records[0]["error"]
    assert records[1]["end"] == "game_over"


def test_policy_breaking_the_protocol_stops_the_run_keeping_finished_episodes(
    tmp_path: Path,
) -> None:
    with pytest.raises(PolicyError) as error:
        evaluate(
            OutOfRange(after=150),
            "breakout",
            3,
            out=tmp_path,
            backend=Inline(envs_per_worker=1),
            progress=False,
        )
    assert "out-of-range actions [18]" in str(error.value)
    assert "1 finished episode is on disk" in str(error.value)
    assert [(r["episode"], r.get("kind")) for r in read_records(tmp_path)] == [
        (0, None),
        (1, "policy"),
    ]
    with pytest.raises(
        PolicyError,
        match=r"Expect the policy to return 2 integer actions \(shape \(2,\)\) in 0..17, actually: shape \(3,\)",
    ):
        evaluate(
            WrongShape(), "breakout", 2, out=tmp_path / "shape", backend=Inline(), progress=False
        )


def test_bad_inputs_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="no module named 'nope'"):
        evaluate("nope:policy", "pong", 1, out=tmp_path / "a")
    with pytest.raises(ProtocolError, match=r"max_frames_without_reward=400 \(SABER: 18000\)"):
        evaluate("random", "pong", 1, out=tmp_path / "b", env_options=EnvOptions(short_settings()))
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    with pytest.raises(PolicyError, match="cannot be sent to worker processes"):
        evaluate(
            lambda obs: np.ones(len(obs), dtype=int),
            "breakout",
            1,
            out=tmp_path / "c",
            backend=Processes(2),
        )
    with pytest.raises(
        BackendError, match=r"Cannot reach the Dask scheduler at tcp://127.0.0.1:9 within 1 s"
    ):
        evaluate(
            "random",
            "pong",
            1,
            out=tmp_path / "d",
            backend=Dask("tcp://127.0.0.1:9", timeout=1),
        )


def test_plain_function_policy_in_process(tmp_path: Path) -> None:
    result = evaluate(
        lambda obs: np.ones(len(obs), dtype=int),
        "breakout",
        1,
        out=tmp_path,
        backend=Inline(),
        agent="fire",
        progress=False,
    )
    assert result.records[0]["agent"] == "fire" and result.records[0]["steps"] == 122
    assert result.mean_scores() == {"breakout": 0.0}


def test_policy_class_is_built_per_worker_as_in_a_spec(tmp_path: Path) -> None:
    # A class is a factory whether it is given as "module:Class" or as the class itself.
    inline = Inline(envs_per_worker=1)
    by_spec = evaluate("tests.harness.helpers:Fire", "breakout", 2, out=tmp_path / "s", backend=inline, progress=False)  # fmt: skip
    by_class = evaluate(Fire, "breakout", 2, out=tmp_path / "c", backend=inline, progress=False)
    in_workers = evaluate(Fire, "breakout", 2, out=tmp_path / "w", backend=Processes(2, envs_per_worker=1), progress=False)  # fmt: skip
    for result in (by_spec, by_class, in_workers):
        assert not result.failed
        assert [(r["agent"], r["steps"]) for r in result.records] == [
            ("tests.harness.helpers:Fire", 122)
        ] * 2
    assert strip_timing(by_class.records) == strip_timing(by_spec.records)
    assert strip_timing(in_workers.records) == strip_timing(by_spec.records)
    with pytest.raises(SaberError, match="helpers:BrokenInit: building the policy failed"):
        evaluate(BrokenInit, "breakout", 1, out=tmp_path / "b", backend=Inline(), progress=False)


def test_any_rom_of_ale_py_is_evaluated_and_left_out_of_the_saber_aggregates(
    tmp_path: Path,
) -> None:
    # Basic Math and Tetris are ROMs of ale-py outside the 61 SABER games.
    result = evaluate("noop", ["freeway", "Basic Math", "SABER/Tetris"], 1, out=tmp_path, backend=Inline(), **SHORT)  # fmt: skip
    assert [(r["game"], r["end"]) for r in result.records] == [
        ("freeway", "stuck_timeout"),
        ("basic_math", "stuck_timeout"),
        ("tetris", "stuck_timeout"),
    ]
    section = result.report(n_resamples=10)["agents"]["noop"]["saber"]
    assert section["world_record"]["games"] == 1
    reasons = {"basic_math": "no SABER baseline", "tetris": "no SABER baseline"}
    assert section["world_record"]["left_out_reasons"] == reasons
    assert section["human"]["left_out_reasons"] == reasons
    assert section["per_game"]["tetris"]["world_record_pct"] is None


def test_saber_0_2_backend_keywords_are_gone(tmp_path: Path) -> None:
    # Deprecated in 0.3, removed in 0.4 (the CHANGELOG's migration note): a backend object.
    with pytest.raises(TypeError, match="workers"):
        evaluate("random", GAMES, 1, out=tmp_path / "w", workers=0)  # type: ignore[call-arg]
    with pytest.raises(SaberError, match=r"Expect `backend` to be Inline\(\)"):
        evaluate("random", GAMES, 1, out=tmp_path / "a", backend="local")  # type: ignore[arg-type]
    with pytest.raises(SaberError, match=r"Expect `backend` to be Inline\(\)"):
        evaluate("random", GAMES, 1, out=tmp_path / "b", backend=4)  # type: ignore[arg-type]
    with pytest.raises(SaberError, match=r"Processes\(workers\)"):
        Processes(0)
