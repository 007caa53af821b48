"""Policies for the harness tests, importable by worker processes (``tests.harness.helpers:...``)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from saber.agents.generators import PerEpisodeGenerators
from saber.protocol.seeds import episode_seed

BASE_SEED = 0


def short_settings() -> dict[str, int]:
    """A 400-frame stuck timeout, so that stuck episodes end in seconds (not SABER)."""
    return {"max_frames_without_reward": 400}


def short_env():  # type: ignore[no-untyped-def]
    """``evaluate``'s ``env_options`` of :func:`short_settings` (they break SABER)."""
    from saber.harness import EnvOptions

    return EnvOptions(short_settings(), allow_non_saber=True)


def evaluate_short(out: Path, episodes: int = 3, games: str = "breakout", **options: object):  # type: ignore[no-untyped-def]
    """A small real run for run-directory tests: random play of ``games`` (episodes per
    game), in this process, under :func:`short_settings` (``options``: more keywords of
    ``saber.evaluate``)."""
    from saber.harness import Inline, evaluate

    return evaluate(
        "random",
        games,
        episodes,
        out=out,
        backend=Inline(),
        env_options=short_env(),
        progress=False,
        **options,  # type: ignore[arg-type]
    )


def strip_timing(records: list[dict]) -> list[str]:
    """Records without wall-clock fields, as sorted JSON strings (comparable across runs)."""
    return sorted(
        json.dumps({k: v for k, v in r.items() if k != "seconds"}, sort_keys=True) for r in records
    )


