"""One example per failure the fuzz tests (test_fuzz_readers.py) found, each a file or text
that made a reader raise something other than saber's own one-line error, or read a number
other than the one written. Each failed before its fix."""

from __future__ import annotations

import bz2
import hashlib
import json
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from saber.agents.convnet import read_policy_file
from saber.board.entries import metadata as board_metadata
from saber.cli import main
from saber.errors import ExitCode, PolicyFileError, ReplayError, SaberError, ScoreFileError
from saber.protocol.replay import decode_replay
from saber.protocol.training import parse_frames
from saber.replay import recorded_episodes, verify_run, verify_training_log
from saber.reports.training_log import read_training_log
from saber.rundir import (
    EPISODES_FILE,
    RUN_FILE,
    RunDirectoryError,
    read_episode_lines,
    read_run_file,
)
from saber.rundir.repair import salvage_json_object
from saber.scoring import read_scores
from tests.robustness.valid_files import reseal, small_policy_layers

RUN_04 = Path(__file__).parents[1] / "rundir" / "data" / "run-0.4"  # saber 0.4's run
DEEP = "[" * 100_000 + "]" * 100_000  # json.loads recurses: RecursionError
HUGE = "9" * 5000  # json.loads refuses integers of over 4300 digits: ValueError


def _run_04(tmp_path: Path, line: str | None = None, run_json: str | None = None) -> Path:
    """saber 0.4's run directory, its first line replaced by ``line`` (its sessions'
    checkpoints of ``episodes.jsonl`` made anew, as had the run written that line, so
    that the line is read, not refused as a rewritten file) or its ``run.json`` by
    ``run_json``."""
    run = tmp_path / "run"
    shutil.copytree(RUN_04, run)
    if line is not None:
        lines = (run / EPISODES_FILE).read_text().splitlines(keepends=True)
        (run / EPISODES_FILE).write_text(line + "\n" + "".join(lines[1:]))
        reseal(run)
    if run_json is not None:
        (run / RUN_FILE).write_text(run_json)
    return run


def _first_record() -> dict:
    return json.loads((RUN_04 / EPISODES_FILE).read_text().splitlines()[0])


def _one_line(error: pytest.ExceptionInfo) -> str:
    message = str(error.value)
    assert message and "\n" not in message
    return message


# Run directories ------------------------------------------------------------------------------


def test_run_json_with_a_5000_digit_integer_is_damaged(tmp_path: Path) -> None:
    # Was ValueError (Python's limit on integer digits), not RunDirectoryError.
    run = _run_04(tmp_path, run_json='{"format": "saber-run/1", "episodes": ' + HUGE + "}")
    with pytest.raises(RunDirectoryError, match="is damaged") as error:
        read_run_file(run)
    _one_line(error)


def test_run_json_nested_thousands_deep_is_damaged(tmp_path: Path) -> None:
    # Was RecursionError.
    run = _run_04(tmp_path, run_json='{"format": "saber-run/1", "x": ' + DEEP + "}")
    with pytest.raises(RunDirectoryError, match="is damaged") as error:
        read_scores(run)
    _one_line(error)


def test_episode_line_nested_thousands_deep_names_its_line(tmp_path: Path) -> None:
    # Was RecursionError.
    run = _run_04(tmp_path, line='{"game": "breakout", "x": ' + DEEP + "}")
    with pytest.raises(RunDirectoryError, match=r"episodes.jsonl:1: not an episode record"):
        read_episode_lines(run / EPISODES_FILE)


def test_score_of_400_digits_is_refused_not_overflowed(tmp_path: Path) -> None:
    # Was OverflowError (int too large to convert to float) from math.isfinite.
    record = {**_first_record(), "score": 10**400}
    run = _run_04(tmp_path, line=json.dumps(record))
    with pytest.raises(
        ScoreFileError,
        match="score of game breakout must be a finite number, got an integer of 401 digits",
    ):
        read_scores(run)


def test_negative_base_seed_reads_the_scores(tmp_path: Path) -> None:
    # Was ValueError from episode_seed: a base seed of -1 cannot be checked, not a crash.
    run_json = json.loads((RUN_04 / RUN_FILE).read_text())
    run = _run_04(tmp_path, run_json=json.dumps({**run_json, "base_seed": -1}))
    table = read_scores(run)
    assert sorted(r.score for r in table.records if r.time_limit == "saber") == [1.0, 5.0]


