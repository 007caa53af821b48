"""saber check on vector envs: every rule gets a verdict.

``gymnasium.make_vec("SABER/<Game>", n)`` runs its emulators in ale-py's C++ engine: the
probe follows row 0 on a twin and provokes the frame cap, the rollover and the stuck
timeout through the env's engine seam (saber.check.vector.SaberVectorSeams), under a
Gymnasium vector env, an SB3 VecEnv or envpool's API alike. A bad factory is refused in
one line. The whole follow takes minutes on 2 cores: those tests are slow; SB3's and
envpool's carry their markers.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

from saber.check import Status, check
from saber.check.probes.followed import probe_stuck_clock
from saber.check.probes.tampered import probe_frame_cap_tampered
from saber.check.subject import subject_of
from saber.check.vector import Sb3VecSubject, VectorSubject
from saber.errors import ExitCode

ROOT = Path(__file__).resolve().parents[2]


def _statuses(result: object) -> dict[str, str]:
    return {rule.rule: rule.status.value for rule in result.rules}  # type: ignore[attr-defined]


# ------------------------------------------------------------------ bad factories
FACTORIES = """
import gymnasium as gym
import saber

def wrong_signature(game, num_envs):
    return gym.make_vec("SABER/Breakout", num_envs)

def raises():
    raise RuntimeError("no ROM here")

def not_an_env():
    return 42

not_callable = 3
"""


@pytest.mark.parametrize(
    ("factory", "game", "says"),
    [
        ("wrong_signature", None, "takes (game, num_envs), but saber check calls factory()"),
        ("raises", None, "raised RuntimeError: no ROM here; saber check needs a factory"),
        ("not_an_env", None, "returned an object of type int, not an env; saber check needs"),
        ("not_callable", None, "is an object of type int, not callable; saber check needs"),
        ("raises", "pong", "takes (), but saber check calls factory(game)"),
    ],
)
def test_a_bad_factory_gets_one_line_naming_it(
    tmp_path: Path, factory: str, game: str | None, says: str
) -> None:
    """The reported case (a factory with the wrong signature gave a traceback) and every
    other bad factory: one line naming the target and what saber check needs, exit 3."""
    (tmp_path / "bad_factories.py").write_text(FACTORIES, encoding="utf-8")
    command = [sys.executable, "-m", "saber.cli", "check", f"bad_factories:{factory}"]
    done = subprocess.run(
        [*command, *(["--game", game] if game else [])],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == ExitCode.BAD_INPUT, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    errors = [line for line in lines if line.startswith("Error:")]
    assert len(errors) == 1 and "Traceback" not in done.stderr, done.stderr
    assert errors[0].startswith(f"Error: bad_factories:{factory} "), errors[0]
    assert says in errors[0], errors[0]


# ------------------------------------------------------ SaberVectorEnv: the seams
def test_make_vec_is_followed_on_seaquest_under_its_own_engine_and_settings() -> None:
    env = gym.make_vec("SABER/Breakout", 2)
    subject = subject_of(env)
    assert isinstance(subject, VectorSubject) and subject.followable
    assert subject.emulator is None and subject.rom_id == "seaquest"
    assert "the env played breakout" in subject.game_text
    assert env.unwrapped.uses_threads  # the threaded engine stays threaded
    subject.close()


def test_make_vec_frame_cap_provoked_through_the_engine_seam() -> None:
    """Before: VectorSubject had no seam, the frame cap was unknown. SABER's cap passes;
    a 108,000-frame cap is found by bisection."""
    saber = probe_frame_cap_tampered(subject_of(gym.make_vec("SABER/Breakout", 2)))
    assert [r.status for r in saber] == [Status.PASS], saber
    assert saber[0].measured == "truncated at 21,600,000 frames (end: time_cap)"
    capped = subject_of(gym.make_vec("SABER/Breakout", 1, max_episode_frames=108_000))
    result = probe_frame_cap_tampered(capped)
    assert result[0].status is Status.FAIL and result[0].measured == "truncated at 108,000 frames"


def test_make_vec_stuck_timeout_under_an_advanced_clock() -> None:
    saber = probe_stuck_clock(subject_of(gym.make_vec("SABER/Breakout", 2)))
    assert saber[0].status is Status.PASS and saber[0].measured == "truncated at 18,000 frames"
    short = subject_of(gym.make_vec("SABER/Breakout", 2, max_frames_without_reward=9_000))
    result = probe_stuck_clock(short)
    assert result[0].status is Status.FAIL, result


# ------------------------------------------------------------- whole checks (slow)
@pytest.mark.slow
def test_make_vec_of_eight_passes_every_rule() -> None:
    """The reported case: gymnasium.make_vec("SABER/Breakout", 8) gave 1 pass and 11
    unknown (exit 2); every rule passes now (exit 0)."""
    result = check(lambda: gym.make_vec("SABER/Breakout", 8))
    assert result.passed and result.exit_code == 0, result


@pytest.mark.slow
@pytest.mark.parametrize("batch_size", [4, 2], ids=["sync", "async"])
def test_saber_envpool_passes_every_rule(batch_size: int) -> None:
    """saber.envpool, sync and async: env 0 driven through send/recv, row 0 of the
    SaberVectorEnv under it followed, seeded episodes replayed through its make_vec-style
    reset(seed=); its `lives` key, always 0, tells nothing at the life losses seen.
    Before: the seeded replays were not replayable (the rollover probe compared two
    different episodes and failed, or crashed on their lengths) and `lives` failed."""
    from saber import envpool

    result = check(
        lambda: envpool.make("Breakout-v5", "gymnasium", num_envs=4, batch_size=batch_size)
    )
    assert result.passed and result.exit_code == 0, result


@pytest.mark.slow
def test_make_vec_without_sticky_actions_fails_sticky_actions_alone() -> None:
    """Sticky actions off: sticky_actions fails, no other rule does. (Seaquest's seeded
    random play then scores nothing before the sub is lost, so the score rules may come
    out unknown, as raw_rewards and rollover do.)"""
    result = check(lambda: gym.make_vec("SABER/Breakout", 2, repeat_action_probability=0.0))
    statuses = _statuses(result)
    assert statuses.pop("sticky_actions") == "fail", result
    assert "fail" not in statuses.values(), result
    assert result.exit_code is ExitCode.FAILED


@pytest.mark.slow
def test_make_vec_with_clipped_rewards_and_a_raw_record_is_saber() -> None:
    """clip_rewards=True: the agent's rewards clipped, the score recorded raw: SABER."""
    result = check(lambda: gym.make_vec("SABER/Breakout", 2, clip_rewards=True))
    assert result.passed, result


