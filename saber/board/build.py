"""``saber board``: read the entries, decide their statuses, rank like for like, write the site."""

from __future__ import annotations

import dataclasses
import datetime
import importlib.util
import re
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from saber.board import copies
from saber.board.cache import Cache, default_cache_dir, digest
from saber.board.entries import FAILED, PASSING, STATUSES, Entry, renamed
from saber.board.figures import FOLDER, linked_figures, split_figures
from saber.board.pages import render
from saber.board.parallel import run_all
from saber.board.publish import check_out, publish
from saber.board.ranking import Ranking, Reports, game_sets, games_at_limit, rank
from saber.board.reading import Reader
from saber.board.shipped import SHIPPED
from saber.board.site import Site
from saber.board.status import DEFAULT_BUDGET, build_seed, decide
from saber.errors import ScoreFileError, counted, shown

FIGURE_DPI = 100  # the report pages' figures: sharp enough on a screen, a tenth of print's bytes
# The report pages' figures: at the limit the board ranks on (and the one across limits);
# the tables show every limit. A third of the figures: a third of a first build's drawing.
FIGURE_LIMITS = ("saber",)
PAGE_ROOT = "../../"  # from a report page (entries/<id>/report.html) to the site's folder
_DEFAULT = object()


@dataclass(frozen=True)
class Board:
    """What :func:`build_board` built.

    Attributes:
        out: the site's folder.
        entries: every entry read, with its status and the reason (``.label``,
            ``.given``, ``.status``, ``.reason``).
        notes: one line per ENTRY that held what another had given (counted once).
        rankings: the ranking on each set of games (``.game_set``, ``.rows``).
        default: the set of games of the front page (:func:`_front`).
        verified_now: runs whose replays were played in this build (the others were
            found in the cache).
        reports_computed: reports computed in this build (the others were cached).
        files: files written; size: their bytes.
        seconds: wall time of the build.
        seed: the seed the build drew its samples with (drawn at build time unless given).
    """

    out: Path
    entries: list[Entry]
    notes: list[str]
    rankings: list[Ranking]
    default: str
    verified_now: int = 0
    reports_computed: int = 0
    files: int = 0
    size: int = 0
    seconds: float = 0.0
    figures: bool = False
    seed: int = 0

    @property
    def passed(self) -> bool:
        """Every entry verified, published, or labelled not SABER (``saber board`` exits 0)."""
        return all(entry.status in PASSING for entry in self.entries)

    def lines(self) -> list[str]:
        """One line per entry (``verified: random (runs/a): all 2 replays ...``), then the
        notes."""
        return [*(entry.line() for entry in self.entries), *map(shown, self.notes)]

    def summary(self) -> str:
        """One line: what was written, and how much was found in the cache."""
        counts = ", ".join(
            f"{n} {s}" for s in STATUSES if (n := sum(e.status == s for e in self.entries))
        )
        return (
            f"wrote {shown(self.out)}: {counted(len(self.entries), 'entry')} ({counts}), "
            f"{counted(self.files, 'file')}, "
            f"{self.size / 1e6:.1f} MB in {self.seconds:.1f} s; runs verified now: "
            f"{self.verified_now}, reports computed: {self.reports_computed}"
            + ("" if self.figures else "; report pages without figures")
        )


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "entry"


def _name_pages(entries: list[Entry]) -> list[Entry]:
    """Tell apart entries of one name (``random (runs/a)``, ``random (runs/b)``: their
    folders), and give each entry its page's name: its label and the start of its hash."""
    counts = Counter(entry.label for entry in entries)
    named = []
    taken: set[str] = set()
    for entry in entries:
        if counts[entry.label] > 1 and entry.given != entry.label:
            label = f"{entry.label} ({_short(entry)})"
            table = None if entry.table is None else renamed(entry.table, label)
            entry = dataclasses.replace(entry, label=label, table=table)
        base = f"{_slug(entry.label)}-{entry.key[:8]}"
        name, number = base, 1
        while name in taken:
            number += 1
            name = f"{base}-{number}"
        taken.add(name)
        named.append(dataclasses.replace(entry, id=name))
    return named


def _short(entry: Entry) -> str:
    """Where an entry came from, short: its run directory's or file's name."""
    if entry.run_dirs:
        return ", ".join(run.name for run in entry.run_dirs)
    return Path(entry.given).name or entry.given


