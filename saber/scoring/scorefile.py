"""Reading score tables (:func:`read_scores`): score CSVs and harness results, either kind.

The public home of the readers; docs/reports.md gives both formats.
"""

from __future__ import annotations

from pathlib import Path

from saber.errors import ScoreFileError
from saber.scoring.csvscores import read_score_csv
from saber.scoring.runscores import harness_run_key, read_harness_results
from saber.scoring.scoretable import (  # noqa: F401 (the table's names, served here too)
    DEFAULT_AGENT,
    DEFAULT_RUN,
    EpisodeScore,
    GameEpisodes,
    ScoreTable,
    canonical_order,
    merge_tables,
)

# The readers' names; the table's names (ScoreTable, EpisodeScore, ...) are imported above
# so that ``saber.scoring.scorefile`` keeps serving them, and are listed in
# :mod:`saber.scoring.scoretable`, their home, and in :mod:`saber.scoring`.


def read_scores(*paths: str | Path) -> ScoreTable:
    """Read score files of either kind and merge them.

    A directory or a ``.jsonl`` file is read as harness results, anything else as CSV.
    A run given twice (the same directory, its ``episodes.jsonl``, or a copy of the
    directory: the same ``run_id`` in ``run.json``, or without one, from saber, the same
    content) counts once, and the table says so in a warning that starts with
    ``merged:``; of copies that differ (one copied before the run went on), the one with
    the most episodes is kept. (A CSV file given twice is refused as duplicate scores:
    a CSV names no run to merge by.)

    Raises:
        ScoreFileError: a path that does not exist, or any error of the readers.
    """
    if not paths:
        raise ScoreFileError("No score files given")
    tables: list[ScoreTable] = []
    seen: dict[str, tuple[int, Path]] = {}  # run key -> (its table, the path read first)
    merged: list[str] = []
    for path in map(Path, paths):
        if not path.exists():
            raise ScoreFileError(f"{path}: no such file or directory")
        is_harness = path.is_dir() or path.suffix == ".jsonl"
        if not is_harness:
            tables.append(read_score_csv(path))
            continue
        table = read_harness_results(path)
        key, same = harness_run_key(path)
        if key not in seen:
            seen[key] = (len(tables), path)
            tables.append(table)
            continue
        index, first = seen[key]
        kept = tables[index]
        if len(table.records) > len(kept.records):
            tables[index], kept = table, table
        counts = sorted({len(kept.records) // 3, len(table.records) // 3})
        differ = (
            f"; they differ ({' and '.join(map(str, counts))} episodes), the larger is kept"
            if len(counts) > 1
            else ""
        )
        merged.append(
            f"merged: {path} and {first} hold {same}: counted once, from {kept.sources[0]}{differ}"
        )
    result = tables[0] if len(tables) == 1 else merge_tables(tables)
    result.warnings.extend(merged)
    from saber.agents.pretrained import trained_outside_saber  # only what this loop needs

    for agent in result.agents():
        label = trained_outside_saber(agent)
        if label:
            result.trained_outside_saber[agent] = label
            result.warnings.append(
                f"{agent}: a SABER evaluation of an agent trained outside SABER ({label}, "
                "from its shipped provenance): not a SABER result"
            )
    return result
