"""``saber board``: each entry's status decided at build time, like-for-like rankings, a
site that holds together offline, and a cache that spares a second build the work."""

from __future__ import annotations

import csv
import html
import json
import re
import shlex
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from saber.board import Board, build_board
from saber.errors import OutputExistsError
from tests.board.conftest import another_run, build, cheated, make_run


def _by_given(board: Board) -> dict[str, list]:
    found: dict[str, list] = {}
    for entry in board.entries:
        found.setdefault(Path(entry.given).name, []).append(entry)
    return found


def test_each_entry_gets_its_status_and_reason(
    site: tuple[Path, Board], inputs: dict[str, Path]
) -> None:
    _, board = site
    entries = _by_given(board)
    (good,) = entries["good"]
    assert (good.status, good.reason) == (
        "verified",
        "all 2 replays played again reproduce their records; every replay's file, hash and "
        "header checked",
    )
    assert good.short == 2  # fewer than the protocol's 100 episodes per game: said so
    (cheat,) = entries["cheat"]
    assert cheat.status == "failed"
    assert re.search(
        r"cheat: pong episode \d+: score: -?\d+\.0 in the record, -?\d+\.0 replayed", cheat.reason
    )
    (damaged,) = entries["damaged"]
    assert damaged.status == "failed" and "saber repair" in damaged.reason, damaged.reason
    (deviating,) = entries["deviating"]
    # Its run.json claims a deviation its replays were not played with: judged by the
    # replays, the claim fails (a run is never made "not SABER", nor SABER, by run.json).
    assert deviating.status == "failed"
    assert "run.json says the run deviates from SABER in repeat_action_probability" in (
        deviating.reason
    )
    (table,) = entries["paper.csv"]
    assert (table.label, table.status, table.citation) == (
        "my-dqn",
        "published, not verifiable",
        "A. Author (2024), Table 3",
    )
    (uncited,) = entries["uncited.csv"]
    assert uncited.status == "failed" and "without a citation" in uncited.reason
    assert "uncited.board.json" in uncited.reason
    (missing,) = entries["no-such-run"]
    assert missing.status == "failed" and missing.reason.startswith("no such file or directory")
    paper = entries["saber-paper"]
    assert [e.status for e in paper] == ["published, not verifiable"] * 2
    assert "copy" not in entries  # the same run as good: counted once
    assert board.notes == [f"{inputs['copy']}: the same run as {good.given}: counted once"]
    assert good.same_as == (str(inputs["copy"]),)
    assert len(board.lines()) == len(board.entries) + len(board.notes)


def test_the_ranking_compares_like_for_like_and_says_on_which_games(
    site: tuple[Path, Board],
) -> None:
    folder, board = site
    rankings = {r.game_set.slug: r for r in board.rankings}
    # Ranked: verified and published entries only; the failed and the not SABER never.
    common = rankings["common"]
    assert common.game_set.games == ("pong",)
    ranked = {entry.label for entry, _ in common.rows}
    assert ranked == {"random (good)", "my-dqn", "rainbow@saber-paper", "rainbow-iqn@saber-paper"}
    # On the paper's 61 games only the paper's agents have every game; the others are
    # listed with what they lack, never ranked over fewer games.
    saber61 = rankings["saber61"]
    assert {entry.label for entry, _ in saber61.rows} == {
        "rainbow@saber-paper",
        "rainbow-iqn@saber-paper",
    }
    assert {entry.label: len(lacking) for entry, lacking in saber61.lacking} == {
        "random (good)": 60,
        "my-dqn": 59,
    }
    # The front page ranks what a visitor came for: the verified run, on the games it
    # covers, not under "not ranked" beside the paper's 61.
    assert board.default == "common"
    index = (folder / "index.html").read_text()
    assert "compared like for like on the games every ranked entry has (1 game)" in index
    saber61_page = (folder / "rankings" / "saber61.html").read_text()
    assert "compared like for like on the SABER paper's games (61 games)" in html.unescape(
        saber61_page
    )
    assert "random (good) (" in saber61_page and "lacks 60 of 61 games" in saber61_page
    pong = (folder / "rankings" / "common.html").read_text()
    assert '<a href="../games/pong.html">Pong</a>' in pong
    assert (
        "1 of 1 (2 episodes each, fewer than 100)" in pong
        and "fewer than the protocol's 100" in pong
    )
    assert "(no interval)" in pong and "nothing to bootstrap" in pong
    assert (
        "Double Dunk, Elevator Action and Tennis have no world record: the statistics are "
        "over the other 58 games of the set"
    ) in saber61_page
    assert "no world record" not in pong


