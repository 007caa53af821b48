"""The twin's shared-prefix replays find exactly the matches of replaying each pair, and
the sticky probe's stop comes at a look, once the interval is narrow enough."""

from __future__ import annotations

from collections import Counter

import ale_py
import numpy as np
from ale_py import roms

from saber.check.emulator import ACTIONS, twin
from saber.check.probes.actions import FIRST_LOOK, LOOK_EVERY, STEPS, settled


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
