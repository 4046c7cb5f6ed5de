"""Altair charts of the Judges page: the pairwise kappa heatmap and one pair's 2x2 table.

DataFrames in, charts out; no Streamlit. The heatmap carries a point selection named
`PAIR_PARAM` on the fields (`rater_a`, `rater_b`), so `st.altair_chart(...,
on_select="rerun")` reports the clicked cell as ``{"selection": {PAIR_PARAM: [{...}]}}``
(parse it with `picked_pair`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

PAIR_PARAM = "pair"
LOW_N = "grey: n below the minimum"
UNDEFINED = "dark grey: kappa undefined (hover for why)"
OK = "kappa"
GREYS = {LOW_N: "#ececec", UNDEFINED: "#b8b8b8"}
# Streamlit's default autosize "fit" squeezes axis labels and legends into the given
# width, shrinking the cells; "pad" keeps the cell size and adds the decorations.
PAD = alt.AutoSizeParams(type="pad", contains="padding")
KAPPA_SCALE = alt.Scale(scheme="redblue", domain=[-1, 1], domainMid=0)


def heatmap_data(
    pairs: pd.DataFrame, labels: Mapping[str, str], groups: Mapping[str, str], min_n: int
) -> pd.DataFrame:
    """The pair table (`lib.analysis.judges.pair_table`) with what each cell draws and says.

    Pairs with n = 0 are left out (an empty cell); `status` is `kappa`, or one of the
    two grey states (`LOW_N` when n < min_n, else `UNDEFINED` when kappa is undefined).
    """
    d = pairs[pairs["n"] > 0].copy()
    d["label_a"] = d["rater_a"].map(labels)
    d["label_b"] = d["rater_b"].map(labels)
    low = d["n"] < min_n
    undefined = d["kappa"].isna()
    d["status"] = np.where(low, LOW_N, np.where(undefined, UNDEFINED, OK))
    d["kappa_text"] = d["kappa"].map(lambda k: "" if pd.isna(k) else f"{k:.2f}")
    d["text_colour"] = np.where((d["status"] == OK) & (d["kappa"].abs() > 0.55), "white", "black")
    d["kappa_shown"] = [
        (f"{k:.3f}" if not pd.isna(k) else f"undefined ({r})")
        for k, r in zip(d["kappa"], d["kappa_reason"].astype(object), strict=True)
    ]
    d["kappa_shown"] = np.where(
        low & ~undefined, d["kappa_shown"] + " (n below minimum)", d["kappa_shown"]
    )
    d["agreement_shown"] = d["agreement"].map(lambda a: "undefined" if pd.isna(a) else f"{a:.1%}")
    d["table_shown"] = [
        f"both 1: {a}, A 1 B 0: {b}, A 0 B 1: {c}, both 0: {e}"
        for a, b, c, e in zip(d["a1b1"], d["a1b0"], d["a0b1"], d["a0b0"], strict=True)
    ]
    d["group_a"] = d["rater_a"].map(groups)
    d["group_b"] = d["rater_b"].map(groups)
    return d.reset_index(drop=True)


def cell_size(n_raters: int, room: int = 640) -> int:
    """Pixels per heatmap cell: the matrix fills about `room` px, cells 22 to 40 px."""
    return int(min(40, max(22, room // max(n_raters, 1))))


def kappa_heatmap(
    data: pd.DataFrame,
    order: Sequence[str],
    labels: Mapping[str, str],
    groups: Mapping[str, str] | None = None,
    chosen: tuple[str, str] | None = None,
) -> alt.LayerChart:
    """Pairwise Cohen's kappa: rows = rater A, columns = rater B, n in every cell.

    Coloured cells have n >= the minimum and a defined kappa; low-n and undefined cells
    are grey (their own layer and legend), never coloured. A click selects the pair
    (param `PAIR_PARAM`). Lines separate the rater groups (human labels, verifiers,
    blind reviewers, informed reviewers); the chosen pair has a black outline.
    """
    names = [labels[r] for r in order]
    cell = cell_size(len(names))
    x = alt.X(
        "label_b:N",
        sort=names,
        scale=alt.Scale(domain=names),
        title="rater B (columns)",
        axis=alt.Axis(
            orient="top", labelAngle=-45, labelLimit=180, labelFontSize=11, labelOverlap=False
        ),
    )
    y = alt.Y(
        "label_a:N",
        sort=names,
        scale=alt.Scale(domain=names),
        title="rater A (rows)",
        axis=alt.Axis(labelLimit=180, labelFontSize=11, labelOverlap=False),
    )
    tooltip = [
        alt.Tooltip("label_a:N", title="A"),
        alt.Tooltip("label_b:N", title="B"),
        alt.Tooltip("n:Q", title="n (shared tasks)"),
        alt.Tooltip("kappa_shown:N", title="Cohen's kappa"),
        alt.Tooltip("agreement_shown:N", title="raw agreement"),
        alt.Tooltip("table_shown:N", title="table"),
    ]
    keep = ["rater_a", "rater_b", "label_a", "label_b", "n", "kappa", "status", "kappa_text"]
    keep += ["text_colour", "kappa_shown", "agreement_shown", "table_shown"]
    base = alt.Chart().encode(x=x, y=y, tooltip=tooltip)
    pick = alt.selection_point(name=PAIR_PARAM, fields=["rater_a", "rater_b"], on="click")
    grey = (
        base.transform_filter(alt.datum.status != OK)
        .mark_rect(stroke="white", strokeWidth=1)
        .encode(
            color=alt.Color(
                "status:N",
                scale=alt.Scale(domain=list(GREYS), range=list(GREYS.values())),
                legend=alt.Legend(
                    title=None, orient="bottom", direction="vertical", labelLimit=320
                ),
            )
        )
    )
    coloured = (
        base.transform_filter(alt.datum.status == OK)
        .mark_rect(stroke="white", strokeWidth=1)
        .encode(
            color=alt.Color(
                "kappa:Q",
                scale=KAPPA_SCALE,
                legend=alt.Legend(
                    title="Cohen's kappa",
                    orient="bottom",
                    direction="horizontal",
                    gradientLength=240,
                ),
            )
        )
        .add_params(pick)
    )
    font = 10 if cell >= 30 else 9
    ok = alt.datum.status == OK
    colour = alt.Color("text_colour:N", scale=None)
    kappa_text = (
        base.transform_filter(ok)
        .mark_text(fontSize=font, dy=-(font // 2 + 1))
        .encode(text="kappa_text:N", color=colour)
    )
    n_ok = (
        base.transform_filter(ok)
        .mark_text(fontSize=font - 1, dy=font // 2 + 2)
        .encode(text="n:Q", color=colour)
    )
    n_grey = base.transform_filter(~ok).mark_text(fontSize=font).encode(text="n:Q", color=colour)
    layers: list[Any] = [grey, coloured, kappa_text, n_ok, n_grey]
    starts = _group_starts(order, labels, groups or {})
    if starts:
        edges = pd.DataFrame({"label": starts})
        layers.append(
            alt.Chart(edges)
            .mark_rule(color="#444", strokeWidth=1.5, xOffset=-cell / 2)
            .encode(x=alt.X("label:N", scale=alt.Scale(domain=names)))
        )
        layers.append(
            alt.Chart(edges)
            .mark_rule(color="#444", strokeWidth=1.5, yOffset=-cell / 2)
            .encode(y=alt.Y("label:N", scale=alt.Scale(domain=names)))
        )
    if chosen is not None:
        is_chosen = (alt.datum.rater_a == chosen[0]) & (alt.datum.rater_b == chosen[1])
        layers.append(
            alt.Chart()
            .transform_filter(is_chosen)
            .mark_rect(fill=None, stroke="black", strokeWidth=2.5)
            .encode(x=x, y=y)
        )
    size = cell * len(names)
    return (
        alt.layer(*layers, data=data[keep])
        .properties(width=size, height=size, autosize=PAD)
        .resolve_scale(color="independent")
        .configure_view(strokeWidth=0)
    )


def _group_starts(
    order: Sequence[str], labels: Mapping[str, str], groups: Mapping[str, str]
) -> list[str]:
    """Labels of the first rater of every group after the first (where a line goes)."""
    out = []
    for prev, cur in itertools.pairwise(order):
        if groups.get(prev) != groups.get(cur):
            out.append(labels[cur])
    return out


def picked_pair(state: Any) -> tuple[str, str] | None:
    """The (rater_a, rater_b) of a heatmap selection event, or None (nothing clicked)."""
    if not state:
        return None
    try:
        points = state["selection"][PAIR_PARAM]
    except (KeyError, TypeError):
        return None
    if not points:
        return None
    point = points[0]
    a, b = point.get("rater_a"), point.get("rater_b")
    if not isinstance(a, str) or not isinstance(b, str):
        return None
    return a, b


def confusion_chart(cells: pd.DataFrame, label_a: str, label_b: str) -> alt.LayerChart:
    """The 2x2 table of a pair: counts, and the share of the row (A) and column (B).

    `cells` is `lib.analysis.judges.shares(detail)`: columns a, b (1/0), count, row_share,
    col_share.
    """
    d = cells.copy()
    name = {1: "success (1)", 0: "failure (0)"}
    d["A"] = d["a"].map(name)
    d["B"] = d["b"].map(name)

    def pct(v: float) -> str:
        return "–" if pd.isna(v) else f"{v:.0%}"

    d["count_text"] = d["count"].astype(str)
    d["share_text"] = [
        f"{pct(r)} of row · {pct(c)} of col"
        for r, c in zip(d["row_share"], d["col_share"], strict=True)
    ]
    d["text_colour"] = np.where(d["count"] > 0.6 * max(d["count"].max(), 1), "white", "black")
    order = [name[1], name[0]]
    x = alt.X("B:N", sort=order, title=f"B: {label_b}", axis=alt.Axis(orient="top", labelAngle=0))
    y = alt.Y("A:N", sort=order, title=f"A: {label_a}", axis=alt.Axis(labelAngle=0))
    base = alt.Chart(d).encode(x=x, y=y)
    rect = base.mark_rect(stroke="white", strokeWidth=2).encode(
        color=alt.Color("count:Q", scale=alt.Scale(scheme="blues", domainMin=0), legend=None),
        tooltip=[
            alt.Tooltip("A:N"),
            alt.Tooltip("B:N"),
            alt.Tooltip("count:Q"),
            alt.Tooltip("share_text:N", title="shares"),
        ],
    )
    count = base.mark_text(fontSize=22, fontWeight="bold", dy=-9).encode(
        text="count_text:N", color=alt.Color("text_colour:N", scale=None)
    )
    share = base.mark_text(fontSize=11, dy=14).encode(
        text="share_text:N", color=alt.Color("text_colour:N", scale=None)
    )
    return (
        alt.layer(rect, count, share)
        .properties(width=340, height=200, autosize=PAD)
        .resolve_scale(color="independent")
    )


SCORE_AGREE = "same verdict"
SCORE_DISAGREE = "different verdicts"


def score_scatter_data(
    frame: pd.DataFrame, verifier_threshold: float, human_threshold: float
) -> pd.DataFrame:
    """The rows of a score comparison (`lib.analysis.scores.ScoreComparison.frame`) that
    have both scores, with each side's verdict at its threshold and whether they agree."""
    d = frame[frame["score_a"].notna() & frame["score_b"].notna()].copy()
    a = d["score_a"] >= verifier_threshold
    b = d["score_b"] >= human_threshold
    d["verdicts"] = np.where(a == b, SCORE_AGREE, SCORE_DISAGREE)
    d["task"] = d["task_id"].astype(str)
    return d[["split", "task", "score_a", "score_b", "verdicts"]].reset_index(drop=True)


