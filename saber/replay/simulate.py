"""Re-simulating a recorded episode on a fresh SABER env, so every rule is applied by the code
that applied it in play: saber's one replay mechanism (docs/verify.md).

>>> from saber.protocol.replay import ReplayHeader
>>> header = ReplayHeader("pong", 0, 7, "noop", None, SaberSettings().as_dict(), "", {}, 3)
>>> steps = list(Resimulation(Replay(header, bytes([0, 0, 0]))))
>>> [step.action for step in steps], steps[-1].observation.shape
([0, 0, 0], (4, 84, 84))
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from saber.envs.factory import make_env
from saber.errors import ReplayError, SaberError
from saber.protocol.replay import Replay
from saber.protocol.settings import SaberSettings


def replay_settings(replay: Replay) -> SaberSettings:
    """The settings a replay was played with.

    Raises:
        ReplayError: settings this version of saber does not know or accept.
    """
    try:
        return SaberSettings.from_overrides(**replay.header.settings)
    except (SaberError, TypeError, ValueError) as error:
        raise ReplayError(
            f"{replay.header.game} episode {replay.header.episode}: its settings cannot be "
            f"played by this saber ({error})"
        ) from None


@dataclass(frozen=True)
class Transition:
    """One agent step of a re-simulated episode.

    Attributes:
        observation: what the agent saw before acting, ``uint8`` (4, 84, 84).
        action: the action it took (0..17).
        reward: the step's reward (raw points, rollovers corrected as the settings say).
        next_observation: what it saw after.
        terminated: the game ended (game over).
        truncated: a SABER limit ended it (the stuck timeout, the cap).
        info: the env's info (``episode_frame_number``; ``saber``, the episode's record,
            at the last step).
    """

    observation: np.ndarray
    action: int
    reward: float
    next_observation: np.ndarray
    terminated: bool
    truncated: bool
    info: dict[str, Any] = field(repr=False)


class Resimulation:
    """Iterate a recorded episode by playing its actions again from its seed.

    Iterating yields one :class:`Transition` per action, until the episode ends or the
    actions run out; afterwards :attr:`record` is the episode's record as the env made it
    (``info["saber"]``: score, score_5min, score_30min, frames, steps, end, ...), or None
    if the actions ran out first, and :attr:`unused` counts actions left when it ended.

    Args:
        replay: the decoded replay (:func:`saber.protocol.replay.read_replay`).
        on_frame: called with the ALE interface after every emulator frame (to film all
            of them: :func:`saber.training.video.film_replay`), or None.
        render_mode: the env's render mode (``"rgb_array"`` for one colour frame per step
            through ``env.render()``), or None.

    Raises (when iterated):
        ReplayError: the replay's settings cannot be played here.
        UnknownGameError: this ale-py has no such game.
    """

    def __init__(
        self,
        replay: Replay,
        on_frame: Callable[[Any], None] | None = None,
        render_mode: str | None = None,
    ) -> None:
        self.replay = replay
        self.on_frame = on_frame
        self.render_mode = render_mode
        self.record: dict[str, Any] | None = None
        self.steps = 0
        self.unused = 0
        self.env: Any = None

    def __iter__(self) -> Iterator[Transition]:
        header = self.replay.header
        settings = replay_settings(self.replay).as_dict()
        env = make_env(header.game, render_mode=self.render_mode, **settings)
        self.env = env
        try:
            if self.on_frame is not None:
                env.unwrapped.watch_frames(self.on_frame)
            observation, _ = env.reset(seed=header.seed)
            actions = self.replay.actions
            for index, action in enumerate(actions):
                following, reward, terminated, truncated, info = env.step(action)
                self.steps = index + 1
                yield Transition(
                    observation, action, float(reward), following, bool(terminated),
                    bool(truncated), info,
                )  # fmt: skip
                observation = following
                if terminated or truncated:
                    self.record = dict(info["saber"])
                    self.unused = len(actions) - self.steps
                    return
        finally:
            env.close()
            self.env = None

    def run(self) -> dict[str, Any] | None:
        """Play the whole episode without keeping anything; returns :attr:`record`."""
        for _ in self:
            pass
        return self.record
