"""The Slices page's caches, wording and sections (pages/6_Slices.py wires them).

Every string from the data or the URL (slice values are website names and task ids,
verifier names may be uploaded file names) is shown through `ui.safe_text.inert` in
Markdown and `plain` in widgets; CSV downloads go through `ui.download.csv_download`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from lib import metrics as M
from lib.analysis import slices as S
from lib.analysis.slice_values import SLICE_TITLES, SliceTable, slice_table, task_lengths
from lib.charts import slices as charts
from lib.table import clusters as C
from lib.table.verdicts import rater_title
from lib.viewer.links import viewer_href
from lib.vocab import Bootstrap
from ui import fmt, state, vega
from ui.download import csv_download
from ui.safe_text import inert, plain

ALL_DIMS = "all"
"""`?slice=all`: every slice dimension at once."""


def metric_word(metric: str) -> str:
    """A metric's name on the page (`lib.metrics.registry`'s title: "kappa", "FPR")."""
    return M.registry.get(metric).title


# ---------------------------------------------------------------------------------------
# Caches: image-free frames and small result lists, bounded
# ---------------------------------------------------------------------------------------


@state.bounded_cache(4, 32 * state.MB, show_spinner="Counting every trajectory's actions…")
def cached_lengths(_tasks: pd.DataFrame, source: str) -> pd.DataFrame:
    """`task_lengths` parses every action log: once per data source."""
    return task_lengths(_tasks)


@state.bounded_cache(16, 64 * state.MB)
def cached_table(
    _tasks: pd.DataFrame, _table: pd.DataFrame, source: str, uploads: str, split: str, dim: str
) -> SliceTable:
    """The slice values of the split's tasks (quartile bins of that split), per dimension."""
    chosen = _tasks if split == S.ALL_SPLITS else _tasks[_tasks["split"].astype(str) == split]
    return slice_table(chosen, _table, dim, cached_lengths(_tasks, source))


@state.bounded_cache(32, 64 * state.MB, show_spinner="Bootstrapping every slice…")
def cached_records(
    _table: pd.DataFrame,
    _tasks: pd.DataFrame,
    source: str,
    uploads: str,
    split: str,
    verifier: str,
    reference: str,
    dimension: str,
    dims: tuple[str, ...],
    cluster: str,
    min_n: int,
) -> list[S.SliceRecord]:
    """`lib.analysis.slices.slice_records` in natural order (the page ranks them, cheaply)."""
    table = cached_table(_tasks, _table, source, uploads, split, dimension)
    return S.slice_records(
        _table, _tasks, verifier, reference, dimension, split,
        slice_dims=dims, boot=Bootstrap(unit=cluster), min_n=min_n, sort_by=None, slices=table,
    )  # fmt: skip


@state.bounded_cache(16, 32 * state.MB, show_spinner="Bootstrapping the paired differences…")
def cached_paired(
    _table: pd.DataFrame,
    _tasks: pd.DataFrame,
    source: str,
    uploads: str,
    split: str,
    verifier: str,
    other: str,
    reference: str,
    dimension: str,
    dims: tuple[str, ...],
    cluster: str,
    min_n: int,
) -> list[S.PairedSliceRecord]:
    """`lib.analysis.slices.paired_slice_records` (A = the verifier, B = the one beside it)."""
    table = cached_table(_tasks, _table, source, uploads, split, dimension)
    return S.paired_slice_records(
        _table, _tasks, verifier, other, reference, dimension, split,
        slice_dims=dims, boot=Bootstrap(unit=cluster), min_n=min_n, slices=table,
    )  # fmt: skip


# ---------------------------------------------------------------------------------------
# Words
# ---------------------------------------------------------------------------------------


def slice_key(record: S.SliceRecord | S.PairedSliceRecord) -> str:
    """The slice's id in the URL (`?value=`): ``<dimension>:<value>``, unambiguous even
    when two dimensions share a value such as ``unknown``."""
    return f"{record.slice_dim}:{record.value}"


def slice_label(record: S.SliceRecord | S.PairedSliceRecord) -> str:
    """``Website / family: Adidas`` as plain text (for widgets and table cells)."""
    return plain(f"{SLICE_TITLES.get(record.slice_dim, record.slice_dim)}: {record.value}", 120)