def test_the_ranking_shows_its_statistics_and_each_status_in_words(
    site: tuple[Path, Board],
) -> None:
    """The issue's ranking columns, in rank order without JavaScript; a status is a word and
    a symbol (never a colour alone), its colour one of the Okabe-Ito palette's."""
    folder, board = site
    index = (folder / "index.html").read_text()
    header = re.findall(r'<th scope="col">([^<]+)</th>', index)
    assert header[:15] == [
        "Entry", "Rank", "Status", "Median [95% CI]", "IQM [95% CI]", "Mean [95% CI]",
        "Failing (games)", "Poor (games)", "Medium (games)", "Fair (games)",
        "Superhuman (games)", "Training frames", "Games", "Runs", "Date",
    ]  # fmt: skip
    ranking = next(r for r in board.rankings if r.game_set.slug == board.default)
    shown = re.findall(r'<tr><th scope="row"><a href="entries/[^"]+">([^<]+)</a>', index)
    assert shown[: len(ranking.rows)] == [entry.label for entry, _ in ranking.rows]
    words = re.findall(r'<span aria-hidden="true">(.) </span>([^<]+)</span>', index)
    assert set(words) == {("✓", "verified"), ("◇", "published, not verifiable"), ("✗", "failed")}
    colours = set(
        re.findall(
            r"\.s-[a-z-]+ \{ border-color: (#[0-9a-f]{6}); \}", (folder / "board.css").read_text()
        )
    )
    okabe_ito = {"#e69f00", "#56b4e9", "#009e73", "#f0e442", "#0072b2", "#d55e00", "#cc79a7"}
    assert len(colours) == 7 and colours <= okabe_ito


def test_every_table_is_downloadable_and_matches_the_pages(site: tuple[Path, Board]) -> None:
    folder, board = site
    for ranking in board.rankings:
        slug = ranking.game_set.slug
        rows = list(csv.DictReader((folder / "rankings" / f"{slug}.csv").open()))
        document = json.loads((folder / "rankings" / f"{slug}.json").read_text())
        assert [r["entry"] for r in rows] == [e.label for e, _ in ranking.rows]
        assert [r["entry"] for r in document["rows"]] == [r["entry"] for r in rows]
    entries = list(csv.DictReader((folder / "entries.csv").open()))
    assert [(r["entry"], r["status"]) for r in entries] == [
        (e.label, e.status) for e in board.entries
    ]
    per_game = json.loads((folder / "per-game.json").read_text())["rows"]
    assert {"pong", "breakout"} <= {r["game"] for r in per_game}
    assert any(r["entry"] == "random (good)" and r["status"] == "verified" for r in per_game)


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.tables = self.captions = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.links += [value for key, value in attrs if key in ("href", "src") and value]
        if found.get("id"):
            self.ids.add(str(found["id"]))
        self.tables += tag == "table"
        self.captions += tag == "caption"


def test_every_link_resolves_and_nothing_comes_from_the_network(
    site: tuple[Path, Board],
) -> None:
    folder, _ = site
    pages = sorted(folder.rglob("*.html"))
    assert len(pages) > 10
    broken, external = [], []
    for page in pages:
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8"))
        if page.name != "report.html":  # saber report's own page: tables captioned hidden
            assert parser.tables == parser.captions, page
        for link in parser.links:
            parts = urlsplit(link)
            if parts.scheme == "data" or link.startswith("#"):
                continue
            if parts.scheme or parts.netloc:
                external.append(f"{page}: {link}")
                continue
            target = (page.parent / unquote(parts.path)).resolve()
            if not target.is_file() or folder.resolve() not in target.parents:
                broken.append(f"{page.relative_to(folder)}: {link}")
    assert broken == [] and external == []
    for name in ("board.css", "sort.js"):  # nothing they fetch either
        text = (folder / name).read_text()
        assert "url(" not in text and "http" not in text and "@import" not in text


def test_an_entry_page_shows_provenance_and_how_to_check_it(site: tuple[Path, Board]) -> None:
    folder, board = site
    (good,) = _by_given(board)["good"]
    text = (folder / "entries" / good.id / "index.html").read_text()
    assert "saber eval" in text  # the command that reproduces its evaluation
    assert f"saber verify {good.given}" in text
    assert "repeat_action_probability" in text and "ale_py" in text
    report = (folder / "entries" / good.id / "report.html").read_text()
    assert '<a href="index.html">random (good) on the SABER board</a>' in report
    (missing,) = _by_given(board)["no-such-run"]
    text = (folder / "entries" / missing.id / "index.html").read_text()
    assert "no such file or directory" in text


