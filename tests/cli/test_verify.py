"""``saber verify``: every way a run can lie about its play is named, never a traceback.

The runs are real (random play of Breakout through ale-py); each test tampers with a copy
as a cheat, a bad copy or a damaged disk would.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from saber.cli import main
from saber.errors import ExitCode
from saber.harness import Recording
from saber.protocol.replay import Replay, encode_replay, read_replay, sha256_of
from saber.replay import verify_run
from saber.rundir import EPISODES_FILE
from saber.rundir.reading import episodes_log_checkpoint
from tests.harness.helpers import evaluate_short

EPISODES = 4


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Random play of 4 Breakout episodes (a 400-frame stuck timeout), replays recorded."""
    out = tmp_path_factory.mktemp("verify") / "run"
    evaluate_short(out, EPISODES)
    return out


def _copy(run: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(run, tmp_path / "run"))


def _records(directory: Path) -> list[dict]:
    return [json.loads(line) for line in (directory / EPISODES_FILE).read_text().splitlines()]


def _scoring(directory: Path) -> dict:
    """The record of the episode that scored most (its actions matter: FIRE, paddle)."""
    best = max(_records(directory), key=lambda r: r["score"])
    assert best["score"] > 0
    return best


def _verify(directory: Path, *options: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["verify", str(directory), "--workers", "0", *options])
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def _resign(directory: Path, change: Callable[[Replay], Replay] | None = None) -> None:
    """Rewrite replays with ``change`` and make every hash agree again, as a careful cheat
    (or an older saber writing these files) would: each record names its new replay's
    SHA-256, and run.json its new episodes.jsonl."""
    lines = []
    for record in _records(directory):
        path = directory / record["replay"]
        replay = read_replay(path)
        new = change(replay) if change else replay
        data = encode_replay(new.header, new.actions)
        path.write_bytes(data)
        lines.append(json.dumps({**record, "replay_sha256": sha256_of(data)}) + "\n")
    (directory / EPISODES_FILE).write_text("".join(lines))
    run = json.loads((directory / "run.json").read_text())
    run["sessions"][-1]["episodes_log"] = episodes_log_checkpoint(directory / EPISODES_FILE)
    (directory / "run.json").write_text(json.dumps(run))


def _rewrite(directory: Path, records: list[dict]) -> None:
    """Write ``records`` as episodes.jsonl and make run.json's checkpoint agree, as a
    careful cheat would (SHA-256 is no secret)."""
    (directory / EPISODES_FILE).write_text("".join(json.dumps(r) + "\n" for r in records))
    run = json.loads((directory / "run.json").read_text())
    run["sessions"][-1]["episodes_log"] = episodes_log_checkpoint(directory / EPISODES_FILE)
    (directory / "run.json").write_text(json.dumps(run))


def test_a_clean_run_verifies_in_parallel_and_in_process(run: Path) -> None:
    code, output = _verify(run)
    assert code == 0, output
    assert (
        f"verified {EPISODES} episode(s) of 1 game(s): every replay reproduces its record" in output
    )
    result = verify_run(run, workers=2)  # worker processes, as saber eval
    assert result.ok and [c.episode for c in result.checks] == list(range(EPISODES))
    sample = verify_run(run, sample=2, seed=5, workers=0)
    again = verify_run(run, sample=2, seed=5, workers=0)
    assert [c.episode for c in sample.checks] == [c.episode for c in again.checks]
    assert len(sample.checks) == 2 and "a sample of 2 of 4" in sample.summary()


def test_an_edited_score_is_named(run: Path, tmp_path: Path) -> None:
    directory = _copy(run, tmp_path)
    target = _scoring(directory)
    text = (directory / EPISODES_FILE).read_text()
    line = json.dumps(target)
    edited = {**target, "score": target["score"] + 100, "score_30min": 999.0}
    (directory / EPISODES_FILE).write_text(text.replace(line, json.dumps(edited)))
    code, output = _verify(directory)
    assert code == 1
    episode = target["episode"]
    assert f"breakout episode {episode}: score: {target['score'] + 100!r} in the record, {target['score']!r} replayed" in output  # fmt: skip
    assert f"breakout episode {episode}: score_30min: 999.0 in the record" in output
    assert "does not belong to" in output  # and episodes.jsonl changed since run.json
    assert "1 do not match" in output


