"""Altair chart of the Trajectory page: the verifier's criteria x screenshots relevance heatmap.

DataFrames in, charts out; no Streamlit. Input: `lib.viewer.VerifierEvidence.relevance`
(one row per criterion and screenshot with a relevance 0-10) and the criteria's labels.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

RELEVANCE_DOMAIN = (0, 10)
"""The verifier's relevance scale: the colours mean the same on every task."""
CELL = 44
"""Pixels per screenshot column (the chart scrolls sideways past the page's width)."""
ROW = 34
"""Pixels per criterion row."""
LABEL_MAX = 40
"""Characters of a criterion's label on the axis (the tooltip has the whole label)."""


def relevance_frame(relevance: pd.DataFrame, labels: dict[int, str]) -> pd.DataFrame:
    """The chart's rows: criterion label (axis and tooltip), screenshot, relevance, chosen."""
    d = relevance.copy()
    d["criterion_label"] = [labels.get(int(c), f"criterion {int(c) + 1}") for c in d["criterion"]]
    d["axis_label"] = [
        label if len(label) <= LABEL_MAX else label[: LABEL_MAX - 1] + "…"
        for label in d["criterion_label"]
    ]
    d["relevance_text"] = [f"{r:g}" for r in d["relevance"]]
    return d


def relevance_heatmap(
    relevance: pd.DataFrame, labels: dict[int, str], chosen: dict[int, tuple[int, ...]]
) -> alt.LayerChart:
    """Rows = criteria (in rubric order), columns = screenshots; colour and text = relevance
    0-10; the screenshots the verifier chose for a criterion are outlined."""
    d = relevance_frame(relevance, labels)
    d["chosen"] = [
        int(k) in chosen.get(int(c), ())
        for c, k in zip(d["criterion"], d["screenshot"], strict=True)
    ]
    order = d.sort_values("criterion")["axis_label"].drop_duplicates().tolist()
    x = alt.X(
        "screenshot:O",
        title="screenshot (0 = start page)",
        axis=alt.Axis(labelAngle=0, orient="top"),
    )
    y = alt.Y("axis_label:N", sort=order, title=None, axis=alt.Axis(labelLimit=220))
    tooltip = [
        alt.Tooltip("criterion_label:N", title="criterion"),
        alt.Tooltip("screenshot:O", title="screenshot"),
        alt.Tooltip("relevance:Q", title="relevance (0-10)"),
        alt.Tooltip("chosen:N", title="chosen by the verifier"),
    ]
    base = alt.Chart(d).encode(x=x, y=y)
    rect = base.mark_rect(stroke="white", strokeWidth=1).encode(
        color=alt.Color(
            "relevance:Q",
            scale=alt.Scale(scheme="blues", domain=list(RELEVANCE_DOMAIN)),
            legend=alt.Legend(title="relevance (0-10)", orient="bottom", direction="horizontal"),
        ),
        tooltip=tooltip,
    )
    outline = (
        base.transform_filter("datum.chosen")
        .mark_rect(filled=False, stroke="#d6336c", strokeWidth=2.5)
        .encode(tooltip=tooltip)
    )
    text = base.mark_text(fontSize=12).encode(
        text="relevance_text:N",
        color=alt.condition(alt.datum.relevance > 6, alt.value("white"), alt.value("black")),
        tooltip=tooltip,
    )
    # sized by steps: an explicit width is the whole chart's under Streamlit's autosize, and
    # left the cells no room beside long criterion labels
    return (rect + outline + text).properties(width=alt.Step(CELL), height=alt.Step(ROW))