def test_a_second_build_verifies_only_the_new_run(
    tmp_path: Path, good_run: Path, site: tuple[Path, Board]
) -> None:
    """The cache is keyed by content: the first build's verification of ``good`` is found
    by a build that names it by another path (a copy), and only the new run is played."""
    cache = tmp_path / "cache"
    first = build([good_run, "saber-paper"], tmp_path / "site", cache)
    assert first.verified_now == 1
    copy = tmp_path / "elsewhere"
    shutil.copytree(good_run, copy)
    new = make_run(tmp_path / "new", base_seed=3)  # another run: its own play
    second = build([copy, new, "saber-paper"], tmp_path / "site", cache)
    assert second.verified_now == 1
    assert [e.status for e in second.entries[:2]] == ["verified", "verified"]
    # The copy's scores came from the cache (read from good_run), and name the copy.
    assert second.entries[0].table.sources == [str(copy / "episodes.jsonl")]
    assert second.reports_computed < first.reports_computed + 4


def test_a_sample_says_its_size_and_how_to_check_the_rest(tmp_path: Path, good_run: Path) -> None:
    board = build([good_run], tmp_path / "site", tmp_path / "cache", sample=1)
    (entry,) = board.entries
    assert entry.status == "verified"
    assert entry.reason.startswith("a sample of 1 of 2 replays played again reproduce")
    page = (tmp_path / "site" / "entries" / entry.id / "index.html").read_text()
    # The seed was drawn at build time, and the page gives it with the check it repeats.
    assert (
        f"1 of 2 finished episodes were played again, a sample drawn at build time (--sample 1, seed {board.seed}"
        in html.unescape(page)
    )
    assert f"saber verify {good_run} --sample 1 --sample-seed {board.seed}" in page
    assert f"saber verify {good_run}\n" in page or f"saber verify {good_run}</code>" in page
    again = build([good_run], tmp_path / "site", tmp_path / "cache", sample=1)
    assert again.seed != board.seed  # 63 bits a build: never the same twice


def test_a_folder_of_runs_is_read_as_their_entries(tmp_path: Path, inputs: dict) -> None:
    board = build([inputs["good"].parent], tmp_path / "site", tmp_path / "cache")
    assert [(e.label, e.status) for e in board.entries] == [("random", "verified")]


def test_the_site_is_written_whole_and_never_over_files_it_did_not_make(
    tmp_path: Path,
) -> None:
    out = tmp_path / "site"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(OutputExistsError, match="holds files saber board did not write"):
        build_board(["saber-paper"], out, resamples=10, figures=False, workers=0, cache=None)
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    (out / "notes.txt").unlink()
    build_board(["saber-paper"], out, resamples=10, figures=False, workers=0, cache=None)
    first = {p.relative_to(out) for p in out.rglob("*")}
    # A site of its own is replaced whole: the pages of an entry no longer given go.
    build_board(["saber-random"], out, resamples=10, figures=False, workers=0, cache=None)
    second = {p.relative_to(out) for p in out.rglob("*")}
    assert not any("rainbow" in str(p) for p in second) and first != second
    assert [p.name for p in tmp_path.iterdir()] == ["site"]  # nothing left aside
    # A file put into a site saber wrote is not saber's: refused, kept.
    (out / "entries" / "mine.html").write_text("mine")
    with pytest.raises(OutputExistsError, match=r"entries/mine\.html"):
        build_board(["saber-paper"], out, resamples=10, figures=False, workers=0, cache=None)
    assert (out / "entries" / "mine.html").read_text() == "mine"