def dims_of(choice: str) -> tuple[str, ...]:
    return tuple(S.SLICE_DIMS) if choice == ALL_DIMS else (choice,)


def method_text(records: Sequence[S.SliceRecord]) -> str:
    """The CI method with the clusters each slice's interval resampled (as a range: a
    website can fall in several slices, so the counts do not add up)."""
    if not records:
        return ""
    return fmt.method_caption(records[0].bootstrap, [r.n_clusters for r in records])


def context_caption(
    verifier: str,
    reference: str,
    split: str,
    records: Sequence[S.SliceRecord],
    min_n: int,
) -> str:
    """Every number's context: verifier, reference, split, n, CI method, small-n rule."""
    where = "both splits" if split == S.ALL_SPLITS else fmt.split_label(split)
    return (
        f"{inert(rater_title(verifier))} against {inert(rater_title(reference))} · split: "
        f"{inert(where)} · n = {overall_n(records)} tasks with both labels · slices with "
        f"n < {min_n} are left out of the chart and ranked after all others · "
        f"{method_text(records)}"
    )


def cell(text: str, ci: Any, note: str | None = None) -> str:
    """A value's text plus why its interval is missing (e.g. one website) or has no width
    (``note``: every resample gave the same value)."""
    if note:  # `ui.fmt` already wrote it when it is the interval's reason
        return text if note in text else f"{text} ({note})"
    if ci.defined or text.startswith("undefined"):
        return text
    return f"{text} (no interval: {ci.reason or 'undefined'})"


def _rows(records: Sequence[S.SliceRecord], metric: str = "kappa") -> list[dict[str, Any]]:
    return [
        S.record_row(r)
        | {"label": slice_label(r), "key": slice_key(r), "not_ranked": S.not_ranked(r, metric)}
        for r in records
    ]


# ---------------------------------------------------------------------------------------
# Sections
# ---------------------------------------------------------------------------------------


def overall_section(records: Sequence[S.SliceRecord], metric: str) -> None:
    """The verifier's overall figure on the selection: the reference line of the chart,
    captioned with its own n and the clusters its interval resampled."""
    if not records:
        return
    first = records[0]
    stat = first.stats[metric]
    st.metric(
        f"Overall {metric_word(metric)} (all tasks of the selection)",
        fmt.value_with_ci(stat.overall),
    )
    st.caption(f"Overall {metric_word(metric)}: {overall_caption(records)}")


def overall_caption(records: Sequence[S.SliceRecord]) -> str:
    """The overall figure's n and CI method, from the result: its interval resampled the
    selection's clusters (``overall_n_clusters``), not a slice's."""
    first = records[0]
    return (
        f"n = {overall_n(records)} tasks with both labels · "
        f"{fmt.method_caption(first.bootstrap, first.overall_n_clusters)}"
    )


def chart_section(records: Sequence[S.SliceRecord], metric: str, title: str, min_n: int) -> None:
    """The ranked dot-and-interval chart of the slices with n >= min_n (records already
    ranked); the small ones stay in the table."""
    shown = [r for r in records if not r.small_n]
    if not shown:
        st.caption(f"No slice has n >= {min_n}: see the table, or lower *Minimum n*.")
        return
    rows = _rows(shown, metric)
    stat = records[0].stats[metric]
    overall_ci = stat.overall.ci.bounds
    data = charts.chart_data(rows[: charts.MAX_ROWS], metric)
    left_out = len(records) - len(shown)
    notes = [f"{left_out} slices with n < {min_n} are only in the table."] if left_out else []
    if len(rows) > charts.MAX_ROWS:
        notes.append(
            f"The chart shows the {charts.MAX_ROWS} slices ranked first of {len(rows)}; the "
            "table below lists every slice. Choose one dimension in *Slice by* to see all of it."
        )
    if notes:
        st.caption(" ".join(notes))
    vega.altair_chart(
        charts.slices_chart(data, metric, stat.overall.value, overall_ci, plain(title, 200)),
        width="stretch",
    )
    st.caption(
        "Dots: the slice's figure; bars: its interval; dashed red line and band: the "
        "verifier's overall figure and interval on the same selection. Ranked by how much "
        "worse than overall (not a test: read the interval). Not ranked (brown): kappa "
        "where the verifier or the reference says one class on every task (kappa is then 0 "
        "or undefined by construction), slices defined by the verifier's own score, and "
        "undefined values."
    )