def test_a_changed_or_missing_action_is_named_even_with_every_hash_redone(
    run: Path, tmp_path: Path
) -> None:
    target = _scoring(run)
    episode = target["episode"]

    def only(change: Callable[[bytes], bytes]) -> Callable[[Replay], Replay]:
        def apply(replay: Replay) -> Replay:
            if replay.header.episode != episode:
                return replay
            actions = change(replay.actions)
            header = dataclasses.replace(replay.header, steps=len(actions))
            return Replay(header, actions)

        return apply

    noop = only(lambda actions: bytes(len(actions)))  # every action changed to NOOP
    cut = only(lambda actions: actions[:-1])  # the last action missing
    for name, change in (("changed", noop), ("missing", cut)):
        directory = tmp_path / name
        shutil.copytree(run, directory)
        _resign(directory, change)
        code, output = _verify(directory)
        assert code == 1, output
        if name == "changed":
            assert f"breakout episode {episode}: score: {target['score']!r} in the record, 0.0 replayed" in output  # fmt: skip
        else:
            assert f"breakout episode {episode}: end: '{target['end']}' in the record, but the episode had not ended when the replay's {target['steps'] - 1} actions ran out" in output  # fmt: skip
        others = [line for line in output.splitlines() if line.startswith("breakout episode ")]
        assert all(line.startswith(f"breakout episode {episode}:") for line in others)
    # Without redoing the hash, the changed file itself is named too.
    directory = _copy(run, tmp_path)
    path = directory / target["replay"]
    replay = read_replay(path)
    path.write_bytes(encode_replay(replay.header, bytes(len(replay.actions))))
    code, output = _verify(directory)
    assert code == 1
    assert f"breakout episode {episode}: replay file {target['replay']} is not the one the record names" in output  # fmt: skip


def test_a_replay_swapped_between_episodes_is_named(run: Path, tmp_path: Path) -> None:
    directory = _copy(run, tmp_path)
    first, second = (directory / f"replays/breakout/episode-{n}.saber-replay" for n in (0, 1))
    a, b = first.read_bytes(), second.read_bytes()
    first.write_bytes(b)
    second.write_bytes(a)
    code, output = _verify(directory)
    assert code == 1
    assert "breakout episode 0: replay file replays/breakout/episode-0.saber-replay is the replay of breakout episode 1" in output  # fmt: skip
    assert "breakout episode 1: replay file replays/breakout/episode-1.saber-replay is the replay of breakout episode 0" in output  # fmt: skip
    assert "2 do not match" in output


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda data: data[: len(data) // 2], "damaged (its checksum does not match: cut short or changed)"),
        (lambda data: data[:-40] + bytes([data[-40] ^ 1]) + data[-39:], "damaged (its checksum does not match"),
        (lambda data: b"garbage" * 10, "not a saber replay"),
        (lambda data: b"", "not a saber replay"),
        (None, "replay file replays/breakout/episode-2.saber-replay: missing"),
    ],
)  # fmt: skip
def test_a_corrupt_or_missing_replay_file_is_named(
    run: Path, tmp_path: Path, damage: Callable[[bytes], bytes] | None, message: str
) -> None:
    directory = _copy(run, tmp_path)
    path = directory / "replays/breakout/episode-2.saber-replay"
    if damage is None:
        path.unlink()
    else:
        path.write_bytes(damage(path.read_bytes()))
    code, output = _verify(directory)
    assert code == 1
    assert "breakout episode 2: " in output and message in output, output
    lines = [line for line in output.splitlines() if line.startswith("breakout episode")]
    assert all(line.startswith("breakout episode 2: ") for line in lines)


def test_sample_seed_draws_the_episodes_verify_run_draws(run: Path, tmp_path: Path) -> None:
    """``--sample 1 --sample-seed S`` plays the episode that ``verify_run(sample=1,
    seed=S)`` draws: with one score edited (every hash redone), the seed that draws its
    episode fails and a seed that draws another passes. A missing replay fails whatever
    the draw: every replay is checked statically."""
    directory = _copy(run, tmp_path)
    lines = _records(directory)
    lines[2] = {**lines[2], "score": lines[2]["score"] + 1}
    _rewrite(directory, lines)
    drawn = {seed: verify_run(run, sample=1, seed=seed, workers=0).checks[0].episode
             for seed in range(20)}  # fmt: skip
    hits = [seed for seed, episode in drawn.items() if episode == lines[2]["episode"]]
    misses = [seed for seed, episode in drawn.items() if episode != lines[2]["episode"]]
    assert hits and misses, drawn
    code, output = _verify(directory, "--sample", "1", "--sample-seed", str(hits[0]))
    assert code == 1 and f"breakout episode {lines[2]['episode']}: score: " in output, output
    code, output = _verify(directory, "--sample", "1", "--sample-seed", str(misses[0]))
    assert code == 0, output
    (directory / lines[2]["replay"]).unlink()
    code, output = _verify(directory, "--sample", "1", "--sample-seed", str(misses[0]))
    assert code == 1 and f"{lines[2]['replay']}: missing" in output, output


def test_the_old_seed_flag_names_the_new_one(run: Path) -> None:
    result = CliRunner().invoke(main, ["verify", str(run), "--sample", "1", "--seed", "5"])
    assert result.exit_code == ExitCode.USAGE
    assert result.output.splitlines() == [
        "Error: saber verify --seed is now --sample-seed (the seed of the --sample draw); "
        "--seed is the episode base seed of saber eval only"
    ]


