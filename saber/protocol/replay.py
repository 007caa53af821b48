"""The replay of an episode (``saber-replay/1``): its game, settings, seed and actions, so that
anyone can play it again. docs/verify.md gives the file's layout and what it costs.

>>> header = ReplayHeader("pong", 3, 42, "random", None, {"frame_skip": 4}, "ab" * 32, {"saber": "0.4.0"}, 3)
>>> replay = decode_replay(encode_replay(header, bytes([0, 1, 17])))
>>> replay.header == header, list(replay.actions)
(True, [0, 1, 17])
"""

from __future__ import annotations

import bz2
import hashlib
import json
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from saber.errors import ReplayError
from saber.protocol.settings import NUM_ACTIONS, SABER_CAP_FRAMES

REPLAY_FORMAT = "saber-replay/1"
REPLAYS_DIR = "replays"  # inside a run directory
_MAGIC = b"SABERRPL"
_VERSION = 1
_LENGTH = struct.Struct("<I")
_CHECKSUM_BYTES = 32
_COMPRESSION = "bz2"
#: The most bytes a header may take (saber writes about 600).
MAX_HEADER_BYTES = 1 << 20
_FIXED_BYTES = len(_MAGIC) + 1 + 2 * _LENGTH.size + _CHECKSUM_BYTES


def frame_skip(settings: Mapping[str, Any]) -> int:
    """The frame skip of ``settings`` (1 when it is no integer >= 1)."""
    skip = settings.get("frame_skip")
    return skip if isinstance(skip, int) and not isinstance(skip, bool) and skip >= 1 else 1


