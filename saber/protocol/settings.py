"""Every constant of the SABER protocol, in one validated, frozen record.

All durations are emulator frames at 60 frames per second, never agent steps: with the
action repeat of 4, 18,000 frames are 4,500 agent steps. See ``protocol.md`` section 1.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Literal

from saber.errors import ProtocolError, UnknownSettingError

#: Emulator frames per second of play.
FRAMES_PER_SECOND = 60
#: The full joystick action set, for every game.
NUM_ACTIONS = 18
#: 100 hours at 60 frames per second: an episode that reaches it is infinite gameplay.
SABER_CAP_FRAMES = 21_600_000
#: Evaluation episodes per game, each with its own seed (protocol.md section 4).
EVALUATION_EPISODES = 100

ROLLOVER_MODES = ("correct", "ignore", "off")
RolloverMode = Literal["correct", "ignore", "off"]


@dataclass(frozen=True)
class SaberSettings:
    """The environment settings; the defaults are the SABER protocol.

    Attributes:
        repeat_action_probability: sticky-action probability, applied by the emulator on
            every frame (so inside the action repeat too).
        frame_skip: emulator frames per agent step (action repeat).
        max_episode_frames: the 100-hour cap, in frames (100 h x 3600 s x 60 = 21,600,000);
            reaching it truncates the episode. ``None`` removes the cap (not SABER).
        max_frames_without_reward: the stuck timeout, in frames (5 min = 18,000): the episode
            is truncated after this many frames without any non-zero reward. ``None``
            disables it (not SABER).
        rollover_threshold: a single step reward at or below this (points) is a rollover
            of the score counter, not a penalty.
        rollover_mode: ``"correct"`` restores the true gain ``r + 10**ceil(log10(-r))``,
            ``"ignore"`` replaces the reward by 0, ``"off"`` leaves it (not SABER).
        screen_size: side of the square, bilinear-resized grayscale frame, in pixels.
        stack_size: number of most recent frames stacked in an observation.
        clip_rewards: clip the rewards the agent sees to [-1, 1]. A training choice: scores
            in ``info["saber"]`` stay raw, so it does not affect compliance.
        life_signal: give the ALE's lives count as ``info["lives"]`` after reset and every
            step (not SABER: SABER gives no life signal). For measuring what the life-loss
            signal is worth to a learner; no episode ends at a life loss.
    """

    repeat_action_probability: float = 0.25
    frame_skip: int = 4
    max_episode_frames: int | None = SABER_CAP_FRAMES
    max_frames_without_reward: int | None = 18_000  # 5 minutes at 60 fps
    rollover_threshold: float = -100_000.0
    rollover_mode: RolloverMode = "correct"
    screen_size: int = 84
    stack_size: int = 4
    clip_rewards: bool = False
    life_signal: bool = False

    def __post_init__(self) -> None:
        p = self.repeat_action_probability
        if not isinstance(p, (int, float)) or isinstance(p, bool) or not 0.0 <= p <= 1.0:
            raise ProtocolError(f"Expect `repeat_action_probability` in [0, 1], actually: {p!r}")
        for name in ("frame_skip", "screen_size", "stack_size"):
            _check_positive_int(name, getattr(self, name))
        for name in ("max_episode_frames", "max_frames_without_reward"):
            if getattr(self, name) is not None:
                _check_positive_int(name, getattr(self, name))
        threshold = self.rollover_threshold
        if (
            not isinstance(threshold, (int, float))
            or not math.isfinite(threshold)
            or threshold >= 0
        ):
            raise ProtocolError(
                f"Expect `rollover_threshold` to be a finite negative number of points, "
                f"actually: {threshold!r}"
            )
        if self.rollover_mode not in ROLLOVER_MODES:
            raise ProtocolError(
                f"Expect `rollover_mode` to be one of {', '.join(ROLLOVER_MODES)}, "
                f"actually: {self.rollover_mode!r}"
            )
        if not isinstance(self.clip_rewards, bool):
            raise ProtocolError(
                f"Expect `clip_rewards` to be a bool, actually: {self.clip_rewards!r}"
            )
        if not isinstance(self.life_signal, bool):
            raise ProtocolError(
                f"Expect `life_signal` to be a bool, actually: {self.life_signal!r}"
            )

    @classmethod
    def from_overrides(cls, **overrides: Any) -> SaberSettings:
        """Settings with some fields changed; unknown names are a clear error."""
        known = {field.name for field in dataclasses.fields(cls)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise UnknownSettingError(
                f"Unknown SABER setting(s): {', '.join(unknown)}. Known settings: "
                f"{', '.join(sorted(known))} (unexpected keyword argument {unknown[0]!r})"
            )
        return cls(**overrides)

    def deviations(self) -> dict[str, tuple[Any, Any]]:
        """Settings that break the protocol, as ``{name: (saber_value, actual_value)}``.

        Reward clipping is not a deviation: it changes what the agent sees, never the score
        recorded (``info["saber"]`` stays raw), which is what the protocol asks of the
        score and what ``saber check`` checks (docs/protocol.md, "The score and the
        agent's reward").

        >>> SaberSettings(clip_rewards=True).deviations()
        {}
        >>> SaberSettings(max_frames_without_reward=None).deviations()
        {'max_frames_without_reward': (18000, None)}
        """
        saber = SaberSettings()
        return {
            field.name: (getattr(saber, field.name), getattr(self, field.name))
            for field in dataclasses.fields(self)
            if field.name != "clip_rewards"
            and getattr(self, field.name) != getattr(saber, field.name)
        }

    @property
    def is_compliant(self) -> bool:
        """True when every setting that affects scores is the protocol's."""
        return not self.deviations()

    def as_dict(self) -> dict[str, Any]:
        """The settings as a JSON-ready dict (for provenance records).

        ``life_signal``, added after 0.5, is written only when set, so that the settings of
        every run without it (run.json, replay headers, shipped provenance) read as they did
        and runs of earlier versions resume; reading a dict without it gives ``False``.

        >>> "life_signal" in SaberSettings().as_dict()
        False
        >>> SaberSettings(life_signal=True).as_dict()["life_signal"]
        True
        """
        settings = dataclasses.asdict(self)
        if not self.life_signal:
            del settings["life_signal"]
        return settings


def _check_positive_int(name: str, value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ProtocolError(f"Expect `{name}` to be a positive integer, actually: {value!r}")
