"""Torn lines: a line of ``episodes.jsonl`` cut short by a crash, made whole by appending.

Resuming completes it into a JSON object marked ``"torn": true``, which counts as no
episode's; the file stays append-only and every line one JSON object.
"""

from __future__ import annotations

import contextlib
import json

from saber.rundir.records import TORN_ERROR

# Endings that finish a token cut short (a string, an escape, a number, a literal), then
# endings that close the object with the torn marker. Each candidate is checked by parsing.
_TOKEN_ENDINGS = ("", '"', '\\"', '0"', '00"', '000"', '0000"', "0", "e", "ue", "rue",
                  "se", "lse", "alse", "l", "ll", "ull")  # fmt: skip
_TORN_FIELDS = f'"error": {json.dumps(TORN_ERROR)}, "torn": true}}'
_CLOSINGS = (f", {_TORN_FIELDS}", f": null, {_TORN_FIELDS}", f"null, {_TORN_FIELDS}", _TORN_FIELDS)


def complete_torn_line(fragment: str) -> str:
    """What to append to a line cut short so that it becomes one whole JSON object.

    Lines are flat objects (strings, numbers, booleans, null), as the harness writes them.
    The object keeps the fields the fragment holds and gains ``"error"`` (why) and
    ``"torn": true``; a fragment that is already a whole object only needs its newline.
    Appending (never truncating) keeps ``episodes.jsonl`` append-only.

    Example:
        >>> fragment = '{"game": "pong", "episode": 3, "sc'
        >>> record = json.loads(fragment + complete_torn_line(fragment))
        >>> record["game"], record["episode"], record["torn"]
        ('pong', 3, True)

    Raises:
        ValueError: the fragment is not the start of a JSON object (zeros, garbage).
    """
    with contextlib.suppress(ValueError, RecursionError):
        if isinstance(json.loads(fragment), dict):
            return "\n"
    if fragment.lstrip().startswith("{"):
        for ending in _TOKEN_ENDINGS:
            for closing in _CLOSINGS:
                try:
                    record = json.loads(fragment + ending + closing)
                except (ValueError, RecursionError):
                    continue
                if isinstance(record, dict) and record.get("torn") is True:
                    return ending + closing + "\n"
    raise ValueError(f"not the start of a JSON object: {fragment[:40]!r}")
