"""Many games in one vector env: each sub-env plays exactly its game's single env."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.spaces import Box, Discrete
from gymnasium.vector import AutoresetMode

from saber.envs import SaberMultiGameVectorEnv, SaberVectorEnv
from saber.errors import SaberError, UnknownGameError, UnknownSettingError
from saber.games import game_sets

# Four kinds of game: Breakout (ends at game over, or stuck when idle), Double Dunk (ALE
# plays starting actions at each reset, which the engine's frame counter includes; long
# games), Skiing (9 legal actions in ale-py: its engine runs in this process; rewards every
# frame, so never stuck) and Space Invaders. Short non-SABER limits (800 frames stuck, a
# 5,000-frame cap) so that a few thousand steps cross every end.
GAMES = ["breakout", "double_dunk", "skiing", "space_invaders"]
SHORT_LIMITS = {"max_frames_without_reward": 800, "max_episode_frames": 5_000}
ENDS = {"game_over", "stuck_timeout", "time_cap"}


def actions_for(steps: int, num_envs: int, idle: list[int]) -> np.ndarray:
    """Random actions, except the ``idle`` sub-envs, which mostly idle (NOOP) to get stuck."""
    actions = np.random.default_rng(1).integers(0, 18, (steps, num_envs))
    for row in idle:
        actions[:, row] = np.where(np.arange(steps) % 50 == 0, actions[:, row], 0)
    return actions


def test_every_sub_env_plays_its_games_single_env_step_for_step() -> None:
    count = len(GAMES)
    num_envs, seed, steps = 2 * count, 10, 2_500
    vector = gym.make_vec("SABER/Games", num_envs=num_envs, games=GAMES, **SHORT_LIMITS)
    assert isinstance(vector.unwrapped, SaberMultiGameVectorEnv)
    assert vector.single_observation_space == Box(0, 255, (4, 84, 84), dtype=np.uint8)
    assert vector.single_action_space == Discrete(18)
    names = [gym.spec(f"SABER/{g.title().replace('_', '')}").id for g in GAMES]
    singles = [gym.make(names[i % count], **SHORT_LIMITS) for i in range(num_envs)]

    obs, info = vector.reset(seed=seed)
    assert info["game"].tolist() == GAMES * 2
    for i, env in enumerate(singles):  # sub-env i seeded with seed + i
        np.testing.assert_array_equal(obs[i], env.reset(seed=seed + i)[0])

    ended = [False] * num_envs
    ends_seen: dict[str, set[str]] = {game: set() for game in GAMES}
    steps_after_every_end = 0
    for actions in actions_for(steps, num_envs, idle=[count]):  # Breakout's second row
        if set().union(*ends_seen.values()) == ENDS and all(ends_seen.values()):
            steps_after_every_end += 1  # a few more, to check the autoreset steps too
            if steps_after_every_end > 5:
                break
        obs, rewards, terminated, truncated, info = vector.step(actions)
        assert info["game"].tolist() == GAMES * 2
        for i, env in enumerate(singles):
            if ended[i]:  # NEXT_STEP autoreset: this step starts the next episode
                expected = (env.reset()[0], 0.0, False, False, {})
            else:
                expected = env.step(int(actions[i]))
            np.testing.assert_array_equal(obs[i], expected[0])
            assert (rewards[i], terminated[i], truncated[i]) == expected[1:4], (i, GAMES[i % 4])
            frame = expected[4].get("episode_frame_number", 0)
            assert info["episode_frame_number"][i] == frame
            ended[i] = expected[2] or expected[3]
            assert bool(info.get("_saber", np.zeros(num_envs))[i]) == ended[i]
            if ended[i]:  # the record is the single env's (but for the wall-clock time)
                record = {key: info["saber"][key][i] for key in expected[4]["saber"]}
                assert record.keys() == info["saber"].keys()
                assert {k: v for k, v in record.items() if k != "seconds"} == {
                    k: v for k, v in expected[4]["saber"].items() if k != "seconds"
                }
                ends_seen[GAMES[i % count]].add(record["end"])
    assert set().union(*ends_seen.values()) == ENDS, ends_seen
    assert all(ends_seen.values()), ends_seen  # every game ended at least once
    vector.close()


def test_a_set_id_deals_its_games_in_the_sets_order() -> None:
    envs = gym.make_vec("SABER/Atari5", num_envs=10)
    atari5 = [game.ale_id for game in game_sets()["atari5"]]
    assert envs.unwrapped.games == tuple(atari5)
    _, info = envs.reset(seed=3)
    assert info["game"].tolist() == atari5 * 2
    assert envs.observation_space.shape == (10, 4, 84, 84)
    assert envs.action_space == gym.spaces.MultiDiscrete([18] * 10)
    envs.close()


def test_every_named_set_is_registered_for_make_vec() -> None:
    for name in game_sets():
        spec = gym.spec(f"SABER/{name.title().replace('_', '')}")
        assert spec.kwargs == {"game_set": name}
        assert spec.vector_entry_point == "saber.envs.multigame:SaberMultiGameVectorEnv"
    assert {"SABER/Atari5", "SABER/Atari10", "SABER/Atari57", "SABER/Saber61"} <= set(gym.registry)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["Atari57", "Saber61"])
def test_the_largest_sets_build_and_step(name: str) -> None:
    envs = gym.make_vec(f"SABER/{name}", num_envs=int(name[-2:]))
    obs, info = envs.reset(seed=0)
    obs, *_ = envs.step(np.zeros(envs.num_envs, dtype=int))
    assert obs.shape == (envs.num_envs, 4, 84, 84)
    assert len(set(info["game"])) == envs.num_envs
    envs.close()


def test_seed_arrays_masks_and_disabled_autoreset_reach_the_right_sub_envs() -> None:
    games = ["pong", "skiing"]
    envs = SaberMultiGameVectorEnv(games, 4, autoreset_mode=AutoresetMode.DISABLED)
    obs, _ = envs.reset(seed=[7, 8, 9, 10])
    for i in range(4):
        single = gym.make(f"SABER/{games[i % 2].title()}")
        np.testing.assert_array_equal(obs[i], single.reset(seed=7 + i)[0])
    np.testing.assert_array_equal(envs.episode_seeds, [7, 8, 9, 10])
    envs.seed_each_episode = True
    assert all(env.seed_each_episode for env in envs.vector_envs)
    mask = np.array([False, True, False, True])
    obs2, _ = envs.reset(seed=[20, 21], options={"reset_mask": mask})
    np.testing.assert_array_equal(envs.episode_seeds, [7, 20, 9, 21])
    np.testing.assert_array_equal(obs2[0], obs[0])  # rows not reset keep their stack
    skiing = gym.make("SABER/Skiing")
    np.testing.assert_array_equal(obs2[3], skiing.reset(seed=21)[0])
    envs.vector_envs[1]._ended[1] = True  # as if sub-env 3 (Skiing's second row) had ended
    with pytest.raises(ResetNeeded, match=r"^Sub-envs \[3\] have ended"):
        envs.step(np.zeros(4, dtype=int))
    envs.close()


def test_misuse_is_refused_before_any_game_steps() -> None:
    envs = SaberMultiGameVectorEnv(["pong", "breakout"], 2)
    with pytest.raises(ResetNeeded, match="before reset"):
        envs.step(np.zeros(2, dtype=int))
    envs.reset(seed=0)
    with pytest.raises(ValueError, match=r"Expect actions in \[0, 17\]"):
        envs.step(np.array([0, 18]))
    with pytest.raises(RuntimeError, match="step_wait\\(\\) without step_async"):
        envs.step_wait()
    envs.step_async(np.array([1, 1]))
    with pytest.raises(RuntimeError, match="a step is in flight"):
        envs.step_async(np.array([1, 1]))
    assert envs.step_wait()[0].shape == (2, 4, 84, 84)
    envs.close()
    with pytest.raises(RuntimeError, match="is closed"):
        envs.reset()


# Bad input: one line each, naming what to do instead.
BAD_INPUT = [
    (
        lambda: gym.make("SABER/Atari5"),
        SaberError,
        "SABER/Atari5 is a set of 5 games, played as one vector env: "
        "gymnasium.make_vec('SABER/Atari5', num_envs=5); for one of its games, "
        "gymnasium.make('SABER/BattleZone')",
    ),
    (
        lambda: gym.make("SABER/Games"),
        SaberError,
        "SABER/Games is many games in one vector env: gymnasium.make_vec('SABER/Games', "
        "num_envs=..., games=[...]); for one game, gymnasium.make('SABER/<Game>')",
    ),
    (
        lambda: gym.make_vec("SABER/Atari5", num_envs=7),
        ValueError,
        "Expect `num_envs` to be a multiple of the 5 games of SABER/Atari5 (sub-env i plays "
        "game i % 5, every game as many), actually: 7",
    ),
    (
        lambda: SaberMultiGameVectorEnv(game_set="atari5", num_envs=0),
        ValueError,
        "Expect `num_envs` to be a positive int, actually: 0",
    ),
    (
        lambda: gym.make_vec("SABER/Games", num_envs=2, games="pong", num_threads=-1),
        ValueError,
        "Expect `num_threads` to be 0 or more, actually: -1",
    ),
    (
        lambda: gym.make_vec("SABER/Games", num_envs=2),
        UnknownGameError,
        "SABER/Games needs its games: gymnasium.make_vec('SABER/Games', num_envs=..., "
        "games=['pong', 'breakout']), or a set id such as SABER/Atari5",
    ),
    (
        lambda: gym.make_vec("SABER/Games", num_envs=2, games=["pong", "pongg"]),
        UnknownGameError,
        "Unknown game 'pongg'. Did you mean: pong, pooyan, boxing? Known games are the "
        "single-player ROM ids of ale-py (saber.games.supported_rom_ids(); the 61 SABER "
        "games are saber.games.saber_games()), in any spelling: ms_pacman, MsPacman, "
        "SABER/MsPacman.",
    ),
    (
        lambda: gym.make_vec("SABER/Games", num_envs=2, games=["pong", "Pong"]),
        UnknownGameError,
        "pong is given twice in `games`; give each game once (sub-env i plays game "
        "i % len(games): num_envs gives each game its sub-envs)",
    ),
    (
        lambda: gym.make_vec("SABER/Atari5", num_envs=5, games=["pong"]),
        SaberError,
        "SABER/Atari5 plays its own games; for games of your choice use "
        "gymnasium.make_vec('SABER/Games', num_envs=..., games=[...])",
    ),
    (
        lambda: SaberMultiGameVectorEnv(game_set="atari4", num_envs=4),
        UnknownGameError,
        "Unknown set of games 'atari4'; known sets: atari1, atari3, atari5, atari10, "
        "atari3_val, atari5_val, atari57, saber61",
    ),
    (
        lambda: gym.make_vec("SABER/Atari4", num_envs=4),
        gym.error.NameNotFound,
        "Environment `Atari4` doesn't exist in namespace SABER. Did you mean: `Atari5`?",
    ),
    (
        lambda: gym.make_vec("SABER/Games", num_envs=2, games=["pong"], frameskip=5),
        UnknownSettingError,
        "Unknown SABER setting(s): frameskip. Known settings: clip_rewards, frame_skip, "
        "life_signal, max_episode_frames, max_frames_without_reward, repeat_action_probability, "
        "rollover_mode, rollover_threshold, screen_size, stack_size (unexpected keyword "
        "argument 'frameskip')",
    ),
    (
        lambda: gym.make_vec("SABER/Games", num_envs=1, games=["pong"], render_mode="human"),
        ValueError,
        "SaberVectorEnv does not render; use gymnasium.make for rendering",
    ),
]


@pytest.mark.parametrize(
    ("make", "error", "message"),
    BAD_INPUT,
    ids=[
        "make-on-a-set",
        "make-on-games",
        "num-envs-not-dealt-evenly",
        "no-num-envs",
        "negative-num-threads",
        "no-games",
        "unknown-game",
        "game-twice",
        "games-on-a-set",
        "unknown-set",
        "unknown-set-id",
        "not-a-saber-setting",
        "render",
    ],
)
def test_bad_input_is_refused_in_one_line(make: object, error: type, message: str) -> None:
    with pytest.raises(error) as caught:
        make()  # type: ignore[operator]
    assert str(caught.value) == message
    assert "\n" not in message


def test_the_sub_envs_are_the_games_own_vector_envs() -> None:
    envs = gym.make_vec("SABER/Games", num_envs=2, games="pong,skiing").unwrapped
    assert [env.rom_id for env in envs.vector_envs] == ["pong", "skiing"]
    assert all(isinstance(env, SaberVectorEnv) for env in envs.vector_envs)
    assert [env.uses_threads for env in envs.vector_envs] == [True, False]
    envs.close()


def test_without_num_envs_each_game_has_one_sub_env() -> None:
    envs = SaberMultiGameVectorEnv("pong,breakout")
    assert (envs.num_envs, envs.row_games.tolist()) == (2, ["pong", "breakout"])
    envs.close()


def test_a_set_of_one_game_plays_that_games_envs() -> None:
    """SABER/Atari1 is Name This Game alone (ALE plays ~130 starting frames at its reset)."""
    envs = gym.make_vec("SABER/Atari1", num_envs=2)
    singles = [gym.make("SABER/NameThisGame") for _ in range(2)]
    obs, _ = envs.reset(seed=4)
    for i, env in enumerate(singles):
        np.testing.assert_array_equal(obs[i], env.reset(seed=4 + i)[0])
    for actions in np.random.default_rng(2).integers(0, 18, (60, 2)):
        obs, rewards, _, _, info = envs.step(actions)
        for i, env in enumerate(singles):
            expected = env.step(int(actions[i]))
            np.testing.assert_array_equal(obs[i], expected[0])
            assert rewards[i] == expected[1]
            assert info["episode_frame_number"][i] == expected[4]["episode_frame_number"]
    assert info["game"].tolist() == ["name_this_game"] * 2
    envs.close()
