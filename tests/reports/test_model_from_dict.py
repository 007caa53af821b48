"""The JSON document of a report reads back as the typed report (``Report.from_dict``), so
every renderer can read one representation whichever form it is given."""

from __future__ import annotations

from pathlib import Path

import pytest

from saber.errors import SaberError
from saber.reports import make_report
from saber.reports.model import GameScore, Report, Section, as_report
from saber.scoring import merge_tables, read_scores, reference_table

EXAMPLE = Path(__file__).parent / "data" / "example_scores.csv"


@pytest.fixture(scope="module")
def report() -> Report:
    # A user's agents beside a SABER reference and a not-SABER one (Dopamine's, with
    # deviations): every kind of section, pair and reference the model holds.
    tables = [read_scores(EXAMPLE), reference_table("saber-paper"), reference_table("dopamine:dqn")]
    return make_report(merge_tables(tables), n_resamples=20)


def test_the_json_document_reads_back_as_the_same_typed_report(report: Report) -> None:
    document = report.to_dict()
    back = Report.from_dict(document)
    assert back == report
    assert back.to_dict() == document
    section = back.agents["alpha"]["saber"]
    assert isinstance(section, Section) and isinstance(section.per_game["pong"], GameScore)
    assert isinstance(section.world_record.median_ci, tuple)  # an Interval, as make_report's


def test_as_report_takes_either_form(report: Report) -> None:
    assert as_report(report) is report
    assert as_report(report.to_dict()) == report


def test_a_report_of_another_schema_is_refused_in_one_line(report: Report) -> None:
    document = {**report.to_dict(), "schema_version": 1}
    with pytest.raises(
        SaberError, match=r"^A report of schema version 1; this saber reads"
    ) as error:
        Report.from_dict(document)
    assert "\n" not in str(error.value)


def test_deviations_by_agent_names_only_the_not_saber_references(report: Report) -> None:
    deviations = report.deviations_by_agent()
    assert deviations and all("@dopamine" in agent for agent in deviations)
    label = next(r.deviations for r in report.references if r.name == "dopamine:dqn")
    assert set(deviations.values()) == {label}