def test_a_site_that_cannot_be_written_whole_leaves_the_old_one(tmp_path: Path) -> None:
    """A failure halfway (here a file where a folder must go) removes what was written
    aside and leaves the site in place as it was."""
    from saber.board.publish import publish

    out = tmp_path / "site"
    publish({"index.html": "old"}, out)
    with pytest.raises(OSError):
        publish({"index.html": "new", "a": "file", "a/b.html": "under a file"}, out)
    assert (out / "index.html").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_the_shipped_board_ranks_the_paper_and_saber_agents(tmp_path: Path) -> None:
    """The project's own board (built in CI, linked from the docs)."""
    board = build_board(
        [], tmp_path / "site", shipped=True, resamples=10, figures=False, workers=0, cache=None
    )
    labels = [e.label for e in board.entries]
    assert labels == [
        *("rainbow@saber-paper", "rainbow-iqn@saber-paper", "random@saber", "ppo-pong"),
        "ppo@saber",  # the saber-ppo baselines
    ]
    assert {e.status for e in board.entries} == {"published, not verifiable"}
    assert board.default == "saber61"
    ranked = [entry.label for entry, _ in board.rankings[0].rows]
    assert ranked[-1] == "random@saber" and len(ranked) == 3


def test_jobs_in_worker_processes_keep_their_order_and_their_errors() -> None:
    from saber.board.parallel import run_all

    found = run_all(pow, [(2, 3), ("a", 2), (3, 2), (4, 2)], workers=2)
    assert found[0] == 8 and found[2:] == [9, 16]
    assert isinstance(found[1], TypeError)


def test_bad_runs_and_paths_are_one_line_each_on_the_command_line(
    tmp_path: Path, inputs: dict[str, Path]
) -> None:
    """A damaged run, a run.json that claims other settings, the same run twice, a file
    that is no table and a folder without runs: one line each, a status, the site written
    whole, exit 1 (entries failed) and no traceback."""
    from click.testing import CliRunner

    from saber.cli import main
    from saber.errors import ExitCode

    odd = tmp_path / "notes.txt"
    odd.write_text("not scores")
    empty = tmp_path / "empty"
    empty.mkdir()
    good, copy, damaged, deviating = (inputs[k] for k in ("good", "copy", "damaged", "deviating"))
    result = CliRunner().invoke(
        main,
        [
            "board", *map(str, (good, copy, damaged, deviating, odd, empty)),
            "--out", str(tmp_path / "site"), "--cache", str(tmp_path / "cache"),
            "--no-figures", "--resamples", "10", "--workers", "0",
        ],
    )  # fmt: skip
    assert result.exit_code == ExitCode.FAILED, result.output
    assert (tmp_path / "site" / "index.html").is_file()
    assert "Traceback" not in result.output
    lines = result.output.splitlines()
    assert len(lines) == 7, lines  # five entries, one note, what was written
    assert re.fullmatch(
        rf"verified: random \(good\) \({good}\): all 2 replays played again reproduce .*",
        lines[0],
    )
    assert re.fullmatch(rf"failed: random \(damaged\) \({damaged}\): .*saber repair.*", lines[1])
    assert lines[2].startswith(
        f"failed: random (deviating) ({deviating}): {deviating}: run.json says the run "
        "deviates from SABER in repeat_action_probability"
    )
    assert lines[3] == f"failed: {odd} ({odd}): not a run directory, nor a score table (.csv)"
    assert (
        lines[4]
        == f"failed: {empty} ({empty}): holds no run directory (no run.json in it or below)"
    )
    assert lines[5] == f"{copy}: the same run as {good}: counted once"
    assert lines[6].startswith(f"wrote {tmp_path / 'site'}: 5 entries (1 verified, 4 failed)")


