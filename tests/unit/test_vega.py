"""`ui.vega.altair_chart`: the suite validates every chart a page draws (the app does not)."""

from __future__ import annotations

import os

import altair as alt
import pandas as pd
import pytest
from altair.utils.schemapi import SchemaValidationError

from ui import vega

FRAME = pd.DataFrame({"a": [1, 2], "b": [3, 4]})


def _broken(chart: alt.Chart) -> alt.Chart:
    chart.width = "very wide"  # not a number, "container" or a step (set without a check)
    return chart


def test_the_suite_checks_every_chart() -> None:
    assert os.environ.get(vega.CHECK_ENV) == "1"  # set by conftest.py for the whole run


def test_a_chart_that_breaks_the_schema_fails_a_page_under_the_suite(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    broken = _broken(alt.Chart(FRAME).mark_point().encode(x=alt.X("a:Q"), y=alt.Y("b:Q")))
    monkeypatch.setenv(vega.CHECK_ENV, "1")
    with pytest.raises(SchemaValidationError):
        vega.altair_chart(broken)


def test_the_app_draws_the_same_spec_without_checking(monkeypatch: pytest.MonkeyPatch) -> None:
    drawn = []
    monkeypatch.delenv(vega.CHECK_ENV, raising=False)
    monkeypatch.setattr(vega.st, "altair_chart", lambda chart, **kw: drawn.append(chart.to_dict()))
    chart = alt.Chart(FRAME).mark_point().encode(x=alt.X("a:Q"), y=alt.Y("b:Q"))
    broken = _broken(chart.copy())
    vega.altair_chart(broken)  # unchecked: drawn as it is
    vega.altair_chart(chart)
    assert drawn[1] == chart.to_dict(validate=True)
    assert drawn[0]["width"] == "very wide"
