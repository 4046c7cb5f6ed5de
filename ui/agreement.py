"""The Agreement page's sections: the overview chart, the metrics table, one verifier in
detail, the ROC of the rubric score, the disagreements; and the page's cached calls.

Wording and display tables live here; the numbers come from `lib.analysis.agreement`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import fields

import numpy as np
import pandas as pd
import streamlit as st

from lib import metrics as M
from lib.analysis import agreement as A
from lib.charts import agreement as charts
from lib.digest import frame_digest
from lib.metrics import Interval, Value
from lib.table import clusters as C
from lib.table.verdicts import UPLOAD_PREFIX
from lib.viewer.links import viewer_href, why_value
from lib.vocab import HUMAN_REFERENCE, Bootstrap
from ui import fmt, params, state, url, vega
from ui.download import csv_download
from ui.safe_text import inert
from ui.sidebar import current_cluster
from ui.state import UPLOADS_KEY

PROCESS_REFERENCE = HUMAN_REFERENCE[A.PROCESS]


Formatter = Callable[[Value, Interval | None], str]


def display_metrics() -> dict[str, str]:
    """Columns of `display_frame` (metric -> title), the story first: chance-corrected
    agreement, then errors (`lib.metrics.registry`: each metric's ``column``)."""
    return {m.name: m.title for m in M.registry.columns()}


def _rate(record: A.AgreementRecord, key: str) -> str:
    value = record.estimates[key].value
    return "undefined" if value is None else f"{value:.2f}"


def display_frame(records: Sequence[A.AgreementRecord], fmt: Formatter) -> pd.DataFrame:
    """One row per record with every number as text (``fmt`` writes value [CI])."""
    rows = []
    for r in records:
        row = {
            "split": A.SPLIT_TITLES.get(r.split, r.split),
            "verifier": A.record_title(r),
            "reference": A.reference_title(r.reference),
            "n": r.n,
        }
        for key, title in display_metrics().items():
            row[title] = fmt(A.value_of(r, key), A.interval_of(r, key))
        row["success rate (verifier / reference)"] = (
            f"{_rate(r, 'verifier_positive_rate')} / {_rate(r, 'reference_positive_rate')}"
        )
        row["missing (verifier / reference)"] = f"{r.n_missing_verifier} / {r.n_missing_reference}"
        row["note"] = (
            "one class dominates: read kappa with accuracy and AC1" if r.kappa_misleads else ""
        )
        rows.append(row)
    return pd.DataFrame(rows)


def kappa_note(record: A.AgreementRecord, fmt: Formatter) -> str:
    """Kappa beside raw agreement and AC1, for a comparison where one class dominates.

    Markdown: the verifier, reference and split names (from the data or an upload) are
    made inert; the numbers are ours.
    """
    parts = [
        f"{title} {fmt(A.value_of(record, key), A.interval_of(record, key))}"
        for key, title in (("kappa", "kappa"), ("accuracy", "raw agreement"), ("ac1", "AC1"))
    ]
    rate = record.estimates["reference_positive_rate"].value
    rate_text = "undefined" if rate is None else f"{rate:.2f}"
    split = inert(A.SPLIT_TITLES.get(record.split, record.split))
    verifier = inert(A.record_title(record))
    return (
        f"{verifier} vs {inert(A.reference_title(record.reference))} on {split} "
        f"(n = {record.n}, reference success rate {rate_text}): " + ", ".join(parts)
    )


def csv_frame(records: Sequence[A.AgreementRecord]) -> pd.DataFrame:
    """The records flat and numeric (``<metric>_ci_low/high``), for a CSV download.

    Undefined values are empty cells; ``undefined`` lists why, e.g. ``kappa: n = 0``.
    """
    rows = []
    for r in records:
        row = {}
        for f in fields(r):
            value = getattr(r, f.name)
            if f.name == "estimates":
                row |= {key: value[key].value for key in A.value_keys()}
            elif not isinstance(value, list | dict | Bootstrap):
                row[f.name] = value
        for name in A.ci_keys():
            ci = r.estimates[name].ci
            row[f"{name}_ci_low"] = None if ci is None else ci.low
            row[f"{name}_ci_high"] = None if ci is None else ci.high
        row["undefined"] = "; ".join(f"{k}: {v}" for k, v in A.reasons(r).items())
        b = r.bootstrap
        row["ci_method"] = (
            f"percentile bootstrap over {fmt.UNIT_WORDS.get(b.unit, b.unit)} "
            f"({r.n_clusters} clusters), {b.n_resamples} resamples, seed {b.seed}; "
            f"{exact_titles()}: Clopper-Pearson on the effective n of those clusters"
        )
        rows.append(row)
    return pd.DataFrame(rows)


def exact_titles() -> str:
    """The metrics with an interval whose interval is Clopper-Pearson's ("accuracy, FPR, FNR")."""
    shown = set(A.ci_keys())
    return ", ".join(
        m.title for m in M.registry.METRICS if m.name in shown and m.method == M.CLOPPER_PEARSON
    )


def method_caption(records: Sequence[A.AgreementRecord]) -> str:
    """The CI method of several records (one bootstrap; each its own cluster count)."""
    if not records:
        return ""
    return fmt.method_caption(records[0].bootstrap, [r.n_clusters for r in records])


UPLOADS_SHOWN = 5
"""Uploaded verifiers in the Agreement chart and table by default (the first ones; the
verifier chosen for the details is always shown): a session may hold 20, and each one is
a bootstrap per split and reference."""
_FINGERPRINT_KEY = "_uploads_fingerprint"


def uploads_key() -> str:
    """A fingerprint of this session's uploaded verdicts (part of the shared cache keys):
    the SHA-256 of the frame's canonical bytes (`lib.digest.frame_digest`), so no visitor
    can build uploads whose key another visitor's uploads have (issue 26: the old sum of
    row hashes collided, and a forged file chose the numbers a second session saw).

    Hashed once per uploads frame (kept with the frame it describes): hashing 20 verifiers
    x 26,000 tasks on every rerun cost a second."""
    return _fingerprint(st.session_state.get(UPLOADS_KEY), _FINGERPRINT_KEY) + _fingerprint(
        state.session_labels(), _LABELS_FINGERPRINT_KEY, ":labels:"
    )


_LABELS_FINGERPRINT_KEY = "_labels_fingerprint"


def _fingerprint(frame: pd.DataFrame | None, key: str, prefix: str = "") -> str:
    """`frame_digest` of a session frame, hashed once per frame object ("" when empty): the
    uploads, and the session's own labels (they add the "your labels" reference rows)."""
    if frame is None or len(frame) == 0:
        return ""
    held = st.session_state.get(key)
    if held is not None and held[0] is frame:
        return held[1]
    digest = prefix + frame_digest(frame)
    st.session_state[key] = (frame, digest)
    return digest


def shown_verifiers(options: Sequence[str], detail: str, n_uploads: int) -> list[str]:
    """The verifiers the chart and table show: the dataset's, the first ``n_uploads``
    uploaded ones, and the verifier chosen for the details (always)."""
    mine = [v for v in options if v.startswith(UPLOAD_PREFIX)]
    keep = set(mine[:n_uploads]) | {detail}
    return [v for v in options if not v.startswith(UPLOAD_PREFIX) or v in keep]


def hidden_uploads_note(options: Sequence[str], shown: Sequence[str]) -> str | None:
    """What the chart and table leave out, and how to see it (None when nothing is)."""
    mine = [v for v in options if v.startswith(UPLOAD_PREFIX)]
    hidden = [v for v in mine if v not in set(shown)]
    if not hidden:
        return None
    return (
        f"{len(hidden)} of your {len(mine)} uploaded verifiers are not in the chart and "
        f"table: raise *{params.AGREEMENT_UPLOADS.label}*, or choose one as the verifier "
        "for the details."
    )


@state.bounded_cache(
    max_entries=32,
    max_bytes=64 * state.MB,
    show_spinner=f"Computing agreement (every shown verifier x reference x split) with "
    f"{Bootstrap().n_resamples:,} bootstrap resamples each: first time only, then cached…",
)
def cached_records(
    _table: pd.DataFrame,
    source: str,
    threshold: float,
    uploads: str,
    cluster: str = "task",
    verifiers: tuple[str, ...] | None = None,
    references: tuple[str, ...] | None = None,
) -> list[A.AgreementRecord]:
    """`lib.analysis.agreement.agreement_records` of the shown verifiers and references only."""
    return A.agreement_records(
        _table,
        threshold,
        boot=Bootstrap(unit=cluster),
        only_verifiers=verifiers,
        only_references=references,
    )


@state.bounded_cache(max_entries=4, max_bytes=4 * state.MB)
def cached_bands(
    _table: pd.DataFrame, source: str, cluster: str = "task"
) -> dict[str, A.BandRecord]:
    return {
        dim: A.reviewer_band(_table, dim, boot=Bootstrap(unit=cluster))
        for dim in (A.OUTCOME, A.PROCESS)
    }


@state.bounded_cache(max_entries=32, max_bytes=64 * state.MB)
def cached_roc(
    _table: pd.DataFrame,
    source: str,
    reference: str,
    splits: tuple,
    threshold: float,
    cluster: str = "task",
) -> A.RocResult:
    """The Universal Verifier's ROC: its score does not depend on a session's uploads, so
    the key leaves them out (one entry serves every visitor)."""
    return A.roc_result(_table, reference, splits, threshold, boot=Bootstrap(unit=cluster))


def overview_section(
    shown: list[A.AgreementRecord],
    bands: dict[str, A.BandRecord],
    reference: str,
    splits: Sequence[str],
    process_reference: str = PROCESS_REFERENCE,
) -> None:
    """Kappa and FPR of every verifier against the humans, with the human-human band."""
    st.header("Each verifier against the humans")
    st.caption(
        f"Outcome verdicts against **{inert(A.reference_title(reference))}**, the process "
        f"verdict against **{inert(A.reference_title(process_reference))}** · split: "
        f"{fmt.split_label(splits)}"
        + (" (each split, and both pooled)" if len(splits) > 1 else "")
        + " · hover a point for its n."
    )
    kappa_frame = charts.forest_frame(shown, "kappa")
    fpr_frame = charts.forest_frame(shown, "fpr")
    band = charts.band_frame(bands, kappa_frame)
    low = min([-0.2, *kappa_frame["low"].dropna(), *band["low"]])
    st.markdown(
        "**Cohen's kappa** against the humans (grey band: the reviewers with each other) and "
        "**false-positive rate** (share of failed runs the verifier passes)"
    )
    vega.altair_chart(charts.forest_panels(kappa_frame, band, fpr_frame, (low - 0.05, 1.0)))
    band_text = "; ".join(
        f"{dim} {fmt.value_with_ci(A.value_of(b, 'kappa'), A.interval_of(b, 'kappa'))} "
        f"({b.n_pairs} reviewer pairs on {b.n_tasks} om2w tasks)"
        for dim, b in bands.items()
    )
    st.caption(
        f"Grey band = 95% interval of the human-human kappa, with a tick at its value: "
        f"{band_text}. It pools every pair of reviewers who labelled the same om2w task blind "
        "(each pair in both orders, so no reviewer is 'the reference'); internal has one "
        "reviewer per task, so the band always comes from om2w. The band is context only: "
        "whether a verifier agrees with the reviewers as often as they agree with each other "
        "is tested on the same tasks and reviewers below (*the human-parity tests*)."
    )
    undrawn = kappa_frame[kappa_frame["value"].isna()]
    if not undrawn.empty:
        st.caption(
            "Not drawn (kappa undefined): "
            + "; ".join(
                f"{inert(r.verifier)} on {inert(r.split)}: {inert(r.label)}"
                for r in undrawn.itertuples()
            )
        )
    drawn = [r for r in shown if any(A.value_of(r, k).defined for k in ("kappa", "fpr"))]
    st.caption(method_caption([*drawn, *bands.values()]))  # what the chart draws
    misleading = [r for r in shown if r.kappa_misleads and r.estimates["kappa"].defined]
    if misleading:
        st.info(
            "**One class dominates, so kappa misleads** for these comparisons: read raw "
            "agreement and Gwet's AC1 beside it.\n\n"
            + "\n".join(f"- {kappa_note(r, fmt.value_with_ci)}" for r in misleading),
            icon=":material/balance:",
        )


RATES_TABLE = "Reference, success rates and missing labels"
RATES_COLUMNS = (
    "reference",
    "success rate (verifier / reference)",
    "missing (verifier / reference)",
)


def main_columns() -> tuple[str, ...]:
    """The metrics table's columns: the row's identity and the figures the page is about
    (the registry's `MAIN` metrics: kappa, FPR, FNR, accuracy). All 16 columns were about
    2,000 px wide and scrolled sideways in a 1400 px window; the others are in
    `detail_tables`, below it (issue 21)."""
    main = M.registry.agreement_tables()[M.registry.MAIN]
    return ("split", "verifier", "n", *(m.title for m in main))


def detail_tables() -> dict[str, tuple[str, ...]]:
    """The rest of `display_frame`, each table keyed by (split, verifier) like the main one:
    the registry's other tables of metrics, then the reference and rates; its `note` column
    is a caption under the main table (`notes_caption`)."""
    tables = {
        title: tuple(m.title for m in metrics)
        for title, metrics in M.registry.agreement_tables().items()
        if title != M.registry.MAIN
    }
    return tables | {RATES_TABLE: RATES_COLUMNS}


def more_columns_label() -> str:
    """The expander's label: what its tables hold ("AC1, F1, MCC, precision, ...")."""
    metrics = [t for title, ts in detail_tables().items() if title != RATES_TABLE for t in ts]
    return f"More columns: {', '.join(metrics)}, the reference, success rates and missing labels"


SHORT_LABELS = {
    "success rate (verifier / reference)": ("success rate", "Verifier / reference: share "
                                            "of the tasks judged success."),
    "missing (verifier / reference)": ("missing", "Verifier / reference: tasks with a missing "
                                       "label, excluded (never counted as failure)."),
}  # fmt: skip


def _table(frame: pd.DataFrame, columns: Sequence[str], key: str | None = None) -> None:
    config = {
        name: st.column_config.Column(label, help=why)
        for name, (label, why) in SHORT_LABELS.items()
        if name in columns
    }
    st.dataframe(
        frame[list(columns)],
        hide_index=True,
        height=min(36 * (len(frame) + 1) + 4, 640),
        key=key,
        column_config=config,
    )


def compact_cell(value: Value, interval: Interval | None = None) -> str:
    """A table cell: value [interval], or a short `undefined` (`n = 0`, or `*`: its reason
    is listed under the table by `undefined_reasons`), so no column outgrows the window."""
    if value.defined:
        return fmt.value_with_ci(value, interval)
    return "undefined (n = 0)" if (value.reason or "").startswith("n = 0") else "undefined *"


def undefined_reasons(records: Sequence[A.AgreementRecord]) -> str:
    """Why each undefined cell of the tables is undefined, one clause per record and reason
    (Markdown; the names are inert)."""
    clauses = []
    for r in records:
        by_reason: dict[str, list[str]] = {}
        for key, title in display_metrics().items():
            value = A.value_of(r, key)
            if not value.defined:
                by_reason.setdefault(value.reason or "undefined", []).append(title)
        where = f"{inert(A.record_title(r))} on {inert(A.SPLIT_TITLES.get(r.split, r.split))}"
        clauses += [
            f"{where}: {inert(reason)} ({', '.join(titles)})"
            for reason, titles in by_reason.items()
        ]
    return "Undefined: " + "; ".join(clauses) + "." if clauses else ""


def notes_caption(records: Sequence[A.AgreementRecord]) -> str:
    """The rows whose `note` says kappa misleads (one class dominates), as one caption."""
    where = [
        f"{inert(A.record_title(r))} on {inert(A.SPLIT_TITLES.get(r.split, r.split))}"
        for r in records
        if r.kappa_misleads
    ]
    return (
        f"One class dominates, read kappa with accuracy and AC1: {'; '.join(where)}."
        if where
        else ""
    )


def table_section(shown: list[A.AgreementRecord], reference: str, groups: Sequence[str]) -> None:
    """Every metric of the shown records (the main figures, the rest below them, so that
    no table is wider than a 1400 px window), and the CSV download."""
    st.header("All metrics")
    frame = display_frame(shown, compact_cell)
    _table(frame, main_columns(), key="agreement_table")
    for caption in (undefined_reasons(shown), notes_caption(shown)):
        if caption:
            st.caption(caption)
    st.caption(
        "n = tasks where both sides have a label; missing = tasks with a missing verdict or "
        "reference, excluded (never counted as failure). Success rate = share judged success. "
        f"FPR = false positives / reference failures; FNR = false negatives / reference "
        f"successes. {method_caption(shown)}"
    )
    with st.expander(more_columns_label()):
        for title, columns in detail_tables().items():
            st.markdown(f"**{title}**")
            _table(frame, ("split", "verifier", *columns))
    csv_download(
        "Download the metrics (CSV)",
        csv_frame(shown),
        f"agreement_{reference}_{'_'.join(groups)}",
        key="agreement_csv",
    )


def detail_section(
    records: list[A.AgreementRecord],
    verifier: str,
    dimension: str,
    detail_reference: str,
    groups: Sequence[str],
    splits: Sequence[str],
    threshold: float,
) -> None:
    """One verifier against its reference: a confusion chart per split group."""
    st.header(
        f"{inert(A.verifier_title(verifier, threshold))} against "
        f"{inert(A.reference_title(detail_reference))}"
    )
    detail = A.select(
        [r for r in records if r.verifier == verifier and r.dimension == dimension],
        groups,
        detail_reference,
        detail_reference,
    )
    if not detail:
        st.info(
            f"{inert(A.reference_title(detail_reference))} has no label in "
            f"{fmt.split_label(splits)}."
        )
    for column, record in zip(st.columns(3), detail, strict=False):  # same size for 1 or 3
        with column:
            title = A.SPLIT_TITLES.get(record.split, record.split)
            if record.n:
                vega.altair_chart(
                    charts.confusion_chart(charts.confusion_frame(record), title), width="content"
                )
            else:
                st.markdown(f"**{inert(title)}**: no task with both labels.")
            lines = [
                f"{label} {fmt.value_with_ci(A.value_of(record, key), A.interval_of(record, key))}"
                for key, label in (("kappa", "kappa"), ("fpr", "FPR"), ("fnr", "FNR"))
            ]
            unit = fmt.UNIT_WORDS.get(record.bootstrap.unit, record.bootstrap.unit)
            st.caption(
                " · ".join(lines)
                + f"  \n{inert(fmt.n_caption(record.n, record.n_excluded, title))}"
                + f" · {record.n_clusters:,} {unit} resampled"
            )
            if record.kappa_misleads:
                st.warning(
                    "One class dominates here, so kappa misleads: "
                    + kappa_note(record, fmt.value_with_ci),
                    icon=":material/balance:",
                )


def roc_section(
    table: pd.DataFrame,
    source: str,
    reference: str,
    splits: Sequence[str],
    threshold: float,
) -> None:
    """The rubric score's ROC curve with the threshold in force as a point."""
    st.header("Universal Verifier rubric score: the threshold on the ROC curve")
    roc_options = list(dict.fromkeys([PROCESS_REFERENCE, reference]))
    roc_reference = url.choice(
        params.AGREEMENT_ROC,
        roc_options,
        roc_options[0],
        format_func=lambda r: inert(A.reference_title(r)),  # radio options are Markdown
    )
    roc = cached_roc(table, source, roc_reference, tuple(splits), threshold, current_cluster())
    roc_left, roc_right = st.columns([3, 2])
    with roc_left:
        if roc.curve.empty:
            st.info(f"No ROC curve: {roc.auc.reason}.")
        else:
            vega.altair_chart(
                charts.roc_chart(
                    roc.curve, roc.point, f"uv_rubric_score vs {A.reference_title(roc_reference)}"
                )
            )
    with roc_right:
        st.metric("AUC [95% CI]", fmt.value_with_ci(roc.auc, roc.auc_ci), border=True)
        st.caption(
            fmt.n_caption(roc.n, roc.n_excluded, splits)
            + (" (pooled)" if len(splits) > 1 else "")
            + f" · reference: {inert(A.reference_title(roc_reference))}. {fmt.method_caption(roc)}"
        )
        if not roc.point.empty:
            point = roc.point.iloc[0]
            st.markdown(
                f"At **score ≥ {threshold:.2f}** (red point): FPR **{point['fpr']:.2f}**, "
                f"recall **{point['tpr']:.2f}**. Move the threshold slider above to move the "
                "point; the process rows of the chart and table follow it."
            )


def _why(verifier: str | None, says: object) -> str | None:
    """`fp:<verifier>` when it says success (a false positive here), else `fn:<verifier>`."""
    return why_value("fp" if says == 1 else "fn", verifier) if verifier else None


def disagreements_display(rows: pd.DataFrame, verifier: str | None = None) -> pd.DataFrame:
    """`lib.analysis.agreement.disagreements` as the page lists them, false positives first.

    Columns: error (``false positive`` = verifier success, reference failure; ``false
    negative`` the reverse), link (`lib.viewer.links.viewer_href`, opens the trajectory viewer),
    split (its title), task_id, score (left out when the verifier has none), instruction.
    With ``verifier``, each link carries why it is opened (`?why=fp:<verifier>`).
    """
    v = state.link_payload()  # links open a new tab: carry the uploads (?v=)
    out = rows.assign(
        error=np.where(rows["verifier"] == 1, "false positive", "false negative"),
        link=[
            viewer_href(t, s, v=v, why=_why(verifier, p))
            for t, s, p in zip(rows["task_id"], rows["split"], rows["verifier"], strict=True)
        ],
        split=rows["split"].map(lambda s: A.SPLIT_TITLES.get(s, s)),
    )
    columns = ["error", "link", "split", "task_id", "score", "instruction"]
    if out["score"].isna().all():
        columns.remove("score")  # a verifier without a score: no empty column
    return out.sort_values(["error", "split", "task_id"], ascending=[False, True, True])[
        columns
    ].reset_index(drop=True)


def disagreements_section(
    table: pd.DataFrame,
    tasks: pd.DataFrame,
    verifier: str,
    detail_reference: str,
    splits: Sequence[str],
    dimension: str,
    threshold: float,
) -> None:
    """The false positives and false negatives, each linking to the trajectory viewer."""
    st.header("Where they disagree")
    wrong = disagreements_display(
        A.disagreements(table, tasks, verifier, detail_reference, splits, dimension, threshold),
        verifier,
    )
    link = st.column_config.LinkColumn(
        "task", display_text=r"task=([^&]+)", help="Open the task in the trajectory viewer"
    )
    columns = {
        "link": link,
        # cut to fit half of a 1400 px window; the cell's tooltip has it whole
        "instruction": st.column_config.TextColumn("instruction", width=190),
    }
    st.caption(
        f"{inert(A.verifier_title(verifier, threshold))} against "
        f"{inert(A.reference_title(detail_reference))} · split: {fmt.split_label(splits)}. "
        "Click a task to open it in the trajectory viewer."
    )
    fp_col, fn_col = st.columns(2)
    for column, error, what in (
        (fp_col, "false positive", "verifier says success, humans say failure"),
        (fn_col, "false negative", "verifier says failure, humans say success"),
    ):
        rows = wrong.loc[wrong["error"] == error].drop(columns=["error", "task_id"])
        with column:
            st.markdown(f"**{error.capitalize()}s** ({what}): {len(rows)}")
            if rows.empty:
                st.caption("None.")
            else:
                st.dataframe(
                    rows,
                    column_config=columns,
                    hide_index=True,
                    key=f"agreement_{error.replace(' ', '_')}s",
                )


def _key(record: A.AgreementRecord) -> tuple[str, str, str, str]:
    return (record.split, record.verifier, record.reference, record.dimension)


def design_effect_section(
    task_records: list[A.AgreementRecord], site_records: list[A.AgreementRecord], cluster: str
) -> None:
    """Say where resampling websites/families instead of tasks changes a kappa interval
    materially (`lib.table.clusters.design_effect`: width ratio >= 1.2 or <= 0.8).

    ``task_records`` / ``site_records``: the shown records computed both ways (same
    rows); ``cluster`` is the sidebar's choice (the numbers above use it).
    """
    site = {_key(r): r for r in site_records}
    notes = []
    for r in task_records:
        other = site.get(_key(r))
        if other is None:
            continue
        task_ci, site_ci = A.interval_of(r, "kappa"), A.interval_of(other, "kappa")
        if task_ci is None or site_ci is None:
            continue
        note = C.effect_note(C.design_effect(task_ci, site_ci, "kappa"))
        if note:
            where = fmt.split_label(r.split) if r.split != "all" else "both splits"
            notes.append(
                f"- {inert(A.record_title(r))} vs {inert(A.reference_title(r.reference))}"
                f" ({inert(where)}): kappa {note}"
            )
    if not notes:
        return
    shown = "the numbers above" if cluster == "site" else "switch the sidebar to `site`"
    st.caption(
        "**Tasks cluster by website.** Where the kappa interval changes materially (width "
        f"ratio >= {C.MATERIAL_HIGH} or <= {C.MATERIAL_LOW}) when whole websites/families "
        f"are resampled instead of tasks ({shown}). Wider: tasks of one website err alike, "
        "so they carry less independent evidence than their count; narrower: the errors of "
        "one website's tasks partly cancel out (or the websites are few, and the interval "
        "is itself uncertain):\n"
        + "\n".join(notes[:12])
        + (f"\n- ... and {len(notes) - 12} more" if len(notes) > 12 else "")
    )
