r"""Rendering a report (or its JSON document) as LaTeX tables to ``\input`` into a paper.

:func:`to_latex` gives booktabs floats with captions and labels; nothing is computed here.
docs/reports.md lists the tables, their labels and conventions (``\saberci``, ``\saberfit``).
"""

from __future__ import annotations

import math
import re

from saber.games import get_game
from saber.protocol import limits
from saber.reports.model import (
    Aggregates,
    GameScore,
    Interval,
    Report,
    ReportLike,
    Section,
    as_report,
)
from saber.reports.tables import (
    SOURCES_TITLE,
    deviations_by_agent,
    group_title,
    notes,
    source_lines,
    time_limit_groups,
)
from saber.scoring.rules import CLASS_NAMES

PREAMBLE_NEEDS = r"\usepackage{booktabs}"

# LaTeX's special characters in text, and the few non-ASCII marks the reports use.
_ESCAPES = {
    "\\": r"$\backslash$",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    # In math: their text forms need the textcomp fonts, which a basic TeX may lack.
    "<": "$<$",
    ">": "$>$",
    "|": r"$|$",
    # A cell or a line that starts with [ after \\ would be read as \\'s optional argument.
    "[": "{[}",
    "]": "{]}",
    "∞": r"$\infty$",
    "†": r"$^\dagger$",
    "‡": r"$^\ddagger$",
    "–": "--",
    "—": "---",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "×": r"$\times$",
    "τ": r"$\tau$",
    "’": "'",
    "‘": "`",
    "“": "``",
    "”": "''",
    "…": r"\dots{}",
    "\u00a0": "~",
}
# "--" would print an en dash: "--games" stays two hyphens.
_ESCAPES["-"] = "-{}"
_ESCAPE_RE = re.compile("|".join([r"-(?=-)", *(re.escape(c) for c in _ESCAPES if c != "-")]))

# \saberfit{tabular}: the tabular as it is when it fits the line; scaled down to the line's
# width when it is wider and graphicx is loaded (a one-column paper: the aggregates of
# many agents with their intervals are about 1.4 lines wide); as it is otherwise (an
# overfull box, as without \saberfit), so that booktabs stays the only requirement.
# \providecommand: a paper may define its own first.
FIT_DEFINITION = (
    r"\ifdefined\saberbox\else\newsavebox{\saberbox}\fi",
    r"\providecommand{\saberfit}[1]{\sbox{\saberbox}{#1}%",
    r"  \ifdim\wd\saberbox>\linewidth\ifdefined\resizebox",
    r"    \resizebox{\linewidth}{!}{\usebox{\saberbox}}%",
    r"  \else\usebox{\saberbox}\fi\else\usebox{\saberbox}\fi}",
)
ROWS_PER_TABLE = 32  # games in one per-game float: 32 rows of 8-pt text fit any page
MINUS = "$-$"
INFINITY = r"$\infty$"
NO_INTERVAL = r"$^\dagger$"
NOT_SABER = r"$^\ddagger$"
MISSING = "--"
NOT_COMPLIANT = (
    "Not SABER-compliant: these runs used settings that break the SABER protocol; their "
    "numbers are not SABER scores."
)


def escape(text: str) -> str:
    r"""Text as LaTeX typesets it literally: ``a_b & 50%`` -> ``a\_b \& 50\%``.

    >>> escape("rainbow@saber-paper_2 & 50% ‡ --games")
    'rainbow@saber-paper\\_2 \\& 50\\% $^\\ddagger$ -{}-games'
    """
    return _ESCAPE_RE.sub(lambda m: _ESCAPES[m.group(0)], text)


def _unsigned_zero(value: float, digits: int) -> float:
    return 0.0 if round(value, digits) == 0 else value  # never "-0.0" in a table


def _number(value: float, digits: int) -> str:
    """``1,234.5``, ``$-$3.2``: thousands separated by commas, a true minus sign."""
    text = f"{_unsigned_zero(value, digits):,.{digits}f}"
    return MINUS + text[1:] if text.startswith("-") else text


def _pct(value: float | None) -> str:
    return MISSING if value is None else _number(value, 1)


def _score(value: float | None) -> str:
    """Raw game points as the SABER paper prints them: whole above 100, else one decimal."""
    if value is None:
        return MISSING
    return _number(value, 0 if abs(value) >= 100 else 1)


