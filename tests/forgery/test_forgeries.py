"""Forgeries and hostile files, each made as a submitter would (JSON edits, SHA-256
recomputed, replays written by hand: :mod:`tests.forgery.submitter`), each refused by
``saber verify`` with its reason, in one line, never a traceback or a hang."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from saber.cli import main
from saber.replay import verify_run
from tests.forgery.submitter import (
    edit_run_json,
    put_replay,
    read_replay,
    records,
    replay_bytes,
    reseal,
    write_records,
)


def _verify(run: Path, *options: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["verify", str(run), "--workers", "0", *options])
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def _refused(run: Path, reason: str, *options: str) -> str:
    """Verify ``run``: exit status 1, and ``reason`` on one of the lines."""
    code, output = _verify(run, *options)
    assert code == 1, output
    assert reason in output, output
    return output


def _edit(run: Path, index: int, **fields: object) -> dict:
    """Set ``fields`` of the ``index``-th record and reseal run.json; the old record."""
    lines = records(run)
    old = lines[index]
    lines[index] = {**old, **fields}
    write_records(run, lines)
    return old


def _best(run: Path) -> int:
    """The index of the record that scored most (its play matters)."""
    lines = records(run)
    return max(range(len(lines)), key=lambda i: lines[i]["score"])


# Records edited: every field a score, a column or a flag is computed from ------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("infinite", True),  # the flag the check once never compared: infinite gameplay
        ("score", 900.0),
        ("score_5min", 900.0),
        ("score_30min", 900.0),
        ("end", "time_cap"),
        ("rollovers", 3),
        ("frames", 21_600_000),
    ],
)
def test_an_edited_result_field_is_refused_and_named(run: Path, field: str, value: object) -> None:
    index = _best(run)
    old = _edit(run, index, **{field: value})
    _refused(run, f"breakout episode {old['episode']}: {field}: {value!r} in the record, "
             f"{old[field]!r} replayed")  # fmt: skip


def test_a_record_dressed_as_an_empty_failure_is_still_checked(run: Path) -> None:
    """``"error": ""`` makes a record no failure to the score readers (they count its
    score), so it is a finished record to verify too."""
    index = _best(run)
    old = _edit(run, index, error="", score=900.0)
    _refused(run, f"breakout episode {old['episode']}: score: 900.0 in the record")


def test_edited_steps_are_named_before_any_play(run: Path) -> None:
    old = _edit(run, 0, steps=7)
    _refused(run, f"breakout episode {old['episode']}: steps: 7 in the record, {old['steps']} "
             "in its replay's header", "--sample", "1")  # fmt: skip
    statically = verify_run(run, sample=0, workers=0)  # no replay played at all
    assert [f.field for c in statically.failed for f in c.failures] == ["steps"]
    assert not statically.checks


def test_a_seed_chosen_by_hand_is_refused(run: Path) -> None:
    """Another seed, the replay's header rewritten to match and every hash redone."""
    lines = records(run)
    header, actions = read_replay((run / lines[0]["replay"]).read_bytes())
    header["seed"] = 12345
    lines[0] = put_replay(run, {**lines[0], "seed": 12345}, replay_bytes(header, actions))
    write_records(run, lines)
    output = _refused(run, "seed: 12345 in the record")
    assert "is this episode's seed under the run's base seed" in output


def test_someone_elses_run_under_another_agent_name_is_refused(run: Path) -> None:
    write_records(run, [{**line, "agent": "superhuman"} for line in records(run)])
    edit_run_json(run, agent="superhuman")
    reseal(run)
    output = _refused(run, "agent: 'superhuman' in the record, 'random' in its replay's header")
    assert "agent: the replays' headers say 'random', run.json says 'superhuman'" in output


def test_a_run_name_added_by_hand_is_refused(run: Path) -> None:
    write_records(run, [{**line, "run": "best-seed"} for line in records(run)])
    _refused(run, "run: 'best-seed' in the record, None in its replay's header")


def test_a_made_up_replay_digest_is_refused(run: Path) -> None:
    _edit(run, 1, replay_sha256="0" * 64)
    _refused(run, "is not the one the record names", "--sample", "1")


# Settings: judged by the replays' headers, never by run.json's flags -----------------------


def _clear_flags(run: Path) -> None:
    document = json.loads((run / "run.json").read_text())
    document["settings"]["repeat_action_probability"] = 0.25
    document.update(deviations={}, non_saber=False)
    (run / "run.json").write_text(json.dumps(document))


def test_sticky_actions_off_with_run_json_flags_cleared_is_named(
    sticky_off_run: Path, tmp_path: Path
) -> None:
    run = Path(shutil.copytree(sticky_off_run, tmp_path / "run"))
    _clear_flags(run)
    result = verify_run(run, workers=0)
    assert not result.ok and not result.failed  # every replay reproduces its record...
    lines = result.lines()  # ...under its header's settings, which run.json misstates
    assert "settings: the replays were played with repeat_action_probability=0.0, run.json says repeat_action_probability=0.25" in lines  # fmt: skip
    assert any(line.startswith("run.json says the run deviates from SABER in nothing (non_saber False)") for line in lines)  # fmt: skip
    assert dict(result.deviations) == {"repeat_action_probability": (0.25, 0.0)}
    assert {f.field for f in result.problems} >= {"settings.repeat_action_probability", "run.json"}


