"""Each rule of protocol section 1 and 2, checked on real ROMs through ale-py."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from ale_py import Action, ALEInterface, LoggerMode, roms
from gymnasium.error import ResetNeeded

from saber.envs import NoRewardTimeout, SaberEpisodeStatistics
from saber.envs.emulator import SeedStream


def random_actions(count: int, seed: int = 0) -> list[int]:
    return np.random.default_rng(seed).integers(0, 18, count).tolist()


def play(env: gym.Env, actions: list[int]) -> tuple[list[float], dict]:
    """Play until the episode ends or the actions run out; rewards and the last info."""
    rewards, info = [], {}
    for action in actions:
        _, reward, terminated, truncated, info = env.step(action)
        rewards.append(reward)
        if terminated or truncated:
            break
    return rewards, info


def reference_emulator(game: str, ale_seed: int, repeat_action_probability: float) -> ALEInterface:
    ale = ALEInterface()
    ale.setLoggerMode(LoggerMode.Error)
    ale.setFloat("repeat_action_probability", repeat_action_probability)
    ale.setInt("random_seed", ale_seed)
    ale.loadROM(roms.get_rom_path(game))
    ale.reset_game()
    return ale


def test_sticky_actions_act_on_every_frame_inside_the_repeat() -> None:
    """The env equals an emulator that draws stickiness (p = 0.25) on each of the 4 frames."""
    env = gym.make("SABER/Breakout")
    assert env.unwrapped.ale.getFloat("repeat_action_probability") == 0.25
    assert env.unwrapped.ale.getInt("frame_skip") == 1  # so ALE's draw happens per frame
    env.reset(seed=7)
    reference = reference_emulator("breakout", SeedStream(7).next_ale_seed(), 0.25)
    for action in random_actions(300):
        _, reward, terminated, _, _ = env.step(action)
        expected = sum(reference.act(Action(action)) for _ in range(4))
        assert reward == expected
        np.testing.assert_array_equal(env.unwrapped.ale.getRAM(), reference.getRAM())
        if terminated:
            break


def test_stickiness_is_what_makes_seeds_differ() -> None:
    def trajectory(seed: int, probability: float) -> list[float]:
        env = gym.make("SABER/Breakout", repeat_action_probability=probability)
        env.reset(seed=seed)
        return [float(env.step(a)[0].sum()) for a in random_actions(120)]

    assert trajectory(1, 0.25) == trajectory(1, 0.25)
    assert trajectory(1, 0.25) != trajectory(2, 0.25)
    assert trajectory(1, 0.0) == trajectory(2, 0.0)


def test_reset_is_the_games_own_start_state_with_no_noop_or_fire() -> None:
    env = gym.make("SABER/Breakout")
    obs, info = env.reset(seed=3)
    assert info == {"episode_frame_number": 0}
    assert env.unwrapped.ale.getEpisodeFrameNumber() == 0
    reference = reference_emulator("breakout", SeedStream(3).next_ale_seed(), 0.25)
    np.testing.assert_array_equal(env.unwrapped.ale.getRAM(), reference.getRAM())
    assert not obs[:3].any(), "the stack is zero-padded at reset"


def test_no_life_information_and_no_life_loss_termination() -> None:
    env = gym.make("SABER/Breakout")
    _, info = env.reset(seed=0)
    assert "lives" not in info
    ale = env.unwrapped.ale
    lives_seen = {ale.lives()}
    for action in random_actions(5_000):
        _, _, terminated, truncated, info = env.step(action)
        assert "lives" not in info
        if terminated or truncated:
            break
        lives_seen.add(ale.lives())
    assert len(lives_seen) == 5, "all 5 lives were lost without the episode ending"
    assert terminated and ale.game_over() and info["saber"]["end"] == "game_over"


def test_stuck_timeout_truncates_after_18000_frames_without_reward() -> None:
    """Breakout never launches the ball without FIRE: no reward, ever."""
    env = gym.make("SABER/Breakout")
    env.reset(seed=0)
    rewards, info = play(env, [0] * 5_000)
    assert len(rewards) == 4_500 and not any(rewards)
    assert info["stuck_timeout"] and info["episode_frame_number"] == 18_000
    assert info["saber"]["end"] == "stuck_timeout" and info["saber"]["frames"] == 18_000
    assert not info["saber"]["infinite"]


def test_any_nonzero_reward_restarts_the_stuck_count() -> None:
    env = gym.make("SABER/Pong", max_frames_without_reward=800)
    env.reset(seed=0)
    rewards, info = play(env, [0] * 3_000)
    frames = np.cumsum([4] * len(rewards))
    last_reward_frame = max([0, *(f for f, r in zip(frames, rewards, strict=True) if r)])
    assert any(rewards), "Pong's opponent scores against a still paddle"
    assert info["saber"]["end"] in {"stuck_timeout", "game_over"}
    if info["saber"]["end"] == "stuck_timeout":
        assert info["episode_frame_number"] - last_reward_frame == 800


def test_the_100_hour_cap_truncates_and_marks_infinite_gameplay() -> None:
    env = gym.make("SABER/Pong")
    env.reset(seed=0)
    # As if 100 hours minus 2 steps had been played, the last reward just scored (else
    # the stuck timeout would end the episode first).
    env.get_wrapper_attr("_repeater").episode_frame = 21_600_000 - 8
    for wrapper in _wrappers(env):
        if isinstance(wrapper, NoRewardTimeout):
            wrapper._last_reward_frame = 21_600_000 - 8
    _, _, terminated, truncated, info = env.step(0)
    assert not (terminated or truncated)
    _, _, terminated, truncated, info = env.step(0)
    assert truncated and not terminated and info["time_cap"]
    assert info["saber"]["end"] == "time_cap" and info["saber"]["infinite"]
    assert info["saber"]["frames"] == 21_600_000


def test_a_shorter_cap_truncates_without_claiming_infinite_gameplay() -> None:
    env = gym.make("SABER/Pong", max_episode_frames=400)  # not SABER
    env.reset(seed=0)
    for _ in range(99):
        assert not any(env.step(0)[2:4])
    _, _, terminated, truncated, info = env.step(0)
    assert truncated and not terminated and info["saber"]["end"] == "time_cap"
    assert info["saber"]["frames"] == 400 and not info["saber"]["infinite"]


def _wrappers(env: gym.Env) -> list[gym.Env]:
    found = []
    while isinstance(env, gym.Wrapper):
        found.append(env)
        env = env.env
    return found


def _provoke_rollover(mode: str) -> tuple[list[float], dict]:
    """Asterix keeps 6 BCD score digits at RAM 0xDE..0xE0: set 990,000 and play on."""
    env = gym.make("SABER/Asterix", rollover_mode=mode)
    env.reset(seed=0)
    ale = env.unwrapped.ale
    for address, value in ((0xDE, 0x99), (0xDF, 0x99), (0xE0, 0x00)):
        ale.setRAM(address - 0x80, value)
    return play(env, random_actions(3_000))


def test_a_real_rollover_is_corrected_and_counted() -> None:
    rewards, info = _provoke_rollover("correct")
    assert rewards[0] == 999_900  # the ALE reads the score we wrote as a gain
    assert min(rewards) >= 0 and 50.0 in rewards
    assert info["saber"]["rollovers"] == 1
    assert info["saber"]["score"] == sum(rewards)
    assert info["saber"]["score"] > 1_000_000


@pytest.mark.parametrize(("mode", "expected"), [("ignore", 0.0), ("off", -999_950.0)])
def test_rollover_modes(mode: str, expected: float) -> None:
    corrected, _ = _provoke_rollover("correct")
    rewards, info = _provoke_rollover(mode)
    differing = [i for i, (a, b) in enumerate(zip(corrected, rewards, strict=True)) if a != b]
    assert len(differing) == 1 and rewards[differing[0]] == expected
    assert corrected[differing[0]] == 50.0
    assert info["saber"]["rollovers"] == 1


@pytest.mark.parametrize(
    ("game", "at_most"), [("SABER/Skiing", -5_000), ("SABER/JourneyEscape", -1_000)]
)
def test_big_legitimate_negative_rewards_are_left_intact(game: str, at_most: float) -> None:
    """The paper's text (ignore rewards below -1000) would wipe these; ours leaves them."""
    runs = {}
    for mode in ("correct", "off"):
        env = gym.make(game, rollover_mode=mode)
        env.reset(seed=0)
        runs[mode] = play(env, random_actions(10_000))
    rewards, info = runs["correct"]
    assert rewards == runs["off"][0]
    assert min(rewards) <= at_most
    assert info["saber"]["rollovers"] == 0 and info["saber"]["end"] == "game_over"
    assert info["saber"]["score"] == sum(rewards)


