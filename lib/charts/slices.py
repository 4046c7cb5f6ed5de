"""Altair chart of the Slices page: one ranked dot with its interval per slice.

DataFrames in, a chart out; no Streamlit. The rows come ranked (`lib.analysis.slices.rank_slices`:
worst first, the slices that are not ranked after), and the chart keeps that order top
to bottom; the page leaves small-n slices out of it (they stay in the table). The
verifier's overall figure on the same selection is a vertical rule with its interval as
a shaded band, so "worse than overall" reads as "left of the rule" (for kappa and
accuracy; FPR and FNR are worse to the right, said in the axis title). Slices that are
not ranked (one class, own score) are brown; small-n ones, if a caller draws them, grey.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import altair as alt
import pandas as pd

from lib.metrics import registry

ENOUGH = "ranked"
UNRANKED = "not ranked (one class, own score or undefined: see the table)"
SMALL = "small n (grey, never ranked first)"
COLORS = {ENOUGH: "#1f77b4", UNRANKED: "#8c6d31", SMALL: "#b0b0b0"}


#: The chart shows at most this many slices (the worst, in rank order); the table lists all.
MAX_ROWS = 40


def chart_data(rows: Sequence[dict[str, Any]], metric: str) -> pd.DataFrame:
    """One row per slice (in the given order): label, value, interval, n, status, why.

    ``rows`` are `lib.analysis.slices.record_row` dicts plus a display ``label`` (already made
    plain by the caller) and ``not_ranked`` (`lib.analysis.slices.not_ranked`, or None). A slice
    whose value is undefined keeps its row (drawn nowhere, listed in the tooltip-free
    table) so the order of the others is unchanged.
    """
    out = []
    for rank, r in enumerate(rows, start=1):
        ci = r.get(f"{metric}_ci")
        out.append(
            {
                "rank": rank,
                "label": r["label"],
                "value": r.get(metric),
                "low": None if ci is None else ci[0],
                "high": None if ci is None else ci[1],
                "n": r["n"],
                "status": SMALL if r["small_n"] else (UNRANKED if r.get("not_ranked") else ENOUGH),
                "why": r["reasons"].get(f"ci:{metric}", ""),
            }
        )
    return pd.DataFrame(
        out, columns=["rank", "label", "value", "low", "high", "n", "status", "why"]
    )


def slices_chart(
    data: pd.DataFrame,
    metric: str,
    overall: float | None,
    overall_ci: Sequence[float] | None,
    title: str,
) -> alt.LayerChart:
    """Ranked dots with interval bars; the overall figure as a rule over its band."""
    order = data["label"].tolist()
    declared = registry.get(metric)  # its axis title, better side and range
    axis_title = declared.axis_title + (
        " (left = worse)" if declared.higher_is_better else " (right = worse)"
    )
    y = alt.Y("label:N", sort=order, title=None, axis=alt.Axis(labelLimit=260))
    color = alt.Color(
        "status:N",
        scale=alt.Scale(domain=list(COLORS), range=list(COLORS.values())),
        legend=alt.Legend(title=None, orient="bottom", labelLimit=0),
    )
    tooltip = [
        alt.Tooltip("label:N", title="slice"),
        alt.Tooltip("value:Q", title=metric, format=".2f"),
        alt.Tooltip("low:Q", title="CI low", format=".2f"),
        alt.Tooltip("high:Q", title="CI high", format=".2f"),
        alt.Tooltip("n:Q", title="n"),
        alt.Tooltip("why:N", title="interval"),
    ]
    domain = [declared.low, 1.0]
    x = alt.X("value:Q", title=axis_title, scale=alt.Scale(domain=domain, clamp=True))
    base = alt.Chart(data)
    # Undefined values / intervals are null: filtered out, never drawn at 0.
    bars = base.transform_filter("isValid(datum.low) && isValid(datum.high)").mark_rule(
        strokeWidth=2
    ).encode(
        y=y, x=alt.X("low:Q", scale=alt.Scale(domain=domain, clamp=True)), x2="high:Q",
        color=color, tooltip=tooltip,
    )  # fmt: skip
    dots = (
        base.transform_filter("isValid(datum.value)")
        .mark_circle(size=70, opacity=1)
        .encode(y=y, x=x, color=color, tooltip=tooltip)
    )
    # Every slice keeps its row (an undefined one shows an empty row, the table says why).
    ticks = base.mark_tick(opacity=0).encode(y=y)
    layers: list[alt.Chart] = []
    if overall_ci is not None:
        band = pd.DataFrame({"low": [overall_ci[0]], "high": [overall_ci[1]]})
        layers.append(
            alt.Chart(band)
            .mark_rect(opacity=0.15, color="#d62728")
            .encode(x=alt.X("low:Q", scale=alt.Scale(domain=domain)), x2="high:Q")
        )
    if overall is not None:
        rule = pd.DataFrame({"overall": [overall]})
        layers.append(
            alt.Chart(rule)
            .mark_rule(color="#d62728", strokeDash=[4, 3])
            .encode(
                x=alt.X("overall:Q", scale=alt.Scale(domain=domain)),
                tooltip=[alt.Tooltip("overall:Q", title="overall", format=".2f")],
            )
        )
    # A fixed step per slice row: a fixed height would be shared with the title, axis and
    # legend when Streamlit fits the chart, and a short chart collapsed to one line.
    return alt.layer(*layers, ticks, bars, dots).properties(title=title, height=alt.Step(24))
