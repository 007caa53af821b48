r"""``saber report --latex``: booktabs tables that compile, with the numbers of the JSON report.

The compile test runs Debian's pdflatex (texlive-latex-base and -recommended, for
booktabs); .ci/run installs it, and under CI=true its absence fails the test.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from saber.cli import main
from saber.reports import make_report
from saber.reports.latex import escape, to_latex
from saber.scoring import merge_tables, read_scores, reference_table

# Two agents of 3 runs on 5 games (names with LaTeX's special characters), an infinite
# game, one game without a record (Tennis), beside the SABER paper's agents.
ROWS = "agent,run,game,episode,score\n" + "".join(
    f"{agent},r{run},{game},{episode},{base + 3 * run + episode}\n"
    for agent, base in (("dqn_v2", 10), ("ppo & co", 0))
    for run in range(3)
    for game in ("pong", "venture", "boxing", "qbert", "tennis")
    for episode in range(2)
)
ROWS += "".join(f"dqn_v2,r{run},battle_zone,0,inf\n" for run in range(3))
ROWS += "".join(f"ppo & co,r{run},battle_zone,0,{5000 + run}\n" for run in range(3))


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
    path = tmp_path_factory.mktemp("latex") / "s.csv"
    path.write_text(ROWS)
    table = merge_tables([read_scores(path), reference_table("saber-paper")])
    return make_report(table, n_resamples=200).to_dict()


def _table(tex: str, label: str) -> list[list[str]]:
    """The body rows of the float labelled ``label``, as cells."""
    start = tex.index(rf"\label{{{label}}}")
    body = tex[tex.index(r"\midrule", start) + len(r"\midrule") : tex.index(r"\bottomrule", start)]
    return [
        [cell.strip() for cell in line.removesuffix(r"\\").strip().split(" & ")]
        for line in body.strip().splitlines()
    ]


LIMITS = {"5 min": "5min", "30 min": "30min", "SABER": "saber"}  # the Time limit cells
NUMBER = re.compile(r"(\$-\$)?(\d[\d,]*(?:\.\d+)?)")


def _numbers(cell: str) -> list[float]:
    """Every number of a cell, ``$-$`` read as a minus sign, commas as thousands."""
    return [
        (-1 if minus else 1) * float(digits.replace(",", ""))
        for minus, digits in NUMBER.findall(cell)
    ]


def test_escape_makes_every_special_character_literal():
    assert escape("a_b & 50% #1 $x {y} ~^\\") == (
        r"a\_b \& 50\% \#1 \$x \{y\} \textasciitilde{}\textasciicircum{}$\backslash$"
    )
    assert escape("[x] --games ∞ †") == r"{[}x{]} -{}-games $\infty$ $^\dagger$"


def test_aggregates_classes_and_per_game_carry_the_json_numbers(report):
    tex = to_latex(report)
    agents = {escape(a): a for a in report["agents"]}
    rows = _table(tex, "tab:saber-aggregates")
    # Your agents at SABER (the CSV's only limit); the paper's at each of its limits, over
    # your games (Time limit column: the first limit of each group of identical ones).
    assert [agents[row[0]] for row in rows][:2] == ["dqn_v2", "ppo & co"]
    groups = report["time_limit_groups"]
    assert len(rows) == sum(g[0] in s for s in report["agents"].values() for g in groups)
    for row in rows:
        section = report["agents"][agents[row[0]]][LIMITS[row[1].split(" = ")[0]]]
        wr = section["world_record"]
        assert int(row[2]) == wr["games"] and int(row[3]) == len(section["runs"])
        for cell, key in zip(row[4:], ("median", "iqm", "mean", "optimality_gap"), strict=True):
            numbers = _numbers(cell)
            if section["resampled"] is None:
                assert cell.endswith(r"$^\dagger$") and len(numbers) == 1
            else:  # the estimate, then its interval
                low, high = wr[f"{key}_ci"]
                assert numbers[1:] == pytest.approx([low, high], abs=0.05 + 1e-9)
            assert numbers[0] == pytest.approx(wr[key], abs=0.05 + 1e-9)
    # Known answers: dqn_v2's Battle Zone is infinite, 200% in its mean; Tennis has no
    # record, so 5 of its 6 games count.
    dqn = report["agents"]["dqn_v2"]["saber"]["world_record"]
    assert dqn["games"] == 5 and dqn["infinite"] == ["battle_zone"]

    for row in _table(tex, "tab:saber-classes"):
        section = report["agents"][agents[row[0]]][LIMITS[row[1].split(" = ")[0]]]
        names = ["superhuman", "fair", "medium", "poor", "failing"]
        assert [int(c) for c in row[2:]] == [section["classes"][n] for n in names]

    per_game = _table(tex, "tab:saber-per-game-saber")
    titles = [row[0] for row in per_game]
    assert titles == ["Battle Zone", "Boxing", "Pong", "Q*bert", "Tennis", "Venture"]
    pong = per_game[titles.index("Pong")]
    assert pong[1:4] == ["$-$20.3", "14.6", "21.0"]  # random, human, record as printed
    assert per_game[titles.index("Q*bert")][3] == "2,400,000"
    for row in per_game:
        game = {"Battle Zone": "battle_zone", "Q*bert": "qbert"}.get(row[0], row[0].lower())
        for i, agent in enumerate(report["agents"]):
            cell = report["agents"][agent]["saber"]["per_game"][game]
            score, pct = row[4 + 2 * i], row[5 + 2 * i]
            if cell["infinite"]:
                assert score.startswith(r"$\infty$") and pct == r"$\infty$"
                continue
            whole = abs(cell["score"]) >= 100
            assert _numbers(score)[0] == pytest.approx(cell["score"], abs=0.5 if whole else 0.05)
            if cell["world_record_pct"] is None:
                assert pct == "--"
            else:
                assert _numbers(pct)[0] == pytest.approx(cell["world_record_pct"], abs=0.05)


def test_names_are_escaped_and_the_like_for_like_note_is_under_the_table(report):
    tex = to_latex(report)
    assert r"dqn\_v2 &" in tex and r"ppo \& co &" in tex
    assert "dqn_v2" not in tex.replace(r"dqn\_v2", "")
    assert "are aggregated over the games your agents have" in tex
    assert r"\usepackage{booktabs}" in tex.splitlines()[1]
    # A Time limit column (the paper's three limits beside your one) makes every table wide.
    assert tex.count(r"\begin{table*}") == tex.count(r"\end{table*}") >= 4
    assert r"\begin{table}" not in tex


def _compile(
    pdflatex: str, folder: Path, preamble: str, tex: str, options: str = "", text: str = ""
) -> str:
    """pdflatex on an article (``\\documentclass[options]``) whose body is ``text`` then
    ``\\input`` of ``tex``, run twice (a ``\\ref`` resolves on the second); its log."""
    (folder / "tables.tex").write_text(tex, encoding="utf-8")
    (folder / "paper.tex").write_text(
        f"\\documentclass[{options}]{{article}}\n{preamble}\n\\begin{{document}}\n{text}\n"
        "\\input{tables}\n\\end{document}\n"
    )
    for _ in range(2):
        run = subprocess.run(
            [pdflatex, "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert run.returncode == 0, run.stdout[-3000:]
    return (folder / "paper.log").read_text(errors="replace")


def test_the_tables_compile_with_pdflatex_and_booktabs(report, tmp_path, external_tool):
    pdflatex = external_tool("pdflatex", "booktabs.sty")
    log = _compile(
        pdflatex, tmp_path, "\\usepackage{booktabs}", to_latex(report), options="twocolumn",
        text="As Table~\\ref{tab:saber-aggregates} shows.",
    )  # fmt: skip
    assert "Undefined control sequence" not in log and "undefined" not in log.lower()
    assert (tmp_path / "paper.pdf").stat().st_size > 1000


def test_a_table_wider_than_a_one_column_line_is_scaled_to_fit_with_graphicx(
    report, tmp_path, external_tool
):
    """Two agents of 3 runs beside the paper's two, with a Time limit column: wider than a
    one-column article's line. With graphicx, \\saberfit scales each such table down to
    the line; without it (booktabs alone) the file still compiles, overfull as before."""
    pdflatex = external_tool("pdflatex", "booktabs.sty")
    tex = to_latex(report)
    overfull = re.compile(r"Overfull \\hbox \(([\d.]+)pt too wide\)")
    fitted = _compile(pdflatex, tmp_path, "\\usepackage{booktabs,graphicx}", tex)
    # Tables only: the notes under them are text, which breaks into lines.
    assert not overfull.findall(fitted)
    unfitted = _compile(
        pdflatex,
        tmp_path,
        "\\usepackage{booktabs,graphicx}\n\\newcommand{\\saberfit}[1]{#1}",
        tex,
    )
    assert max(float(width) for width in overfull.findall(unfitted)) > 50
    alone = _compile(pdflatex, tmp_path, "\\usepackage{booktabs}", tex)
    assert overfull.findall(alone) and "Undefined control sequence" not in alone


def test_cli_writes_latex_beside_json_with_the_same_numbers(tmp_path):
    (tmp_path / "s.csv").write_text("game,episode,score\npong,0,-21\npong,1,-19\nventure,0,0\n")
    out = CliRunner().invoke(
        main,
        ["report", str(tmp_path / "s.csv"), "--latex", str(tmp_path / "t.tex"), "--json",
         str(tmp_path / "r.json"), "--resamples", "50"],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    assert f"wrote {tmp_path / 't.tex'}" in out.output
    document = json.loads((tmp_path / "r.json").read_text())
    rows = _table((tmp_path / "t.tex").read_text(), "tab:saber-aggregates")
    median = document["agents"]["agent"]["saber"]["world_record"]["median"]
    assert _numbers(rows[0][3])[0] == pytest.approx(median, abs=0.05)
    # Two games of one run: the IQM would be the mean; left out, the notes say why.
    assert rows[0][4] == "--"
    assert "IQM not shown (agent, SABER (unlimited))" in Path(tmp_path / "t.tex").read_text()


def test_a_long_per_game_table_goes_on_in_further_floats():
    # The paper's 61 games: one float would be taller than a page; two of 31 and 30 rows.
    tex = to_latex(make_report(reference_table("saber-paper"), n_resamples=10).to_dict())
    first = _table(tex, "tab:saber-per-game-saber")
    second = _table(tex, "tab:saber-per-game-saber-2")
    assert (len(first), len(second)) == (31, 30)
    assert first[0][0] == "Air Raid" and second[-1][0] == "Zaxxon"  # alphabetical by title
    assert "(continued, 2 of 2)" in tex and "tab:saber-per-game-saber-3" not in tex
