"""SABER observation preprocessing (protocol section 3) as one Gymnasium wrapper.

Action repeat with max-pooling of the last two frames, grayscale, bilinear resize to
84 x 84, and a zero-padded stack of the 4 most recent frames. It drives the emulator of
an ale-py ``AtariEnv`` directly (4 ``ale.act`` per step, no Python ``env.step`` per
frame), which is what makes it fast.
"""

from __future__ import annotations

from typing import Any, SupportsFloat

import cv2
import gymnasium as gym
import numpy as np
from ale_py.env import AtariEnv
from gymnasium.spaces import Box, Discrete
from gymnasium.utils import seeding

from saber.envs.emulator import FrameRepeater, SeedStream, refuse_pickling, rom_path
from saber.envs.protocol import NUM_ACTIONS

__all__ = ["SaberPreprocessing", "check_action", "resize_bilinear"]


def resize_bilinear(frame: np.ndarray, size: int, out: np.ndarray) -> None:
    """Resize ``frame`` ``uint8`` (H, W) into ``out`` ``uint8`` (size, size), bilinear, in place.

    ``out`` must be C-contiguous (a slot of a frame stack is), or OpenCV writes elsewhere.
    """
    cv2.resize(frame, (size, size), dst=out, interpolation=cv2.INTER_LINEAR)


def check_action(action: Any) -> int:
    """The action as a Python int in [0, 18), or a ``ValueError`` saying what was expected."""
    if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
        if 0 <= action < NUM_ACTIONS:
            return int(action)
    elif isinstance(action, np.ndarray) and action.size == 1 and action.dtype.kind in "iu":
        return check_action(action.reshape(()).item())
    raise ValueError(
        f"Expect an integer action in [0, {NUM_ACTIONS - 1}] (SABER uses all {NUM_ACTIONS} "
        f"joystick actions for every game), actually: {action!r} ({type(action).__name__})"
    )


class SaberPreprocessing(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """SABER preprocessing over an ale-py ``AtariEnv`` created with ``frameskip=1``.

    Observations are ``uint8`` of shape (stack_size, screen_size, screen_size); the
    action space is ``Discrete(18)`` whatever ale-py calls legal for the game, and every
    action goes to the emulator as is. ``info["episode_frame_number"]`` counts emulator
    frames since the reset (0 right after it: there are no no-op or FIRE starts).

    Seeding: ``reset(seed=s)`` reloads the ROM with the first ALE seed of the stream
    derived from ``s``. An unseeded reset after a game over keeps the emulator's random
    stream going, as ale-py does; after any other end (a truncation, or a reset in the
    middle of an episode) it reloads the ROM with the stream's next seed. The vector env
    follows the same rule, which is what makes the two identical.

    Example:
        >>> import gymnasium as gym, ale_py
        >>> gym.register_envs(ale_py)
        >>> atari = gym.make("ALE/Pong-v5", frameskip=1, max_num_frames_per_episode=0)
        >>> env = SaberPreprocessing(atari.unwrapped)
        >>> obs, info = env.reset(seed=0)
        >>> obs.shape, obs.dtype, info["episode_frame_number"]
        ((4, 84, 84), dtype('uint8'), 0)

    Args:
        env: an ale-py ``AtariEnv`` (or a wrapper of one) with ``frameskip=1`` and
            ``max_num_frames_per_episode=0`` (:class:`FrameLimit` applies SABER's cap).
        frame_skip: emulator frames per agent step.
        screen_size: side of the resized square frame, in pixels.
        stack_size: number of frames stacked in an observation.
    """

    def __init__(
        self, env: gym.Env, frame_skip: int = 4, screen_size: int = 84, stack_size: int = 4
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self, frame_skip=frame_skip, screen_size=screen_size, stack_size=stack_size
        )
        gym.Wrapper.__init__(self, env)
        atari = env.unwrapped
        if not isinstance(atari, AtariEnv):
            raise TypeError(f"Expect an ale-py AtariEnv, actually: {type(atari).__name__}")
        if atari._frameskip != 1:
            raise ValueError(
                f"Expect the AtariEnv to have `frameskip=1` (this wrapper repeats actions), "
                f"actually: {atari._frameskip}"
            )
        ale_frame_cap = atari.ale.getInt("max_num_frames_per_episode")
        if ale_frame_cap != 0:
            # ale-py's own cap ends the game: it would read as a game over, not a truncation.
            raise ValueError(
                f"Expect the AtariEnv to have `max_num_frames_per_episode=0` (FrameLimit "
                f"applies SABER's cap as a truncation), actually: {ale_frame_cap}"
            )
        for name, value in (
            ("frame_skip", frame_skip),
            ("screen_size", screen_size),
            ("stack_size", stack_size),
        ):
            if not isinstance(value, int) or value <= 0:
                raise ValueError(f"Expect `{name}` to be positive, actually: {value!r}")
        self.screen_size = screen_size
        self._repeater = FrameRepeater(atari.ale, rom_path(atari._game), frame_skip)
        self._stack = np.zeros((stack_size, screen_size, screen_size), dtype=np.uint8)
        self._seeds = SeedStream()
        self._started = False
        self.action_space = Discrete(NUM_ACTIONS)
        self.observation_space = Box(0, 255, self._stack.shape, dtype=np.uint8)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode at the game's own start state (see the class doc on seeding)."""
        if seed is not None:
            self._seeds = SeedStream(seed)
            # Gymnasium's own generator (SABER does not use it: frameskip is fixed), seeded
            # as Gymnasium's env checker expects of every env.
            atari = self.env.unwrapped
            atari._np_random, atari._np_random_seed = seeding.np_random(seed)
        continue_stream = seed is None and self._started and self._repeater.game_over
        frame = self._repeater.reset(None if continue_stream else self._seeds.next_ale_seed())
        self._started = True
        self._stack.fill(0)
        resize_bilinear(frame, self.screen_size, self._stack[-1])
        return self._stack.copy(), {"episode_frame_number": 0}

    def __getstate__(self) -> None:
        refuse_pickling(self)

    def step(self, action: Any) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        """Play ``action`` for ``frame_skip`` frames; the reward is the sum of raw rewards."""
        repeater = self._repeater
        reward = repeater.step(check_action(action))
        stack = self._stack
        stack[:-1] = stack[1:]
        resize_bilinear(repeater.pooled, self.screen_size, stack[-1])
        info = {"episode_frame_number": repeater.episode_frame}
        return stack.copy(), float(reward), repeater.game_over, False, info