def _effect(record: S.SliceRecord, other: dict[str, S.SliceRecord], cluster: str) -> str:
    twin = other.get(slice_key(record))
    if twin is None:
        return ""
    mine, theirs = record.stats["kappa"].value.ci, twin.stats["kappa"].value.ci
    task_ci, site_ci = (mine, theirs) if cluster == "task" else (theirs, mine)
    return C.effect_note(C.design_effect(task_ci, site_ci, "kappa")) or ""


def column_widths(columns: Sequence[str]) -> dict[str, Any]:
    """Long texts are cut (the cell's tooltip and the CSV have them whole) so that the
    tables fit a 1400 px window: a website's name, a value with its reason, why a slice is
    not ranked, a paired difference."""
    widths = {"slice": 190, "not ranked": 130, "kappa: sites vs tasks": 125}
    words = [metric_word(m) for m in S.slice_metrics()]
    widths |= dict.fromkeys(words, 135)
    widths |= {f"{w} {side}": 135 for w in words for side in "AB"}
    widths |= {"A - B [paired interval]": 150}
    return {c: st.column_config.TextColumn(c, width=widths[c]) for c in columns if c in widths}


def main_columns(metric: str) -> list[str]:
    """The per-slice table's first columns: the ranked metric and its gap, plus kappa and
    accuracy, so that it fits a 1400 px window (the rest go under *More columns*)."""
    shown = dict.fromkeys([metric, "kappa", "accuracy"])
    word = metric_word(metric)
    values = [metric_word(m) for m in shown]
    return ["slice", "n", "clusters", values[0], f"{word} gap", *values[1:], "not ranked"]


def table_section(
    records: Sequence[S.SliceRecord],
    other_mode: Sequence[S.SliceRecord],
    cluster: str,
    file_stem: str,
    metric: str = "kappa",
) -> None:
    """Every metric of every slice, the design-effect note, and the CSV download."""
    other = {slice_key(r): r for r in other_mode}
    rows = []
    for r in records:
        row: dict[str, Any] = {"slice": slice_label(r), "n": r.n, "excluded": r.n_excluded}
        row["clusters"] = r.n_clusters
        for m in S.slice_metrics():
            s = r.stats[m]
            text = fmt.value_with_ci(s.value)
            if m == "kappa" and r.one_class:
                text = f"{text}, {S.ONE_CLASS}"
            row[metric_word(m)] = cell(text, s.value.ci, s.note)
            row[f"{metric_word(m)} gap"] = (
                fmt.plus_minus(s.gap.value) if s.gap.value is not None else "undefined"
            )
        row["not ranked"] = S.not_ranked(r, metric) or ""
        row["kappa: sites vs tasks"] = _effect(r, other, cluster)
        rows.append(row)
    shown = pd.DataFrame(rows)
    main = main_columns(metric)
    st.dataframe(shown[main], hide_index=True, height=min(36 * (len(rows) + 1) + 4, 520),
                 column_config=column_widths(main))  # fmt: skip
    st.caption(
        'Each cell: value [interval], or undefined (reason). "gap": the slice\'s figure minus '
        "the overall one. The other metrics are under *More columns*."
    )
    rest = [c for c in shown.columns if c not in main or c == "slice"]
    with st.expander("More columns: excluded tasks, the other metrics and their gaps, "
                     "kappa: sites vs tasks"):  # fmt: skip
        st.dataframe(shown[rest], hide_index=True, height=min(36 * (len(rows) + 1) + 4, 520),
                     column_config=column_widths(rest))  # fmt: skip
        st.caption(
            '"kappa: sites vs tasks": said where resampling websites/families instead of '
            "tasks changes the kappa interval materially (width ratio >= "
            f"{C.MATERIAL_HIGH} or <= {C.MATERIAL_LOW})."
        )
    frame = pd.DataFrame([S.record_row(r) for r in records])
    csv_download("Download these slices (CSV)", frame, file_stem, key="slices_csv")