def test_episode_statistics_hold_the_scores_at_each_checkpoint() -> None:
    """The 5- and 30-minute columns are the score at frames 18,000 and 108,000; a random
    Pong game is shorter than that, so the rule is checked on earlier checkpoints here."""
    assert SaberEpisodeStatistics(gym.make("SABER/Pong").env).checkpoint_frames == {
        "5min": 18_000,
        "30min": 108_000,
    }
    statistics = next(
        w for w in _wrappers(gym.make("SABER/Pong")) if isinstance(w, SaberEpisodeStatistics)
    )
    env = SaberEpisodeStatistics(statistics.env, checkpoint_frames={"early": 1_000, "late": 2_400})
    env.reset(seed=0)
    rewards, info = play(env, random_actions(20_000))
    episode = info["saber"]
    frames = 4 * np.arange(1, len(rewards) + 1)
    frames[-1] = episode["frames"]  # the game may end inside the last 4-frame repeat
    assert episode["score"] == sum(rewards)
    assert episode["steps"] == len(rewards)
    assert 4 * len(rewards) - 3 <= episode["frames"] <= 4 * len(rewards)
    for name, limit in (("score_early", 1_000), ("score_late", 2_400)):
        assert episode[name] == sum(r for r, f in zip(rewards, frames, strict=True) if f <= limit)
    assert episode["score_early"] != episode["score_late"] != episode["score"]


