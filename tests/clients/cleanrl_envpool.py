"""CleanRL's envpool scripts (vendored in tests/clients/cleanrl/, MIT, CleanRL commit
fe8d8a03c41a) and the diff of docs/rl-libraries.md that moves them onto saber.envpool.

Used by tests/clients/test_cleanrl_envpool.py (which runs the patched scripts) and by
benchmarks/cleanrl_envpool_speed.py (which times them against envpool's).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[2]
SCRIPTS = Path(__file__).parent / "cleanrl"
DOC = ROOT / "docs" / "rl-libraries.md"
DIFF_MARK = "<!-- cleanrl-envpool-diff:"
# The scripts the diff moves to SABER: the fastest CleanRL Atari scripts people copy.
SCRIPT_NAMES = ("ppo_atari_envpool.py", "pqn_atari_envpool.py", "ppo_rnd_envpool.py")


def documented_diff() -> str:
    """The ```diff block that follows DIFF_MARK in docs/rl-libraries.md."""
    text = DOC.read_text(encoding="utf-8")
    after = text[text.index(DIFF_MARK) :]
    match = re.search(r"```diff\n(.*?)```", after, flags=re.DOTALL)
    assert match is not None, f"no ```diff block after {DIFF_MARK} in {DOC}"
    return match.group(1)


def apply_diff(source: str, diff: str) -> str:
    """Apply a unified diff's hunks to ``source``: each hunk's old lines (context and
    ``-``) must occur exactly once, and become its new lines (context and ``+``)."""
    hunks = [hunk for hunk in re.split(r"^@@.*\n", diff, flags=re.MULTILINE) if hunk.strip()]
    for hunk in hunks:
        old, new = [], []
        for line in hunk.splitlines():
            mark, text = line[:1], line[1:]
            if mark in (" ", "", "-"):
                old.append(text)
            if mark in (" ", "", "+"):
                new.append(text)
        before, after = "\n".join(old) + "\n", "\n".join(new) + "\n"
        count = source.count(before)
        assert count == 1, f"the hunk's old lines occur {count} times, not once:\n{before}"
        source = source.replace(before, after)
    return source


def saber_script(name: str, folder: Path) -> Path:
    """CleanRL's ``name`` with the documented diff applied, written into ``folder``."""
    original = (SCRIPTS / name).read_text(encoding="utf-8")
    patched = folder / name
    patched.write_text(apply_diff(original, documented_diff()), encoding="utf-8")
    return patched