def build_board(
    entries: Sequence[str | Path],
    out: str | Path,
    *,
    shipped: bool = False,
    sample: int | None = None,
    sample_seed: int | None = None,
    budget: int | None = DEFAULT_BUDGET,
    workers: int | None = None,
    resamples: int = 2000,
    figures: bool | None = None,
    cache: str | Path | object | None = _DEFAULT,
) -> Board:
    """Build the SABER board: a static site of every entry, its status and the rankings.

    Args:
        entries: run directories of ``saber eval`` (or folders holding several), score
            tables (CSV, with ``<name>.board.json`` beside giving the citation), names of
            shipped references (``saber-paper``) or shipped agents (``ppo-pong``).
        out: the site's folder: new, empty, or a site saber board wrote (replaced whole).
        shipped: add the entries saber ships (:data:`saber.board.shipped.SHIPPED`).
        sample: play this many episodes per run, drawn with ``sample_seed``; None: every
            one. Every replay is checked statically (file, hash, header) whatever it is.
        sample_seed: the draw's seed; None: one drawn now, that no one knew before.
        budget: agent steps of play per run (None: no limit); a run that needs more is
            "not verified within the budget".
        workers: worker processes that verify runs, compute reports and draw figures
            (None: one per core; 0: this process).
        resamples: bootstrap resamples per interval.
        figures: draw each report's figures (None: when matplotlib is installed).
        cache: the cache folder (default: ``$SABER_CACHE_DIR/board``, see
            :mod:`saber.board.cache`); None keeps nothing.

    Returns:
        What was built (:class:`Board`); :attr:`Board.passed` says whether every entry
        passed.

    Raises:
        OutputExistsError: ``out`` holds files saber board did not write (checked
            before any work; nothing is written).
        ScoreFileError: no entry given.
        OSError: the site cannot be written (``out`` is left as it was).
        KeyboardInterrupt: Ctrl-C or SIGTERM: the workers stopped, nothing written.

    Example:
        >>> import tempfile
        >>> site = Path(tempfile.mkdtemp()) / "site"
        >>> board = build_board(
        ...     ["saber-paper"], site, resamples=10, figures=False, workers=0, cache=None
        ... )
        >>> [(e.label, e.status) for e in board.entries]
        [('rainbow@saber-paper', 'published, not verifiable'), ('rainbow-iqn@saber-paper', 'published, not verifiable')]
        >>> (site / "index.html").is_file(), board.default, board.passed
        (True, 'saber61', True)
    """
    started = time.perf_counter()
    out = Path(out)
    check_out(out)  # before any work: a folder of someone else's is never touched
    given = [*(SHIPPED if shipped else ()), *map(str, entries)]
    if not given:
        raise ScoreFileError("No entries given: run directories, score tables or shipped names")
    seed = build_seed() if sample_seed is None else sample_seed
    store = Cache(default_cache_dir() if cache is _DEFAULT else _path_or_none(cache))
    found, notes, verified_now = _judged(given, store, (sample, seed, budget), workers)
    reports = Reports(store, resamples)
    found, rankings = _reports_and_rankings(found, reports, workers)
    default = _front(rankings)
    drawn = importlib.util.find_spec("matplotlib") is not None if figures is None else figures
    pages, figure_files = _report_pages(found, reports, store, drawn, workers)

    built = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    site = Site(found, notes, rankings, default, reports, lambda e: pages[e.id], built)
    files: dict[str, str | bytes] = {**site.render(), **figure_files}
    publish(files, out)
    size = sum(len(c.encode() if isinstance(c, str) else c) for c in files.values())
    return Board(out, found, notes, rankings, default.game_set.slug, verified_now,
                 reports.computed, len(files), size, time.perf_counter() - started, drawn,
                 seed)  # fmt: skip


def _judged(
    given: list[str], store: Cache, draw: tuple[int | None, int, int | None], workers: int | None
) -> tuple[list[Entry], list[str], int]:
    """Every ENTRY read and judged (its runs verified, copies settled, pages named): the
    entries, the notes, and the number of runs verified now."""
    reader = Reader(store)
    for item in given:
        reader.read(item)
    reader.finish(workers)
    found, verified_now = decide(reader.entries, store, draw, workers)
    found, settled = copies.settle(found)
    return _name_pages(found), [*reader.notes, *settled], verified_now


