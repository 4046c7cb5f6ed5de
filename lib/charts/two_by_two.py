"""One 2x2 count heatmap, shared by the Shifts flip matrix and the process x outcome
quadrant: the same reading (count large, share small, off-diagonal cells outlined) on
both pages, drawn by one piece of code.

DataFrames in, charts out; no Streamlit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Axis:
    """One side of the 2x2: its column in the frame, its two values in order, its title."""

    column: str
    order: Sequence[str]
    title: str
    tooltip: str


def two_by_two_chart(
    frame: pd.DataFrame,
    rows: Axis,
    columns: Axis,
    off_diagonal: pd.Series,
    share_of: str,
    count_title: str,
    cell: int,
    extra_tooltip: Sequence[alt.Tooltip] = (),
    count_size: int = 22,
) -> alt.LayerChart:
    """2x2 heatmap of ``frame["count"]`` (and ``frame["share"]``, "x% of <share_of>");
    the cells where ``off_diagonal`` holds get a dashed outline whatever their count."""
    d = frame.copy()
    d["off_diagonal"] = off_diagonal.to_numpy(dtype=bool)
    d["count_text"] = d["count"].astype(str)
    d["share_text"] = d["share"].map(lambda s: "" if pd.isna(s) else f"{s:.0%} of {share_of}")
    top = max(int(d["count"].max()) if len(d) else 0, 1)
    d["text_colour"] = np.where(d["count"] > 0.55 * top, "white", "black")

    def encoding(side: Axis, channel, orient: str | None):
        axis = alt.Axis(labelAngle=0, labelFontSize=12, **({"orient": orient} if orient else {}))
        return channel(
            f"{side.column}:N",
            sort=list(side.order),
            scale=alt.Scale(domain=list(side.order)),
            title=side.title,
            axis=axis,
        )

    base = alt.Chart(d).encode(x=encoding(columns, alt.X, "top"), y=encoding(rows, alt.Y, None))
    tooltip = [
        alt.Tooltip(f"{rows.column}:N", title=rows.tooltip),
        alt.Tooltip(f"{columns.column}:N", title=columns.tooltip),
        alt.Tooltip("count:Q", title=count_title),
        alt.Tooltip("share_text:N", title="share"),
        *extra_tooltip,
    ]
    rect = base.mark_rect(stroke="white", strokeWidth=3).encode(
        color=alt.Color("count:Q", scale=alt.Scale(scheme="blues", domainMin=0), legend=None),
        tooltip=tooltip,
    )
    outline = (
        base.transform_filter(alt.datum.off_diagonal)
        .mark_rect(fill=None, stroke="#c0392b", strokeWidth=2.5, strokeDash=[6, 3])
        .encode(tooltip=tooltip)
    )
    offset = count_size // 2 - 2
    count = base.mark_text(fontSize=count_size, fontWeight="bold", dy=-offset).encode(
        text="count_text:N", color=alt.Color("text_colour:N", scale=None)
    )
    share = base.mark_text(fontSize=11, dy=offset + 6).encode(
        text="share_text:N", color=alt.Color("text_colour:N", scale=None)
    )
    # The text colours use no scale: without an independent colour scale Vega-Lite merges
    # them with the count scale and draws nothing.
    return (
        alt.layer(rect, outline, count, share)
        .properties(width=2 * cell, height=2 * cell)
        .resolve_scale(color="independent")
        .configure_view(strokeWidth=0)
    )