def test_recorded_episodes_of_a_record_without_episode_names_the_line(tmp_path: Path) -> None:
    # Was KeyError 'episode' (and TypeError for "episode": [1]).
    record = {key: value for key, value in _first_record().items() if key != "episode"}
    run = _run_04(tmp_path, line=json.dumps(record))
    with pytest.raises(
        RunDirectoryError, match=r"episodes.jsonl:1: not an episode record"
    ) as error:
        list(recorded_episodes(run))
    _one_line(error)


def test_verify_of_a_record_with_a_list_episode_names_the_line(tmp_path: Path) -> None:
    # Was TypeError: int() argument must be ... not 'list'.
    run = _run_04(tmp_path, line=json.dumps({**_first_record(), "episode": [1]}))
    with pytest.raises(RunDirectoryError, match=r"episodes.jsonl:1: not an episode record"):
        verify_run(run, workers=0)


# Replays --------------------------------------------------------------------------------------


def _replay_with_header(header: str) -> bytes:
    head, body = header.encode(), bz2.compress(b"")
    content = b"SABERRPL\x01" + struct.pack("<I", len(head)) + head
    content += struct.pack("<I", len(body)) + body
    return content + hashlib.sha256(content).digest()


_HEADER = {
    "format": "saber-replay/1", "game": "pong", "episode": 3, "seed": 42, "agent": "random",
    "run": None, "settings": {}, "rom_sha256": "ab" * 32, "versions": {}, "steps": 0,
}  # fmt: skip


@pytest.mark.parametrize(
    ("key", "value"),
    [("episode", "1.5"), ("seed", "true"), ("steps", "Infinity"), ("episode", DEEP)],
)
def test_replay_header_number_not_as_written_is_damage(key: str, value: str) -> None:
    # Were: episode 1.5 read as episode 1, seed true as seed 1, OverflowError, RecursionError.
    header = json.dumps({**_HEADER, key: "@"}).replace('"@"', value)
    with pytest.raises(ReplayError, match="damaged") as error:
        decode_replay(_replay_with_header(header), "episode-3.saber-replay")
    _one_line(error)


# Training logs --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        '{"game": "pong", "frames": 1.5, "score": 3, "episode": 0}',  # was frames 1
        '{"game": "pong", "frames": 10, "score": NaN, "episode": 0}',  # was a NaN mean
        '{"game": "pong", "frames": 10, "score": true, "episode": 0}',  # was score 1.0
        '{"game": "pong", "frames": Infinity, "score": 3, "episode": 0}',  # OverflowError
        '{"game": "pong", "frames": 10, "score": 1' + "0" * 400 + "}",  # OverflowError
        '{"game": "pong", "frames": 10, "score": 3, "x": ' + DEEP + "}",  # RecursionError
    ],
)
def test_training_log_line_not_as_written_is_refused(tmp_path: Path, line: str) -> None:
    log = tmp_path / "training.jsonl"
    log.write_text('{"game": "pong", "frames": 5, "score": 1, "episode": 0}\n' + line + "\n")
    # A line nested too deep for the JSON reader is "not a JSON object"; the rest parse and
    # are refused as "not a training-log line": either way the file and the line are named.
    refused = r"training.jsonl:2: not a (training-log line|JSON object)"
    with pytest.raises(SaberError, match=refused) as error:
        read_training_log(log)
    _one_line(error)


def test_training_log_whose_first_line_is_nested_thousands_deep_is_refused(
    tmp_path: Path,
) -> None:
    # Was RecursionError: saying what a file that is no training log is read it whole as JSON.
    log = tmp_path / "training.jsonl"
    log.write_text('{"game": ' + DEEP + ', "frames": 5, "score": 1, "episode": 0}\n')
    with pytest.raises(SaberError, match=r"training.jsonl:1: not a training log") as error:
        read_training_log(log)
    _one_line(error)


def test_salvage_of_a_run_json_nested_thousands_deep_keeps_what_precedes() -> None:
    # Was RecursionError: saber repair closes a cut run.json at each candidate end and
    # parses it again; the ends inside the nesting fail, the one before it holds.
    cut = '{"format": "saber-run/1", "x": ' + "[" * 100_000 + "1, 2"
    assert salvage_json_object(cut) == {"format": "saber-run/1"}


