"""The development loop in the style of the paper's Figure 1: kappa per version, the
committed versions as a step line, the rejected ones marked with their reason.

DataFrames in, charts out; no Streamlit. Input: `loop_frame(result)`.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from lib.analysis import iterations as it

STATUS_COLOURS = {
    it.COMMITTED: "#1f6fb4",
    it.FPR_ROSE: "#c0392b",
    it.BELOW_FLOOR: "#e69f00",
    it.KAPPA_FELL: "#7f7f7f",
    it.KAPPA_UNDEFINED: "#bbbbbb",
}
STATUS_SHAPES = {
    it.COMMITTED: "circle",
    it.FPR_ROSE: "triangle-up",
    it.BELOW_FLOOR: "diamond",
    it.KAPPA_FELL: "triangle-down",
    it.KAPPA_UNDEFINED: "cross",
}


FIT_X = alt.AutoSizeParams(type="fit-x", contains="padding")
"""The width follows the page; the height is the plot's, with the axis labels and the legend
added below it (Streamlit's default "fit" squeezed the plot to a line to make room)."""


def loop_frame(result: it.IterationResult) -> pd.DataFrame:
    """One row per version: its kappa (median over runs) and interval, status, the best
    committed kappa so far (the step line), and the tooltip's words."""
    rows = []
    best = np.nan
    for r in result.versions:
        kappa = r.estimates["kappa"]
        ci = kappa.ci
        if r.committed and kappa.value is not None:
            best = kappa.value
        status = it.COMMITTED if r.committed else (r.why_not or it.KAPPA_UNDEFINED)
        fpr = r.estimates["fpr"].value
        rows.append(
            {
                "version": r.version,
                "order": r.order,
                "kappa": np.nan if kappa.value is None else kappa.value,
                "low": np.nan if ci is None or ci.low is None else ci.low,
                "high": np.nan if ci is None or ci.high is None else ci.high,
                "status": status,
                "committed_kappa": best,
                "runs": r.n_runs,
                "fpr": "undefined" if fpr is None else f"{fpr:.3f}",
                "spread": "—" if r.spreads["kappa"] is None else f"{r.spreads['kappa']:.3f}",
                "n": r.n,
            }
        )
    return pd.DataFrame(rows)


def loop_chart(frame: pd.DataFrame, height: int = 300) -> alt.LayerChart:
    """Kappa per version (x in file order), the committed step line, reasons by colour and
    shape; the interval as a vertical rule."""
    order = frame["version"].tolist()
    statuses = [s for s in STATUS_COLOURS if s in set(frame["status"])]
    x = alt.X(
        "version:N",
        sort=order,
        title="version (file order)",
        axis=alt.Axis(labelAngle=-60, labelOverlap=False, labelLimit=110),
    )
    legend = alt.Legend(title="commit rule", orient="bottom", columns=2, labelLimit=260)
    low = (
        float(np.nanmin(frame[["kappa", "low"]].to_numpy())) if frame["kappa"].notna().any() else 0
    )
    domain = [max(-1.0, np.floor((low - 0.05) * 10) / 10), 1.0]
    y = alt.Y("kappa:Q", title="kappa", scale=alt.Scale(domain=domain))
    base = alt.Chart(frame)
    step = (
        base.mark_line(interpolate="step-after", color=STATUS_COLOURS[it.COMMITTED], opacity=0.6)
        .encode(x=x, y=alt.Y("committed_kappa:Q", scale=alt.Scale(domain=domain)))
        .transform_filter("isValid(datum.committed_kappa)")
    )
    bars = base.mark_rule(opacity=0.5).encode(
        x=x,
        y=alt.Y("low:Q", scale=alt.Scale(domain=domain)),
        y2="high:Q",
        color=alt.Color("status:N", scale=_colours(statuses), legend=legend),
    )
    tooltip = [
        alt.Tooltip("version:N"),
        alt.Tooltip("status:N", title="rule"),
        alt.Tooltip("kappa:Q", format=".3f"),
        alt.Tooltip("low:Q", format=".3f", title="95% CI low"),
        alt.Tooltip("high:Q", format=".3f", title="95% CI high"),
        alt.Tooltip("fpr:N", title="FPR"),
        alt.Tooltip("runs:Q"),
        alt.Tooltip("spread:N", title="kappa range over runs"),
        alt.Tooltip("n:Q", title="n tasks"),
    ]
    points = base.mark_point(size=90, filled=True, opacity=1).encode(
        x=x,
        y=y,
        color=alt.Color("status:N", scale=_colours(statuses), legend=legend),
        shape=alt.Shape(
            "status:N",
            scale=alt.Scale(domain=statuses, range=[STATUS_SHAPES[s] for s in statuses]),
            legend=legend,
        ),
        tooltip=tooltip,
    )
    return alt.layer(step, bars, points).properties(
        height=height, width="container", autosize=FIT_X
    )


def _colours(statuses: list[str]) -> alt.Scale:
    return alt.Scale(domain=statuses, range=[STATUS_COLOURS[s] for s in statuses])