def _interval(ci: Interval) -> str:
    low, high = ci
    if low is None and high is None:
        return ""
    return rf"\saberci{{{_pct(low)}}}{{{INFINITY if high is None else _pct(high)}}}"


def _estimate(block: Aggregates, key: str, section: Section, prefix: str) -> str:
    if key in section.omitted.get(prefix, {}):
        return MISSING  # the notes say why
    value = INFINITY if key == "median" and block.median_infinite else _pct(getattr(block, key))
    if section.resampled is None:
        return value + NO_INTERVAL
    return value + _interval(getattr(block, f"{key}_ci"))


def _agent(agent: str, deviations: dict[str, str]) -> str:
    return escape(agent) + (NOT_SABER if agent in deviations else "")


def _tabular(columns: str, header: list[str], rows: list[list[str]], above: str = "") -> str:
    lines = [rf"\begin{{tabular}}{{{columns}}}", r"\toprule"]
    if above:
        lines.append(above)
    lines.append(" & ".join(header) + r" \\")
    lines.append(r"\midrule")
    lines += [" & ".join(row) + r" \\" for row in rows]
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines)


def _float(
    caption: str, label: str, body: str, notes_text: str = "", size: str = "", wide: bool = False
) -> str:
    r"""A ``table`` float (``table*``, both columns of a two-column paper, when ``wide``);
    its tabular goes through ``\saberfit`` (:data:`FIT_DEFINITION`)."""
    env = "table*" if wide else "table"
    lines = [rf"\begin{{{env}}}[htbp]", r"\centering"]
    if size:
        lines.append(size)
    lines += [rf"\caption{{{caption}}}", rf"\label{{{label}}}", rf"\saberfit{{{body}}}"]
    if notes_text:
        lines += [r"\par\smallskip", rf"{{\footnotesize\raggedright {notes_text}\par}}"]
    lines.append(rf"\end{{{env}}}")
    return "\n".join(lines)


def _stacked(agent: str, deviations: dict[str, str]) -> str:
    """An agent's name for a narrow header: a reference's ``name@source`` on two lines."""
    name, at, source = agent.partition("@")
    if not at:
        return _agent(agent, deviations)
    mark = NOT_SABER if agent in deviations else ""
    return rf"\begin{{tabular}}[b]{{@{{}}c@{{}}}}{escape(name)}\\@{escape(source)}{mark}\end{{tabular}}"


SHORT_LIMITS = {"5min": "5 min", "30min": "30 min", "saber": "SABER"}  # a column's width


def _short(group: list[str]) -> str:
    """``5 min = 30 min = SABER``: a group of time limits as a narrow table cell."""
    return " = ".join(SHORT_LIMITS.get(limit) or limits.time_limit(limit).title for limit in group)


def _rows_by_group(report: Report) -> list[tuple[str, list[str], Section]]:
    """(agent, group, section) for each agent and group of identical time limits."""
    found = []
    for agent, sections in report.agents.items():
        for group in time_limit_groups(report):
            if group[0] in sections:
                found.append((agent, group, sections[group[0]]))
    return found


def _limit_column(report: Report) -> bool:
    """Whether the tables need a Time limit column (more than one group of limits)."""
    return len(time_limit_groups(report)) > 1


def _limits_phrase(report: Report) -> str:
    groups = time_limit_groups(report)
    return "" if len(groups) > 1 else f" at {escape(group_title(groups[0]))}"


def _resampled_phrase(report: Report) -> str:
    units = {s.resampled for _, _, s in _rows_by_group(report)}
    words = []
    if "runs" in units:
        words.append("over runs within each game (several training runs)")
    if "episodes" in units:
        words.append(
            "over the episodes of a single run within each game (evaluation noise only, "
            "not the variation between training runs)"
        )
    return " and ".join(words)


