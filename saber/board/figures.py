"""The figures of the board's report pages as files of their own, small.

``saber report --html`` inlines each figure as a PNG ``data:`` URI, in full colour: a page
to share on its own. On the board, a hundred such pages are most of the site's bytes. Each
figure here becomes a file named by its content (``figures/<SHA-256>.png``, one file for a
figure two pages show), on a white ground and quantized to :data:`COLOURS` colours (the
Okabe-Ito palette, greys and their anti-aliasing: the same picture in a third of the
bytes), linked from the page rather than inlined (base64 adds a third).
"""

from __future__ import annotations

import base64
import hashlib
import io
import re

FOLDER = "figures"  # in the site, beside index.html
COLOURS = 64
_INLINE = re.compile(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"')
_LINKED = re.compile(rf'src="(?:\.\./)*{FOLDER}/([0-9a-f]{{64}})\.png"')


def small_png(png: bytes) -> bytes:
    """``png`` on a white ground, quantized to :data:`COLOURS` colours (needs Pillow,
    which matplotlib needs); ``png`` itself when that is no smaller."""
    from PIL import Image

    image = Image.open(io.BytesIO(png))
    if image.mode != "RGB":
        ground = Image.new("RGB", image.size, "white")
        ground.paste(image, mask=image.convert("RGBA").getchannel("A"))
        image = ground
    out = io.BytesIO()
    image.quantize(colors=COLOURS, method=Image.Quantize.FASTOCTREE).save(out, "PNG")
    return out.getvalue() if out.tell() < len(png) else png


def split_figures(page: str, root: str) -> tuple[str, dict[str, bytes]]:
    """The page with its inline figures as links to files, and those files' content by
    their name (``<SHA-256>``).

    Args:
        page: an HTML page of :func:`saber.reports.html.to_html`.
        root: the way from the page's folder to the site's (``"../../"``).
    """
    figures: dict[str, bytes] = {}

    def link(found: re.Match[str]) -> str:
        png = small_png(base64.b64decode(found.group(1)))
        name = hashlib.sha256(png).hexdigest()
        figures[name] = png
        return f'src="{root}{FOLDER}/{name}.png"'

    return _INLINE.sub(link, page), figures


def linked_figures(page: str) -> list[str]:
    """The names of the figure files a page of :func:`split_figures` links to."""
    return _LINKED.findall(page)