def score_scatter(
    data: pd.DataFrame,
    verifier_threshold: float,
    human_threshold: float,
    x_title: str = "Universal Verifier rubric score",
    y_title: str = "median blind reviewer score",
) -> alt.LayerChart:
    """One point per task (`score_scatter_data`), the verifier's threshold as a vertical
    rule and the human threshold as a horizontal one: the four quadrants are the two
    verdicts, and points in the off-diagonal quadrants are where the verdicts differ."""
    scale = alt.Scale(domain=[0, 1])
    colours = alt.Scale(domain=[SCORE_AGREE, SCORE_DISAGREE], range=["#4c78a8", "#e45756"])
    points = (
        alt.Chart(data)
        .mark_circle(size=55, opacity=0.65)
        .encode(
            x=alt.X("score_a:Q", scale=scale, title=x_title),
            y=alt.Y("score_b:Q", scale=scale, title=y_title),
            color=alt.Color(
                "verdicts:N",
                scale=colours,
                title="verdicts at the thresholds",
                legend=alt.Legend(orient="top"),
            ),
            tooltip=[
                alt.Tooltip("task:N"),
                alt.Tooltip("split:N"),
                alt.Tooltip("score_a:Q", title=x_title, format=".3f"),
                alt.Tooltip("score_b:Q", title=y_title, format=".3f"),
                alt.Tooltip("verdicts:N"),
            ],
        )
    )
    rules = pd.DataFrame(
        {
            "at": [verifier_threshold, human_threshold],
            "which": [
                f"verifier's threshold {verifier_threshold:g}",
                f"human threshold {human_threshold:g}",
            ],
        }
    )
    vertical = (
        alt.Chart(rules.iloc[[0]])
        .mark_rule(strokeDash=[6, 4], color="#444")
        .encode(x="at:Q", tooltip=[alt.Tooltip("which:N", title="rule")])
    )
    horizontal = (
        alt.Chart(rules.iloc[[1]])
        .mark_rule(strokeDash=[2, 3], color="#444")
        .encode(y="at:Q", tooltip=[alt.Tooltip("which:N", title="rule")])
    )
    return alt.layer(points, vertical, horizontal).properties(width=420, height=380, autosize=PAD)
