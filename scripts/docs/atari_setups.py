"""Writes ``docs/atari-setups.md``: what popular Atari setups change, as ``saber check`` measures it.

Each setup below is built as its users build it (on Breakout: it has lives, needs FIRE
and keeps a score that clipping changes), and probed with :func:`saber.check.check`; the
page holds the verdicts each setup's code calls for (:data:`EXPECTED`, read from the
libraries' code, with the reason), the table of verdicts measured, each setup's code
(read from this file) and the evidence. ``tests/check/test_setups.py`` asserts that the
page holds :data:`EXPECTED` and that ``saber check`` gives exactly those verdicts on each
setup installed. Nothing on the page is typed by hand: run
``python scripts/docs/atari_setups.py`` (``--out`` to write elsewhere). Setups whose library
is not installed are listed as such (stable-baselines3 for SB3 and CleanRL, envpool for
envpool).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import inspect
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym

import saber
from saber.check import CheckResult, check
from saber.check.table import markdown_comparison, summary

GAME = "Breakout"
PAGE = Path(__file__).resolve().parents[2] / "docs" / "atari-setups.md"


def ale_v5_defaults() -> gym.Env:
    """ale-py's v5 env with its defaults."""
    return gym.make(f"ALE/{GAME}-v5")


def gymnasium_atari_preprocessing() -> gym.Env:
    """Gymnasium's ``AtariPreprocessing`` with its defaults (over a v5 env without frame
    skip, which the wrapper requires)."""
    return gym.wrappers.AtariPreprocessing(gym.make(f"ALE/{GAME}-v5", frameskip=1))


def sb3_atari_wrapper() -> gym.Env:
    """Stable-Baselines3's ``AtariWrapper`` over ale-py's v5 env, as a user stacks it
    (v5 skips 4 frames a step, and the wrapper's ``MaxAndSkipEnv`` 4 more)."""
    from stable_baselines3.common.atari_wrappers import AtariWrapper

    return AtariWrapper(gym.make(f"ALE/{GAME}-v5"))


def sb3_make_atari_env() -> Any:
    """Stable-Baselines3's ``make_atari_env`` and the ``VecFrameStack`` of its examples."""
    from stable_baselines3.common.env_util import make_atari_env
    from stable_baselines3.common.vec_env import VecFrameStack

    return VecFrameStack(make_atari_env(f"{GAME}NoFrameskip-v4", n_envs=1, seed=0), 4)


def cleanrl_make_env() -> gym.vector.VectorEnv:
    """CleanRL's Atari ``make_env`` (``cleanrl/dqn_atari.py``, MIT licence, by Shengyi
    Huang and contributors), as a user has it with Gymnasium 1.x: SB3's Atari wrappers,
    then Gymnasium's resize, grayscale and frame stack, in a ``SyncVectorEnv``."""
    from stable_baselines3.common.atari_wrappers import (
        ClipRewardEnv,
        EpisodicLifeEnv,
        FireResetEnv,
        MaxAndSkipEnv,
        NoopResetEnv,
    )

    def make_env(env_id: str, seed: int) -> Callable[[], gym.Env]:
        def thunk() -> gym.Env:
            env = gym.make(env_id)
            env = gym.wrappers.RecordEpisodeStatistics(env)
            env = NoopResetEnv(env, noop_max=30)
            env = MaxAndSkipEnv(env, skip=4)
            env = EpisodicLifeEnv(env)
            if "FIRE" in env.unwrapped.get_action_meanings():
                env = FireResetEnv(env)
            env = ClipRewardEnv(env)
            env = gym.wrappers.ResizeObservation(env, (84, 84))
            env = gym.wrappers.GrayscaleObservation(env)
            env = gym.wrappers.FrameStackObservation(env, 4)
            env.action_space.seed(seed)
            return env

        return thunk

    return gym.vector.SyncVectorEnv([make_env(f"{GAME}NoFrameskip-v4", 0)])


