"""Altair chart of the process x outcome quadrant (Inside the verifier page).

DataFrames in, charts out; no Streamlit. Input: `quadrant_frame` (below), one row per cell.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from lib.analysis.quadrant import Quadrant

PROCESS_ORDER = ["sound", "flawed"]
OUTCOME_ORDER = ["success", "failure"]


def quadrant_frame(q: Quadrant) -> pd.DataFrame:
    """One row per cell: process and outcome words, its count and its share of ``q.n``."""
    rows = [
        {
            "process": "sound" if c.process else "flawed",
            "outcome": "success" if c.outcome else "failure",
            "count": c.n,
            "share": c.n / q.n if q.n else np.nan,
        }
        for c in q.cells
    ]
    return pd.DataFrame(rows, columns=["process", "outcome", "count", "share"])


def quadrant_chart(frame: pd.DataFrame, cell: int = 105) -> alt.LayerChart:
    """2x2 heatmap: rows = process verdict, columns = outcome verdict; count and share.

    The off-diagonal cells (process and outcome disagree: the environment blocked a sound
    process, or a flawed one succeeded) get a dashed outline so they read as such.
    """
    d = frame.copy()
    d["diverge"] = (d["process"] == "sound") != (d["outcome"] == "success")
    d["count_text"] = d["count"].astype(str)
    d["share_text"] = d["share"].map(lambda s: "" if pd.isna(s) else f"{s:.0%} of tasks")
    top = max(int(d["count"].max()) if len(d) else 0, 1)
    d["text_colour"] = np.where(d["count"] > 0.55 * top, "white", "black")
    x = alt.X(
        "outcome:N",
        sort=OUTCOME_ORDER,
        scale=alt.Scale(domain=OUTCOME_ORDER),
        title="outcome verdict",
        axis=alt.Axis(orient="top", labelAngle=0, labelFontSize=12),
    )
    y = alt.Y(
        "process:N",
        sort=PROCESS_ORDER,
        scale=alt.Scale(domain=PROCESS_ORDER),
        title="process verdict",
        axis=alt.Axis(labelAngle=0, labelFontSize=12),
    )
    base = alt.Chart(d).encode(x=x, y=y)
    tooltip = [
        alt.Tooltip("process:N", title="process"),
        alt.Tooltip("outcome:N", title="outcome"),
        alt.Tooltip("count:Q", title="tasks"),
        alt.Tooltip("share_text:N", title="share"),
    ]
    rect = base.mark_rect(stroke="white", strokeWidth=3).encode(
        color=alt.Color("count:Q", scale=alt.Scale(scheme="blues", domainMin=0), legend=None),
        tooltip=tooltip,
    )
    outline = (
        base.transform_filter(alt.datum.diverge)
        .mark_rect(fill=None, stroke="#c0392b", strokeWidth=2.5, strokeDash=[6, 3])
        .encode(tooltip=tooltip)
    )
    count = base.mark_text(fontSize=22, fontWeight="bold", dy=-9).encode(
        text="count_text:N", color=alt.Color("text_colour:N", scale=None)
    )
    share = base.mark_text(fontSize=11, dy=15).encode(
        text="share_text:N", color=alt.Color("text_colour:N", scale=None)
    )
    return (
        alt.layer(rect, outline, count, share)
        .properties(width=2 * cell, height=2 * cell)
        .resolve_scale(color="independent")
        .configure_view(strokeWidth=0)
    )