def test_the_projects_board_verifies_the_baselines_runs_and_counts_their_scores_once(
    tmp_path: Path,
) -> None:
    """The project's own board (docs/conf.py, CI): the shipped entries and every run under
    baselines/evals, a seeded sample of each verified; saber-ppo's shipped scores, recorded
    from those runs, count once, as them."""
    from saber.board.shipped import project_runs

    root = Path(__file__).resolve().parents[2]
    folders = project_runs(root)
    runs = {p.parent for folder in folders for p in (root / folder).glob("*/run.json")}
    assert runs, "the repository's baselines hold no run"
    # A copy of one of them with a score changed, given after them: failed, and the
    # baselines' entry is made of the real run.
    tampered = Path(shutil.copytree(sorted(runs)[0], tmp_path / "tampered"))
    lines = (tampered / "episodes.jsonl").read_text().splitlines()
    first = next(i for i, line in enumerate(lines) if '"score": ' in line)
    lines[first] = json.dumps(cheated([json.loads(lines[first])])[0])
    (tampered / "episodes.jsonl").write_text("\n".join(lines) + "\n")
    board = build_board(
        [*(root / folder for folder in folders), tampered], tmp_path / "site", shipped=True,
        sample=1, resamples=10, figures=False, workers=0, cache=None,
    )  # fmt: skip
    (copy,) = [e for e in board.entries if e.given == str(tampered)]
    assert copy.status == "failed" and "tampered/run.json does not belong to" in copy.reason
    verified = [e for e in board.entries if e.status == "verified"]
    assert {run for e in verified for run in e.run_dirs} == runs
    for entry in verified:  # 100 episodes a finished evaluation; fewer while one lands
        count = len(entry.run_dirs)  # a sample of 1 from each run
        assert re.match(rf"a sample of {count} of \d+ replays played again reproduce", entry.reason)
        assert entry.short is None  # 100 episodes a game: the protocol's
        assert entry.verification["check_all"] == [
            f"saber verify {shlex.quote(str(run))}" for run in entry.run_dirs
        ]
    # saber-ppo's runs, one a game, are one entry of its name (not its agent's, ppo@saber,
    # which a report draws as a reference), ranked on Atari-5 as the shipped scores were;
    # the shipped scores are not on the board beside them.
    (ppo,) = [e for e in board.entries if e.label == "saber-ppo"]
    assert ppo.status == "verified" and ppo.same_as == ("saber-ppo",)
    assert {r.run for r in ppo.table.records} >= {"seed1"}
    (note,) = [n for n in board.notes if n.startswith("saber-ppo (ppo@saber)")]
    assert note.endswith("one entry of those runs, saber-ppo, checked by replay")
    atari5 = next(r for r in board.rankings if r.game_set.slug == "atari5")
    assert "saber-ppo" in [entry.label for entry, _ in atari5.rows]


def test_report_pages_link_small_figures_at_the_ranked_limit(tmp_path: Path) -> None:
    """The board's report pages: figures at the SABER limit (and across limits), each a
    small PNG file of its own (not inlined), found in the cache by the next build."""
    pytest.importorskip("matplotlib")
    site, cache = tmp_path / "site", tmp_path / "cache"
    board = build_board(["saber-paper"], site, resamples=10, figures=True, workers=0, cache=cache)
    for entry in board.entries:
        page = (site / "entries" / entry.id / "report.html").read_text()
        assert "data:image" not in page
        shown = re.findall(r'id="figure-([a-z_0-9]+)"', page)
        assert "per_game_saber" in shown and "time_limits" in shown
        assert all(n.endswith("_saber") or n == "time_limits" for n in shown), shown
        for source in re.findall(r'<img src="([^"]+)"', page):
            assert (site / "entries" / entry.id / source).resolve().is_file(), source
        assert len(page.encode()) < 120_000  # the tables: figures are files
    figures = {p.name: p.read_bytes() for p in (site / "figures").glob("*.png")}
    assert len(figures) >= 2 * 5 and all(len(png) < 30_000 for png in figures.values())
    assert board.size < 1_500_000, board.size  # 2.1 MB with every limit's figures inlined
    again = build_board(["saber-paper"], site, resamples=10, figures=True, workers=0, cache=cache)
    assert again.reports_computed == 0
    assert {p.name: p.read_bytes() for p in (site / "figures").glob("*.png")} == figures


