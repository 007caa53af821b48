"""Reading a CSV of scores, written by hand or by other code (the format: docs/reports.md)."""

from __future__ import annotations

import csv
import math
from pathlib import Path

from saber.errors import ScoreFileError, shown
from saber.protocol import limits
from saber.scoring.scoretable import (
    DEFAULT_AGENT,
    DEFAULT_RUN,
    EpisodeScore,
    ScoreTable,
    TableBuilder,
    game_id,
)

_INFINITE_SPELLINGS = {"inf", "+inf", "infinite", "infinity", "+infinity", "∞"}


def parse_time_limit(text: str, where: str = "") -> str:
    """``"5min"``, ``"30min"`` or ``"saber"`` from a spelling (``30m``, ``unlimited``, ...)."""
    try:
        return limits.time_limit(text).name
    except ValueError as error:
        raise ScoreFileError(f"{where}: {error}") from None


def parse_score(text: str, where: str = "", game: str = "") -> tuple[float, bool]:
    """A score cell as ``(value, infinite)``: ``"12.5"`` -> (12.5, False), ``"inf"`` -> (inf, True).

    Raises:
        ScoreFileError: empty, not a number, NaN or negative infinity.
    """
    cell = text.strip()
    if cell.lower() in _INFINITE_SPELLINGS:
        return math.inf, True
    try:
        value = float(cell)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise ScoreFileError(
            f"{where}: score {cell!r} of game {game} is not a number "
            f"(write a number, or inf for infinite gameplay)"
        )
    return value, False


def _parse_bool(text: str, where: str, column: str) -> bool:
    cell = text.strip().lower()
    if cell in {"true", "1", "yes"}:
        return True
    if cell in {"false", "0", "no", ""}:
        return False
    raise ScoreFileError(f"{where}: column {column!r} must be true or false, got {text!r}")


def _parse_episode(text: str, where: str) -> int:
    try:
        episode = int(text.strip())
    except ValueError:
        raise ScoreFileError(f"{where}: episode {text!r} is not an integer") from None
    if episode < 0:
        raise ScoreFileError(f"{where}: episode {episode} is negative; episodes count from 0")
    return episode


def read_score_csv(path: str | Path) -> ScoreTable:
    """Read a CSV of scores (format in docs/reports.md).

    Raises:
        ScoreFileError: empty file, missing columns, bad cells, duplicates; the message
            names ``file:line`` and the game.
        UnknownGameError: an unknown game name, with ``file:line``.
    """
    path = Path(path)
    try:
        return _read_score_csv(path)
    except UnicodeDecodeError:
        raise ScoreFileError(f"{path}: {not_utf8(path)}") from None
    except OSError as error:  # unreadable: permissions, a directory, an I/O error
        raise ScoreFileError(f"Cannot read {path}: {error.strerror or error}") from None
    except csv.Error as error:  # a cell over the csv module's limit (128 KB)
        raise ScoreFileError(
            f"{path}: not a score table ({error}); expect a CSV header, then one row per score"
        ) from None


def not_utf8(path: Path) -> str:
    """Why a file is not UTF-8 text, for people: ``not UTF-8 text (byte 0xe9 at line 3,
    column 7); save it as UTF-8``."""
    data = path.read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        return (
            f"not UTF-8 text (byte 0x{data[error.start]:02x} at line {line}, column "
            f"{column}); save the file as UTF-8 (spreadsheets: CSV UTF-8)"
        )
    return "not UTF-8 text"


def _read_score_csv(path: Path) -> ScoreTable:
    builder = TableBuilder()
    builder.table.sources.append(str(path))
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None or not any(cell.strip() for cell in header):
            raise ScoreFileError(f"{path}: the file is empty; expected a header with game,score")
        columns = {cell.strip().lower(): i for i, cell in enumerate(header)}
        missing = [c for c in ("game", "score") if c not in columns]
        if missing:
            raise ScoreFileError(
                f"{path}:1: missing column(s) {', '.join(missing)} in the header "
                f"(found: {', '.join(shown(cell.strip()) for cell in header)})"
            )
        for row in reader:
            where = f"{path}:{reader.line_num}"
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                raise ScoreFileError(
                    f"{where}: {len(row)} cells where the header has {len(header)}"
                )

            def cell(name: str, default: str = "", row: list[str] = row) -> str:
                return row[columns[name]].strip() if name in columns else default

            game = game_id(cell("game"), where)
            score, infinite = parse_score(cell("score"), where, game)
            agent = cell("agent", DEFAULT_AGENT)
            if not agent:
                raise ScoreFileError(f"{where}: empty agent name for game {game}")
            run = cell("run", DEFAULT_RUN)
            if not run:
                raise ScoreFileError(
                    f"{where}: empty run for game {game}; give every row a run name "
                    "(a seed, a run id), or drop the run column"
                )
            record = EpisodeScore(
                agent=agent,
                game=game,
                time_limit=parse_time_limit(cell("time_limit", "saber"), where),
                score=score,
                infinite=infinite or _parse_bool(cell("infinite"), where, "infinite"),
                episode=_parse_episode(cell("episode"), where) if "episode" in columns else None,
                where=where,
                run=run,
            )
            try:
                builder.add(record)
            except ScoreFileError as error:
                if "training_frames" not in columns:
                    raise
                # The layout of saber/data/saber_paper_agents.csv: one row per checkpoint.
                raise ScoreFileError(
                    f"{error}. This file has a training_frames column: keep the rows of one "
                    "training checkpoint (the SABER paper's agents: saber report --reference "
                    "saber-paper)"
                ) from None
    return builder.finished(f"{path}: no scores, only a header")
