"""The guide is a guide: outside docs/measurements/ (and the CHANGELOG) no page speaks of
the machine's load, of who ran what, of working sessions, issues or dated measurements;
measurement and history are at most 3% of the guide's prose words; the README stays
short. A measurement belongs on a measurement page, with its machine and command; the
guide keeps what a user does and a link to the figures."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MEASUREMENTS = ROOT / "docs" / "measurements"
GUIDE = [
    ROOT / "README.md",
    *sorted(path for path in (ROOT / "docs").rglob("*.md") if MEASUREMENTS not in path.parents),
]
README_WORDS = 1200
SHARE = 0.03  # measurement and history, of the guide's prose words
# Pages that still carry lab notes, each until its owner rewrites it (strict: the mark
# must go once the page passes).
STILL_NOTES: dict[str, str] = {}

# What a lab note says and a guide does not: each name, the pattern that finds it.
LAB_NOTES = {
    "a date": r"\b20\d\d-[01]\d-[0-3]\d\b",
    "a working session": r"\bworking session\b|\blent for (?:one|a) session\b",
    "what CI caught": r"\bCI (?:caught|found|failed|flagged)\b|\bcaught (?:it )?(?:in|by) CI\b"
    r"|\bsuite caught\b",
    "the machine's load": r"\b(?:idle|loaded|busy|shared|near-idle) (?:\d+-core )?machine\b"
    r"|\bload average\b|\bunder load\b|\bCPU lock\b|\bnothing else (?:was )?running\b",
    "what ran beside": r"\bbeside (?:a|the) (?:PPO )?(?:training|run)\b(?! curve)"
    r"|\bwhat ran beside\b|\bwhile the training\b",
    "who ran what": r"\bengineers?\b|\bthe team\b|\bteammates?\b|\blab notes?\b"
    r"|\b(?:we|I) (?:ran|measured|found|tried)\b",
    "an issue": r"\bissue #?\d+\b|\bthe issue (?:was|is|says|said|asks|asked)\b"
    r"|\bthe (?:last|previous|next) round\b",
}
# A sentence that reports a measurement (a ratio, a rate, a timing, the machine it ran on)
# or history (a version's past behaviour); goals (>= 0.95x) are neither.
MEASUREMENT = (
    r"(?<![\d.])(?<![>=] )(?<!goal )\d+(?:\.\d+)?x\b(?! the)",
    r"(?:steps|frames|episodes|units|records)/s\b",
    r"\b(?!60 )\d[\d,.]* (?:frames|steps|env-steps) per second\b",  # 60: the emulator's rate
    r"\bSPS\b",
    r"\b\d[\d,.]*\s?(?:ms|µs)\b",
    r"\bCPU s(?:econds)?\b",
    r"\b\d[\d,.]*\s?s of (?:CPU|wall)",
    r"\bmedian of\b",
    r"\b\d+-core machine\b",
    r"\b(?:takes|took|ran|runs|trains) (?:in )?about \d",
    r"\b\d+ h \d+ min\b",
    r"\bon an? H[12]00\b",
)
HISTORY = (
    r"\bsaber 0\.\d\b",
    r"\b(?:in|since|until|before) 0\.\d\b",
    r"\bused to\b",
    r"\bno longer\b",
    r"\b(?:latest|earlier|last|previous) run\b",
    r"\bwent from\b",
)
FIGURES = re.compile("|".join(MEASUREMENT + HISTORY), re.IGNORECASE)


def prose(text: str) -> str:
    """The page without its code blocks, inline code and HTML comments."""
    text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    text = re.sub(r"<!--.*?-->", "", text, flags=re.DOTALL)
    return re.sub(r"`[^`\n]*`", "CODE", text)


def sentences(text: str) -> list[str]:
    """The prose's sentences: a table row, a heading or a list item is one at least."""
    found = []
    for block in re.split(r"\n\s*\n|\n(?=\s*(?:[-*] |\d+\. |\||#))", text):
        if block.lstrip().startswith("|"):
            found += [row for row in block.splitlines() if not re.fullmatch(r"[|\s:-]*", row)]
            continue
        block = re.sub(r"\s+", " ", block).strip()
        found += re.split(r"(?<=[.!?])\s+(?=[A-Z*(\[])", block)
    return [sentence for sentence in found if sentence.strip()]


def lab_notes(text: str) -> list[str]:
    """Each lab note of the text: what it is, and the words around it."""
    text = prose(text)
    found = []
    for name, pattern in LAB_NOTES.items():
        for match in re.finditer(pattern, text, re.IGNORECASE):
            around = " ".join(text[max(0, match.start() - 50) : match.end() + 30].split())
            found.append(f"{name}: ...{around}...")
    return found


def figure_words(text: str) -> tuple[int, int]:
    """(the prose's words, the words of its sentences of measurement or history)."""
    words = figures = 0
    for sentence in sentences(prose(text)):
        count = len(sentence.split())
        words += count
        if FIGURES.search(sentence):
            figures += count
    return words, figures


def _page(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _pages() -> list[object]:
    pages: list[object] = []
    for path in GUIDE:
        name = str(path.relative_to(ROOT))
        reason = STILL_NOTES.get(name)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        pages.append(pytest.param(path, id=name, marks=marks))
    return pages


@pytest.mark.parametrize("path", _pages())
def test_no_page_of_the_guide_carries_lab_notes(path: Path) -> None:
    found = lab_notes(_page(path))
    assert not found, (
        f"{path.relative_to(ROOT)} speaks of how it was made (say it in a user's words, or "
        "move the measurement to docs/measurements/):\n" + "\n".join(found)
    )


def test_measurement_and_history_are_a_small_share_of_the_guide() -> None:
    counts = {path: figure_words(_page(path)) for path in GUIDE}
    words = sum(total for total, _ in counts.values())
    figures = sum(share for _, share in counts.values())
    heaviest = sorted(counts, key=lambda path: -counts[path][1])[:6]
    assert figures <= SHARE * words, (
        f"{figures} of the guide's {words} prose words ({figures / words:.1%}) are in "
        f"sentences of measurement or history (at most {SHARE:.0%}); the most: "
        + ", ".join(f"{path.relative_to(ROOT)} {counts[path][1]}" for path in heaviest)
    )


def test_the_readme_stays_short() -> None:
    words = len(_page(ROOT / "README.md").split())
    assert words <= README_WORDS, f"README.md has {words} words (at most {README_WORDS})"


def test_the_checks_find_what_they_look_for() -> None:
    note = (
        "On 2026-11-25, on an idle machine beside the training, the engineer measured it "
        "(CI caught it in a working session, as the issue said)."
    )
    assert [found.split(":")[0] for found in lab_notes(note)] == [
        "a date",
        "a working session",
        "what CI caught",
        "the machine's load",
        "what ran beside",
        "who ran what",
        "an issue",
    ]
    guide = "Each session of a run is one entry of run.json; plot it beside the training curve."
    assert not lab_notes(guide)
    assert figure_words("It steps at 1.07x ale-py's env. Use `--workers 2`.") == (8, 6)
    assert figure_words("The goal is >= 0.95x. In 0.5 it failed.") == (9, 4)
    assert figure_words("The goal is >= 0.95x of its tight loop.") == (9, 0)