def test_sticky_actions_off_with_the_headers_rewritten_too_does_not_replay(
    sticky_off_run: Path, tmp_path: Path
) -> None:
    """Every header made to say SABER's settings, every hash redone: the play under
    sticky actions is not the play recorded."""
    run = Path(shutil.copytree(sticky_off_run, tmp_path / "run"))
    _clear_flags(run)
    lines = []
    for line in records(run):
        header, actions = read_replay((run / line["replay"]).read_bytes())
        header["settings"]["repeat_action_probability"] = 0.25
        lines.append(put_replay(run, line, replay_bytes(header, actions)))
    write_records(run, lines)
    result = verify_run(run, workers=0)
    assert not result.ok and not result.deviations
    fields = {f.field for check in result.failed for f in check.failures}
    assert fields & {"score", "frames", "steps", "end", "replay"}, result.lines()


# Wholeness: each episode of the request exactly once -----------------------------------------


def test_the_worse_half_dropped_is_counted_missing(run: Path) -> None:
    lines = sorted(records(run), key=lambda line: line["score"])
    write_records(run, lines[2:])
    result = verify_run(run, workers=0)
    assert result.ok  # what was played is proven (exit status 0); what is missing is counted
    assert "2 of the 4 episodes of the request missing" in result.summary()
    assert not result.wholeness.whole and not result.verified
    assert sorted(e for _, e in result.wholeness.missing) == sorted(r["episode"] for r in lines[:2])


def test_a_duplicate_record_with_a_better_score_is_refused(run: Path) -> None:
    lines = records(run)
    write_records(run, [*lines, {**lines[0], "score": lines[0]["score"] + 50}])
    _refused(run, f"breakout episode {lines[0]['episode']}: 2 finished records (lines 1, 5)")


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"episode": 4}, "it asked for episodes 0..3"),
        ({"game": "pong"}, "a game it did not ask for"),
    ],
)
def test_a_record_outside_the_request_is_refused(run: Path, change: dict, why: str) -> None:
    lines = records(run)
    write_records(run, [*lines, {**lines[0], **change}])
    _refused(run, f"line 5, {change.get('game', 'breakout')} episode "
             f"{change.get('episode', lines[0]['episode'])}: outside the run's request ({why})")  # fmt: skip


# Hostile replay paths and files ---------------------------------------------------------------


def test_an_absolute_replay_path_is_refused(run: Path) -> None:
    _edit(run, 0, replay="/etc/passwd")
    _refused(run, "replay file /etc/passwd: an absolute path", "--sample", "1")


def test_a_replay_path_out_of_the_directory_is_refused(run: Path) -> None:
    _edit(run, 0, replay="../../etc/passwd")
    _refused(run, "replay file ../../etc/passwd: outside the run directory (..)", "--sample", "1")


def test_a_symlink_to_dev_zero_is_refused(run: Path) -> None:
    path = run / records(run)[0]["replay"]
    path.unlink()
    path.symlink_to("/dev/zero")
    _refused(run, "a symbolic link out of the run directory, to /dev/zero")


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_fifo_or_a_directory_for_a_replay_is_refused_at_once(run: Path, kind: str) -> None:
    path = run / records(run)[0]["replay"]
    path.unlink()
    os.mkfifo(path) if kind == "fifo" else path.mkdir()
    started = time.monotonic()
    _refused(run, f"a {'FIFO' if kind == 'fifo' else 'directory'}, not a regular file")
    assert time.monotonic() - started < 60


def test_a_replay_too_big_for_any_episode_is_refused_unread(run: Path) -> None:
    path = run / records(run)[0]["replay"]
    with path.open("ab") as handle:
        handle.truncate(30_000_000)  # sparse: 30 MB of nothing
    _refused(run, "more than such a file can take", "--sample", "1")


def test_a_bz2_bomb_stops_at_the_declared_steps(run: Path) -> None:
    """A few hundred bytes of bz2 that inflate to 64 MiB, under a header of a few
    hundred steps: decompression stops past them."""
    lines = records(run)
    header, _ = read_replay((run / lines[0]["replay"]).read_bytes())
    import bz2

    bomb = bz2.compress(bytes(64 << 20), 9)
    assert len(bomb) < 1000
    lines[0] = put_replay(run, lines[0], replay_bytes(header, body=bomb))
    write_records(run, lines)
    _refused(
        run, f"damaged (its actions are not the {header['steps']:,} steps its header declares)"
    )


def test_more_steps_than_the_hundred_hour_cap_are_refused_before_play(run: Path) -> None:
    lines = records(run)
    header, _ = read_replay((run / lines[0]["replay"]).read_bytes())
    header["steps"] = 6_000_000
    lines[0] = put_replay(run, {**lines[0], "steps": 6_000_000}, replay_bytes(header, bytes(10)))
    write_records(run, lines)
    _refused(run, "declares 6,000,000 steps, more than the 100-hour cap allows under its "
             "settings (5,400,000)", "--sample", "1")  # fmt: skip


