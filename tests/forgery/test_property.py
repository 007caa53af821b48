"""One field of one record of an honest run changed to anything: the run is refused with
that field named, or every number shown is what its replay says."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from saber.errors import SaberError
from saber.replay import verify_run
from saber.replay.verify import CHECKED_FIELDS
from tests.forgery.submitter import records, write_records

# The fields a failure names when they are changed (the rest: the replay, the line).
NAMED = {*CHECKED_FIELDS, "seed", "agent", "run"}

VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**8),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(["game_over", "time_cap", "stuck_timeout", "pong", "random"]),
)


@pytest.fixture(scope="module")
def proven(honest_run: Path) -> list[dict]:
    result = verify_run(honest_run, workers=0)
    assert result.verified, result.lines()
    return result.proven_records()


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_one_field_of_one_record_changed_is_refused_or_shown_as_replayed(
    honest_run: Path, proven: list[dict], data: st.DataObject
) -> None:
    lines = records(honest_run)
    index = data.draw(st.integers(0, len(lines) - 1), label="record")
    field = data.draw(st.sampled_from(sorted(lines[index])), label="field")
    old = lines[index][field]
    nudged = [old + 1] if isinstance(old, int | float) and not isinstance(old, bool) else []
    value = data.draw(st.one_of(VALUES, st.sampled_from(nudged or [None])), label="value")
    assume(json.dumps(value) != json.dumps(old))
    with tempfile.TemporaryDirectory() as scratch:
        run = Path(shutil.copytree(honest_run, Path(scratch) / "run"))
        lines[index] = {**lines[index], field: value}
        write_records(run, lines)
        try:
            result = verify_run(run, workers=0)
        except SaberError as error:  # a record that is no episode's: one line
            assert "\n" not in str(error)
            return
    if result.ok and result.wholeness.whole:
        assert result.proven_records() == proven  # nothing it shows came from the edit
        return
    failures = [*result.problems, *(f for c in result.episodes for f in c.failures)]
    assert failures or not result.wholeness.whole
    assert all("\n" not in f.text for f in failures)
    if (
        field in NAMED
        and not isinstance(old, bool)
        and not (isinstance(value, int | float) and not isinstance(value, bool) and value == old)
    ):
        assert field in {f.field for f in failures}, (field, value, result.lines())