def envpool_defaults() -> Any:
    """envpool's Atari env with its defaults (Gymnasium API, one env)."""
    import envpool

    return envpool.make(f"{GAME}-v5", env_type="gymnasium", num_envs=1)


def saber_env() -> gym.Env:
    """SABER."""
    return gym.make(f"SABER/{GAME}")


SETUPS: dict[str, Callable[[], Any]] = {
    "ale-py v5": ale_v5_defaults,
    "Gymnasium AtariPreprocessing": gymnasium_atari_preprocessing,
    "SB3 AtariWrapper": sb3_atari_wrapper,
    "SB3 make_atari_env": sb3_make_atari_env,
    "CleanRL make_env": cleanrl_make_env,
    "envpool": envpool_defaults,
    "SABER": saber_env,
}
NEEDS = {
    "SB3 AtariWrapper": "stable-baselines3",
    "SB3 make_atari_env": "stable-baselines3",
    "CleanRL make_env": "stable-baselines3",
    "envpool": "envpool",
}

PASS, FAIL, UNKNOWN = "pass", "fail", "unknown"
# envpool's emulator runs in C++, out of reach; saber check follows env 0 by the RAM it
# reports (saber.check.probes.ram_followed). Breakout's first bricks score 1 point: the
# rewards followed stay within [-1, 1], so clipping (reward_clip) cannot be told.
_NO_LARGE_REWARD = "Breakout's rewards followed stay within [-1, 1]: clipping cannot be told"
_V4 = "NoFrameskip-v4: repeat_action_probability=0"
_MINIMAL = "the minimal action set (Breakout: 4)"
_ALE_CAP = "the ALE's max_num_frames_per_episode=108,000"
_NO_TIMEOUT = "no timeout without reward"
_UNCORRECTED = "nothing corrects a rollover"
_SB3_LIVES = "EpisodicLifeEnv ends episodes at a life loss; `lives` in info"
# The verdict each setup's code calls for, rule by rule, with the reason (read from
# ale-py 0.12, Gymnasium 1.4, Stable-Baselines3 2.x, CleanRL's dqn_atari.py, envpool 1.2.5).
EXPECTED: dict[str, dict[str, tuple[str, str]]] = {
    "ale-py v5": {
        "sticky_actions": (PASS, "v5: repeat_action_probability=0.25"),
        "action_set": (FAIL, _MINIMAL),
        "life_signal": (FAIL, "AtariEnv puts `lives` in info"),
        "noop_starts": (PASS, "none"),
        "fire_start": (PASS, "none"),
        "stuck_timeout": (FAIL, _NO_TIMEOUT),
        "frame_cap": (FAIL, _ALE_CAP),
        "raw_rewards": (PASS, "no record; the rewards it reports are raw"),
        "rollover": (FAIL, _UNCORRECTED),
        "frame_skip": (PASS, "v5: frameskip=4"),
        "observation": (FAIL, "210 x 160 RGB"),
        "frame_stack": (FAIL, "no stack"),
    },
    "Gymnasium AtariPreprocessing": {
        "sticky_actions": (PASS, "v5: repeat_action_probability=0.25"),
        "action_set": (FAIL, _MINIMAL),
        "life_signal": (FAIL, "AtariEnv puts `lives` in info"),
        "noop_starts": (FAIL, "noop_max=30"),
        "fire_start": (PASS, "none"),
        "stuck_timeout": (FAIL, _NO_TIMEOUT),
        "frame_cap": (FAIL, _ALE_CAP),
        "raw_rewards": (PASS, "no record; the rewards it reports are raw"),
        "rollover": (FAIL, _UNCORRECTED),
        "frame_skip": (PASS, "frame_skip=4"),
        "observation": (FAIL, "INTER_AREA resize"),
        "frame_stack": (FAIL, "no stack (one frame)"),
    },
    "SB3 AtariWrapper": {
        "sticky_actions": (PASS, "v5's 0.25 per frame, under the wrapper's frame skip too"),
        "action_set": (FAIL, _MINIMAL),
        "life_signal": (FAIL, _SB3_LIVES),
        "noop_starts": (FAIL, "NoopResetEnv(noop_max=30)"),
        "fire_start": (FAIL, "FireResetEnv"),
        "stuck_timeout": (FAIL, _NO_TIMEOUT),
        "frame_cap": (FAIL, _ALE_CAP),
        "raw_rewards": (FAIL, "ClipRewardEnv, and no record of the score"),
        "rollover": (FAIL, "ClipRewardEnv: a rollover's sign, -1"),
        "frame_skip": (FAIL, "MaxAndSkipEnv(4) over v5's frameskip=4: 16 frames"),
        "observation": (FAIL, "WarpFrame: INTER_AREA, over v5's last frames"),
        "frame_stack": (FAIL, "no stack (one frame)"),
    },
    "SB3 make_atari_env": {
        "sticky_actions": (FAIL, _V4),
        "action_set": (FAIL, _MINIMAL),
        "life_signal": (FAIL, _SB3_LIVES),
        "noop_starts": (FAIL, "NoopResetEnv(noop_max=30)"),
        "fire_start": (FAIL, "FireResetEnv"),
        "stuck_timeout": (FAIL, _NO_TIMEOUT),
        "frame_cap": (FAIL, _ALE_CAP),
        "raw_rewards": (PASS, "Monitor (below the clipping) records the raw score"),
        "rollover": (FAIL, "Monitor's score: " + _UNCORRECTED),
        "frame_skip": (PASS, "MaxAndSkipEnv(4)"),
        "observation": (FAIL, "WarpFrame: INTER_AREA"),
        "frame_stack": (PASS, "VecFrameStack(4)"),
    },
    "CleanRL make_env": {
        "sticky_actions": (FAIL, _V4),
        "action_set": (FAIL, _MINIMAL),
        "life_signal": (FAIL, _SB3_LIVES),
        "noop_starts": (FAIL, "NoopResetEnv(noop_max=30)"),
        "fire_start": (FAIL, "FireResetEnv"),
        "stuck_timeout": (FAIL, _NO_TIMEOUT),
        "frame_cap": (FAIL, _ALE_CAP),
        "raw_rewards": (PASS, "RecordEpisodeStatistics (innermost) records the raw score"),
        "rollover": (FAIL, "RecordEpisodeStatistics' score: " + _UNCORRECTED),
        "frame_skip": (PASS, "MaxAndSkipEnv(4)"),
        "observation": (FAIL, "RGB resized (INTER_AREA), then grayscale"),
        "frame_stack": (PASS, "FrameStackObservation(4)"),
    },
    "envpool": {
        "sticky_actions": (FAIL, "repeat_action_probability=0"),
        "action_set": (FAIL, "Discrete(4): full_action_space=False"),
        "life_signal": (FAIL, "`lives` in info"),
        "noop_starts": (FAIL, "noop_max=30"),
        "fire_start": (FAIL, "use_fire_reset=True"),
        "stuck_timeout": (FAIL, _NO_TIMEOUT),
        "frame_cap": (FAIL, "max_episode_steps=27000: 108,000 frames"),
        "raw_rewards": (UNKNOWN, _NO_LARGE_REWARD),
        "rollover": (UNKNOWN, "its emulator runs in C++: no wrap can be provoked, no record"),
        "frame_skip": (PASS, "frame_skip=4"),
        "observation": (FAIL, "use_inter_area_resize=True: INTER_AREA"),
        "frame_stack": (PASS, "stack_num=4"),
    },
    "SABER": {},  # every rule passes
}
EXPECTED["SABER"] = {rule: (PASS, "SABER") for rule in EXPECTED["ale-py v5"]}