def test_board_json_nested_thousands_deep_is_a_reason_not_a_crash(tmp_path: Path) -> None:
    # Was RecursionError: a submitter's board.json is read before any replay.
    path = tmp_path / "board.json"
    path.write_text('{"agent": ' + "[" * 20_000 + "]" * 20_000 + "}")  # under the size cap
    found, reason = board_metadata(path)
    assert found == {}
    assert reason is not None and "board.json: not readable JSON" in reason


def test_verify_training_log_with_an_infinite_episode_names_the_line(tmp_path: Path) -> None:
    # Was OverflowError: cannot convert float infinity to integer.
    log = tmp_path / "training.jsonl"
    log.write_text('{"game": "pong", "episode": Infinity, "episode_frames": 4}\n')
    with pytest.raises(RunDirectoryError, match="line 1: not a training log line"):
        verify_training_log(log, workers=0)


@pytest.mark.parametrize("text", ["1e400", "1e999999999999999999999M", "9" * 30])
def test_checkpoint_frames_past_int64_are_refused(text: str) -> None:
    # 1e400 was OverflowError (float infinity to integer); 9 * 30 was read as 1e30.
    with pytest.raises(SaberError, match="number of frames"):
        parse_frames(text)


def test_checkpoint_frames_are_read_as_written() -> None:
    # Through float, 9007199254740993 frames read as 9007199254740992.
    assert parse_frames("9007199254740993") == 9007199254740993
    assert parse_frames("1.5e6") == 1_500_000


def test_cli_training_at_1e400_is_one_line(tmp_path: Path) -> None:
    log = tmp_path / "training.jsonl"
    log.write_text('{"game": "pong", "frames": 5, "score": 1, "episode": 0}\n')
    result = CliRunner().invoke(main, ["training", str(log), "--at", "1e400"])
    assert result.exit_code == ExitCode.USAGE and isinstance(result.exception, SystemExit)
    assert result.output.splitlines()[-1].startswith("Error: Invalid value for --at")


# Policy files ---------------------------------------------------------------------------------


def _policy_file(tmp_path: Path, **replaced: np.ndarray) -> Path:
    from saber.agents.convnet import write_policy_file

    path = write_policy_file(tmp_path / "policy.npz", small_policy_layers(), {})
    with np.load(path) as archive:
        arrays = {name: archive[name] for name in archive.files}
    np.savez(path, **{**arrays, **replaced})
    return path


def test_policy_file_with_text_weights_is_refused(tmp_path: Path) -> None:
    # Was ValueError: could not convert string to float: np.str_('a').
    path = _policy_file(tmp_path, **{"conv1.bias": np.array(["a", "b"])})
    with pytest.raises(PolicyFileError, match=r"conv1.bias holds <U1 values, not numbers"):
        read_policy_file(path)


def test_policy_file_with_provenance_nested_thousands_deep_is_refused(tmp_path: Path) -> None:
    # Was RecursionError.
    path = _policy_file(tmp_path, provenance=np.array(DEEP))
    with pytest.raises(PolicyFileError, match="its provenance is not JSON"):
        read_policy_file(path)


def test_policy_file_with_a_damaged_deflate_stream_is_refused(tmp_path: Path) -> None:
    # Was zlib.error: Error -3 while decompressing data: invalid block type.
    from saber.agents.convnet import write_policy_file

    path = write_policy_file(tmp_path / "policy.npz", small_policy_layers(), {})  # deflate
    data = bytearray(path.read_bytes())
    name_length, extra_length = struct.unpack_from("<HH", data, 26)  # the first member's
    data[30 + name_length + extra_length] = 0xFF  # block type 3: reserved, invalid
    path.write_bytes(bytes(data))
    with pytest.raises(PolicyFileError, match="not a readable policy file") as error:
        read_policy_file(path)
    _one_line(error)