def read_records(directory) -> list[dict]:
    with open(os.path.join(directory, "episodes.jsonl"), encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


class FailOnEpisode:
    """Random actions; raises (or kills its process) after ``after`` steps of one episode.

    Picklable, so it runs in worker processes as an object.
    """

    def __init__(self, game: str, episode: int, after: int = 20, kill: bool = False) -> None:
        self.target_seed = episode_seed(BASE_SEED, game, episode)
        self.after = after
        self.kill = kill
        self.rows: dict[int, list[int]] = {}  # row -> [seed, steps]

    def start_episodes(self, rows: np.ndarray, seeds: np.ndarray) -> None:
        for row, seed in zip(rows.tolist(), seeds.tolist(), strict=True):
            self.rows[row] = [seed, 0]

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        for row in range(len(observations)):  # rows beyond the batch are from older units
            state = self.rows[row]
            state[1] += 1
            if state[0] == self.target_seed and state[1] > self.after:
                if self.kill:
                    os._exit(3)
                raise RuntimeError("planned failure")
        return np.full(len(observations), 1, dtype=np.int64)  # FIRE: Breakout starts


class SleepOnEpisode(FailOnEpisode):
    """FIRE; hangs for good (sleeps) after ``after`` steps of one episode (every episode
    with ``episode=None``): a policy that never returns."""

    def __init__(self, game: str, episode: int | None, after: int = 20) -> None:
        super().__init__(game, 0 if episode is None else episode, after)
        self.every_episode = episode is None

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        for row in range(len(observations)):
            state = self.rows[row]
            state[1] += 1
            if (self.every_episode or state[0] == self.target_seed) and state[1] > self.after:
                time.sleep(3600)
        return np.full(len(observations), 1, dtype=np.int64)


class AlwaysRaise:
    """Raises on every call: a policy that can never work."""

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        raise RuntimeError("this policy always fails")


class WrongShape:
    """Returns one action too many."""

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        return np.zeros(len(observations) + 1, dtype=np.int64)


class OutOfRange:
    """FIRE (a Breakout episode then ends after 122 steps), then action 18 after ``after`` calls."""

    def __init__(self, after: int = 3) -> None:
        self.after = after
        self.calls = 0

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        self.calls += 1
        return np.full(len(observations), 18 if self.calls > self.after else 1, dtype=np.int64)


def make_noop():
    """A factory (no required parameters): returns the policy."""
    return lambda observations: np.zeros(len(observations), dtype=np.int64)


def plain_policy(observations: np.ndarray) -> list[int]:
    """A plain function policy (returns a list)."""
    return [0] * len(observations)


def broken_factory():
    raise RuntimeError("cannot load the weights")


NOT_CALLABLE = 42


class Fire:
    """FIRE on every row (a Breakout episode then ends after 122 steps); built without
    arguments, as a class given to ``evaluate`` or named by ``tests.harness.helpers:Fire``."""

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        return np.ones(len(observations), dtype=np.int64)


class BrokenInit:
    """A policy class whose constructor fails (weights that cannot be loaded)."""

    def __init__(self) -> None:
        raise RuntimeError("no weights here")

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        return np.zeros(len(observations), dtype=np.int64)


def fail_on_episode_1():
    """A factory for ``--agent``: :class:`FailOnEpisode` on Breakout's episode 1."""
    return FailOnEpisode("breakout", episode=1)


def check_hung_episode_1(result, unit_timeout: float) -> None:
    """Breakout episodes 0..2 with :class:`SleepOnEpisode` on episode 1: 0 and 2 finish,
    1 is stopped at the deadline twice (first try, retry) and ends as a failure."""
    from saber.harness.executor_base import timeout_message

    assert [r["episode"] for r in result.records if "error" not in r] == [0, 2]
    assert [(r["episode"], r["kind"], r["attempt"]) for r in result.failures] == [
        (1, "timeout", 0),
        (1, "timeout", 1),
    ]
    assert result.failed[0]["error"] == timeout_message(unit_timeout)


def hang_and_say_so():
    """A factory for ``--agent``: a policy that writes its process id into the folder
    ``$SABER_TEST_PID_DIR`` at its first call, then hangs for good (sleeps)."""

    def policy(observations: np.ndarray) -> np.ndarray:
        folder = os.environ["SABER_TEST_PID_DIR"]
        open(os.path.join(folder, str(os.getpid())), "w").close()
        time.sleep(3600)
        return np.zeros(len(observations), dtype=np.int64)

    return policy


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


def descendants(pid: int) -> set[int]:
    """The ids of the live processes below ``pid`` (children, theirs...), from /proc."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z":
            parents[int(stat.parent.name)] = int(fields[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def wait_for(condition: Callable[[], bool], seconds: float) -> bool:
    """Poll ``condition`` every 0.1 s for up to ``seconds``; its last value."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def start_hung_policies(
    command: list[str], pids: Path, count: int, cwd: Path
) -> tuple[subprocess.Popen, list[int]]:
    """Start ``command`` (a saber eval of :func:`hang_and_say_so`), wait until ``count``
    policies hang, and return the process and the ids of the processes they hang in."""
    environment = {**os.environ, "SABER_TEST_PID_DIR": str(pids)}
    process = subprocess.Popen(command, cwd=cwd, env=environment, stderr=subprocess.PIPE)
    if not wait_for(lambda: len(list(pids.iterdir())) >= count, 300):
        process.kill()
        raise AssertionError(f"the policies never ran: {process.communicate()[1][-2000:]!r}")
    return process, [int(path.name) for path in pids.iterdir()]


class PixelsAndDice(PerEpisodeGenerators):
    """Actions from the observation (its last frame's pixel sum) and a per-row generator:
    exact integer arithmetic, so the same in any batch, and state per row."""

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        pixels = observations[:, -1].astype(np.int64).sum(axis=(1, 2))
        dice = np.array([self.generator(row).integers(18) for row in range(len(observations))])
        return (pixels + dice) % 18


def counted_pixels_and_dice() -> PixelsAndDice:
    """A factory that appends its process id to the file named by SABER_TEST_BUILDS."""
    with open(os.environ["SABER_TEST_BUILDS"], "a", encoding="utf-8") as builds:
        builds.write(f"{os.getpid()}\n")
    return PixelsAndDice()


class BrokenAgent:
    """A policy class whose construction fails (its weights cannot be loaded)."""

    def __init__(self) -> None:
        raise RuntimeError("cannot load the weights")

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        return np.zeros(len(observations), dtype=np.int64)