def _reports_and_rankings(
    found: list[Entry], reports: Reports, workers: int | None
) -> tuple[list[Entry], list[Ranking]]:
    """Every report the site shows, computed at once in worker processes (each entry's
    own, and its reports on the sets of games it is ranked on); an entry whose report
    cannot be computed fails with the reason. Then the rankings."""
    wanted: list[tuple[Entry, tuple[str, ...] | None]] = [
        (entry, None) for entry in found if entry.table is not None
    ]
    wanted += [
        (entry, game_set.games)
        for game_set in game_sets(found)
        for entry in found
        if entry.ranked and game_set.games and set(game_set.games) <= games_at_limit(entry)
    ]
    failed = reports.compute(wanted, workers)
    found = [
        entry.with_status(FAILED, f"its report cannot be computed: {failed[id(entry)]}", table=None)
        if id(entry) in failed  # an entry's failure is its status, never a crash
        else entry
        for entry in found
    ]
    return found, [rank(found, game_set, reports) for game_set in game_sets(found)]


def report_page(document: dict, figures: bool) -> tuple[str, dict[str, bytes]]:
    """An entry's report as one HTML page (:func:`saber.reports.html.to_html`), its figures
    drawn when ``figures`` and they can be (a figure that cannot: the page without them),
    at :data:`FIGURE_LIMITS`, each a file of its own (:func:`split_figures`): the page, and
    the figures' content by name."""
    from saber.reports.html import to_html

    if figures:
        import matplotlib

        try:
            # Names from entries are drawn literally: "$\\sqrt{$" is text, not mathtext.
            with matplotlib.rc_context({"text.parse_math": False}):
                page = to_html(document, figures=True, dpi=FIGURE_DPI, limits=FIGURE_LIMITS)
            return split_figures(page, PAGE_ROOT)
        except Exception:  # a figure that cannot be drawn: the page without figures
            pass
    return to_html(document, figures=False), {}


def _report_pages(
    entries: list[Entry], reports: Reports, store: Cache, figures: bool, workers: int | None
) -> tuple[dict[str, str], dict[str, bytes]]:
    """Each entry's report page by the entry's id, and the figure files they link to by
    their path in the site, from the cache or drawn in worker processes."""
    keys = {
        entry.id: digest("page", reports.key(entry), figures, FIGURE_DPI, FIGURE_LIMITS)
        for entry in entries
        if entry.table is not None
    }
    pages: dict[str, str | None] = {}
    files: dict[str, bytes] = {}
    for name, key in keys.items():
        page = store.get_text("page", key, ".html")
        found = {f: store.get_bytes("figure", f, ".png") for f in linked_figures(page or "")}
        if page is not None and all(data is not None for data in found.values()):
            files.update((f"{FOLDER}/{f}.png", data) for f, data in found.items() if data)
            pages[name] = page
        else:  # a figure lost from the cache: the page is drawn again
            pages[name] = None
    missing = [entry for entry in entries if entry.id in keys and pages[entry.id] is None]
    jobs = [(reports.of(entry).to_dict(), figures) for entry in missing]
    for entry, made in zip(missing, run_all(report_page, jobs, workers), strict=True):
        if isinstance(made, BaseException):  # not even without figures: a line saying so
            text = str(render("unshown_report.html", error=str(made)))
        else:
            text, drawn = made
            for name, data in drawn.items():
                store.put_bytes("figure", name, data, ".png")
                files[f"{FOLDER}/{name}.png"] = data
            store.put_text("page", keys[entry.id], text, ".html")
        pages[entry.id] = text
    return {name: text or "" for name, text in pages.items()}, files


def _front(rankings: list[Ranking]) -> Ranking:
    """The ranking of the front page: the one that ranks the most verified entries (what a
    visitor came for), then the one on the most games among those that compare two
    entries or more (a ranking of one is no comparison); else the one with most entries."""
    verified = max((sum(e.status == "verified" for e, _ in r.rows) for r in rankings), default=0)
    if verified:
        best = [r for r in rankings if sum(e.status == "verified" for e, _ in r.rows) == verified]
        return max(best, key=lambda r: (len(r.rows) >= 2, len(r.game_set.games)))
    compared = [r for r in rankings if len(r.rows) >= 2]
    if compared:
        return max(compared, key=lambda r: len(r.game_set.games))
    return max(rankings, key=lambda r: len(r.rows))


def _path_or_none(cache: object) -> Path | None:
    return None if cache is None else Path(str(cache))