def _aggregates(report: Report, block: str) -> str:
    deviations = deviations_by_agent(report)
    with_limit = _limit_column(report)
    header = ["Agent", *(["Time limit"] if with_limit else []), "Games", "Runs"]
    header += ["Median", "IQM", "Mean"]
    if block == "world_record":
        header.append(r"\begin{tabular}[b]{@{}r@{}}Optimality\\gap\end{tabular}")
    rows = []
    for agent, group, s in _rows_by_group(report):
        b = s.block(block)
        row = [_agent(agent, deviations)]
        row += [escape(_short(group))] if with_limit else []
        row += [str(b.games), str(len(s.runs))]
        row += [_estimate(b, key, s, block) for key in ("median", "iqm", "mean")]
        if block == "world_record":
            row.append(_estimate(b, "optimality_gap", s, block))
        rows.append(row)
    columns = "l" + ("l" if with_limit else "") + "r" * (len(header) - 1 - with_limit)
    boot = report.bootstrap
    what = (
        r"World-record-normalized scores (\%; 100 = the human world record, 0 = random; "
        r"infinite gameplay counts 200 in the mean and IQM)"
        if block == "world_record"
        else r"Human-normalized scores (\%; 100 = the beginner human of Mnih et al.\ 2015; "
        r"infinite games are left out of the mean and IQM)"
    )
    caption = f"{what}{_limits_phrase(report)}: median, interquartile mean (IQM) and mean "
    caption += "over games" + (", and optimality gap" if block == "world_record" else "")
    resampled = _resampled_phrase(report)
    if resampled:
        caption += (
            f"; {boot.confidence_pct:g}\\% stratified-bootstrap percentile intervals "
            f"({boot.resamples} resamples, seed {boot.seed}) {resampled}"
        )
    label = "tab:saber-aggregates" + ("" if block == "world_record" else "-human")
    text = ""
    if block == "world_record":  # once, under the first table
        lines = notes(report, atari5=False)
        if not report.saber_compliant:
            lines.insert(0, NOT_COMPLIANT)
        text = " ".join(escape(line) for line in lines)
    body = _tabular(columns, header, rows)
    size = r"\small\setlength{\tabcolsep}{4pt}"
    return _float(caption + ".", label, body, text, size=size, wide=True)


def _classes(report: Report) -> str:
    deviations = deviations_by_agent(report)
    with_limit = _limit_column(report)
    names = list(reversed(CLASS_NAMES))
    header = ["Agent", *(["Time limit"] if with_limit else [])]
    header += [name.capitalize() for name in names]
    rows = []
    for agent, group, s in _rows_by_group(report):
        row = [_agent(agent, deviations)]
        row += [escape(_short(group))] if with_limit else []
        row += [str(s.classes[name]) for name in names]
        rows.append(row)
    columns = "l" + ("l" if with_limit else "") + "r" * len(names)
    caption = (
        f"Games per SABER class{_limits_phrase(report)}, of the world-record-normalized "
        r"score (mean over runs): superhuman $\geq$ 100\%, fair $\geq$ 50\%, medium $\geq$ "
        r"10\%, poor $\geq$ 1\%, failing $<$ 1\%; games without a world record have no class."
    )
    # Beside a Time limit column the table is too wide for one column of a paper.
    body = _tabular(columns, header, rows)
    return _float(caption, "tab:saber-classes", body, wide=with_limit)


def _game_cells(cell: GameScore | None) -> list[str]:
    """An agent's two cells of a game: raw score, world-record-normalized percent."""
    if cell is None:
        return ["not run", MISSING]
    if cell.infinite:
        score = INFINITY if cell.score is None else f"{INFINITY} {_score(cell.score)}"
        return [score, INFINITY]
    return [_score(cell.score), _pct(cell.world_record_pct)]