@pytest.mark.parametrize("copies_first", [False, True], ids=["run-first", "copies-first"])
def test_a_copy_with_a_changed_score_is_failed_and_the_run_stays_verified(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, good_run: Path, copies_first: bool
) -> None:
    """A run directory copied and one record's score changed, the run_id kept: a copy by
    its run_id, not by its files. In either order each copy is shown failed with the
    reason, never ranked, and the run itself stays on the board, verified and ranked."""
    naive = Path(shutil.copytree(good_run, tmp_path / "naive"))  # only the score changed
    lines = (naive / "episodes.jsonl").read_text().splitlines()
    lines[0] = json.dumps(cheated([json.loads(lines[0])])[0])
    (naive / "episodes.jsonl").write_text("\n".join(lines) + "\n")
    careful = another_run(good_run, tmp_path / "careful", cheated, keep_id=True)
    given = [naive, careful, good_run] if copies_first else [good_run, naive, careful]
    # One cache for both orders: the copies' content is the same, so the second build
    # finds their verifications (the statuses come from the cache as from a replay).
    board = build(given, tmp_path / "site", tmp_path_factory.getbasetemp() / "copies-cache")
    by_name = {Path(e.given).name: e for e in board.entries}
    run = by_name[good_run.name]
    assert run.status == "verified" and run.reason.startswith("all 2 replays played again")
    assert by_name["naive"].status == "failed"
    assert "naive/run.json does not belong to" in by_name["naive"].reason
    assert by_name["careful"].status == "failed"
    assert re.search(
        r"careful: pong episode \d+: score: .* in the record", by_name["careful"].reason
    )
    ranked = {entry.label for ranking in board.rankings for entry, _ in ranking.rows}
    assert run.label in ranked and not {by_name[n].label for n in ("naive", "careful")} & ranked
    run_id = json.loads((good_run / "run.json").read_text())["run_id"]
    first = str(given[0])
    assert sorted(board.notes) == sorted(
        f"{path}: the same run (run_id {run_id}) as {first}, but its files differ: neither is "
        "ranked unless their replays prove the same records"
        for path in map(str, given[1:])
    )
    site = tmp_path / "site"
    for name in ("naive", "careful"):
        page = (site / "entries" / by_name[name].id / "index.html").read_text()
        assert "✗ </span>failed</span>" in page and by_name[name].reason in html.unescape(page)
        assert f"<dd>{first} (its files differ)</dd>" in page or name == Path(first).name
    index = (site / "index.html").read_text()
    assert index.count("</span>failed</span>") == 2  # under "Entries never ranked"
    assert "<h2>Given twice, or copied</h2>" in index and "but its files differ" in index


@pytest.mark.parametrize("copy_first", [False, True], ids=["run-first", "copy-first"])
def test_copies_of_a_run_whose_files_differ_and_both_verify_count_once(
    tmp_path: Path, good_run: Path, copy_first: bool
) -> None:
    """Two copies of one run that both verify and whose records are the same (here
    run.json written again, indented) are one run on the board, the same one whichever
    is given first, the other named in a note."""
    copy = Path(shutil.copytree(good_run, tmp_path / "indented"))
    (copy / "run.json").write_text(
        json.dumps(json.loads((copy / "run.json").read_text()), indent=2)
    )
    given = [copy, good_run] if copy_first else [good_run, copy]
    board = build(given, tmp_path / f"site-{copy_first}", tmp_path / "cache")
    (kept,) = board.entries
    assert kept.status == "verified"
    other = str(copy) if kept.given == str(good_run) else str(good_run)
    assert kept.same_as == (other,)
    assert board.notes[-1].startswith(f"{other}: a copy of the same run as {kept.given} (run_id ")
    assert board.notes[-1].endswith("its replays' records are the same: counted once")
    again = build(given[::-1], tmp_path / f"again-{copy_first}", tmp_path / "cache")
    assert [e.given for e in again.entries] == [kept.given]  # never the order given


@pytest.mark.parametrize("honest_first", [False, True], ids=["other-first", "honest-first"])
def test_two_runs_under_one_run_id_that_both_verify_are_in_conflict(
    tmp_path: Path, good_run: Path, honest_first: bool
) -> None:
    """Another real run (other seeds, its replays its own) given the run_id of the honest
    one: both verify, their records differ, so neither is ranked until settled, both shown
    with the reason, in either order; saber board exits 1."""
    other = make_run(tmp_path / "other", base_seed=7)
    found = json.loads((other / "run.json").read_text())
    found["run_id"] = json.loads((good_run / "run.json").read_text())["run_id"]
    (other / "run.json").write_text(json.dumps(found))
    given = [good_run, other] if honest_first else [other, good_run]
    board = build(given, tmp_path / "site", tmp_path / "cache")
    assert [e.status for e in board.entries] == ["in conflict", "in conflict"]
    for entry in board.entries:
        assert (
            entry.reason.startswith("copies of the run ")
            and "until the conflict is settled" in entry.reason
        )
    assert not any(ranking.rows for ranking in board.rankings)
    assert not board.passed


def test_a_game_lists_its_best_ranked_score_first_whatever_its_status(
    site: tuple[Path, Board],
) -> None:
    """On a game's page and in the games' index, the best ranked score comes first, a
    published one above a verified one that scores less (random play of Pong)."""
    folder, _ = site
    rows = [r for r in json.loads((folder / "per-game.json").read_text())["rows"]]
    pong = [r for r in rows if r["game"] == "pong"]  # in the page's order
    ranked = [r for r in pong if r["status"] in ("verified", "published, not verifiable")]
    best = max(ranked, key=lambda r: r["world_record_pct"])
    assert pong[0]["entry"] == best["entry"] and best["status"] != "verified"
    assert [r["world_record_pct"] for r in pong[: len(ranked)]] == sorted(
        (r["world_record_pct"] for r in ranked), reverse=True
    )
    index = (folder / "games" / "index.html").read_text()
    cell = re.search(r'>Pong</a></th>.*?data-label="Best ranked entry"><span>([^<]+)<', index)
    assert cell and html.unescape(cell.group(1)) == best["entry"]


