"""Hypothesis strategies that damage real files: bytes flipped, cut, NULs and unicode put
in, lines duplicated, dropped or swapped, numbers replaced by huge ones, NaN and infinity,
and JSON values replaced by values of other types.

Every strategy starts from a valid file (made by a real run, or shipped with the tests), so
the damage lands in the places a reader parses, not only in its first check.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

# Text that breaks parsers: number spellings json and float() read differently, unicode
# line breaks (str.splitlines splits at them, bytes.splitlines does not), a BOM, NUL.
NASTY_TOKENS = (
    "1e309", "-1e309", "NaN", "nan", "Infinity", "-Infinity", "inf", "-inf", "-0", "1e-400",
    "9" * 30, "9" * 5000, "-1", "0x10", "1_000", "1e3", "true", "null", '"7"', "[]", "{}",
    "\u2028", "\u0085", "\ufeff", "\x00", "é", "∞", "\r", '"', ",", "\\", "",
)  # fmt: skip
_NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")

# JSON values of every type, the extremes included. BIG and DEEP are written into the text
# after json.dumps (which cannot write them): an integer of 5000 digits (Python's json
# refuses to read it) and arrays nested 100,000 deep (json.loads recurses).
BIG = "\u0001big\u0001"
DEEP = "\u0001deep\u0001"
NASTY_VALUES: tuple[Any, ...] = (
    None, True, False, 0, -1, 1, 17, 18, 2**31, 2**63, 2**64 + 1, 10**30, -(10**30), 10**400,
    0.5, -0.0, 1e308, -1e308, math.nan, math.inf, -math.inf, "", "x", "é", "\x00", "a\nb",
    "inf", "NaN", "21", "-21", "pong", "saber", [], {}, [1], {"a": 1}, BIG, DEEP,
)  # fmt: skip
json_values = st.one_of(
    # Copies: a mutation that edits inside a drawn list or object must not edit the constant
    # (later examples would then draw other values: Hypothesis' FlakyStrategyDefinition).
    st.sampled_from(NASTY_VALUES).map(copy.deepcopy),
    st.integers(),
    st.floats(),
    st.text(max_size=8),
    st.lists(st.integers(), max_size=3),
)


# Keys that change what a record is (a failure, a torn line, another run's or agent's).
_KEYS = ("error", "torn", "run", "agent", "episode", "game", "replay", "infinite", "sessions")


def _lines(data: bytearray) -> list[bytes]:
    return bytes(data).splitlines(keepends=True)


def _flip(draw: Callable, data: bytearray) -> bytearray:
    if data:
        index = draw(st.integers(0, len(data) - 1))
        data[index] ^= 1 << draw(st.integers(0, 7))
    return data


def _set_byte(draw: Callable, data: bytearray) -> bytearray:
    if data:
        data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
    return data


def _cut(draw: Callable, data: bytearray) -> bytearray:
    return data[: draw(st.integers(0, len(data)))]


def _insert(draw: Callable, data: bytearray) -> bytearray:
    index = draw(st.integers(0, len(data)))
    text = draw(st.one_of(st.sampled_from(NASTY_TOKENS), st.text(max_size=6)))
    data[index:index] = text.encode("utf-8", errors="surrogatepass")
    return data


def _insert_bytes(draw: Callable, data: bytearray) -> bytearray:
    index = draw(st.integers(0, len(data)))
    data[index:index] = draw(st.binary(min_size=1, max_size=8))
    return data


def _delete(draw: Callable, data: bytearray) -> bytearray:
    start = draw(st.integers(0, len(data)))
    del data[start : start + draw(st.integers(1, 16))]
    return data


def _line_edit(draw: Callable, data: bytearray) -> bytearray:
    lines = _lines(data)
    if not lines:
        return data
    index = draw(st.integers(0, len(lines) - 1))
    edit = draw(st.sampled_from(["duplicate", "drop", "swap", "blank"]))
    if edit == "duplicate":
        lines.insert(index, lines[index] if lines[index].endswith(b"\n") else lines[index] + b"\n")
    elif edit == "drop":
        del lines[index]
    elif edit == "swap":
        other = draw(st.integers(0, len(lines) - 1))
        lines[index], lines[other] = lines[other], lines[index]
    else:
        lines.insert(index, b"\n")
    return bytearray(b"".join(lines))


def _number(draw: Callable, data: bytearray) -> bytearray:
    spans = [match.span() for match in _NUMBER.finditer(bytes(data))]
    if spans:
        start, end = draw(st.sampled_from(spans))
        token = draw(
            st.one_of(
                st.sampled_from(NASTY_TOKENS[:20]),
                st.integers().map(str),
                st.floats(allow_nan=False, allow_infinity=False).map(repr),
            )
        )
        data[start:end] = token.encode("utf-8")
    return data


_BYTE_EDITS = (_flip, _set_byte, _cut, _insert, _insert_bytes, _delete, _line_edit, _number)


@st.composite
def mutated_bytes(draw: Callable, valid: bytes, edits: int = 4) -> bytes:
    """``valid`` with 1 to ``edits`` random edits (or emptied, now and then)."""
    if draw(st.integers(0, 49)) == 0:
        return b""
    data = bytearray(valid)
    for _ in range(draw(st.integers(1, edits))):
        data = draw(st.sampled_from(_BYTE_EDITS))(draw, data)
    return bytes(data)


def _slots(value: Any, path: tuple = ()) -> list[tuple]:
    """Paths of every value inside ``value`` (dict keys and list indices)."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _slots(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _slots(item, (*path, index))
    return found


def dump(value: Any) -> str:
    """``json.dumps`` that writes :data:`BIG` and :data:`DEEP` as what they stand for,
    and NaN and infinities as Python's json does (``NaN``, ``Infinity``)."""
    text = json.dumps(value)
    return text.replace(json.dumps(BIG), "9" * 5000).replace(
        json.dumps(DEEP), "[" * 100_000 + "]" * 100_000
    )


@st.composite
def mutated_json(draw: Callable, valid: Any, edits: int = 3) -> Any:
    """``valid`` (a JSON object) with 1 to ``edits`` values replaced, removed or added;
    write it with :func:`dump`."""
    value = copy.deepcopy(valid)
    for _ in range(draw(st.integers(1, edits))):
        path = draw(st.sampled_from(_slots(value)))
        if not path:
            if draw(st.booleans()):
                value = draw(json_values)
            continue
        parent = value
        for key in path[:-1]:
            parent = parent[key]
        action = draw(st.sampled_from(["replace", "replace", "delete", "add", "wrap"]))
        if action == "replace":
            parent[path[-1]] = draw(json_values)
        elif action == "delete":
            del parent[path[-1]]
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.one_of(st.sampled_from(_KEYS), st.text(max_size=6)))] = draw(json_values)
        else:
            parent[path[-1]] = [parent[path[-1]]]
        if not isinstance(value, dict | list):
            break
    return value