def _per_game(report: Report, group: list[str]) -> str:
    limit = group[0]
    deviations = deviations_by_agent(report)
    agents = [a for a, sections in report.agents.items() if limit in sections]
    games = sorted(
        {g for a in agents for g in report.agents[a][limit].per_game},
        key=lambda g: get_game(g).title,
    )
    header = ["Game", "Random", "Human", "Record"] + ["Score", r"\%"] * len(agents)
    above = " & ".join(
        ["", "", "", ""] + [rf"\multicolumn{{2}}{{c}}{{{_stacked(a, deviations)}}}" for a in agents]
    )
    rules = "".join(rf"\cmidrule(lr){{{5 + 2 * i}-{6 + 2 * i}}}" for i in range(len(agents)))
    rows = []
    for game in games:
        info = get_game(game)
        row = [escape(info.title), _score(info.random), _score(info.human)]
        row.append(_score(info.world_record))
        for agent in agents:
            row += _game_cells(report.agents[agent][limit].per_game.get(game))
        rows.append(row)
    columns = "lrrr" + "rr" * len(agents)
    caption = (
        f"Raw scores per game at {escape(group_title(group))} (mean over episodes, and over "
        r"runs), and their world-record-normalized percent (\%), beside the random, human "
        r"and world-record scores of the SABER paper (Toromanoff, Wirbel and Moutarde 2019; "
        r"human: the beginner of Mnih et al.\ 2015). $\infty$: infinite gameplay; --: no "
        r"reference score."
    )
    label = "tab:saber-per-game-" + "-".join(group)
    size = r"\footnotesize\setlength{\tabcolsep}{4pt}"
    # A float never breaks across pages: past ROWS_PER_TABLE games, the table goes on in
    # further floats (labels -2, -3, ...), so all 61 games fit any paper's page height.
    parts = math.ceil(len(rows) / ROWS_PER_TABLE) or 1
    per_part = math.ceil(len(rows) / parts) if rows else 0
    floats = []
    for i in range(parts):
        chunk = rows[i * per_part : (i + 1) * per_part]
        body = _tabular(columns, header, chunk, above=above + r" \\" + "\n" + rules)
        suffix = "" if i == 0 else f"-{i + 1}"
        text = caption if i == 0 else f"{caption[:-1]} (continued, {i + 1} of {parts})."
        if i == 0 and parts > 1:
            text = f"{caption[:-1]} (1 of {parts})."
        floats.append(_float(text, label + suffix, body, size=size, wide=True))
    return "\n\n".join(floats)


def _comparisons(report: Report) -> list[str]:
    """One float per group of identical time limits with a matrix; the notes under the last."""
    from saber.reports.comparisons import comparison_blocks, comparison_notes

    deviations = deviations_by_agent(report)
    blocks = [b for b in comparison_blocks(report) if b.improvement is not None]
    floats = []
    for i, block in enumerate(blocks):
        bodies = []
        for matrix in (block.improvement, block.welch):
            if matrix is not None:
                header = [escape(matrix.header[0])]
                header += [_stacked(a, deviations) for a in matrix.header[1:]]
                rows = [
                    [_agent(row[0], deviations)] + [escape(c) for c in row[1:]]
                    for row in matrix.rows
                ]
                bodies.append(_tabular(matrix.align, header, rows))
        caption = (
            f"Comparisons at {escape(block.title)}: the probability of improvement "
            r"P(row $>$ column) with its interval, and the games where Welch's t-test finds "
            "the row significantly higher."
        )
        lines = block.lines + (comparison_notes(report) if i == len(blocks) - 1 else [])
        floats.append(
            _float(
                caption,
                "tab:saber-comparisons-" + "-".join(block.limits),
                "\n\\quad\n".join(bodies),  # side by side, scaled together by \saberfit
                " ".join(escape(line) for line in lines),
                size=r"\small\setlength{\tabcolsep}{4pt}",
                wide=True,
            )
        )
    return floats


def to_latex(report: ReportLike) -> str:
    r"""The report's tables as LaTeX, to ``\input`` into a paper (needs ``booktabs``).

    Returns:
        The file's text: a comment saying what it needs, ``\saberci`` (if not yet defined),
        then the tables (docs/reports.md), then the sources to cite as a comment.
    """
    report = as_report(report)
    lines = [
        f"% SABER report tables (saber {report.saber_version}), "
        f"{report.format}; \\input this file.",
        f"% The preamble needs {PREAMBLE_NEEDS}; with graphicx loaded, a table wider than",
        "% the line (a one-column paper, many agents) is scaled down to fit.",
        r"\providecommand{\saberci}[2]{\,{\scriptsize[#1,\,#2]}}",
        *FIT_DEFINITION,
    ]
    if not report.saber_compliant:
        lines.append(f"% Warning: {NOT_COMPLIANT}")
    lines += ["", _aggregates(report, "world_record"), "", _aggregates(report, "human")]
    lines += ["", _classes(report)]
    lines += [line for table in _comparisons(report) for line in ("", table)]
    for group in time_limit_groups(report):
        lines += ["", _per_game(report, group)]
    lines += ["", f"% {SOURCES_TITLE}", *(f"% - {line}" for line in source_lines(report))]
    return "\n".join(lines) + "\n"
