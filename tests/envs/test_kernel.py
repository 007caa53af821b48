"""Known answers for every rule of ``saber.envs.rules``, on scalars and on arrays of rows.

The single env's wrappers call these functions with one step, the vector env with one
row per sub-env: the same answers on both are what makes the two envs agree by
construction. Answers are worked out by hand in the comments.
"""

from __future__ import annotations

import numpy as np
import pytest

from saber.envs import rules
from saber.protocol.episode import EpisodeEnd


@pytest.mark.parametrize(
    ("reward", "mode", "expected"),
    [
        (-999_950.0, "correct", 50.0),  # 6-digit counter: -999,950 + 10**6
        (-100_000.0, "correct", 0.0),  # exactly 10**5 wrapped: a gain of 0
        (-9_999_000.0, "correct", 1_000.0),  # 7 digits: + 10**7
        (-999_950.0, "ignore", 0.0),
        (-999_950.0, "off", -999_950.0),
    ],
)
def test_rollover_correction(reward: float, mode: str, expected: float) -> None:
    assert rules.is_rollover(reward, -100_000.0)
    assert rules.correct_rollover(reward, mode) == expected


def test_rollover_threshold_leaves_skiing_penalties() -> None:
    # Skiing's -10,000 is a real penalty; the threshold is inclusive.
    rewards = np.array([-10_000.0, -99_999.0, -100_000.0, 5.0])
    np.testing.assert_array_equal(
        rules.is_rollover(rewards, -100_000.0), [False, False, True, False]
    )
    assert not rules.is_rollover(-10_000.0, -100_000.0)


def test_stuck_timeout_rows() -> None:
    # last reward at frame 100, timeout 18,000 frames: stuck from frame 18,100 on, unless
    # the step scores (any sign) or the game ends on it.
    kw = {"last_reward_frame": 100, "max_frames": 18_000}
    frames = np.array([18_096, 18_100, 18_100, 18_100, 18_104])
    rewards = np.array([0.0, 0.0, -1.0, 0.0, 0.0])
    game_over = np.array([False, False, False, True, False])
    expected = [False, True, False, False, True]
    got = rules.stuck_timeout(reward=rewards, game_over=game_over, frame=frames, **kw)
    np.testing.assert_array_equal(got, expected)
    for row, want in enumerate(expected):  # the single env: one step, Python scalars
        one = rules.stuck_timeout(
            reward=float(rewards[row]), game_over=bool(game_over[row]), frame=int(frames[row]), **kw
        )
        assert bool(one) is want


def test_frame_cap_rows() -> None:
    # cap 21,600,000: reached at that frame, not before; a game over on that step wins.
    frames = np.array([21_599_996, 21_600_000, 21_600_000])
    game_over = np.array([False, False, True])
    got = rules.frame_cap(game_over=game_over, frame=frames, max_frames=21_600_000)
    np.testing.assert_array_equal(got, [False, True, False])
    assert rules.frame_cap(game_over=False, frame=21_600_000, max_frames=21_600_000)
    assert not rules.frame_cap(game_over=True, frame=21_600_000, max_frames=21_600_000)


def test_checkpoint_follows_the_score_up_to_its_frame() -> None:
    # 5 minutes = 18,000 frames: the step ending at frame 18,000 still counts.
    np.testing.assert_array_equal(
        rules.checkpoint_open(np.array([17_996, 18_000, 18_004]), 18_000), [True, True, False]
    )


@pytest.mark.parametrize(
    ("game_over", "stuck", "capped", "end"),
    [
        (True, False, False, EpisodeEnd.GAME_OVER),
        (True, True, True, EpisodeEnd.GAME_OVER),  # the game's own end wins
        (False, True, False, EpisodeEnd.STUCK_TIMEOUT),
        (False, True, True, EpisodeEnd.STUCK_TIMEOUT),
        (False, False, True, EpisodeEnd.TIME_CAP),
        (False, False, False, EpisodeEnd.TRUNCATED),  # a wrapper outside the rules
    ],
)
def test_end_reason(game_over: bool, stuck: bool, capped: bool, end: EpisodeEnd) -> None:
    assert rules.end_reason(game_over=game_over, stuck=stuck, capped=capped) == end


def test_infinite_only_at_the_saber_cap() -> None:
    assert rules.is_infinite(EpisodeEnd.TIME_CAP, 21_600_000)
    assert not rules.is_infinite(EpisodeEnd.TIME_CAP, 2_000)  # a shorter, non-SABER cap
    assert not rules.is_infinite(EpisodeEnd.STUCK_TIMEOUT, 21_600_000)


def test_episode_record() -> None:
    record = rules.episode_record(
        score=np.float64(7.0),
        frames=np.int64(21_600_000),
        steps=np.int64(5_400_000),
        checkpoint_scores={"5min": np.float64(1.0), "30min": np.float64(3.0)},
        end=EpisodeEnd.TIME_CAP,
        rollovers=np.int64(1),
        seconds=2.0,
    )
    assert record.to_dict() == {
        "score": 7.0,
        "score_5min": 1.0,
        "score_30min": 3.0,
        "frames": 21_600_000,
        "steps": 5_400_000,
        "end": "time_cap",
        "rollovers": 1,
        "infinite": True,
        "seconds": 2.0,
    }
    assert all(type(v) in (int, float, str, bool) for v in record.to_dict().values())