def test_a_percentage_that_rounds_to_zero_has_no_sign() -> None:
    """Random play's world-record-normalized scores are a hair below zero: "0.0%", not
    "-0.0%", which reads as a typo; a tenth below zero keeps its sign."""
    from saber.board.pages import pct, with_interval

    assert [pct(-0.001), pct(-0.06), pct(0.04), pct(12.345)] == ["0.0%", "-0.1%", "0.0%", "12.3%"]
    assert with_interval(-0.02, [-0.1, -0.001]) == "0.0% [-0.1%, 0.0%]"


def test_a_reference_at_a_checkpoint_and_one_agent_given_twice(tmp_path: Path) -> None:
    """A Dopamine reference takes its checkpoint as saber report does (dopamine:dqn@50M);
    one it has not fails with the reason; the same agent's scores from two names count
    once; its deviations are named once, not after a second "not SABER"."""
    given = ["dopamine:dqn", "dopamine:dqn@50M", "dopamine:dqn@200M", "dopamine@7M"]
    board = build(given, tmp_path / "site", tmp_path / "cache")
    assert [(e.label, e.status) for e in board.entries] == [
        ("dqn@dopamine-200M", "not SABER"),
        ("dqn@dopamine-50M", "not SABER"),
        ("dopamine@7M", "failed"),
    ]
    assert board.entries[0].reason.startswith("not evaluated under SABER: sticky actions kept")
    assert "no checkpoint @7M" in board.entries[2].reason
    assert board.notes == [
        "dopamine:dqn@200M: the same scores of dqn@dopamine-200M as dopamine:dqn: counted once"
    ]


def test_a_run_past_the_budget_is_shown_with_the_command_that_finishes_the_job(
    tmp_path: Path, good_run: Path
) -> None:
    board = build([good_run], tmp_path / "site", tmp_path / "cache", budget=1)
    (entry,) = board.entries
    assert entry.status == "not verified within the budget" and not board.passed
    assert entry.reason.startswith("not verified within the budget (1 agent steps of play a run;")
    assert entry.reason.endswith(f"saber verify {good_run} finishes the job")
    assert not any(ranking.rows for ranking in board.rankings)


def test_a_replay_that_is_a_fifo_or_a_link_out_is_refused_in_bounded_time(
    tmp_path: Path, good_run: Path
) -> None:
    """Hostile files where a replay should be: a FIFO (a reader would wait for good) and
    a link to /dev/zero (a reader would fill memory): the run fails with the reason."""
    import os

    for name, make in (("fifo", os.mkfifo), ("zero", lambda p: os.symlink("/dev/zero", p))):
        run = Path(shutil.copytree(good_run, tmp_path / name))
        first = json.loads((run / "episodes.jsonl").read_text().splitlines()[0])
        replay = run / first["replay"]
        replay.unlink()
        make(replay)
        board = build([run], tmp_path / f"site-{name}", tmp_path / "cache")
        (entry,) = board.entries
        assert entry.status == "failed" and "replay" in entry.reason, entry.reason


def test_a_name_with_mathtext_is_drawn_literally_in_the_figures(tmp_path: Path) -> None:
    """matplotlib's math ("$\\sqrt{$", unbalanced) in an agent's name would crash the
    figures and leave the page without them: names are drawn as text."""
    pytest.importorskip("matplotlib")
    table = tmp_path / "math.csv"
    table.write_text('agent,game,score\n"$\\sqrt{$ agent",pong,3\n"$\\sqrt{$ agent",breakout,9\n')
    (tmp_path / "math.board.json").write_text('{"citation": "a test"}')
    board = build_board([table], tmp_path / "site", resamples=10, figures=True, workers=0,
                        cache=None)  # fmt: skip
    (entry,) = board.entries
    page = (tmp_path / "site" / "entries" / entry.id / "report.html").read_text()
    assert '<img src="../../figures/' in page
    assert "$\\sqrt{$ agent" in html.unescape(page)


