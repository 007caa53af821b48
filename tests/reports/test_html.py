"""``saber report --html``: one self-contained page, looked at in a real headless Chromium.

The browser tests run Debian's chromium; .ci/run installs it, and under CI=true its
absence fails the tests. The figures' presence is checked on the screenshot itself:
the first agent's colour (Okabe-Ito blue, #0072B2) is drawn only by the figures.
"""

from __future__ import annotations

import base64
import html
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("matplotlib")  # the test extra has it; the figures need it

from PIL import Image

from saber.cli import main
from saber.errors import ExitCode
from saber.reports import make_report
from saber.reports.figures.style import PALETTE
from saber.reports.html import to_html
from saber.scoring import merge_tables, read_scores, reference_table

ROWS = "agent,run,game,episode,score\n" + "".join(
    f"{agent},r{run},{game},{episode},{base + 3 * run + episode}\n"
    for agent, base in (("dqn", 10), ("ppo <v2>", 0))
    for run in range(3)
    for game in ("pong", "venture", "boxing", "breakout", "qbert")
    for episode in range(2)
)
# Your agents at SABER, the paper's at 5, 30 minutes and SABER (on your games): classes,
# per game, profile and aggregates at each limit, improvement at SABER only (the paper's
# published means have no P(X > Y) among themselves), then the figure across limits.
FIGURES = 3 * 4 + 1 + 1
FIRST_AGENT = tuple(int(PALETTE[0][i : i + 2], 16) for i in (1, 3, 5))  # (0, 114, 178)


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("html")
    (folder / "s.csv").write_text(ROWS)
    table = merge_tables([read_scores(folder / "s.csv"), reference_table("saber-paper")])
    path = folder / "report.html"
    path.write_text(to_html(make_report(table, n_resamples=100).to_dict()), encoding="utf-8")
    return path


def _images(text: str) -> list[tuple[Image.Image, int, int]]:
    """Each inlined figure: the decoded PNG and the width and height the page gives it."""
    found = []
    for data, width, height in re.findall(
        r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)" width="(\d+)" height="(\d+)"', text
    ):
        found.append((Image.open(io.BytesIO(base64.b64decode(data))), int(width), int(height)))
    return found


def test_the_page_is_self_contained(page):
    text = page.read_text(encoding="utf-8")
    # Nothing to fetch: every src is inline data, no script, no link, no URL but text.
    assert re.findall(r'(?:src|href)="(?!data:)', text) == []
    assert "<script" not in text and "<link" not in text and "@import" not in text
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in text
    # Names are escaped: the agent "ppo <v2>" is text, not a tag.
    assert "ppo &lt;v2&gt;" in text and "<v2>" not in text
    images = _images(text)
    assert len(images) == text.count("<img") == FIGURES
    for image, width, height in images:
        assert image.format == "PNG" and image.width > 400
        assert width / height == pytest.approx(image.width / image.height, rel=0.01)
    for section in ("summary", "comparisons", "figures", "per-game", "sources"):
        assert f'<section id="{section}">' in text
    assert "are aggregated over the games your agents have" in text  # like for like


def _screenshot(chromium: str, page: Path, tmp_path: Path, width: int, height: int) -> Image.Image:
    shot = tmp_path / f"shot-{width}.png"
    run = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",  # CI runs as root
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={tmp_path / f'profile-{width}'}",
            f"--window-size={width},{height}",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0 and shot.exists(), run.stderr[-3000:]
    return Image.open(shot).convert("RGB")


def _pixels_of(image: Image.Image, colour: tuple[int, int, int]) -> int:
    return sum(1 for pixel in image.getdata() if pixel == colour)


@pytest.mark.parametrize(("width", "height"), [(1280, 5000), (390, 18000)], ids=["laptop", "phone"])
def test_chromium_shows_the_figures_on_a_laptop_and_a_phone(
    page, tmp_path, external_tool, width, height
):
    chromium = external_tool("chromium")
    shot = _screenshot(chromium, page, tmp_path, width, height)
    assert shot.size == (width, height)
    # The page's own style has no such blue: these pixels are the figures' markers and
    # bars, so the images were decoded and laid out on screen.
    assert _pixels_of(shot, FIRST_AGENT) > 500
    # The page's background reaches the right edge: nothing wider than the screen.
    right = shot.crop((width - 4, 0, width, 600))
    assert set(right.getdata()) <= {(255, 255, 255)}


# Run inside the page: how wide the page and each table box and figure are laid out, and how
# wide their content is; posted to the frame around it (a page in a file:// frame is of
# another origin: postMessage is how it may tell).
_MEASURE = """<script>
const root = document.documentElement;
const boxes = [...document.querySelectorAll('.scroll, figure')].map(box => ({
  kind: box.tagName.toLowerCase(), what: (box.querySelector('caption') || box.querySelector('figcaption') || {}).textContent,
  content: box.scrollWidth, shown: box.clientWidth}));
parent.postMessage(JSON.stringify({content: root.scrollWidth, shown: root.clientWidth, boxes}), '*');
</script>"""