def test_run_json_with_a_session_that_is_no_object_is_not_a_run(tmp_path: Path) -> None:
    # Was AttributeError: 'list' object has no attribute 'get'.
    run_json = json.loads((RUN_04 / RUN_FILE).read_text())
    run = _run_04(tmp_path, run_json=json.dumps({**run_json, "sessions": [[1]]}))
    with pytest.raises(RunDirectoryError, match="not the provenance of a saber run"):
        read_run_file(run)


def test_run_json_with_infinite_episodes_is_not_a_run(tmp_path: Path) -> None:
    # Was OverflowError: cannot convert float infinity to integer.
    run_json = json.loads((RUN_04 / RUN_FILE).read_text())
    run = _run_04(tmp_path, run_json=json.dumps({**run_json, "episodes": float("inf")}))
    with pytest.raises(RunDirectoryError, match="not the provenance of a saber run"):
        read_run_file(run)


def test_replay_header_with_nan_is_damage() -> None:
    # Was read, and then could not be written back (encode_replay writes no NaN).
    header = json.dumps({**_HEADER, "settings": {"repeat_action_probability": float("nan")}})
    with pytest.raises(ReplayError, match="NaN in the header"):
        decode_replay(_replay_with_header(header))


# Settings -------------------------------------------------------------------------------------


def test_env_option_of_5000_digits_is_one_line_before_any_run(tmp_path: Path) -> None:
    # Was ValueError (Python's limit on integer digits) with a traceback.
    out = tmp_path / "run"
    option = "max_frames_without_reward=" + HUGE
    command = ["eval", "--agent", "noop", "--games", "pong", "--episodes", "1", "--workers", "0"]
    result = CliRunner().invoke(
        main, [*command, "--out", str(out), "--no-report", "--env-option", option]
    )
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert isinstance(result.exception, SystemExit), result.output
    assert result.output.startswith("Error: ") and result.output.count("\n") == 1
    assert "max_frames_without_reward" in result.output
    assert not (out / EPISODES_FILE).exists()


def test_policy_file_named_with_a_line_break_is_one_line() -> None:
    # Was "Agent spec 'conv-actor:\n0': \n0: no such policy file": two lines.
    from saber.errors import PolicyError
    from saber.harness.policies import resolve_spec

    with pytest.raises(PolicyError, match=r"'\\n0': no such policy file") as error:
        resolve_spec("conv-actor:\n0")
    _one_line(error)


def test_failed_attempt_with_a_list_episode_names_the_line(tmp_path: Path) -> None:
    # Was TypeError: unhashable type: 'list' (the failure summary's set of episodes).
    failure = {"game": "breakout", "episode": [1], "error": "boom"}
    run = _run_04(tmp_path, line=json.dumps(failure))
    with pytest.raises(ScoreFileError, match=r"episodes.jsonl:1: episode \[1\] of game breakout"):
        read_scores(run)


@pytest.mark.parametrize("size", ["1e309", str(2**40), str(2**64)])
def test_run_json_checkpoint_of_no_size_is_damaged(tmp_path: Path, size: str) -> None:
    # 1e309 was OverflowError, 2**40 MemoryError (read() allocated 1 TB), 2**64
    # OverflowError (an index-sized integer).
    run_json = json.loads((RUN_04 / RUN_FILE).read_text())
    run_json["sessions"][-1]["episodes_log"] = {"bytes": "@", "sha256": "ab" * 32}
    run = _run_04(tmp_path, run_json=json.dumps(run_json).replace('"@"', size))
    damaged = "a session's episodes_log is damaged"  # not a size at all (1e309)
    # 2**40, 2**64: more bytes attested than the file holds, its records the run's: a cut,
    # with saber repair's advice (saber.rundir.damage).
    cut = r"is damaged: \d+ byte\(s\) of what run.json attests missing \(a cut\)"
    with pytest.raises(RunDirectoryError, match=f"{damaged}|{cut}") as error:
        read_scores(run)
    _one_line(error)


@pytest.mark.parametrize(
    ("key", "value"),
    [("game", ["breakout"]), ("episode", 1.5), ("episode", float("inf"))],
)
def test_resume_over_a_record_of_no_episode_names_the_line(
    tmp_path: Path, key: str, value: object
) -> None:
    # Were TypeError (unhashable list), episode 1.5 counted as episode 1 finished (so never
    # played), OverflowError.
    from saber.harness.store import ResultsStore

    run = _run_04(tmp_path, line=json.dumps({**_first_record(), key: value}))
    session = read_run_file(run)
    session.sessions = session.sessions[-1:]
    with pytest.raises(RunDirectoryError, match=r"episodes.jsonl:1: not an episode record"):
        ResultsStore.open(run, session).close()


