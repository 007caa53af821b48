"""The frame cap and the rollover of an env whose emulators cannot be reached, provoked
below its rules.

The engine's output is passed through a tamper at the env's engine seam (saber's JAX envs,
a ``SaberVectorEnv``); docs/check.md gives both probes and what is inferred.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from saber.check.probes.base import SETTINGS, unknown, verdict
from saber.check.probes.followed import game_text
from saber.check.result import RuleResult
from saber.envs.rules import END_REASONS
from saber.protocol.episode import EpisodeEnd

WRAP = 1_000_000  # a 6-digit score counter: the ALE reports ``gain - WRAP`` as it wraps
REWARDED_STEPS = 3  # positive rewards wrapped before the verdict
MAX_STEPS = 1_500  # steps played, at most, to see them
NO_SEAM = (
    "the env has no engine seam to tamper with (saber.jax's SaberJaxEnv._engine_step, "
    "a SaberVectorEnv's engine step)"
)


def probe_frame_cap_tampered(subject: Any) -> list[RuleResult]:
    """The ``frame_cap`` rule (docs/check.md)."""
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
        known = isinstance(end, (int, np.integer)) and end >= 0  # saber.jax: an end's code
        ends.append(str(END_REASONS[int(end)]) if known else end if isinstance(end, str) else "")
        return truncated and not terminated

    before, at = truncates(cap - 1), truncates(cap)
    if before is None or at is None:
        return [unknown("frame_cap", NO_SEAM)]
    evidence = (
        f"{game_text(subject)}, the first NOOP step after a seeded reset "
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
    """The ``rollover`` rule (docs/check.md)."""
    rng = np.random.default_rng(0)
    actions = rng.integers(int(subject.action_space.n), size=MAX_STEPS).tolist()
    played = _play(subject, actions, None)
    if played is None:
        return [unknown("rollover", NO_SEAM)]
    plain, plain_score = played
    if not any(reward > 0 for reward in plain):
        return [unknown("rollover", f"{subject.rom_id}: no positive reward to wrap")]
    wrapped_steps = [i for i, reward in enumerate(plain) if reward > 0]
    played = _play(subject, actions[: len(plain)], wrapped_steps)
    if played is None:
        return [unknown("rollover", NO_SEAM)]
    tampered, tampered_score = played
    if len(tampered) != len(plain):  # the two plays of one seeded episode drifted apart
        return [
            unknown(
                "rollover",
                f"{game_text(subject)}: the seeded episode played {len(plain)} steps plainly "
                f"and {len(tampered)} with its rewards wrapped; the two plays cannot be compared",
            )
        ]
    differ = [(i, plain[i], tampered[i]) for i in range(len(plain)) if plain[i] != tampered[i]]
    evidence = (
        f"{game_text(subject)}, one seeded episode of {len(plain)} random "
        f"steps played twice, each ended by one step with the engine's frame counter at "
        f"the cap and no reward; the second time each positive engine reward r turned into "
        f"r - {WRAP:,} (what the ALE reports when the score wraps past {WRAP - 1:,}) at "
        f"steps {wrapped_steps}; scores recorded (info['saber']['score']): "
        f"{_text(plain_score)} plain, {_text(tampered_score)} wrapped; {len(differ)} rewards "
        "reported to the agent differ (what the agent sees may be clipped); inferred, not "
        "measured: that the ALE reports a wrap so (its own reward, measured by the "
        "Gymnasium probe)"
    )
    if plain_score is None or tampered_score is None:
        return [unknown("rollover", evidence + ": no record of the score could be read")]
    if tampered_score != plain_score:
        measured = (
            f"recorded {_text(tampered_score)} with {len(wrapped_steps)} wrapped rewards, "
            f"{_text(plain_score)} without"
        )
        return [verdict("rollover", False, measured, evidence)]
    measured = f"{len(wrapped_steps)} wrapped rewards recorded as their gains"
    return [verdict("rollover", True, measured, evidence)]


def _text(score: float | None) -> str:
    """A recorded score as text: whole points in full (``-1,999,960``), or "none"."""
    if score is None:
        return "none"
    return f"{score:+,.0f}" if float(score).is_integer() else f"{score:+,g}"


def _play(
    subject: Any, actions: list[int], wrap_at: list[int] | None
) -> tuple[list[float], float | None] | None:
    """The env's rewards over ``actions`` from ``reset(seed=0)``, the engine's reward
    wrapped at the steps ``wrap_at`` (None: untouched), until ``REWARDED_STEPS``
    positive rewards or the episode's end; then the score the env records, the episode
    ended where it had not by one step at the cap (None: no record). None: no seam to
    tamper with."""
    cap = SETTINGS.max_episode_frames
    assert cap is not None
    subject.reset(seed=0)
    rewards: list[float] = []
    info: dict[str, Any] = {}
    ended = False

    def wrap(handle: Any, frames: Any, engine_rewards: Any, game_over: Any, episode: Any) -> tuple:
        return handle, frames, engine_rewards - WRAP * (engine_rewards > 0), game_over, episode

    def end(handle: Any, frames: Any, engine_rewards: Any, game_over: Any, episode: Any) -> tuple:
        return handle, frames, engine_rewards * 0, game_over, episode - episode + cap

    for step, action in enumerate(actions):
        if wrap_at is not None and step in wrap_at:
            with subject.tampered(wrap) as reached:
                _, reward, terminated, truncated, info = subject.step(action)
            if not reached:
                return None
        else:
            _, reward, terminated, truncated, info = subject.step(action)
        rewards.append(reward)
        ended = terminated or truncated
        if sum(r > 0 for r in rewards) >= REWARDED_STEPS or ended:
            break
    if not ended:
        with subject.tampered(end) as reached:
            *_, info = subject.step(0)
        if not reached:
            return None
    record = info.get("saber")
    return rewards, float(record["score"]) if isinstance(record, dict) else None
