"""The SABER environment core: a real ``gym.Env`` that owns its emulator (protocol section 3).

:class:`SaberAtariEnv` is ``env.unwrapped`` of every ``gymnasium.make("SABER/<Game>")``;
each rule on rewards and episode ends is a wrapper above it (docs/environments.md, "The
core and the wrappers, one per rule").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, SupportsFloat

import cv2
import gymnasium as gym
import numpy as np
from gymnasium.spaces import Box, Discrete

from saber.envs.emulator import (
    ALL_ACTIONS,
    FrameRepeater,
    SeedStream,
    new_ale,
    refuse_pickling,
    rom_path,
)
from saber.games import get_game
from saber.protocol.settings import FRAMES_PER_SECOND, NUM_ACTIONS, SaberSettings

RENDER_MODES = ("human", "rgb_array")


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


class SaberAtariEnv(gym.Env[np.ndarray, int]):
    """One game under SABER's emulation and observation settings, without the episode rules.

    Observations are ``uint8`` of shape (stack_size, screen_size, screen_size); the
    action space is ``Discrete(18)`` whatever ale-py calls legal for the game, and every
    action goes to the emulator as is (sticky actions are the emulator's, per frame).
    A step's reward is the sum of the raw rewards of its frames (points); ``terminated``
    is the game's own game over; the core never truncates (the rule wrappers do).
    ``info["episode_frame_number"]`` counts emulator frames since the reset (0 right after
    it: there are no no-op or FIRE starts). ``info`` has no ``lives``: SABER gives the
    agent no life signal (``life_signal=True``, not SABER, adds the ALE's count).

    Seeding: ``reset(seed=s)`` reloads the ROM with the first ALE seed of the stream
    derived from ``s`` (and seeds Gymnasium's ``np_random``, which SABER does not use).
    An unseeded reset after a game over keeps the emulator's random stream going, as
    ale-py does; after any other end (a truncation, or a reset in the middle of an
    episode) it reloads the ROM with the stream's next seed. The vector env follows the
    same rule, which is what makes the two identical.

    Per-episode seeds (what makes every episode of a training replayable): with
    ``seed_each_episode = True``, a reset without a seed draws a fresh seed from the seed
    stream and resets as ``reset(seed=...)`` with it would, so each episode is its seed
    and its actions alone, whatever came before. ``episode_seed`` is the seed of the
    current episode, or None when it continued the random stream or reloaded without one
    (``saber.training``'s recorders turn it on when they record replays).

    Rendering: ``render_mode="rgb_array"`` returns the emulator's colour screen (210 x 160
    x 3) after the last frame of the step; ``"human"`` shows it in ALE's own window.
    ``metadata["render_fps"]`` is 60 / frame skip, so one rendered frame per agent step
    plays back in real time.

    Example:
        >>> env = SaberAtariEnv("pong")
        >>> obs, info = env.reset(seed=0)
        >>> obs.shape, obs.dtype, info["episode_frame_number"]
        ((4, 84, 84), dtype('uint8'), 0)
        >>> env.step(0)[4]["episode_frame_number"]
        4

    Args:
        game: any spelling of a game (``"pong"``, ``"SABER/MsPacman"``).
        settings: the protocol's settings (default: SABER's); this class uses the
            emulation and observation ones, the rule wrappers the rest.
        render_mode: ``None``, ``"rgb_array"`` or ``"human"``.

    Raises:
        UnknownGameError: no ROM matches ``game``.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": list(RENDER_MODES), "render_fps": 15}

    def __init__(
        self,
        game: str,
        settings: SaberSettings | None = None,
        *,
        render_mode: str | None = None,
    ) -> None:
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(
                f"Expect `render_mode` to be one of {', '.join(RENDER_MODES)} or None, "
                f"actually: {render_mode!r}"
            )
        self.saber_settings = settings = SaberSettings() if settings is None else settings
        self.rom_id = get_game(game).ale_id
        self.render_mode = render_mode
        fps = FRAMES_PER_SECOND / settings.frame_skip
        self.metadata = {**self.metadata, "render_fps": int(fps) if fps.is_integer() else fps}

        self.ale = ale = new_ale(settings.repeat_action_probability)
        # No ALE cap: its cap would end the game (a game over); the FrameLimit wrapper
        # applies SABER's as a truncation.
        ale.setInt("max_num_frames_per_episode", 0)
        if render_mode == "human":
            ale.setBool("display_screen", True)
            ale.setBool("sound", True)
        rom = rom_path(self.rom_id)
        ale.loadROM(rom)
        self._repeater = FrameRepeater(ale, rom, settings.frame_skip)

        size = settings.screen_size
        self._stack = np.zeros((settings.stack_size, size, size), dtype=np.uint8)
        self._seeds = SeedStream()
        self._started = False
        self.seed_each_episode = False
        self.episode_seed: int | None = None
        self.action_space = Discrete(NUM_ACTIONS)
        self.observation_space = Box(0, 255, self._stack.shape, dtype=np.uint8)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode at the game's own start state (see the class doc on seeding)."""
        if seed is None and self.seed_each_episode:
            seed = self._seeds.next_ale_seed()  # in [0, 2**31): a valid seed of its own
        super().reset(seed=seed)  # Gymnasium's np_random, as its env checker expects
        if seed is not None:
            self._seeds = SeedStream(seed)
        self.episode_seed = seed
        continue_stream = seed is None and self._started and self._repeater.game_over
        frame = self._repeater.reset(None if continue_stream else self._seeds.next_ale_seed())
        self._started = True
        self._stack.fill(0)
        resize_bilinear(frame, self.saber_settings.screen_size, self._stack[-1])
        info: dict[str, Any] = {"episode_frame_number": 0}
        if self.saber_settings.life_signal:  # not SABER (SaberSettings.life_signal)
            info["lives"] = int(self.ale.lives())
        return self._stack.copy(), info

    def step(self, action: Any) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        """Play ``action`` for ``frame_skip`` frames; the reward is the sum of raw rewards."""
        repeater = self._repeater
        reward = repeater.step(check_action(action))
        stack = self._stack
        stack[:-1] = stack[1:]
        resize_bilinear(repeater.pooled, self.saber_settings.screen_size, stack[-1])
        info: dict[str, Any] = {"episode_frame_number": repeater.episode_frame}
        if self.saber_settings.life_signal:  # not SABER (SaberSettings.life_signal)
            info["lives"] = int(self.ale.lives())
        return stack.copy(), float(reward), repeater.game_over, False, info

    def watch_frames(self, callback: Callable[[Any], None] | None) -> None:
        """Call ``callback`` with the ALE interface after every emulator frame (None: stop).

        The observation holds every 4th frame (max-pooled); a film of what a player sees
        needs them all (``saber replay --video``, :mod:`saber.replay`).
        """
        self._repeater.frame_hook = callback

    def get_action_meanings(self) -> list[str]:
        """The names of the 18 actions, by index (``["NOOP", "FIRE", "UP", ...]``), as
        ale-py's ``AtariEnv`` gives them for its full action set (wrappers such as SB3's
        ``FireResetEnv`` look for ``"FIRE"`` there)."""
        return [action.name for action in ALL_ACTIONS]

    def render(self) -> np.ndarray | None:
        """The colour screen ``uint8`` (210, 160, 3) in ``"rgb_array"`` mode, else ``None``."""
        if self.render_mode == "rgb_array":
            return self.ale.getScreenRGB()
        return None

    def __getstate__(self) -> None:
        refuse_pickling(self)
