"""What a dishonest submitter has: a text editor, SHA-256 and bz2. Nothing here calls
saber: the files are edited as JSON and bytes, the digests recomputed with hashlib, and
replays written by hand from the format in docs/verify.md (magic, version, header
length and header, actions length and bz2 actions, SHA-256 of the rest)."""

from __future__ import annotations

import bz2
import hashlib
import json
import struct
from pathlib import Path
from typing import Any

MAGIC = b"SABERRPL"


def records(run: Path) -> list[dict[str, Any]]:
    """The lines of ``episodes.jsonl`` as JSON objects."""
    return [json.loads(line) for line in (run / "episodes.jsonl").read_text().splitlines()]


def reseal(run: Path) -> None:
    """Make run.json's checkpoint (the size and SHA-256 of episodes.jsonl, a plain hash)
    agree with the file as it is now."""
    data = (run / "episodes.jsonl").read_bytes()
    document = json.loads((run / "run.json").read_text())
    for session in document["sessions"]:
        session["episodes_log"] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    (run / "run.json").write_text(json.dumps(document, indent=2))


def write_records(run: Path, lines: list[dict[str, Any]]) -> None:
    """Write ``lines`` as episodes.jsonl and reseal run.json."""
    (run / "episodes.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    reseal(run)


def edit_run_json(run: Path, **keys: Any) -> None:
    """Set keys of run.json."""
    document = json.loads((run / "run.json").read_text())
    document.update(keys)
    (run / "run.json").write_text(json.dumps(document, indent=2))


def read_replay(data: bytes) -> tuple[dict[str, Any], bytes]:
    """A replay's header (JSON) and its actions."""
    (size,) = struct.unpack_from("<I", data, 9)
    header = json.loads(data[13 : 13 + size])
    (body,) = struct.unpack_from("<I", data, 13 + size)
    actions = bz2.decompress(data[17 + size : 17 + size + body])
    return header, actions


def replay_bytes(
    header: dict[str, Any], actions: bytes | None = None, body: bytes | None = None
) -> bytes:
    """A replay file: ``header`` and ``actions`` (bz2-compressed here, or ``body`` as it
    is), with its checksum."""
    head = json.dumps(header, separators=(",", ":")).encode()
    body = bz2.compress(actions or b"", 9) if body is None else body
    data = (
        MAGIC
        + bytes([1])
        + struct.pack("<I", len(head))
        + head
        + struct.pack("<I", len(body))
        + body
    )
    return data + hashlib.sha256(data).digest()


def put_replay(
    run: Path, record: dict[str, Any], data: bytes, relative: str | None = None
) -> dict[str, Any]:
    """Write ``data`` as the replay of ``record`` (at ``relative``, default its own path);
    the record with its ``replay`` and ``replay_sha256`` made to agree."""
    relative = relative or record["replay"]
    path = run / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return {**record, "replay": relative, "replay_sha256": hashlib.sha256(data).hexdigest()}
