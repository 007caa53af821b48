"""The twin's shared-prefix replays find exactly the matches of replaying each pair, and
the sticky probe's stop comes at a look, once the interval is narrow enough."""

from __future__ import annotations

from collections import Counter

import ale_py
import numpy as np
from ale_py import roms

from saber.check.emulator import ACTIONS, twin
from saber.check.probes.actions import (
    FIRST_LOOK,
    LOOK_EVERY,
    STEPS,
    _action_verdict,
    contrast,
    settled,
)
from saber.check.result import Status


def test_sticky_matches_equal_replaying_every_pair() -> None:
    """A sticky Boxing emulator steps F frames at a time; for each step, every (action, j)
    whose replay ends in its RAM, found pair by pair, against the shared-prefix search."""
    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    ale.setFloat("repeat_action_probability", 0.25)
    ale.setInt("random_seed", 3)
    ale.loadROM(roms.get_rom_path("boxing"))
    ale.reset_game()
    boxing = twin("boxing")
    rng = np.random.default_rng(0)
    previous, compared, matched, several = 0, 0, 0, 0
    for frames in (4, 7):
        for step in range(40):
            state = ale.cloneState()
            action = int(rng.integers(18))
            for _ in range(frames):
                ale.act(ACTIONS[action])
            ram = ale.getRAM()
            candidates = list(range(18)) if step % 4 == 0 else [action, previous]
            by_pair = [
                (a, j)
                for a in candidates
                for j in range(frames + 1)
                if np.array_equal(boxing.replay(state, [previous] * j + [a] * (frames - j)), ram)
            ]
            shared = boxing.sticky_matches(state, previous, candidates, frames, ram)
            assert sorted(shared) == sorted(by_pair), (frames, step)
            compared += 1
            matched += bool(by_pair)
            several += len(by_pair) > 1
            # The action the emulator holds now, where the matches agree on it.
            held = {a if j < frames else previous for a, j in by_pair}
            previous = held.pop() if len(held) == 1 else previous
    # Steps that matched, some with several pairs (a repeat count the RAM cannot tell).
    assert compared == 80 and matched > 40 and several > 0, (matched, several)


def test_the_sticky_probe_stops_at_a_look_once_the_interval_is_narrow() -> None:
    exact = {j: tuple(i == j for i in range(5)) for j in range(5)}
    never = Counter({exact[0]: FIRST_LOOK})  # no repeat in 200 steps: p = 0, narrow
    assert settled(never)
    assert not settled(Counter({exact[0]: FIRST_LOOK - 1}))  # before the first look
    assert not settled(Counter({exact[0]: FIRST_LOOK + LOOK_EVERY // 2}))  # between looks
    # p about 0.25 over 200 steps: 99% interval about 0.14 wide, wider than 0.12: on.
    quarter = Counter({exact[0]: 150, exact[1]: 38, exact[2]: 12})
    assert not settled(quarter)
    assert settled(Counter({exact[0]: 525, exact[1]: 131, exact[2]: 44}))  # 700 = STEPS
    assert STEPS == 700


def test_the_sticky_steps_pick_the_action_whose_joystick_differs_most() -> None:
    """Known answers: after RIGHT the left diagonals (squared distance 5), after UPLEFT
    the opposite DOWNRIGHT (8), and of two equal moves the one that does not punch."""
    names = [a.name for a in ACTIONS]

    def most_telling(held: str, allowed: list[str]) -> list[str]:
        keys = {name: contrast(names.index(held), names.index(name)) for name in allowed}
        return sorted(name for name, key in keys.items() if key == max(keys.values()))

    assert most_telling("RIGHT", names) == ["DOWNLEFT", "UPLEFT"]
    assert most_telling("UPLEFT", names) == ["DOWNRIGHT"]
    # Pong's 6 actions, as a stack maps them (NOOP FIRE RIGHT LEFT RIGHTFIRE LEFTFIRE).
    pong = ["NOOP", "FIRE", "RIGHT", "LEFT", "RIGHTFIRE", "LEFTFIRE"]
    assert most_telling("RIGHT", [n for n in pong if n != "RIGHT"]) == ["LEFT"]
    assert most_telling("NOOP", [n for n in pong if n != "NOOP"]) == ["LEFT", "RIGHT"]
    assert contrast(0, 1) == (0, False)  # NOOP then FIRE: nothing moves


def test_an_index_left_unresolved_gives_no_verdict_unless_something_is_wrong() -> None:
    """The action set fails only on what was seen: fewer than 18 indices, or two indices
    reaching one emulator action; 18 indices of which some never resolved: unknown."""
    identity = {index: index for index in range(18)}
    assert _action_verdict(18, identity).status is Status.PASS
    partial = {index: index for index in range(17)}
    assert _action_verdict(18, partial).status is Status.UNKNOWN
    assert _action_verdict(18, {**partial, 16: 0}).status is Status.FAIL  # 0 and 16 alike
    assert _action_verdict(6, {index: index for index in range(6)}).status is Status.FAIL