def test_a_copy_of_a_run_under_another_name_is_credited_to_no_one(
    tmp_path: Path, good_run: Path
) -> None:
    """Someone's run copied with a new run_id and a board.json naming it "mine": the same
    play under two runs. Neither is ranked, in either order, and the copy is never shown
    as "mine" (a run is named by its replays' agent)."""
    copy = another_run(good_run, tmp_path / "mine")
    (copy / "board.json").write_text(json.dumps({"name": "mine"}))
    for order in ([good_run, copy], [copy, good_run]):
        board = build(order, tmp_path / f"site-{order[0].name}", tmp_path / "cache")
        assert [e.status for e in board.entries] == ["in conflict", "in conflict"]
        assert all("the same play" in e.reason for e in board.entries)
        assert "mine" not in {e.label for e in board.entries}
        (shown,) = [e for e in board.entries if e.given == str(copy)]
        assert shown.facts["Name its board.json gives"] == "mine"
        assert not any(ranking.rows for ranking in board.rankings)


@pytest.mark.parametrize(
    ("field", "value"),
    [("score", 21.0), ("score_5min", 21.0), ("score_30min", 21.0), ("frames", 7),
     ("steps", 3), ("end", "time_cap"), ("rollovers", 1), ("infinite", True), ("seed", 12345)],
)  # fmt: skip
def test_a_record_its_replay_does_not_reproduce_is_never_shown_verified(
    tmp_path: Path, good_run: Path, field: str, value: object
) -> None:
    """One field of one record changed, the digest recomputed (as a submitter would): the
    entry fails with the field named. Sampled, every record changed: whichever the draw
    (from a seed drawn at build time), the sample holds one, and fails."""

    def one(records: list[dict]) -> list[dict]:
        return [{**records[0], field: value}, *records[1:]]

    def every(records: list[dict]) -> list[dict]:
        return [{**record, field: value} for record in records]

    for sample, edit in ((None, one), (1, every)):
        run = another_run(good_run, tmp_path / f"edited-{sample}", edit, keep_id=True)
        board = build([run], tmp_path / f"site-{sample}", tmp_path / "cache", sample=sample)
        (entry,) = board.entries
        assert entry.status == "failed", (sample, entry.reason)
        # (every seed changed: the scores' reader refuses the run before any replay)
        assert field in entry.reason or edit is every, entry.reason
        assert not any(ranking.rows for ranking in board.rankings)


def test_a_run_with_episodes_of_its_request_missing_is_shown_never_ranked(
    tmp_path: Path, good_run: Path
) -> None:
    """The worse episode dropped (a higher mean), the digest recomputed: the run is not
    whole, so it is shown "incomplete" with the count, never ranked."""

    def drop_worse(records: list[dict]) -> list[dict]:
        return [max(records, key=lambda r: r["score"])]

    run = another_run(good_run, tmp_path / "dropped", drop_worse, keep_id=True)
    board = build([run], tmp_path / "site", tmp_path / "cache")
    (entry,) = board.entries
    assert entry.status == "incomplete", entry.reason
    assert entry.reason.startswith("not whole: 1 of the 2 episodes its request defines")
    assert not any(ranking.rows for ranking in board.rankings) and not board.passed


def test_not_saber_is_read_from_the_replays_never_from_run_json(tmp_path: Path) -> None:
    """A real run with sticky actions off: shown "not SABER", its deviation named from its
    replays. Its run.json's flags cleared (as a submitter would): it fails, the
    disagreement named, never shown or ranked as SABER."""
    from saber.harness import EnvOptions

    sticky_off = EnvOptions({"repeat_action_probability": 0.0}, allow_non_saber=True)
    honest = make_run(tmp_path / "sticky-off", env_options=sticky_off)
    cleared = Path(shutil.copytree(honest, tmp_path / "cleared"))
    found = json.loads((cleared / "run.json").read_text())
    found["deviations"], found["non_saber"] = {}, False
    found["settings"]["repeat_action_probability"] = 0.25
    (cleared / "run.json").write_text(json.dumps(found))
    board = build([honest, cleared], tmp_path / "site", tmp_path / "cache")
    by_name = {Path(e.given).name: e for e in board.entries}
    assert by_name["sticky-off"].status == "not SABER"
    assert "repeat_action_probability 0.0 (SABER: 0.25)" in by_name["sticky-off"].reason
    assert by_name["cleared"].status == "failed"
    assert "repeat_action_probability" in by_name["cleared"].reason
    assert not any(ranking.rows for ranking in board.rankings)
