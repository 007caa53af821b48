"""The board's files: every page and download, as text by path relative to the site
(the layout: docs/board.md, "The site")."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from markupsafe import Markup

from saber.board.entries import (
    CONFLICT,
    FAILED,
    INCOMPLETE,
    NOT_SABER,
    PUBLISHED,
    STATUSES,
    UNVERIFIED,
    VERIFIED,
    Entry,
)
from saber.board.entry_pages import EntryPages, rows_csv, rows_json
from saber.board.pages import (
    SCRIPT,
    SCRIPT_FILE,
    STYLE,
    STYLE_FILE,
    Cell,
    frames,
    page,
    pct,
    render,
    status_cell,
    table,
    with_interval,
)
from saber.board.ranking import LIMIT, Ranking, Reports
from saber.errors import counted
from saber.games import game_title
from saber.protocol.limits import time_limit
from saber.protocol.settings import EVALUATION_EPISODES
from saber.version import __version__

RANKING_COLUMNS = (
    "rank", "entry", "entry_id", "status", "median_pct", "median_low", "median_high",
    "iqm_pct", "iqm_low", "iqm_high", "mean_pct", "mean_low", "mean_high", "failing", "poor",
    "medium", "fair", "superhuman", "training_frames", "games", "runs", "episodes", "date",
)  # fmt: skip
PER_GAME_COLUMNS = (
    "game", "entry", "entry_id", "status", "score", "infinite", "world_record_pct", "class",
    "episodes", "runs",
)  # fmt: skip

STATUS_MEANINGS = {
    VERIFIED: "a whole run (every episode its request defines, each once): every replay's "
    "file, hash and header checked against its record, and every replay (or a sample drawn "
    "at build time from a seed no one knew before, its size and seed shown with the "
    "commands that repeat the check and check every replay) played again from its seed "
    "reproduces its record field by field; judged by the settings its replays were played "
    "under (saber verify)",
    PUBLISHED: "a score table from a paper or a shipped file: ranked beside the verified "
    "entries, but nothing can be played again",
    NOT_SABER: "its replays were played with settings that are not SABER's (each one named): "
    "shown, never ranked",
    INCOMPLETE: "its replays reproduce their records, but episodes its request defines are "
    "missing: shown, never ranked",
    UNVERIFIED: "playing its replays costs more than the build's verification budget: shown "
    "with the command that finishes the job, never ranked",
    CONFLICT: "two copies of one run whose records differ, or one play under two names: "
    "none is ranked until the conflict is settled",
    FAILED: "a record its replay does not reproduce (the field named), a damaged run, a "
    "table without a citation, a path that does not exist: shown with the reason, never "
    "ranked",
}


def _interval(ci: Sequence[float | None]) -> tuple[float | None, float | None]:
    low, high = ([*list(ci), None, None])[:2]
    return low, high


class Site:
    """Renders the board's files (see the module docstring).

    Args:
        entries: every entry, statuses decided.
        notes: lines about ENTRYs counted once (the same run given twice).
        rankings: the ranking on each set of games.
        default: the one of the front page.
        reports: each entry's reports.
        report_page: entry -> its report as one HTML page (with figures or without).
        built: the build's date, for the footer.
    """

    def __init__(
        self,
        entries: list[Entry],
        notes: list[str],
        rankings: list[Ranking],
        default: Ranking,
        reports: Reports,
        report_page: Callable[[Entry], str],
        built: str,
    ) -> None:
        self.entries, self.notes, self.rankings = entries, notes, rankings
        self.default = default
        self.reports, self.report_page = reports, report_page
        self.footer = render(
            "footer.html", version=__version__, built=built, limit=time_limit(LIMIT).title
        )
        self.files: dict[str, str] = {}

    def render(self) -> dict[str, str]:
        """Every file of the site, by path."""
        self.files = {STYLE_FILE: STYLE, SCRIPT_FILE: SCRIPT}
        default = self.default
        for ranking in self.rankings:
            rows = self._ranking_rows(ranking)
            slug = ranking.game_set.slug
            self.files[f"rankings/{slug}.csv"] = rows_csv(RANKING_COLUMNS, rows)
            self.files[f"rankings/{slug}.json"] = rows_json(RANKING_COLUMNS, rows)
            self.files[f"rankings/{slug}.html"] = self._ranking_page(
                ranking, rows, f"rankings/{slug}.html"
            )
        self.files["index.html"] = self._ranking_page(
            default, self._ranking_rows(default), "index.html"
        )
        self._games()
        self.files.update(
            EntryPages(
                self.entries, self.notes, self.reports, self.report_page, self.footer
            ).render()
        )
        self.files["downloads.html"] = self._downloads()
        self.files["about.html"] = self._about()
        return self.files

    # The ranking -------------------------------------------------------------------------

    def _ranking_rows(self, ranking: Ranking) -> list[dict[str, Any]]:
        rows = []
        for number, (entry, section) in enumerate(ranking.rows, 1):
            wr = section.world_record
            median_low, median_high = _interval(wr.median_ci)
            iqm_low, iqm_high = _interval(wr.iqm_ci)
            mean_low, mean_high = _interval(wr.mean_ci)
            rows.append(
                {
                    "rank": number,
                    "entry": entry.label,
                    "entry_id": entry.id,
                    "status": entry.status,
                    "median_pct": "inf" if wr.median_infinite else wr.median,
                    "median_low": median_low,
                    "median_high": median_high,
                    "iqm_pct": wr.iqm,
                    "iqm_low": iqm_low,
                    "iqm_high": iqm_high,
                    "mean_pct": wr.mean,
                    "mean_low": mean_low,
                    "mean_high": mean_high,
                    **{
                        name: wr.classes.get(name, 0)
                        for name in ("failing", "poor", "medium", "fair", "superhuman")
                    },
                    "training_frames": entry.training_frames,
                    "games": wr.games,
                    "runs": max(len(section.runs), 1),
                    "episodes": section.episodes,
                    "date": entry.date,
                }
            )
        return rows

    def _ranking_page(self, ranking: Ranking, rows: list[dict[str, Any]], path: str) -> str:
        root = "../" * path.count("/")
        game_set = ranking.game_set
        front = path == "index.html"
        sets = [
            (f"{root}rankings/{other.game_set.slug}.html",
             f"{other.game_set.words()[:-1]}, {len(other.rows)} ranked)",
             other is ranking and not front)
            for other in self.rankings
        ]  # fmt: skip
        unranked = [e for e in self.entries if not e.ranked]
        body = render(
            "ranking.html",
            front=front,
            count=len(self.entries),
            counts=", ".join(f"{n} {s}" for s in STATUSES
                             if (n := sum(e.status == s for e in self.entries))),
            words=game_set.words(),
            limit=time_limit(LIMIT).title,
            sets=sets,
            no_games=not game_set.games,
            ranking_table=self._ranking_table(ranking, rows, root) if rows else "",
            no_record=self._without_record(ranking),
            **_footnotes(ranking),
            games=[(f"{root}games/{g}.html", game_title(g)) for g in game_set.games]
            if len(game_set.games) <= 10 else [],
            lacking=[
                f"{entry.label} ({entry.given}): lacks {len(lacking)} of {len(game_set.games)} "
                "games" + (f" ({', '.join(lacking)})" if len(lacking) <= 5 else "")
                for entry, lacking in ranking.lacking
            ],
            unranked=table(
                "Entries not ranked, with the reason",
                ["Entry", "Status", "Reason"],
                [[Cell(e.label, href=f"{root}entries/{e.id}/index.html"), status_cell(e),
                  Cell(e.reason)] for e in unranked],
            ) if unranked else "",
            notes=self.notes,
        )  # fmt: skip
        title = "SABER board" if front else f"Ranking on {game_set.title}"
        return page(title, path, body, self.footer)

    def _ranking_table(self, ranking: Ranking, rows: list[dict[str, Any]], root: str) -> Markup:
        header = [
            "Entry", "Rank", "Status", "Median [95% CI]", "IQM [95% CI]", "Mean [95% CI]",
            *CLASS_HEADERS, "Training frames", "Games", "Runs", "Date",
        ]  # fmt: skip
        cells = []
        for (entry, section), row in zip(ranking.rows, rows, strict=True):
            wr = section.world_record
            median_sort = float("inf") if wr.median_infinite else wr.median
            cells.append(
                [
                    Cell(entry.label, href=f"{root}entries/{entry.id}/index.html"),
                    Cell(str(row["rank"]), sort=row["rank"]),
                    status_cell(entry),
                    Cell(
                        _interval_text(wr.median, wr.median_ci, wr.median_infinite),
                        sort=_num(median_sort),
                    ),
                    Cell(_interval_text(wr.iqm, wr.iqm_ci), sort=_num(wr.iqm)),
                    Cell(_interval_text(wr.mean, wr.mean_ci), sort=_num(wr.mean)),
                    *(
                        Cell(str(row[c]), sort=row[c])
                        for c in ("failing", "poor", "medium", "fair", "superhuman")
                    ),
                    Cell(frames(entry.training_frames), sort=_num(entry.training_frames)),
                    _games_cell(entry, wr.games, len(ranking.game_set.games)),
                    Cell(str(row["runs"]), sort=row["runs"]),
                    Cell(entry.date or "–", sort=entry.date or ""),
                ]
            )
        caption = (
            f"Ranking on {ranking.game_set.title}: world-record-normalized scores at the "
            f"{time_limit(LIMIT).title} time limit, best median first"
        )
        return table(caption, header, cells)

    @staticmethod
    def _without_record(ranking: Ranking) -> dict[str, Any] | None:
        """The set's games that have no world record, which no world-record-normalized
        statistic counts (the Games column's "4 of 5"), for ranking.html's sentence."""
        left = sorted({g for _, section in ranking.rows for g in section.world_record.left_out})
        if not left:
            return None
        names = [game_title(g) for g in left]
        named = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
        counted = len(ranking.game_set.games) - len(left)
        verb = "has" if len(left) == 1 else "have"
        return {"named": named, "verb": verb, "counted": counted}

    # Games -------------------------------------------------------------------------------

    def _game_rows(self) -> dict[str, list[tuple[Entry, dict[str, Any]]]]:
        by_game: dict[str, list[tuple[Entry, dict[str, Any]]]] = {}
        for entry in self.entries:
            if entry.table is None:
                continue
            sections = self.reports.of(entry).agents[entry.label]
            if LIMIT not in sections:
                continue
            for game, score in sections[LIMIT].per_game.items():
                row = {
                    "game": game,
                    "entry": entry.label,
                    "entry_id": entry.id,
                    "status": entry.status,
                    "score": score.score,
                    "infinite": score.infinite,
                    "world_record_pct": score.world_record_pct,
                    "class": score.class_,
                    "episodes": score.episodes,
                    "runs": score.runs,
                }
                by_game.setdefault(game, []).append((entry, row))
        for rows in by_game.values():  # ranked entries first, best score first; then by status
            rows.sort(key=lambda item: (not item[0].ranked,
                                        0 if item[0].ranked else STATUSES.index(item[0].status),
                                        *_best_first(item[1])))  # fmt: skip
        return dict(sorted(by_game.items()))

    def _games(self) -> None:
        by_game = self._game_rows()
        flat = [row for rows in by_game.values() for _, row in rows]
        self.files["per-game.csv"] = rows_csv(PER_GAME_COLUMNS, flat)
        self.files["per-game.json"] = rows_json(PER_GAME_COLUMNS, flat)
        index_rows = []
        for game, rows in by_game.items():
            ranked = [row for entry, row in rows if entry.ranked]
            best = ranked[0] if ranked else None
            index_rows.append(
                [
                    Cell(game_title(game), sort=game_title(game), href=f"{game}.html"),
                    Cell(str(len(rows)), sort=len(rows)),
                    Cell(best["entry"] if best else "–"),
                    Cell(
                        pct(best["world_record_pct"], best["infinite"]) if best else "–",
                        sort=_num(_ordered(best) if best else None),
                    ),
                ]
            )
            self.files[f"games/{game}.html"] = self._game_page(game, rows)
        body = table(
            "Every game with a score on the board",
            ["Game", "Entries", "Best ranked entry", "Its world-record-normalized score"],
            index_rows,
        )
        self.files["games/index.html"] = page("Games", "games/index.html", body, self.footer)

    def _game_page(self, game: str, rows: list[tuple[Entry, dict[str, Any]]]) -> str:
        cells = [
            [
                Cell(entry.label, href=f"../entries/{entry.id}/index.html"),
                status_cell(entry),
                Cell("∞" if row["infinite"] else _score(row["score"]), sort=_num(_raw(row))),
                Cell(pct(row["world_record_pct"], row["infinite"]), sort=_num(_ordered(row))),
                Cell(row["class"] or "–"),
                Cell(str(row["episodes"]), sort=row["episodes"]),
                Cell(str(row["runs"]), sort=row["runs"]),
            ]
            for entry, row in rows
        ]
        title = game_title(game)
        header = ["Entry", "Status", "Score", "World-record-normalized", "Class", "Episodes",
                  "Runs"]  # fmt: skip
        scores = table(f"{title}: every entry's score", header, cells)
        body = render("game.html", title=title, game=game, limit=time_limit(LIMIT).title,
                      scores=scores)  # fmt: skip
        return page(title, f"games/{game}.html", body, self.footer)

    # Downloads and about -----------------------------------------------------------------

    def _downloads(self) -> str:
        rankings = [(r.game_set.title, r.game_set.slug) for r in self.rankings]
        body = render("downloads.html", rankings=rankings)
        return page("Downloads", "downloads.html", body, self.footer)

    def _about(self) -> str:
        statuses = [
            (status_cell(Entry("", "", "", status=s)).inner(), m)
            for s, m in STATUS_MEANINGS.items()
        ]
        body = render("about.html", statuses=statuses)
        return page("About the board", "about.html", body, self.footer)


CLASS_HEADERS = tuple(
    f"{name} (games)" for name in ("Failing", "Poor", "Medium", "Fair", "Superhuman")
)
NO_INTERVAL = "no interval"


def _interval_text(value: float | None, ci: Sequence[float | None], infinite: bool = False) -> str:
    """``12.3% [10.1%, 14.0%]``; a value without one says so (published means)."""
    shown = with_interval(value, ci, infinite)
    return shown if " [" in shown or value is None or infinite else f"{shown} ({NO_INTERVAL})"


def _games_cell(entry: Entry, games: int, of: int) -> Cell:
    """``5 of 5``; a verified run of fewer than the protocol's episodes per game says so."""
    text = f"{games} of {of}"
    if entry.status == VERIFIED and entry.short:
        text += f" ({counted(entry.short, 'episode')} each, fewer than {EVALUATION_EPISODES})"
    return Cell(text, sort=games)


def _footnotes(ranking: Ranking) -> dict[str, Any]:
    """What the ranking's marks mean, for ranking.html's notes: a value without an interval
    (``no_interval``, its mark), verified runs of fewer episodes than the protocol's."""
    return {
        "no_interval": NO_INTERVAL
        if any(None in (*section.world_record.median_ci, None)[:2] for _, section in ranking.rows)
        else "",
        "short": sum(1 for entry, _ in ranking.rows if entry.short),
        "protocol_episodes": EVALUATION_EPISODES,
    }


def _num(value: float | int | None) -> float | str:
    return "" if value is None else float(value)


def _score(value: float | None) -> str:
    return "–" if value is None else f"{value:,.1f}"


def _raw(row: dict[str, Any]) -> float | None:
    return float("inf") if row["infinite"] else row["score"]


def _best_first(row: dict[str, Any]) -> tuple[float, float]:
    """A row's sort key, best first: its world-record-normalized score, then its score (a
    game without a world record is ordered by its score alone)."""
    raw = _raw(row)
    return -_ordered(row), -(-float("inf") if raw is None else raw)


def _ordered(row: dict[str, Any] | None) -> float:
    """A row's world-record-normalized score to order by (infinite first, none last)."""
    if row is None:
        return -float("inf")
    if row["infinite"]:
        return float("inf")
    value = row["world_record_pct"]
    return -float("inf") if value is None else float(value)
