"""Altair charts of the Shifts page: the blind -> informed flip matrix and the dumbbell.

DataFrames in, charts out; no Streamlit. Inputs: `matrix_frame` and
`agreement_frame` (below).
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from lib.analysis.shifts import ALL, ALL_TITLE, BlindInformed, FlipStats, ReviewerShift
from lib.analysis.shifts import ALL_TITLE as POOLED
from lib.charts.two_by_two import Axis, two_by_two_chart
from lib.metrics import Estimate

ORDER = ["success", "failure"]
STAGE_COLOURS = {"blind": "#9aa5b1", "informed": "#1f6fb4"}


def flip_matrix_chart(matrix: pd.DataFrame, cell: int = 120) -> alt.LayerChart:
    """2x2 heatmap: rows = blind label, columns = informed label; count and share per cell.

    The off-diagonal cells are the flips; they get a dark outline so they read as such
    whatever their count.
    """
    flip = matrix["blind"] != matrix["informed"]
    kind = pd.Series(np.where(flip, "flip", "unchanged"), index=matrix.index)
    return two_by_two_chart(
        matrix.assign(kind=kind),
        rows=Axis("blind", ORDER, "blind label", "blind"),
        columns=Axis("informed", ORDER, "informed label", "informed"),
        off_diagonal=flip,
        share_of="eligible",
        count_title="reviews",
        cell=cell,
        extra_tooltip=[alt.Tooltip("kind:N", title="")],
        count_size=24,
    )


def agreement_dumbbell(frame: pd.DataFrame, measure: str, percent: bool) -> alt.LayerChart:
    """One row per reviewer (pooled first): blind and informed value joined by a line.

    `frame` is `agreement_frame` (long: reviewer, stage, value, n, ...). Each
    row's label carries its n. Undefined values draw no point; the tooltip says why.
    """
    d = frame.copy()
    d["row"] = d["reviewer"] + "  (n = " + d["n"].astype(str) + ")"
    order = list(dict.fromkeys(d["row"]))
    d["shown"] = [
        (f"{v:.0%}" if percent else f"{v:.2f}") if not pd.isna(v) else f"undefined ({note})"
        for v, note in zip(d["value"], d["note"], strict=True)
    ]
    d["change"] = [
        "undefined"
        if pd.isna(diff)
        else f"{diff:+.2f}" + ("" if pd.isna(lo) else f" [{lo:+.2f}, {hi:+.2f}]")
        for diff, lo, hi in zip(d["diff"], d["ci_low"], d["ci_high"], strict=True)
    ]
    wide = d.pivot_table(index="row", columns="stage", values="value", aggfunc="first")
    wide = wide.reindex(order).reset_index()
    for stage in ("blind", "informed"):
        if stage not in wide:
            wide[stage] = np.nan

    if percent:
        scale = alt.Scale(domain=[0, 1])
        axis = alt.Axis(format="%", title=measure, grid=True, orient="top")
    else:
        low = float(np.nanmin(d["value"])) if d["value"].notna().any() else 0.0
        start = max(-1.0, min(0.0, np.floor(low * 10) / 10))
        scale = alt.Scale(domain=[start, 1])
        # Explicit ticks every 0.1 (0.2 on a wide domain): Vega's own ticks can fall every
        # 0.05, which ".1f" wrote as "0.1 0.1 0.2 0.2 ..." (issue 21).
        step = 0.1 if start >= -0.4 else 0.2
        ticks = [round(t, 1) for t in np.arange(1.0, start - 1e-9, -step)][::-1]
        axis = alt.Axis(format=".1f", title=measure, grid=True, orient="top", values=ticks)
    weight = {"condition": {"test": f"indexof(datum.label, '{POOLED}') === 0", "value": "bold"}}
    y = alt.Y(
        "row:N",
        sort=order,
        title=None,
        axis=alt.Axis(
            labelFontSize=12,
            labelLimit=220,
            labelOverlap=False,
            labelFontWeight={**weight, "value": "normal"},
        ),
    )
    rule = (
        alt.Chart(wide)
        .transform_filter("isValid(datum.blind) && isValid(datum.informed)")
        .mark_rule(strokeWidth=3, color="#c9d3dd")
        .encode(y=y, x=alt.X("blind:Q", scale=scale, axis=axis), x2="informed:Q")
    )
    points = (
        alt.Chart(d)
        .transform_filter("isValid(datum.value)")
        .mark_circle(size=150, opacity=1)
        .encode(
            y=y,
            x=alt.X("value:Q", scale=scale, axis=axis),
            color=alt.Color(
                "stage:N",
                scale=alt.Scale(domain=list(STAGE_COLOURS), range=list(STAGE_COLOURS.values())),
                legend=alt.Legend(title=None, orient="bottom"),
            ),
            tooltip=[
                alt.Tooltip("reviewer:N"),
                alt.Tooltip("stage:N"),
                alt.Tooltip("shown:N", title=measure),
                alt.Tooltip("n:Q", title="n (reviews)"),
                alt.Tooltip("change:N", title="informed - blind [95% CI]"),
            ],
        )
    )
    return alt.layer(rule, points).properties(height=alt.Step(30)).configure_view(strokeWidth=0)


# Chart data from shift results


def matrix_frame(stats: FlipStats) -> pd.DataFrame:
    """The 2x2 flip matrix as rows `blind, informed, count, share` (share of eligible)."""
    rows = []
    for key, count in stats.matrix.items():
        blind, informed = key.split(" → ")
        share = count / stats.eligible if stats.eligible else None
        rows.append({"blind": blind, "informed": informed, "count": count, "share": share})
    return pd.DataFrame(rows, columns=["blind", "informed", "count", "share"])


def agreement_frame(summaries: Sequence[ReviewerShift], metric: str = "agreement") -> pd.DataFrame:
    """Long frame for the per-reviewer dumbbell: `reviewer, stage, value, n, diff, ci`.

    `metric` is `agreement` (share matching the verdict shown) or `kappa`. Undefined
    values are left out of `value` (NaN) and explained in `note`.
    """
    rows = []
    for s in summaries:
        result: BlindInformed = getattr(s, metric)
        name = ALL_TITLE if s.annotator == ALL else s.annotator
        ci = result.diff.ci
        for stage in ("blind", "informed"):
            value: Estimate = getattr(result, stage)
            rows.append(
                {
                    "reviewer": name,
                    "pooled": s.annotator == ALL,
                    "stage": stage,
                    "value": value.value if value.defined else np.nan,
                    "n": result.n,
                    "diff": result.diff.value,
                    "ci_low": ci.low,
                    "ci_high": ci.high,
                    "note": value.reason or "",
                }
            )
    return pd.DataFrame(rows)