def tasks_section(rows: pd.DataFrame, record: S.SliceRecord, verifier: str, reference: str) -> None:
    """The tasks of one slice, each with a link to the Trajectory page."""
    v = state.link_payload()  # links open a new tab: carry the uploads (?v=)
    frame = rows[rows[record.slice_dim] == record.value]
    words = {1.0: "success", 0.0: "failure"}
    shown = pd.DataFrame(
        {
            "task": [plain(t, 120) for t in frame["task_id"]],
            "split": frame["split"].astype(str).to_numpy(),
            "verifier": frame["pred"].map(words).fillna("missing").to_numpy(),
            "reference": frame["ref"].map(words).fillna("missing").to_numpy(),
            "open": [
                viewer_href(t, s, v=v)
                for t, s in zip(frame["task_id"], frame["split"], strict=True)
            ],
        }
    )
    missing = frame["pred"].isna().to_numpy() | frame["ref"].isna().to_numpy()
    same = (frame["pred"] == frame["ref"]).to_numpy()
    shown["agree"] = [
        "missing" if m else ("yes" if a else "no") for m, a in zip(missing, same, strict=True)
    ]
    st.caption(
        f"{len(shown)} tasks in {inert(slice_label(record))} · verifier "
        f"{inert(rater_title(verifier))} · reference {inert(rater_title(reference))} · "
        "missing labels are shown, excluded from the figures above."
    )
    st.dataframe(
        shown.sort_values(["agree", "task"]),
        hide_index=True,
        column_config={"open": st.column_config.LinkColumn("Trajectory", display_text="open")},
        height=min(36 * (len(shown) + 1) + 4, 420),
    )


def paired_section(
    paired: Sequence[S.PairedSliceRecord], verifier: str, other: str, metric: str, order: list[str]
) -> None:
    """A minus B per slice (same tasks), with the paired interval, in the chart's order."""
    if not paired:
        return
    by_key = {slice_key(p): p for p in paired}
    ranked = [by_key[k] for k in order if k in by_key]
    word = metric_word(metric)
    rows = []
    for p in ranked:
        d = p.diffs[metric]
        rows.append(
            {
                "slice": slice_label(p),
                "n (all three labels)": p.n,
                f"{word} A": fmt.value_with_ci(d.a),
                f"{word} B": fmt.value_with_ci(d.b),
                "A - B [paired interval]": cell(fmt.signed_diff(d.diff, d.ci), d.ci),
                "small n": p.small_n,
            }
        )
    overall = paired[0].overall[metric]
    st.markdown(
        f"**A = {inert(rater_title(verifier))}, B = {inert(rater_title(other))}**: overall "
        f"{word} A - B = {fmt.signed_diff(overall.diff, overall.ci)} (n = {overall.n}, "
        f"{fmt.cluster_count_text(overall.n_clusters)} resampled)"
    )
    frame = pd.DataFrame(rows)
    st.dataframe(frame, hide_index=True, height=min(36 * (len(rows) + 1) + 4, 420),
                 column_config=column_widths(frame.columns))  # fmt: skip
    st.caption(
        "Both verifiers on exactly the same tasks (A, B and the reference all labelled); each "
        "resample draws one set of clusters for both, so the interval of A - B accounts "
        f"for their correlation. {paired_method_text(ranked or paired)}"
    )


def paired_method_text(paired: Sequence[S.PairedSliceRecord]) -> str:
    """The paired intervals' method, with the clusters each slice's difference resampled."""
    return fmt.method_caption(paired[0].bootstrap, [p.diffs[m].n_clusters for p in paired
                                                    for m in p.diffs])  # fmt: skip


def overall_n(records: Sequence[S.SliceRecord]) -> int:
    """Tasks of the selection with both labels: each task is in exactly one value of a
    dimension, so the n of one dimension's slices add up to it."""
    if not records:
        return 0
    first = records[0].slice_dim
    return sum(r.n for r in records if r.slice_dim == first)
