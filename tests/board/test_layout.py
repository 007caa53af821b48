"""The board's pages in a real headless Chromium: no horizontal overflow on a phone (375 px)
or a laptop (1366 px), and the tables sort by any column with the site's own script."""

from __future__ import annotations

import html
import json
import re
import subprocess
from pathlib import Path

import pytest

from saber.board import Board

# Measures the page in a frame and posts the widths to the outer page, which headless
# Chromium's --dump-dom prints (the method of tests/reports/test_html.py).
_MEASURE = """<script>
addEventListener("load", () => {
  const root = document.documentElement;
  const boxes = [...document.querySelectorAll(".scroll, .pairs, pre, dl, nav")].map((box) => ({
    what: (box.querySelector("caption") || box).textContent.slice(0, 60),
    content: box.scrollWidth, shown: box.clientWidth}));
  parent.postMessage(JSON.stringify({content: root.scrollWidth, shown: root.clientWidth, boxes}), "*");
});
</script>"""


def _dump(chromium: str, outer: Path, tmp_path: Path, name: str) -> str:
    run = subprocess.run(
        [
            chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            f"--user-data-dir={tmp_path / f'profile-{name}'}", "--window-size=1400,900",
            "--virtual-time-budget=10000", "--allow-file-access-from-files", "--dump-dom",
            outer.as_uri(),
        ],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


def _widths(chromium: str, page: Path, tmp_path: Path, width: int) -> dict:
    """``page`` laid out ``width`` CSS px wide, in a frame of that width (headless Chromium
    makes no window narrower than 500 px); its style sheet inlined, as srcdoc has no base."""
    text = page.read_text(encoding="utf-8")
    style = (page.parent / re.search(r'href="([^"]*board\.css)"', text).group(1)).read_text()
    text = re.sub(r'<link rel="stylesheet"[^>]*>', f"<style>{style}</style>", text)
    framed = text.replace("</main>", "</main>" + _MEASURE)
    outer = tmp_path / f"frame-{width}.html"
    outer.write_text(
        '<!DOCTYPE html><html><body><pre id="widths"></pre><script>addEventListener("message",'
        ' e => { document.getElementById("widths").textContent = e.data; });</script>'
        f'<iframe style="border:0;width:{width}px;height:900px" '
        f'srcdoc="{html.escape(framed, quote=True)}"></iframe></body></html>',
        encoding="utf-8",
    )
    found = re.search(
        r'<pre id="widths">(.+?)</pre>', _dump(chromium, outer, tmp_path, str(width)), re.S
    )
    assert found
    return json.loads(html.unescape(found.group(1)))


PAGES = [
    "index.html", "rankings/common.html", "rankings/saber61.html", "entries/index.html",
    "games/pong.html", "entry", "long-path entry", "about.html", "downloads.html",
]  # fmt: skip


@pytest.mark.parametrize("width", [375, 1366], ids=["phone", "laptop"])
def test_no_page_is_wider_than_the_screen(
    site: tuple[Path, Board], chromium: str, tmp_path: Path, width: int
) -> None:
    folder, board = site
    good = next(e for e in board.entries if e.status == "verified")
    # A failed entry whose path is longer than a phone is wide, in no word breaks: it wraps.
    long_path = next(e for e in board.entries if "longer_than_a_phone" in e.given)
    wider = []
    for name in PAGES:
        entry = {"entry": good, "long-path entry": long_path}.get(name)
        page = folder / (f"entries/{entry.id}/index.html" if entry else name)
        where = tmp_path / name.replace("/", "-").replace(" ", "-")
        where.mkdir()
        widths = _widths(chromium, page, where, width)
        assert widths["shown"] == width
        if widths["content"] > widths["shown"]:
            wider.append((name, "page", widths["content"]))
        wider += [
            (name, b["what"], b["content"]) for b in widths["boxes"] if b["content"] > b["shown"]
        ]
    assert wider == []


def test_a_click_on_a_header_sorts_its_column(
    site: tuple[Path, Board], chromium: str, tmp_path: Path
) -> None:
    """The site's sort.js, run by Chromium on the ranking: the entry column's button sorts
    the rows by name, and again the other way."""
    folder, _ = site
    page = folder / "rankings" / "common.html"
    probe = page.with_name("probe.html")
    click = """<script>
addEventListener("load", () => {
  const table = document.querySelector("table.sortable");
  const button = table.querySelector("thead th button");
  const names = () => [...table.querySelectorAll("tbody th")].map((c) => c.textContent);
  button.click(); const up = names(); button.click(); const down = names();
  const pre = document.createElement("pre");
  pre.id = "sorted";
  pre.textContent = JSON.stringify({up, down});
  document.body.append(pre);
});
</script>"""
    probe.write_text(page.read_text().replace("</body>", click + "</body>"))
    try:
        found = re.search(
            r'<pre id="sorted">(.+?)</pre>', _dump(chromium, probe, tmp_path, "sort"), re.S
        )
    finally:
        probe.unlink()
    assert found
    order = json.loads(html.unescape(found.group(1)))
    assert order["up"] == sorted(order["up"], key=str.lower)
    assert order["down"] == order["up"][::-1]