@pytest.mark.slow
def test_make_vec_on_the_sequential_engine_passes_every_probed_rule() -> None:
    """Skiing runs the single env's code row by row (ale-py calls fewer than 18 of its
    actions legal); the check follows it on that engine."""
    env = gym.make_vec("SABER/Skiing", 2)
    assert not env.unwrapped.uses_threads
    result = check(env, quick=True)
    assert not env.unwrapped.uses_threads
    assert result.probed_passed and result.not_probed() == ["sticky_actions"], result


@pytest.mark.slow
def test_make_vec_sync_mode_passes_every_rule() -> None:
    """The other vectorization mode: a SyncVectorEnv of SABER envs, row 0's emulator
    reached."""
    result = check(lambda: gym.make_vec("SABER/Breakout", 2, vectorization_mode="sync"))
    assert result.passed, result


# ------------------------------------------------------------------ SB3 VecEnvs
def _saber_vec_env() -> object:
    """saber's SB3 adapter over make_vec (examples/train_sb3_ppo.py, or saber.training.sb3)."""
    try:
        from saber.training.sb3 import SaberVecEnv  # type: ignore[attr-defined]
    except ImportError:
        sys.path.insert(0, str(ROOT / "examples"))
        from train_sb3_ppo import SaberVecEnv
    from gymnasium.vector import AutoresetMode

    return SaberVecEnv(gym.make_vec("SABER/Breakout", 2, autoreset_mode=AutoresetMode.DISABLED))