def test_run_json_of_another_version_with_a_line_break_is_one_line(tmp_path: Path) -> None:
    # Was "... (format 'x', saber a\nb); ...": two lines.
    run = _run_04(tmp_path, run_json=json.dumps({"format": "x", "saber": "a\nb"}))
    with pytest.raises(RunDirectoryError, match=r"format 'x', saber 'a\\nb'") as error:
        read_run_file(run)
    _one_line(error)


def test_score_csv_with_a_cell_of_200_kb_is_refused(tmp_path: Path) -> None:
    # Was _csv.Error: field larger than field limit (131072), not a ScoreFileError.
    path = tmp_path / "scores.csv"
    path.write_text("game,score\npong," + "1" * 200_000 + "\n")
    with pytest.raises(ScoreFileError, match=r"not a score table \(field larger than field limit"):
        read_scores(path)


def test_score_csv_that_cannot_be_read_is_refused(tmp_path: Path) -> None:
    # Was IsADirectoryError (an OSError, as a file without read permission gives).
    from saber.scoring.csvscores import read_score_csv

    with pytest.raises(ScoreFileError, match=r"Cannot read .*: Is a directory"):
        read_score_csv(tmp_path)


def test_score_csv_header_with_a_quoted_line_break_is_one_line(tmp_path: Path) -> None:
    # Was "...(found: gent\nalpha,...)": the header's cells printed with their line breaks.
    path = tmp_path / "scores.csv"
    path.write_text('"gent,game,score\nalpha,pong,3\n')
    with pytest.raises(ScoreFileError, match="missing column") as error:
        read_scores(path)
    _one_line(error)


def test_training_log_line_holding_two_objects_is_refused(tmp_path: Path) -> None:
    # str.splitlines() split the line at \x0b: two episodes read from one damaged line.
    first = '{"game": "pong", "frames": 5, "score": 1, "episode": 0}'
    second = '{"game": "pong", "frames": 9, "score": 2, "episode": 1}'
    log = tmp_path / "training.jsonl"
    log.write_text(first + "\x0b" + second + "\n")
    with pytest.raises(SaberError, match=r"training.jsonl:1: not a training"):
        read_training_log(log)
    with pytest.raises(RunDirectoryError, match="line 1: not a training log line"):
        verify_training_log(log, workers=0)


def test_replay_path_with_a_line_break_is_one_line(tmp_path: Path) -> None:
    # Was "run/a\nb: No such file or directory", from recorded_episodes and saber verify.
    run = _run_04(tmp_path, line=json.dumps({**_first_record(), "replay": "a\nb"}))
    with pytest.raises(ReplayError, match=r"run/a\\nb': No such file") as error:
        list(recorded_episodes(run))
    _one_line(error)
    problems = [p for check in verify_run(run, workers=0).checks for p in check.problems]
    assert "replay file 'a\\nb': missing" in problems


def test_replay_path_with_a_nul_is_a_replay_problem(tmp_path: Path) -> None:
    # Was ValueError: embedded null byte, from recorded_episodes and saber verify.
    run = _run_04(tmp_path, line=json.dumps({**_first_record(), "replay": "\x00"}))
    with pytest.raises(ReplayError, match="embedded null byte") as error:
        list(recorded_episodes(run))
    _one_line(error)
    problems = [p for check in verify_run(run, workers=0).checks for p in check.problems]
    assert "replay file '\\x00': embedded null byte" in problems


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"num_threads": None}, "num_threads must be an int"),  # was TypeError (<= on None)
        ({"seed": 2**70}, "seed must be in 0..2\\*\\*31-1"),  # was OverflowError (numpy)
    ],
)
def test_envpool_arguments_of_the_wrong_kind_get_one_line(arguments: dict, said: str) -> None:
    from saber import envpool
    from saber.errors import EnvPoolError

    with pytest.raises(EnvPoolError, match=said) as error:
        envpool.make("Pong-v5", "gymnasium", num_envs=1, **arguments)
    _one_line(error)
