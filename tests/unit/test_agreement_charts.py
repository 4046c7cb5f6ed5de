"""The Agreement page's charts are valid Vega-Lite (the page draws them unvalidated:
`ui.vega`), and their encodings are channel objects (issue 39: a bare shorthand costs a
schema-wide ``from_dict``), with the fields the page's frames carry."""

from __future__ import annotations

import altair as alt
import pandas as pd
import pytest
from altair.utils import schemapi

from lib.charts import agreement as C

CONFUSION = pd.DataFrame(
    {
        "reference": ["success", "failure", "success", "failure"],
        "verifier": ["success", "success", "failure", "failure"],
        "cell": ["TP", "FP", "FN", "TN"],
        "count": [5, 2, 1, 7],
        "share": [5 / 15, 2 / 15, 1 / 15, 7 / 15],
        "label": ["5", "2", "1", "7"],
    }
)
CURVE = pd.DataFrame({"fpr": [0.0, 0.5, 1.0], "tpr": [0.0, 0.7, 1.0], "threshold": [1, 0.5, 0]})
POINT = pd.DataFrame({"fpr": [0.5], "tpr": [0.7], "threshold": [0.5]})
POINTS = pd.DataFrame(
    {
        "verifier": ["a", "b"],
        "split": ["om2w", "om2w"],
        "reference": ["final", "final"],
        "value": [0.5, 0.6],
        "low": [0.4, 0.5],
        "high": [0.6, 0.7],
        "n": [10, 12],
        "label": ["0.50", "0.60"],
    }
)
BAND = pd.DataFrame(
    {"verifier": ["a"], "value": [0.5], "low": [0.4], "high": [0.6], "label": ["b"]}
)


def charts() -> dict[str, alt.TopLevelMixin]:
    return {
        "confusion": C.confusion_chart(CONFUSION, "om2w"),
        "roc": C.roc_chart(CURVE, POINT, "uv_rubric_score vs final"),
        "roc without point": C.roc_chart(CURVE, POINT.iloc[:0], "t"),
        "forest": C.forest_panels(POINTS, BAND, POINTS, (-0.25, 1.0)),
    }


@pytest.mark.parametrize("name", list(charts()))
def test_chart_spec_is_valid_vega_lite(name: str) -> None:
    chart = charts()[name]
    spec = chart.to_dict(validate=True)  # raises on a spec that breaks the schema
    assert spec == chart.to_dict(validate=False)  # what ui.vega draws is the same spec
    assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")


def test_encodings_are_channel_objects_not_shorthands() -> None:
    calls = []
    plain = schemapi._FromDict.__init__

    def counting(self, *args, **kwargs):
        calls.append(1)
        plain(self, *args, **kwargs)

    schemapi._FromDict.__init__ = counting
    try:
        charts()
    finally:
        schemapi._FromDict.__init__ = plain
    assert calls == []


def test_confusion_text_and_its_colour_condition() -> None:
    layers = C.confusion_chart(CONFUSION, "om2w").to_dict()["layer"]
    text = layers[1]["encoding"]
    assert text["text"] == {"field": "label", "type": "nominal"}
    assert text["color"]["condition"]["value"] == "white"
    assert text["color"]["value"] == "#222"
    assert "datum.share > 0.45" in text["color"]["condition"]["test"]


def test_vega_draws_the_same_spec_unvalidated_and_leaves_the_chart_alone(monkeypatch) -> None:
    from ui import vega

    chart = charts()["confusion"]
    seen = []
    monkeypatch.delenv(vega.CHECK_ENV, raising=False)  # the app's draw, not the suite's check
    monkeypatch.setattr(vega.st, "altair_chart", lambda c, **kw: seen.append(c.to_dict()))
    monkeypatch.setattr(schemapi.SchemaBase, "validate", classmethod(_refuse))
    vega.altair_chart(chart, width="content")
    monkeypatch.undo()
    assert seen == [chart.to_dict(validate=True)]
    assert "to_dict" not in vars(chart)


def _refuse(cls, instance, *args, **kwargs):
    """Altair validates small objects as it builds them; the whole spec must not be."""
    assert not issubclass(cls, alt.TopLevelMixin), "the whole spec was validated"
