"""The frame cap and the rollover of an env whose emulators cannot be reached, provoked
below its rules.

saber's JAX envs (:class:`saber.check.subject.FunctionalSubject`) run their emulators in
ale-py's C++ engine behind XLA: no RAM to write a score into, no frame counter to move.
What the env's rules read, though, all comes through one seam, the engine's step
(``SaberJaxEnv._engine_step``). The probes pass the engine's output through a tamper
there, the JAX analogue of what the Gymnasium probes write into the emulator:

- ``frame_cap``: one step after a seeded reset, with the engine's episode frame counter
  set to a chosen frame and one point of reward (so that the stuck timeout cannot fire,
  as the Gymnasium probe writes a point into Breakout's score). Trials at SABER's cap and
  one frame before it; where they do not give exactly SABER's cap, bisection finds the
  env's own (about 27 trials, each a reset and a step).
- ``rollover``: the same seeded episode played twice with the same actions, the second
  time with each positive engine reward ``r`` turned into ``r - 1,000,000``, which is
  what the ALE reports when the gain carries the score past 999,999 (a real rollover,
  which the Gymnasium probe makes the game's own code produce). The env must report the
  same rewards both times.

Inferred, not measured: that the engine's counter and rewards take these values in play
(they are the ALE's own, measured on real ROMs by the Gymnasium probes).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from saber.check.probes.base import SETTINGS, unknown, verdict
from saber.check.result import RuleResult
from saber.envs.rules import END_REASONS
from saber.protocol.episode import EpisodeEnd

__all__ = ["probe_frame_cap_tampered", "probe_rollover_tampered"]

WRAP = 1_000_000  # a 6-digit score counter: the ALE reports ``gain - WRAP`` as it wraps
REWARDED_STEPS = 3  # positive rewards wrapped before the verdict
MAX_STEPS = 1_500  # steps played, at most, to see them
NO_SEAM = "the env has no engine seam to tamper with (saber.jax's SaberJaxEnv._engine_step)"


def probe_frame_cap_tampered(subject: Any) -> list[RuleResult]:
    """The ``frame_cap`` rule (see the module doc)."""
    cap = SETTINGS.max_episode_frames
    assert cap is not None
    ends: list[str] = []  # per trial: the record's end reason ("" where it has none)

    def truncates(frame: int) -> bool | None:
        """One trial: the first step after a seeded reset, its frame counter at ``frame``
        and one point scored; truncated? (None: no seam)."""
        subject.reset(seed=0)

        def jump(handle: Any, frames: Any, rewards: Any, game_over: Any, episode: Any) -> tuple:
            return handle, frames, rewards + 1, game_over, episode - episode + frame

        with subject.tampered(jump) as reached:
            _, _, terminated, truncated, info = subject.step(0)
        if not reached:
            return None
        end = info.get("saber", {}).get("end")
        known = isinstance(end, (int, np.integer)) and end >= 0
        ends.append(str(END_REASONS[int(end)]) if known else "")
        return truncated and not terminated

    before, at = truncates(cap - 1), truncates(cap)
    if before is None or at is None:
        return [unknown("frame_cap", NO_SEAM)]
    evidence = (
        f"{subject.rom_id} (the env's own game), the first NOOP step after a seeded reset "
        "with the engine's episode frame counter set to a chosen frame and one point of "
        "reward (saber.check.probes.tampered); inferred, not measured: that play reaches "
        "that counter (the ALE's own)"
    )
    if not before and at:
        end = ends[-1]
        measured = f"truncated at {cap:,} frames" + (f" (end: {end})" if end else "")
        return [
            verdict(
                "frame_cap",
                end in ("", EpisodeEnd.TIME_CAP),
                measured,
                f"{evidence}; not truncated at {cap - 1:,}",
            )
        ]
    if not at:
        return [verdict("frame_cap", False, f"none at {cap:,} frames", evidence)]
    low, high = 0, cap - 1  # `low` does not truncate (checked next); `high` does
    if truncates(low):
        return [verdict("frame_cap", False, "truncated at frame 0", evidence)]
    while high - low > 1:
        middle = (low + high) // 2
        if truncates(middle):
            high = middle
        else:
            low = middle
    evidence += f"; {len(ends)} trials, bisection to one frame"
    return [verdict("frame_cap", False, f"truncated at {high:,} frames", evidence)]


def probe_rollover_tampered(subject: Any) -> list[RuleResult]:
    """The ``rollover`` rule (see the module doc)."""
    rng = np.random.default_rng(0)
    actions = rng.integers(int(subject.action_space.n), size=MAX_STEPS).tolist()
    plain = _play(subject, actions, None)
    assert plain is not None  # None only where a tamper did not reach the engine
    if not any(reward > 0 for reward in plain):
        return [unknown("rollover", f"{subject.rom_id}: no positive reward to wrap")]
    wrapped_steps = [i for i, reward in enumerate(plain) if reward > 0]
    tampered = _play(subject, actions[: len(plain)], wrapped_steps)
    if tampered is None:
        return [unknown("rollover", NO_SEAM)]
    differ = [(i, plain[i], tampered[i]) for i in range(len(plain)) if plain[i] != tampered[i]]
    evidence = (
        f"{subject.rom_id} (the env's own game), one seeded episode of {len(plain)} random "
        f"steps played twice; the second time each positive engine reward r turned into "
        f"r - {WRAP:,} (what the ALE reports when the score wraps past {WRAP - 1:,}) at "
        f"steps {wrapped_steps}; {len(differ)} rewards differ; inferred, not measured: that "
        "the ALE reports a wrap so (its own reward, measured by the Gymnasium probe)"
    )
    if differ:
        step, expected, got = differ[0]
        measured = f"{got:+,g} reported for a wrapped {expected:+,g} (step {step})"
        return [verdict("rollover", False, measured, evidence)]
    measured = f"{len(wrapped_steps)} wrapped rewards reported as their gains"
    return [verdict("rollover", True, measured, evidence)]


def _play(subject: Any, actions: list[int], wrap_at: list[int] | None) -> list[float] | None:
    """The env's rewards over ``actions`` from ``reset(seed=0)``, the engine's reward
    wrapped at the steps ``wrap_at`` (None: untouched); until ``REWARDED_STEPS``
    positive rewards or the episode's end. None: no seam to tamper with."""
    subject.reset(seed=0)
    rewards: list[float] = []

    def wrap(handle: Any, frames: Any, engine_rewards: Any, game_over: Any, episode: Any) -> tuple:
        return handle, frames, engine_rewards - WRAP * (engine_rewards > 0), game_over, episode

    for step, action in enumerate(actions):
        if wrap_at is not None and step in wrap_at:
            with subject.tampered(wrap) as reached:
                _, reward, terminated, truncated, _ = subject.step(action)
            if not reached:
                return None
        else:
            _, reward, terminated, truncated, _ = subject.step(action)
        rewards.append(reward)
        if sum(r > 0 for r in rewards) >= REWARDED_STEPS or terminated or truncated:
            break
    return rewards