def max_steps(settings: Mapping[str, Any]) -> int:
    """The most agent steps an episode played with ``settings`` can take: the 100-hour cap
    (21,600,000 frames; a smaller ``max_episode_frames`` if the settings have one) over
    the frame skip (5,400,000 steps under SABER's settings; a frame skip that is no
    integer >= 1 counts as 1)."""
    skip, cap = frame_skip(settings), settings.get("max_episode_frames")
    frames = SABER_CAP_FRAMES
    if isinstance(cap, int) and not isinstance(cap, bool) and 1 <= cap < frames:
        frames = cap
    return -(-frames // skip)


def max_replay_bytes(steps: int, header: int = MAX_HEADER_BYTES) -> int:
    """The most bytes a replay of ``steps`` actions takes with a header of ``header``
    bytes (bz2 makes at most 1% and 600 bytes more than it is given)."""
    return _FIXED_BYTES + header + steps + steps // 100 + 600


#: The most bytes any replay file takes (the most steps any settings allow: frame skip 1).
MAX_REPLAY_BYTES = max_replay_bytes(SABER_CAP_FRAMES)


@dataclass(frozen=True)
class ReplayHeader:
    """What an episode's replay says about it besides its actions.

    Attributes:
        game: ale id.
        episode: the episode's index in its game (0-based).
        seed: the seed of its reset (``reset(seed=...)`` of a SABER env).
        agent: the agent's name.
        run: the run name, or None.
        settings: the env settings (:meth:`~saber.protocol.SaberSettings.as_dict`).
        rom_sha256: SHA-256 of the ROM file played (hex).
        versions: package versions that played it (``saber``, ``ale_py``).
        steps: agent steps, one action each.
        extra: keys of newer versions, kept as they were.
    """

    game: str
    episode: int
    seed: int
    agent: str
    run: str | None
    settings: dict[str, Any]
    rom_sha256: str
    versions: dict[str, str]
    steps: int
    extra: dict[str, Any] = field(default_factory=dict)

    _KNOWN = ("format", "game", "episode", "seed", "agent", "run", "settings", "rom_sha256",
              "versions", "steps", "actions")  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        """The header's JSON object."""
        return {
            "format": REPLAY_FORMAT,
            "game": self.game,
            "episode": self.episode,
            "seed": self.seed,
            "agent": self.agent,
            "run": self.run,
            "settings": self.settings,
            "rom_sha256": self.rom_sha256,
            "versions": self.versions,
            "steps": self.steps,
            "actions": {"count": NUM_ACTIONS, "encoding": "u8", "compression": _COMPRESSION},
            **self.extra,
        }

    @classmethod
    def from_dict(cls, header: Mapping[str, Any]) -> ReplayHeader:
        """The header of a JSON object written by :meth:`to_dict`.

        Raises:
            KeyError, TypeError, ValueError: a key missing or of the wrong type.
        """
        return cls(
            game=str(header["game"]),
            episode=_integer(header, "episode"),
            seed=_integer(header, "seed"),
            agent=str(header["agent"]),
            run=None if header.get("run") is None else str(header["run"]),
            settings=dict(header["settings"]),
            rom_sha256=str(header["rom_sha256"]),
            versions={str(k): str(v) for k, v in dict(header["versions"]).items()},
            steps=_integer(header, "steps"),
            extra={k: v for k, v in header.items() if k not in cls._KNOWN},
        )


def _refuse(constant: str) -> Any:
    """``NaN`` and ``Infinity`` in a header: :func:`encode_replay` never writes them."""
    raise ValueError(f"{constant} in the header")


def _integer(header: Mapping[str, Any], key: str) -> int:
    """``header[key]``, an integer >= 0 as written: ``1.5`` or ``true`` is no episode."""
    value = header[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{key} {value!r} is not an integer >= 0")
    return value


@dataclass(frozen=True)
class Replay:
    """A decoded replay: its header and its actions (one byte, 0..17, per agent step)."""

    header: ReplayHeader
    actions: bytes


def encode_replay(header: ReplayHeader, actions: bytes | bytearray) -> bytes:
    """The bytes of a replay file (layout in docs/verify.md).

    Raises:
        ValueError: ``header.steps`` is not the number of actions, or an action is not
            in 0..17.
    """
    actions = bytes(actions)
    if header.steps != len(actions):
        raise ValueError(
            f"Expect {header.steps} actions (the header's steps), actually: {len(actions)}"
        )
    if actions and max(actions) >= NUM_ACTIONS:
        raise ValueError(f"Expect actions in 0..{NUM_ACTIONS - 1}, actually: {max(actions)}")
    head = json.dumps(header.to_dict(), separators=(",", ":"), allow_nan=False).encode("utf-8")
    body = bz2.compress(actions, 9)
    data = b"".join(
        [_MAGIC, bytes([_VERSION]), _LENGTH.pack(len(head)), head, _LENGTH.pack(len(body)), body]
    )
    return data + hashlib.sha256(data).digest()


def decode_replay_header(data: bytes, where: str = "replay") -> tuple[ReplayHeader, bytes]:
    """The header of a replay file's bytes and its compressed actions, without
    decompressing them: the file's checksum, lengths, header and size are checked (a body
    larger than bz2 makes of the header's steps, or more steps than the 100-hour cap
    allows, is damage).

    Raises:
        ReplayError: as :func:`decode_replay`.
    """
    if not data.startswith(_MAGIC):
        raise ReplayError(f"{where}: not a saber replay (it does not start with {_MAGIC!r})")
    if len(data) < _FIXED_BYTES:
        raise ReplayError(f"{where}: damaged (cut short: {len(data)} bytes)")
    if data[len(_MAGIC)] != _VERSION:
        raise ReplayError(
            f"{where}: a replay of format version {data[len(_MAGIC)]}; this saber reads "
            f"version {_VERSION} ({REPLAY_FORMAT}). Verify it with the saber that wrote it."
        )
    content, checksum = data[:-_CHECKSUM_BYTES], data[-_CHECKSUM_BYTES:]
    if hashlib.sha256(content).digest() != checksum:
        raise ReplayError(f"{where}: damaged (its checksum does not match: cut short or changed)")
    offset = len(_MAGIC) + 1
    try:
        (size,) = _LENGTH.unpack_from(content, offset)
        if size > MAX_HEADER_BYTES:
            raise ValueError(f"a header of {size} bytes, over {MAX_HEADER_BYTES}")
        head = content[offset + _LENGTH.size : offset + _LENGTH.size + size]
        offset += _LENGTH.size + size
        (body_size,) = _LENGTH.unpack_from(content, offset)
        body = content[offset + _LENGTH.size :]
        if len(body) != body_size or len(head) != size:
            raise ValueError("lengths do not add up")
        header = ReplayHeader.from_dict(json.loads(head.decode("utf-8"), parse_constant=_refuse))
    except (struct.error, ValueError, KeyError, TypeError, RecursionError) as error:
        raise ReplayError(f"{where}: damaged ({type(error).__name__}: {error})") from None
    skip = header.settings.get("frame_skip")
    if isinstance(skip, int) and skip > SABER_CAP_FRAMES:
        raise ReplayError(
            f"{where}: its frame skip, {skip:,} frames a step, is over the 100-hour cap "
            f"({SABER_CAP_FRAMES:,} frames)"
        )
    cap = max_steps(header.settings)
    if header.steps > cap:
        raise ReplayError(
            f"{where}: its header declares {header.steps:,} steps, more than the 100-hour "
            f"cap allows under its settings ({cap:,})"
        )
    if body_size > max_replay_bytes(header.steps, 0) - _FIXED_BYTES:
        raise ReplayError(
            f"{where}: damaged (its actions take {body_size:,} bytes, more than bz2 makes "
            f"of the {header.steps:,} steps its header declares)"
        )
    return header, body


def decode_replay(data: bytes, where: str = "replay") -> Replay:
    """The replay in ``data`` (the bytes of a file). Decompressing stops past the steps
    its header declares (:func:`decode_replay_header`), so a small file cannot inflate.

    Raises:
        ReplayError: not a replay, another format version, cut short or changed (the
            checksum), or actions that are not what the header says; ``where`` names it.
    """
    header, body = decode_replay_header(data, where)
    decompressor = bz2.BZ2Decompressor()
    try:
        actions = decompressor.decompress(body, max_length=header.steps + 1)
    except (OSError, EOFError, ValueError) as error:
        raise ReplayError(f"{where}: damaged ({type(error).__name__}: {error})") from None
    if len(actions) > header.steps or not decompressor.eof or decompressor.unused_data:
        raise ReplayError(
            f"{where}: damaged (its actions are not the {header.steps:,} steps its header declares)"
        )
    if len(actions) != header.steps:
        raise ReplayError(
            f"{where}: damaged (its header says {header.steps} steps, it holds "
            f"{len(actions)} actions)"
        )
    if actions and max(actions) >= NUM_ACTIONS:
        raise ReplayError(f"{where}: damaged (an action {max(actions)} outside 0..17)")
    return Replay(header, actions)


def read_replay(path: str | Path) -> Replay:
    """Read and check a replay file.

    Raises:
        ReplayError: the file is missing, unreadable or damaged (see :func:`decode_replay`).
    """
    path = Path(path)
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_REPLAY_BYTES + 1)  # never more than a replay takes
    except FileNotFoundError:
        raise ReplayError(f"{path}: no such replay file") from None
    except OSError as error:
        raise ReplayError(f"Cannot read {path}: {error.strerror or error}") from None
    if len(data) > MAX_REPLAY_BYTES:
        raise ReplayError(f"{path}: not a saber replay (over {MAX_REPLAY_BYTES:,} bytes)")
    return decode_replay(data, str(path))


def sha256_of(data: bytes) -> str:
    """The SHA-256 of ``data`` as hex: what a record's ``replay_sha256`` holds."""
    return hashlib.sha256(data).hexdigest()


def replay_path(game: str, episode: int) -> str:
    """Where an episode's replay lives in a run directory (relative, with ``/``)."""
    return f"{REPLAYS_DIR}/{game}/episode-{episode}.saber-replay"