def test_a_run_of_other_versions_is_verified_and_the_differences_stated(
    run: Path, tmp_path: Path
) -> None:
    directory = _copy(run, tmp_path)

    def older(replay: Replay) -> Replay:
        versions = {"saber": "0.3.9", "ale_py": "0.10.1"}
        return Replay(dataclasses.replace(replay.header, versions=versions), replay.actions)

    _resign(directory, older)
    code, output = _verify(directory)
    assert code == 0, output
    assert "saber: the replays were recorded with 0.3.9, this is" in output
    assert "ale-py: the replays were recorded with 0.10.1, this is" in output


def test_a_run_without_replays_is_not_verified(tmp_path: Path) -> None:
    out = tmp_path / "bare"
    evaluate_short(out, 1, recording=Recording(replays=False))
    assert "replay" not in _records(out)[0] and not (out / "replays").exists()
    code, output = _verify(out)
    assert code == 1 and "breakout episode 0: no replay recorded" in output
    empty = tmp_path / "empty"
    empty.mkdir()
    code, output = _verify(empty)
    assert code == ExitCode.BAD_INPUT and "no run.json" in output


def _hours_of_play(run: Path, tmp_path: Path) -> Path:
    """A copy of ``run`` whose first two episodes claim 5.4 million steps of NOOPs with the
    stuck timeout off (637-byte replays; hours of play), every hash redone."""
    directory = _copy(run, tmp_path)

    def long(replay: Replay) -> Replay:
        if replay.header.episode > 1:
            return replay
        settings = {**replay.header.settings, "max_frames_without_reward": None}
        header = dataclasses.replace(replay.header, settings=settings, steps=5_400_000)
        return Replay(header, bytes(5_400_000))

    _resign(directory, long)
    return directory


def _alive_in_group(group: int) -> list[int]:
    """The processes of process group ``group`` that still run (not zombies, which a
    container's first process may never reap)."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            alive.append(int(stat.parent.name))
    return alive


def _restore_sigint() -> None:
    # Background jobs of a non-interactive shell ignore SIGINT; Python would inherit that.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize(
    ("stop", "code", "said"),
    [(signal.SIGINT, 130, "Interrupted"), (signal.SIGTERM, 143, "Terminated (SIGTERM)")],
    ids=["ctrl-c", "sigterm"],
)
def test_ctrl_c_or_sigterm_end_verify_with_workers_within_seconds(
    run: Path, tmp_path: Path, stop: signal.Signals, code: int, said: str
) -> None:
    """Workers playing hours of replay are terminated at once: the exit status of the
    stop, one line, no worker left (Ctrl-C reaches the whole process group, as a
    terminal sends it; SIGTERM the main process alone, as ``kill`` does)."""
    directory = _hours_of_play(run, tmp_path)
    command = [sys.executable, "-m", "saber.cli", "verify", str(directory), "--workers", "2"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True,
                               preexec_fn=_restore_sigint, start_new_session=True)  # fmt: skip
    assert process.stderr is not None
    first = process.stderr.readline()  # the work, said before playing
    assert "playing 4 episode(s), 10,800," in first, first
    time.sleep(8)  # the workers start (an import of saber each) and play
    assert process.poll() is None
    if stop == signal.SIGINT:
        os.killpg(process.pid, stop)
    else:
        process.send_signal(stop)
    stopped = time.monotonic()
    _, stderr = process.communicate(timeout=60)
    assert time.monotonic() - stopped < 10
    assert process.returncode == code, stderr
    assert said in stderr and "Traceback" not in stderr, stderr
    time.sleep(0.5)
    assert _alive_in_group(process.pid) == []  # no worker is left playing


def test_a_worker_killed_by_the_system_ends_verify_in_one_line(run: Path, tmp_path: Path) -> None:
    """A worker killed outright (the OOM killer, a crash) is noticed: exit status 4 and
    one line, not a wait for ever on the episode it played."""
    directory = _hours_of_play(run, tmp_path)
    command = [sys.executable, "-m", "saber.cli", "verify", str(directory), "--workers", "2"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True,
                               preexec_fn=_restore_sigint, start_new_session=True)  # fmt: skip
    assert process.stderr is not None
    process.stderr.readline()
    time.sleep(8)
    children = [pid for pid in _alive_in_group(process.pid) if pid != process.pid
                and b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()]  # fmt: skip
    assert children, _alive_in_group(process.pid)
    os.kill(children[0], signal.SIGKILL)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == ExitCode.UNFINISHED, stderr
    assert "A worker process playing replays ended abruptly" in stderr, stderr
    assert "Traceback" not in stderr
    time.sleep(0.5)
    assert _alive_in_group(process.pid) == []
