"""The typed report is the one representation: read back from its JSON, rendered from itself."""

from __future__ import annotations

import json

import pytest

from saber.reports import Report, make_report, to_csv, to_json, to_markdown
from saber.reports.html import to_html
from saber.reports.latex import to_latex
from saber.reports.model import as_report
from saber.scoring import merge_tables, read_scores, reference_table

# Two agents with runs (intervals over runs, pairs, Welch tests), one with a single run of
# episodes, infinite gameplay, a game without a SABER baseline, and a shipped reference
# (published means: no interval, a skipped pair, like-for-like notes).
ROWS = """agent,run,game,episode,score
x,r0,pong,0,-21
x,r0,pong,1,-19
x,r1,pong,0,-10
x,r0,venture,0,100
x,r1,venture,0,300
x,r0,basic_math,0,3
x,r1,basic_math,0,4
y,r0,pong,0,15
y,r0,pong,1,17
y,r0,venture,0,inf
y,r0,basic_math,0,1
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Report:
    path = tmp_path_factory.mktemp("model") / "s.csv"
    path.write_text(ROWS)
    table = merge_tables([read_scores(path), reference_table("saber-paper")])
    return make_report(table, n_resamples=30)


def test_a_report_json_read_back_is_the_report(report):
    document = json.loads(to_json(report))
    again = Report.from_dict(document)
    assert again == report
    assert again.to_dict() == document
    # Typed all the way down: intervals are tuples, sections and pairs dataclasses.
    pair = again.comparisons["saber"].pairs[0]
    assert isinstance(pair.probability_of_improvement_ci, tuple)
    assert (
        again.agents["x"]["saber"].per_game["venture"].class_
        == report.agents["x"]["saber"].per_game["venture"].class_
    )


@pytest.mark.parametrize(
    "render",
    [to_json, to_markdown, to_csv, to_latex, lambda r: to_html(r, figures=False)],
    ids=["json", "markdown", "csv", "latex", "html"],
)
def test_every_renderer_gives_the_same_text_from_the_report_and_from_its_json(report, render):
    text = render(report)
    assert render(report.to_dict()) == text
    assert render(json.loads(to_json(report))) == text


def test_a_document_without_the_keys_that_say_none_renders_as_with_them(tmp_path):
    # Keys a hand-made or older document may lack: the renderers read them as "none".
    (tmp_path / "s.csv").write_text("game,episode,score\npong,0,-21\npong,1,-19\n")
    document = make_report(read_scores(tmp_path / "s.csv"), n_resamples=10).to_dict()
    section = document["agents"]["agent"]["saber"]
    none = ("reference", "interval_note", "runs_incomplete")  # None, None, {} here
    assert all(not section[key] for key in none)
    shorter = {k: v for k, v in document.items() if k not in ("references", "time_limit_groups")}
    shorter["agents"] = {"agent": {"saber": {k: v for k, v in section.items() if k not in none}}}
    assert as_report(shorter).time_limit_groups == []
    assert to_markdown(shorter) == to_markdown(document)


def test_a_document_that_is_not_a_report_of_this_schema_says_so(report):
    with pytest.raises(ValueError, match=r"format 'saber-report/1'.*make it again"):
        Report.from_dict({"format": "saber-report/1", "agents": {}})
    document = report.to_dict()
    del document["agents"]["x"]["saber"]["world_record"]["games"]
    with pytest.raises(ValueError, match=r"no report\.agents\.x\.saber\.world_record\.games"):
        Report.from_dict(document)


def test_a_section_names_its_blocks(report):
    section = report.agents["x"]["saber"]
    assert section.block("world_record") is section.world_record
    assert section.block("human") is section.human
    with pytest.raises(ValueError, match="world_record or human"):
        section.block("human_average")