def expected_table() -> str:
    """The Markdown table of :data:`EXPECTED`: one column per setup."""
    names = list(EXPECTED)
    lines = [
        "| rule | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for rule in EXPECTED["SABER"]:
        cells = []
        for name in names:
            status, why = EXPECTED[name][rule]
            mark = "**fail**" if status == FAIL else status
            cells.append(mark if status == PASS else f"{mark}: {why}")
        lines.append(f"| `{rule}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _envpool_config() -> str:
    import envpool

    env = envpool.make(f"{GAME}-v5", env_type="gymnasium", num_envs=1)
    keys = (
        "repeat_action_probability", "full_action_space", "noop_max", "use_fire_reset",
        "episodic_life", "reward_clip", "max_episode_steps", "frame_skip",
        "use_inter_area_resize", "stack_num",
    )  # fmt: skip
    return ", ".join(f"`{key}={env.config[key]}`" for key in keys if key in env.config)


def page(results: list[tuple[str, CheckResult]], missing: list[str]) -> str:
    """The Markdown of the page."""
    versions = ", ".join(
        f"{name} {version}"
        for name in ("ale-py", "gymnasium", "stable-baselines3", "envpool")
        if (version := _version(name))
    )
    lines = [
        "# What popular Atari setups change",
        "",
        f"Each column is a setup as its users build it, on {GAME}, probed by `saber check`"
        " (`saber.check.check`): each rule measured through the setup's own stack and the"
        " emulator under it; **fail** with the value measured, unknown where the emulator"
        " cannot be reached (unknown is never a pass). Generated by"
        " `python scripts/docs/atari_setups.py`; nothing here is typed by hand.",
        "",
        "## What each setup's code calls for",
        "",
        "The verdict `saber check` must give on each rule, read from each library's code"
        " (the reason beside each verdict that is not a pass; `EXPECTED` in"
        " `scripts/docs/atari_setups.py`). The score rules are the recorded score's"
        " ([protocol](protocol.md#the-score-and-the-agents-reward)): a stack that clips"
        " the agent's rewards passes `raw_rewards` where it records the raw score"
        " (SB3's `Monitor`, CleanRL's `RecordEpisodeStatistics`)."
        " `tests/check/test_setups.py` asserts that `saber check` gives exactly these"
        " verdicts (`python -m pytest tests/check/test_setups.py -m 'not slow'` for the"
        " setups without extras, `-m sb3` for SB3's and CleanRL's, `-m envpool` for"
        " envpool's).",
        "",
        expected_table(),
        "",
        "## What `saber check` measured",
        "",
        f"saber {saber.__version__}; {versions}.",
        "",
        markdown_comparison(results),
        "",
    ]
    if missing:
        lines += [f"Not installed here, so not measured: {', '.join(missing)}.", ""]
    if "envpool" in dict(results):
        lines += [
            "envpool's emulator runs in C++ out of reach; `saber check` follows env 0 by the"
            ' RAM envpool reports in `info["ram"]` (`saber.check.probes.ram_followed`):'
            " the rollover cannot be provoked without writing into that emulator, and"
            " Breakout's rewards followed stay within [-1, 1], so those two stay unknown."
            f" Its own configuration says (read, not measured): {_envpool_config()}.",
            "",
        ]
    lines += ["## The setups", ""]
    for name, result in results:
        code = textwrap.dedent(inspect.getsource(SETUPS[name]))
        lines += [
            f"### {name}",
            "",
            f"{summary(result)}",
            "",
            "```python",
            code.rstrip(),
            "```",
            "",
        ]
        lines += ["| rule | evidence |", "|---|---|"]
        lines += [f"| `{r.rule}` | {r.evidence.replace('|', '/')} |" for r in result.rules]
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=PAGE)
    args = parser.parse_args()
    results, missing = [], []
    for name, factory in SETUPS.items():
        need = NEEDS.get(name)
        if need and _version(need) is None:
            missing.append(f"{name} (`pip install {need}`)")
            continue
        result = check(factory, target=name)
        print(summary(result), flush=True)
        results.append((name, result))
    args.out.write_text(page(results, missing), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