def test_reward_clipping_changes_only_what_the_agent_sees() -> None:
    env = gym.make("SABER/Asterix", clip_rewards=True)
    env.reset(seed=0)
    rewards, info = play(env, random_actions(3_000))
    assert set(rewards) <= {-1.0, 0.0, 1.0} and 1.0 in rewards
    assert info["saber"]["score"] == 50 * rewards.count(1.0)


def test_same_seed_same_actions_same_trajectory_different_seeds_differ() -> None:
    def run(seed: int) -> list:
        env = gym.make("SABER/Pong")
        first, _ = env.reset(seed=seed)
        out = [first]
        for action in random_actions(200):
            obs, reward, *_ = env.step(action)
            out.append((obs, reward))
        return out

    a, b, c = run(11), run(11), run(12)
    assert all(np.array_equal(x[0], y[0]) for x, y in zip(a[1:], b[1:], strict=True))
    assert any(not np.array_equal(x[0], y[0]) for x, y in zip(a[1:], c[1:], strict=True))


def test_stepping_before_reset_or_after_the_end_raises_reset_needed() -> None:
    env = gym.make("SABER/Breakout", max_frames_without_reward=40)
    with pytest.raises(ResetNeeded):
        env.step(0)
    env.reset(seed=0)
    play(env, [0] * 20)
    with pytest.raises(ResetNeeded, match="after the episode ended"):
        env.step(0)
    env.reset()
    env.step(0)


@pytest.mark.parametrize("action", [18, -1, 3.0, float("nan"), "1", None, np.array([1, 2]), True])
def test_invalid_actions_raise_value_error_saying_what_was_expected(action: object) -> None:
    env = gym.make("SABER/Pong")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"Expect an integer action in \[0, 17\]"):
        env.step(action)


# Actions that move Pong's paddle (RIGHTFIRE, RIGHT, LEFT, RIGHTFIRE): each differs from NOOP.
@pytest.mark.parametrize("action", [np.int64(17), np.uint8(3), np.array(4), np.array([11])])
def test_numpy_integer_actions_are_accepted(action: object) -> None:
    # The same step as the plain int: same frame, reward and flags, so the numpy value was
    # taken as the action it names (not rejected, not read as another action).
    as_int = int(np.asarray(action).reshape(-1)[0])
    numpy_env, int_env, noop_env = (gym.make("SABER/Pong") for _ in range(3))
    for env in (numpy_env, int_env, noop_env):
        env.reset(seed=0)
    moved = False
    for _ in range(30):
        got, want = numpy_env.step(action), int_env.step(as_int)
        assert np.array_equal(got[0], want[0]) and got[1:4] == want[1:4]
        moved = moved or not np.array_equal(got[0], noop_env.step(0)[0])
    assert moved, "the action did nothing that NOOP does not: the comparison would prove nothing"