def _widths(chromium: str, page: Path, tmp_path: Path, width: int) -> dict:
    """The page laid out ``width`` CSS px wide (in a frame of that width: headless Chromium
    makes no window narrower than 500 px), measured by the browser: the page's and every
    table box's and figure's scrollWidth (``content``) and clientWidth (``shown``)."""
    framed = page.read_text(encoding="utf-8").replace("</main>", "</main>" + _MEASURE)
    outer = tmp_path / f"frame-{width}.html"
    outer.write_text(
        '<!DOCTYPE html><html><body><pre id="widths"></pre><script>addEventListener("message",'
        ' e => { document.getElementById("widths").textContent = e.data; });</script>'
        f'<iframe style="border:0;width:{width}px;height:900px" '
        f'srcdoc="{html.escape(framed, quote=True)}"></iframe></body></html>',
        encoding="utf-8",
    )
    run = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={tmp_path / f'profile-{width}'}",
            "--window-size=1400,900",
            "--virtual-time-budget=10000",  # the frame's message arrives before the dump
            "--dump-dom",
            outer.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    found = re.search(r'<pre id="widths">(.+?)</pre>', run.stdout, re.S)
    assert found, run.stdout[-3000:]
    return json.loads(html.unescape(found.group(1)))


@pytest.fixture(scope="module")
def wide_page(tmp_path_factory) -> Path:
    """Your agents with the SABER paper's and Dopamine's six at 10M: twelve columns in the
    per-game table at 30 minutes, and summary tables wider than a 1366 px laptop's page."""
    folder = tmp_path_factory.mktemp("wide")
    (folder / "s.csv").write_text(ROWS)
    tables = [read_scores(folder / "s.csv"), reference_table("saber-paper")]
    table = merge_tables([*tables, reference_table("dopamine@10M")])
    path = folder / "report.html"
    path.write_text(to_html(make_report(table, n_resamples=100).to_dict()), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def five_agents_page(tmp_path_factory, five_agents_report) -> Path:
    """Five agents, the comparisons' matrices among them (tests/reports/conftest.py)."""
    path = tmp_path_factory.mktemp("five-page") / "report.html"
    path.write_text(to_html(five_agents_report), encoding="utf-8")
    return path


@pytest.mark.parametrize("width", [375, 1366], ids=["phone", "laptop"])
@pytest.mark.parametrize("which", ["page", "wide_page", "five_agents_page"])
def test_nothing_is_wider_than_the_screen(request, external_tool, tmp_path, which, width):
    """No horizontal overflow, measured by Chromium: neither the page nor any table box or
    figure has content wider than it shows (before the fix, the summary tables of a report
    with --reference saber-paper hid their last columns behind a scrollbar: on a phone,
    734-1005 px of table in a 354 px box; on a laptop, with Dopamine's agents too)."""
    chromium = external_tool("chromium")
    page = request.getfixturevalue(which)
    widths = _widths(chromium, page, tmp_path, width)
    assert widths["shown"] == width
    assert widths["content"] <= widths["shown"]
    kinds = [box["kind"] for box in widths["boxes"]]
    # 2 summary tables, the comparison matrices, 3 per-game tables: every one measured.
    tables = page.read_text(encoding="utf-8").count('<div class="scroll">')
    assert tables >= 2 + 2 + 3 and kinds.count("div") == tables
    assert kinds.count("figure") >= FIGURES
    wider = [box for box in widths["boxes"] if box["content"] > box["shown"]]
    assert wider == []


def test_a_phone_stacks_each_row_under_the_column_names(page):
    """On a phone each cell shows its column's name (``data-label``); an interval is never
    cut, and an agent's name may break after its ``@``; a header asks for no more width
    than its longest word (``.h``), so a table too wide wraps its headers first."""
    text = page.read_text(encoding="utf-8")
    assert '<th class="r" scope="col"><span class="h">Median [95% CI]</span></th>' in text
    assert '<td class="r" data-label="Median [95% CI]"><span><span class="nb">' in text
    assert re.search(r'<span class="nb">\[[0-9.]+%, [0-9.]+%\]</span>', text)
    assert '<span class="nb">rainbow-iqn@</span><wbr><span class="nb">saber-paper</span>' in text


def test_chromium_loads_every_figure(page, external_tool, tmp_path):
    chromium = external_tool("chromium")
    run = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    dom = run.stdout
    assert dom.count("<img") == dom.count("<figure") == FIGURES
    assert "<h1>SABER report</h1>" in dom


def test_cli_writes_the_page(tmp_path):
    (tmp_path / "s.csv").write_text("game,episode,score\npong,0,-21\npong,1,-19\n")
    out = CliRunner().invoke(
        main, ["report", str(tmp_path / "s.csv"), "--html", str(tmp_path / "r.html")]
    )
    assert out.exit_code == 0, out.output
    assert out.output == f"wrote {tmp_path / 'r.html'}\n"
    text = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "Per-game scores" in text
    # One game of one run: its figures are drawn, the IQM is left out with the reason.
    assert _images(text)
    assert "IQM not shown (agent, SABER (unlimited))" in text


def test_html_without_matplotlib_is_one_line_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # as if not installed
    (tmp_path / "s.csv").write_text("game,score\npong,0\n")
    out = CliRunner().invoke(
        main,
        ["report", str(tmp_path / "s.csv"), "--json", str(tmp_path / "r.json"), "--html",
         str(tmp_path / "r.html")],
    )  # fmt: skip
    assert out.exit_code == ExitCode.BAD_INPUT
    assert 'pip install "saber-ale[plots]"' in out.output and "Traceback" not in out.output
    assert not (tmp_path / "r.json").exists() and not (tmp_path / "r.html").exists()