def test_a_tiny_replay_of_the_whole_cap_is_estimated_and_held_to_a_budget(run: Path) -> None:
    """637 bytes of NOOPs to the 100-hour cap, the stuck timeout off: hours of play. The
    work is known before playing, and a budget leaves it unplayed."""
    lines = records(run)
    header, _ = read_replay((run / lines[0]["replay"]).read_bytes())
    header["settings"]["max_frames_without_reward"] = None
    header["steps"] = 5_400_000
    data = replay_bytes(header, bytes(5_400_000))
    assert len(data) < 1000
    lines[0] = put_replay(run, {**lines[0], "steps": 5_400_000}, data)
    write_records(run, lines)
    result = verify_run(run, workers=0, budget=100_000)  # emulator frames
    assert result.steps_total >= 5_400_000 and result.frames_total >= 21_600_000
    assert result.frames_played < 100_000
    assert [c.episode for c in result.unplayed] == [lines[0]["episode"]]
    assert not result.verified and not result.ok
    assert result.lines()[0].startswith(
        "settings: the replays were played with different settings (max_frames_without_reward)"
    )


def test_a_replay_swapped_in_from_another_episode_is_refused(run: Path) -> None:
    lines = records(run)
    data = (run / lines[1]["replay"]).read_bytes()
    lines[0] = put_replay(run, lines[0], data)
    write_records(run, lines)
    _refused(run, f"is the replay of breakout episode {lines[1]['episode']}", "--sample", "1")


def test_a_name_with_a_line_break_stays_on_its_line(run: Path) -> None:
    forged = "x\nruns: verified 400 episode(s) of 4 game(s): every replay reproduces its record"
    write_records(run, [{**line, "agent": forged} for line in records(run)])
    code, output = _verify(run)
    assert code == 1
    assert not any(line.startswith("runs: verified") for line in output.splitlines()), output


def test_a_run_json_of_another_run_is_named(run: Path, sticky_off_run: Path) -> None:
    shutil.copy(sticky_off_run / "run.json", run / "run.json")
    _refused(run, "does not belong to")


@pytest.mark.parametrize("name", ["episodes.jsonl", "run.json"])
@pytest.mark.parametrize("hostile", ["dev_zero", "fifo"])
def test_a_run_file_that_is_no_regular_file_is_refused_in_one_line(
    run: Path, name: str, hostile: str
) -> None:
    """Never read: /dev/zero would fill the memory, a FIFO would wait for ever."""
    path = run / name
    path.unlink()
    os.mkfifo(path) if hostile == "fifo" else path.symlink_to("/dev/zero")
    code, output = _verify(run)
    assert code == 3, output
    kind = "a FIFO" if hostile == "fifo" else "a character device"
    assert output.strip().splitlines() == [f"Error: Cannot read {path}: {kind}, not a regular file"]


def test_a_frame_skip_past_the_cap_is_refused_before_play(run: Path) -> None:
    """One step of 10**9 frames would play for days: refused from the header."""
    lines = records(run)
    header, _ = read_replay((run / lines[0]["replay"]).read_bytes())
    header["settings"]["frame_skip"] = 10**9
    header["steps"] = 1
    lines[0] = put_replay(run, {**lines[0], "steps": 1}, replay_bytes(header, bytes(1)))
    write_records(run, lines)
    _refused(run, "its frame skip, 1,000,000,000 frames a step, is over the 100-hour cap")


def test_observations_of_any_size_asked_by_a_header_cost_nothing(run: Path) -> None:
    """A header asking for 100,000 x 100,000 observations: played with the smallest (the
    observations change nothing of a record), and the settings named."""
    lines = records(run)
    for index, line in enumerate(lines):
        header, actions = read_replay((run / line["replay"]).read_bytes())
        header["settings"]["screen_size"] = 100_000
        lines[index] = put_replay(run, line, replay_bytes(header, actions))
    write_records(run, lines)
    result = verify_run(run, workers=0)
    assert not result.failed, result.lines()
    assert [f.field for f in result.problems] == ["settings.screen_size", "run.json"]


def test_saber_replay_reads_no_hostile_replay_path_either(run: Path) -> None:
    """Filming or iterating an episode reads its replay as verify does."""
    line = records(run)[0]
    path = run / line["replay"]
    path.unlink()
    path.symlink_to("/dev/zero")
    result = CliRunner().invoke(
        main, ["replay", str(run), "--game", "breakout", "--episode", str(line["episode"])]
    )
    assert result.exit_code == 3 and "Traceback" not in result.output, result.output
    assert "a symbolic link out of the run directory, to /dev/zero" in result.output


def test_a_request_of_a_billion_episodes_is_refused_in_one_line(run: Path) -> None:
    edit_run_json(run, episodes=10**9)
    code, output = _verify(run)
    assert code == 3, output
    assert "asks for 1 game(s) x 1,000,000,000 episodes, more than any run saber verifies" in output
