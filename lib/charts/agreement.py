"""Altair charts of the Agreement page: DataFrame in, chart out (no Streamlit).

The chart data is built here from `lib.analysis.agreement` records (`forest_frame`, `band_frame`,
`confusion_frame`); the ROC from `lib.analysis.agreement.RocResult`.

Every encoding is a channel object (``alt.X2("high:Q")``, ``alt.Text(...)``), never a bare
shorthand string or dict: altair turns those with ``from_dict``, which rebuilds a hash
table of its whole schema each time (about 0.1 s of CPU per call; issue 39). The specs are
the same (tests/unit/test_agreement_charts.py). For the same reason the layer and concat
properties are given to ``alt.layer``/``alt.hconcat`` at once: each ``.properties()``,
``.resolve_scale()`` or ``.configure_*()`` deep-copies the whole chart again.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from lib.analysis import agreement as A

SPLIT_COLORS = {"om2w": "#1f77b4", "internal": "#ff7f0e", "both (pooled)": "#2ca02c"}
BAND_COLOR = "#8c96a3"
ROW_HEIGHT = 16  # pixels per (verifier, split) row of a forest plot


def _split_scale(splits: Sequence[str]) -> alt.Scale:
    known = [s for s in SPLIT_COLORS if s in splits] + [s for s in splits if s not in SPLIT_COLORS]
    palette = [SPLIT_COLORS.get(s, "#9467bd") for s in known]
    return alt.Scale(domain=known, range=palette)


def _forest_layers(
    points: pd.DataFrame,
    band: pd.DataFrame | None,
    title: str,
    domain: tuple[float, float],
    zero_line: bool,
    labels: bool,
    width: int,
) -> alt.LayerChart:
    verifiers = list(dict.fromkeys(points["verifier"]))
    splits = list(dict.fromkeys(points["split"]))
    drawn = points.dropna(subset=["value"])
    with_ci = drawn.dropna(subset=["low", "high"])
    axis = alt.Axis(labelLimit=300, labelFontSize=12, labelPadding=8) if labels else None
    y = alt.Y("verifier:N", sort=verifiers, title=None, axis=axis)
    y_offset = alt.YOffset("split:N", sort=splits, scale=alt.Scale(paddingOuter=0.3))
    x_scale = alt.Scale(domain=list(domain), clamp=True, nice=False)
    x_axis = alt.Axis(title=f"{title} (95% CI)", titleFontSize=12, grid=True)
    color = alt.Color(
        "split:N",
        scale=_split_scale(splits),
        legend=alt.Legend(title=None, orient="top", labelFontSize=12, labelLimit=200),
    )
    tooltip = [
        alt.Tooltip("verifier:N"),
        alt.Tooltip("split:N"),
        alt.Tooltip("reference:N"),
        alt.Tooltip("label:N", title=title),
        alt.Tooltip("n:Q", title="n tasks"),
    ]
    layers: list[alt.Chart] = []
    if band is not None and not band.empty:
        band_tooltip = [alt.Tooltip("label:N", title="human-human band")]
        layers.append(
            alt.Chart(band)
            .mark_rect(color=BAND_COLOR, opacity=0.3)
            .encode(y=y, x=alt.X("low:Q", scale=x_scale), x2=alt.X2("high:Q"), tooltip=band_tooltip)
        )
        layers.append(
            alt.Chart(band)
            .mark_tick(color="#59636e", thickness=2, opacity=0.9)
            .encode(y=y, x=alt.X("value:Q", scale=x_scale), tooltip=band_tooltip)
        )
    if zero_line:
        layers.append(
            alt.Chart(pd.DataFrame({"x": [0.0]}))
            .mark_rule(color="#555", strokeDash=[3, 3], opacity=0.6)
            .encode(x=alt.X("x:Q", scale=x_scale))
        )
    layers.append(
        alt.Chart(with_ci)
        .mark_rule(strokeWidth=2.5)
        .encode(
            y=y,
            yOffset=y_offset,
            x=alt.X("low:Q", scale=x_scale, axis=x_axis),
            x2=alt.X2("high:Q"),
            color=color,
            tooltip=tooltip,
        )
    )
    layers.append(
        alt.Chart(drawn)
        .mark_point(filled=True, size=70, opacity=1)
        .encode(
            y=y,
            yOffset=y_offset,
            x=alt.X("value:Q", scale=x_scale, axis=x_axis),
            color=color,
            tooltip=tooltip,
        )
    )
    height = ROW_HEIGHT * len(splits) * len(verifiers) + 14 * len(verifiers)
    return alt.layer(*layers, height=max(120, height), width=width)


def forest_panels(
    kappa: pd.DataFrame,
    band: pd.DataFrame | None,
    fpr: pd.DataFrame,
    kappa_domain: tuple[float, float] = (-1.0, 1.0),
    width: int = 330,
) -> alt.HConcatChart:
    """Kappa (with the human band) and FPR side by side, one row per verifier and split.

    The rows line up, so a verifier is read across both panels; the second panel leaves
    out the verifier names.
    """
    left = _forest_layers(kappa, band, "Cohen's kappa", kappa_domain, True, True, width)
    right = _forest_layers(fpr, None, "false-positive rate", (0.0, 1.0), False, False, width)
    shared = alt.ScaleResolveMap(color="shared", y="shared", yOffset="shared")
    return alt.hconcat(
        left,
        right,
        spacing=24,
        resolve=alt.Resolve(scale=shared),
        config=alt.Config(view=alt.ViewConfig(strokeWidth=0)),
    )


def confusion_chart(frame: pd.DataFrame, title: str) -> alt.LayerChart:
    """2x2 heatmap of `confusion_frame`: verifier rows, reference columns."""
    order = ["success", "failure"]
    base = alt.Chart(frame).encode(
        x=alt.X("reference:N", sort=order, title="reference", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("verifier:N", sort=order, title="verifier"),
    )
    tooltip = [
        alt.Tooltip("cell:N"),
        alt.Tooltip("count:Q"),
        alt.Tooltip("share:Q", format=".0%", title="share of n"),
    ]
    cells = base.mark_rect(stroke="white", strokeWidth=2).encode(
        color=alt.Color("share:Q", scale=alt.Scale(scheme="blues", domain=[0, 1]), legend=None),
        tooltip=tooltip,
    )
    text = base.mark_text(fontSize=15, fontWeight="bold").encode(
        text=alt.Text("label:N"),
        color=alt.ColorValue(
            **alt.condition(alt.datum.share > 0.45, alt.value("white"), alt.value("#222"))
        ),
        tooltip=tooltip,
    )
    return alt.layer(cells, text, title=title, width=alt.Step(95), height=alt.Step(48))


def roc_chart(curve: pd.DataFrame, point: pd.DataFrame, title: str) -> alt.LayerChart:
    """ROC curve (``fpr``, ``tpr``, ``threshold``) with the chance diagonal and the
    point of the chosen threshold (``point``: one row, may be empty)."""
    axis_scale = alt.Scale(domain=[0, 1], nice=False)
    x = alt.X("fpr:Q", scale=axis_scale, title="false-positive rate (1 - specificity)")
    y = alt.Y("tpr:Q", scale=axis_scale, title="true-positive rate (recall)")
    diagonal = (
        alt.Chart(pd.DataFrame({"fpr": [0.0, 1.0], "tpr": [0.0, 1.0]}))
        .mark_line(color="#999", strokeDash=[4, 4])
        .encode(x=x, y=y)
    )
    ordered = curve.reset_index(drop=True).assign(step=lambda d: range(len(d)))
    line = (
        alt.Chart(ordered)
        .mark_line(color="#1f77b4", strokeWidth=2)
        .encode(
            x=x,
            y=y,
            order=alt.Order("step:Q"),
            tooltip=[
                alt.Tooltip("threshold:Q", format=".3f", title="score ≥"),
                alt.Tooltip("fpr:Q", format=".2f"),
                alt.Tooltip("tpr:Q", format=".2f"),
            ],
        )
    )
    layers = [diagonal, line]
    if not point.empty:
        labelled = point.assign(text=lambda d: [f"≥ {t:.2f}" for t in d["threshold"]])
        dot = alt.Chart(labelled).encode(x=x, y=y)
        layers.append(dot.mark_point(filled=True, size=140, color="#d62728", opacity=1))
        layers.append(
            dot.mark_text(align="left", dx=10, dy=14, color="#d62728", fontWeight="bold").encode(
                text=alt.Text("text:N")
            )
        )
    return alt.layer(*layers, title=title, width=360, height=320)


# Chart data from agreement records


def forest_frame(records: Sequence[A.AgreementRecord], metric: str) -> pd.DataFrame:
    """Chart rows of one metric: verifier, split, reference, value, low, high, n, label.

    Records where the metric is undefined are kept with ``value`` None and the reason in
    ``label`` (charts skip them; captions can list them).
    """
    rows = []
    for r in records:
        value, interval = A.value_of(r, metric), A.interval_of(r, metric)
        defined_ci = interval is not None and interval.defined
        if value.defined:
            text = f"{value.value:.2f}"
            text += f" [{interval.low:.2f}, {interval.high:.2f}]" if defined_ci else ""
            text += f" ({interval.reason})" if defined_ci and interval.reason else ""  # no width
        else:
            text = f"undefined ({value.reason})"
        rows.append(
            {
                "verifier": A.record_title(r),
                "verifier_id": r.verifier,
                "dimension": r.dimension,
                "split": A.SPLIT_TITLES.get(r.split, r.split),
                "reference": A.reference_title(r.reference),
                "value": value.value,
                "low": interval.low if defined_ci else None,
                "high": interval.high if defined_ci else None,
                "n": r.n,
                "label": text,
            }
        )
    columns = ["verifier", "verifier_id", "dimension", "split", "reference", "value"]
    return pd.DataFrame(rows, columns=[*columns, "low", "high", "n", "label"])


def band_frame(bands: dict[str, A.BandRecord], forest: pd.DataFrame) -> pd.DataFrame:
    """The human-human band behind each verifier row: the band of that verifier's dimension.

    ``bands`` maps dimension -> `reviewer_band` record. Columns: verifier, dimension,
    value, low, high, n_pairs, n_tasks, label. Rows without a defined kappa are left out.
    """
    rows = []
    for verifier, dimension in (
        forest[["verifier", "dimension"]].drop_duplicates().itertuples(index=False)
    ):
        band = bands.get(dimension)
        kappa = None if band is None else band.estimates["kappa"]
        if kappa is None or kappa.value is None or kappa.ci is None or kappa.ci.bounds is None:
            continue
        low, high = kappa.ci.bounds
        rows.append(
            {
                "verifier": verifier,
                "dimension": dimension,
                "value": kappa.value,
                "low": low,
                "high": high,
                "n_pairs": band.n_pairs,
                "n_tasks": band.n_tasks,
                "label": f"reviewers ({dimension}): {kappa.value:.2f} [{low:.2f}, {high:.2f}], "
                f"{band.n_pairs} pairs on {band.n_tasks} om2w tasks",
            }
        )
    columns = ["verifier", "dimension", "value", "low", "high", "n_pairs", "n_tasks", "label"]
    return pd.DataFrame(rows, columns=columns)


def confusion_frame(record: A.AgreementRecord) -> pd.DataFrame:
    """The 2x2 counts of a record as rows for a heatmap: verifier, reference, cell, count."""
    cells = [
        ("success", "success", "TP", record.tp),
        ("success", "failure", "FP", record.fp),
        ("failure", "success", "FN", record.fn),
        ("failure", "failure", "TN", record.tn),
    ]
    n = record.n
    return pd.DataFrame(
        [
            {
                "verifier": v,
                "reference": r,
                "cell": cell,
                "count": int(count),
                "share": count / n if n else 0.0,
                "label": f"{cell} {int(count)}",
            }
            for v, r, cell, count in cells
        ]
    )