@pytest.mark.sb3
def test_sb3_adapter_over_make_vec_passes_every_probed_rule() -> None:
    venv = _saber_vec_env()
    subject = subject_of(venv)
    assert isinstance(subject, Sb3VecSubject) and subject.followable
    result = check(venv, quick=True)
    assert result.probed_passed and result.not_probed() == ["sticky_actions"], result


@pytest.mark.sb3
def test_sb3_dummy_vec_env_of_saber_envs_passes_every_rule() -> None:
    """Row 0's emulator reached; an episode's end shows its last observation
    (info["terminal_observation"]), as a Gymnasium env shows it."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    result = check(lambda: DummyVecEnv([lambda: gym.make("SABER/Breakout")] * 2))
    assert result.passed, result


# ---------------------------------------------------------------------- envpool
@pytest.mark.envpool
def test_envpool_async_batches_are_driven_through_env_zero() -> None:
    """batch_size < num_envs: each probe step is env 0's, the other envs stepped too."""
    import envpool

    subject = subject_of(
        envpool.make("Breakout-v5", env_type="gymnasium", num_envs=5, batch_size=2)
    )
    _, info = subject.reset(seed=0)
    assert info["env_id"] == 0
    steps = []
    for action in [1, 0, 2, 3] * 5:
        *_, info = subject.step(action)
        assert info["env_id"] == 0
        steps.append(int(info["elapsed_step"]))
    assert steps == list(range(1, 21))
    subject.close()


@pytest.mark.envpool
def test_envpool_async_is_followed_by_its_ram_and_fails_what_its_defaults_break() -> None:
    """Before: 1 pass, 2 fail, 9 unknown (its C++ emulator out of reach). Env 0 followed
    by the RAM envpool reports, through asynchronous batches: every rule its defaults
    break fails with the value measured; only the two score rules stay unknown (no wrap
    can be provoked, and Breakout's rewards followed stay within [-1, 1])."""
    import envpool

    result = check(
        lambda: envpool.make("Breakout-v5", env_type="gymnasium", num_envs=4, batch_size=2)
    )
    rules = {rule.rule: rule for rule in result.rules}
    statuses = _statuses(result)
    assert statuses.pop("raw_rewards") == statuses.pop("rollover") == "unknown", result
    assert statuses == {
        "sticky_actions": "fail",
        "action_set": "fail",
        "life_signal": "fail",
        "noop_starts": "fail",
        "fire_start": "fail",
        "stuck_timeout": "fail",
        "frame_cap": "fail",
        "frame_skip": "pass",
        "observation": "fail",
        "frame_stack": "pass",
    }, result
    assert rules["sticky_actions"].measured.startswith("0.000 per frame")
    assert rules["frame_cap"].measured == "truncated at 108,000 frames"
    assert rules["fire_start"].measured == "FIRE at the start"
    assert "INTER_AREA" in (rules["observation"].measured or "")
    assert result.exit_code is ExitCode.FAILED


# ------------------------------------------------------------ many games, one vector env
def test_a_multi_game_env_is_followed_through_its_first_games_engine() -> None:
    env = gym.make_vec("SABER/Games", 4, games=["breakout", "skiing"])
    subject = subject_of(env)
    assert isinstance(subject, VectorSubject) and subject.followable
    assert subject.rom_id == "seaquest" and "the env played breakout" in subject.game_text
    assert env.unwrapped.vector_envs[0].rom_id == "seaquest"  # row 0 is the first game's
    result = probe_stuck_clock(subject)
    assert result[0].status is Status.PASS and result[0].measured == "truncated at 18,000 frames"
    subject.close()


def test_saber_check_makes_a_set_id_with_one_sub_env_per_game() -> None:
    from saber.check.subject import resolve_target

    env = resolve_target("SABER/Atari5")()
    assert env.num_envs == 5 and env.unwrapped.games[0] == "battle_zone"
    env.close()


@pytest.mark.slow
def test_a_set_id_passes_every_rule() -> None:
    result = check(lambda: gym.make_vec("SABER/Atari5", 5))
    assert result.passed and result.exit_code == 0, result
