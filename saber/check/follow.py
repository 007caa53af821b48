"""A twin emulator that *follows* an env whose emulators cannot be reached (saber's JAX envs).

It replays every branch a step could have played and keeps those whose SABER frame and
reward equal the env's; docs/check.md describes the follower.
"""

from __future__ import annotations

from dataclasses import dataclass

import ale_py
import numpy as np
from ale_py import roms

from saber.check.emulator import ACTIONS
from saber.check.emulator import twin as make_twin
from saber.check.probes.preprocessing import saber_frame


@dataclass(frozen=True)
class Branch:
    """One way a step could have been played that matches the env's output.

    Attributes:
        action: the emulator action the step's new frames played.
        repeats: frames (0..F) that still played the previous action (sticky draws).
        reward: the emulator's reward summed over the step's frames (points).
    """

    action: int
    repeats: int
    reward: float


class Follower:
    """Follows row 0 of an env from its reset, branch by branch.

    Args:
        rom_id: the env's game.
        ale_seed: the ALE seed of row 0's episode.
        sticky: the sticky probability of the ALE whose reset is reproduced (the reset of
            some games draws on it).
    """

    def __init__(self, rom_id: str, ale_seed: int, sticky: float) -> None:
        start = ale_py.ALEInterface()
        start.setLoggerMode(ale_py.LoggerMode.Error)
        start.setInt("random_seed", ale_seed)
        start.setFloat("repeat_action_probability", sticky)
        start.loadROM(roms.get_rom_path(rom_id))
        start.reset_game()
        self.start_frames = int(start.getEpisodeFrameNumber())  # what the ALE's reset played
        self.start_screen = start.getScreenGrayscale()
        self.twin = make_twin(rom_id).ale  # only ever used from restored states
        # (state, action played last, tag): the tag is the emulator action a branch took
        # for the index under test, so that later steps can tell tied branches apart.
        self.states: list[tuple[ale_py.ALEState, int, int | None]] = [(start.cloneState(), 0, None)]

    def untag(self) -> None:
        """Forget the tags (a new index is under test), merging the states they alone
        told apart (same RAM, same action played last)."""
        merged: dict[bytes, tuple[ale_py.ALEState, int, int | None]] = {}
        for state, previous, _ in self.states:
            self.twin.restoreState(state)
            merged.setdefault(
                self.twin.getRAM().tobytes() + bytes([previous]), (state, previous, None)
            )
        self.states = list(merged.values())

    def tags(self) -> set[int | None]:
        """The tags of the states still held."""
        return {tag for *_, tag in self.states}

    def step(
        self, candidates: list[int] | None, frames: int, newest: np.ndarray, reward: float
    ) -> list[Branch]:
        """The branches of one step whose frame equals the env's ``newest`` frame.

        Args:
            candidates: emulator actions the step's new frames may have played; None:
                each state's tag (the action a state's branch took for this index before).
            frames: emulator frames per step (F).
            newest: the env's newest processed frame, ``uint8`` (size, size).
            reward: the reward the env reported.

        Returns:
            The matching branches, each with its emulator reward (empty: the env did
            something no branch does; the follower then holds no state and every later
            step returns nothing). The states kept are those whose reward is ``reward``.
        """
        twin = self.twin
        size = newest.shape[-1]
        found: list[Branch] = []
        kept: dict[bool, dict[bytes, tuple[ale_py.ALEState, int, int | None]]] = {
            True: {},
            False: {},
        }
        for state, previous, tag in self.states:
            actions = candidates if candidates is not None else [previous if tag is None else tag]
            for action in actions:
                # Holding the action played last, every repeat count plays the same frames.
                counts = [0] if action == previous else range(frames + 1)
                for repeats in counts:
                    twin.restoreState(state)
                    shots = []
                    points = 0.0
                    for frame in range(frames):
                        points += twin.act(ACTIONS[previous if frame < repeats else action])
                        shots.append((twin.getScreenGrayscale(), None))
                    if not np.array_equal(saber_frame(shots, size), newest):
                        continue
                    played = previous if repeats == frames else action
                    same = range(frames + 1) if action == previous else [repeats]
                    found += [Branch(action, j, points) for j in same]
                    new_tag = action if candidates is not None else tag
                    key = twin.getRAM().tobytes() + bytes(
                        [played, 255 if new_tag is None else new_tag]
                    )
                    kept[points == reward].setdefault(key, (twin.cloneState(), played, new_tag))
        # The reward prunes too, unless no branch gives it (the raw-reward rule reports that).
        self.states = list((kept[True] or kept[False]).values())
        return found

    def lives(self) -> set[int]:
        """The lives counter of every state still held."""
        lives = set()
        for state, *_ in self.states:
            self.twin.restoreState(state)
            lives.add(int(self.twin.lives()))
        return lives
