"""The Audit page's sections (counts per reason, the contested queue, the re-label form,
your labels' file) and the Trajectory viewer's audit panel (`?audit=1`)."""

from __future__ import annotations

import hashlib

import pandas as pd
import streamlit as st

from lib.analysis import audit, ceiling
from lib.data.load import Bench
from lib.table.verdicts import YOUR_LABELS
from lib.uploads import labels as L
from lib.viewer import cards as viewer
from lib.viewer.links import viewer_href
from lib.vocab import ALL, DIMENSIONS, SPLITS, Bootstrap, short_split
from ui import fmt, params, state, url
from ui.download import csv_download
from ui.parity import VERDICT_CELLS
from ui.safe_text import inert, plain

DIM_OPTIONS: tuple[str, ...] = (ALL, *DIMENSIONS)
SORTS: dict[str, str] = {
    "task": "Task id",
    "reasons": "Most reasons first",
    "todo": "Not yet re-labelled first",
    "split": "Split, then task",
}
LABEL_WORDS = {L.SUCCESS: "success", L.FAILURE: "failure", L.UNSURE: "unsure"}
UPLOAD_SEEN = "_audit_labels_file"
"""Session state: the digest of the last labels file read (a rerun must not read it again)."""
UPLOAD_NOTE = "_audit_labels_note"
"""Session state: what reading that file said (shown while it stays in the uploader)."""


@state.bounded_cache(max_entries=4, max_bytes=8 * state.MB)
def cached_reasons(_table: pd.DataFrame, source: str) -> pd.DataFrame:
    """`lib.analysis.audit.reason_rows` of the dataset's verdict table (uploads play no part)."""
    return audit.reason_rows(_table)


def reason_title(reason: str) -> str:
    return "All reasons" if reason == ALL else audit.REASON_TITLES.get(reason, reason)


def counts_section(long: pd.DataFrame, n_tasks: int, splits: list[str]) -> None:
    """Tasks x dimensions per reason and split, and how many tasks are contested at all."""
    counts = audit.reason_counts(long)
    shown = pd.DataFrame({"reason": counts["title"]})
    for split in [s for s in SPLITS if s in counts.columns]:
        shown[short_split(split)] = counts[split]
    if len([c for c in counts.columns if c in SPLITS]) > 1:
        shown["all"] = counts["all"]
    st.header("Counts per reason")
    st.dataframe(
        shown,
        hide_index=True,
        column_config={"reason": st.column_config.TextColumn(width="medium")},
    )
    tasks = long[["split", "task_id"]].drop_duplicates()
    pairs = long[audit.KEYS].drop_duplicates()
    st.caption(
        f"n = task × dimension flagged by each rule · split: {fmt.split_label(splits)} · "
        f"reference: the reviewers' own labels and the task-level labels · method: one rule "
        f"per reason (`lib.analysis.audit`). A task can have several reasons: "
        f"{len(tasks):,} of {n_tasks:,} tasks ({len(pairs):,} task × dimension) are "
        "contested."
    )


def queue_frame(
    long: pd.DataFrame, dimension: str, reason: str, sort: str, mine: pd.DataFrame | None
) -> pd.DataFrame:
    """The contested (task, dimension) rows the filters keep, with your label, sorted."""
    rows = audit.grouped(long)
    if dimension != ALL:
        rows = rows[rows["dimension"] == dimension]
    if reason != ALL:
        rows = rows[rows["reasons"].map(lambda r: reason in r)]
    rows = rows.assign(your_label="", your_note="")
    if mine is not None and len(rows):
        given = mine.set_index(["task_id", "dimension"])
        keys = list(zip(rows["task_id"], rows["dimension"], strict=True))
        rows["your_label"] = [str(given["label"].get(k, "")) for k in keys]
        rows["your_note"] = [str(given["note"].get(k, "") or "") for k in keys]
    by = {
        "task": (["task_id", "dimension"], [True, True]),
        "reasons": (["n_reasons", "task_id", "dimension"], [False, True, True]),
        "todo": (["_done", "task_id", "dimension"], [True, True, True]),
        "split": (["split", "task_id", "dimension"], [True, True, True]),
    }[sort]
    rows = rows.assign(_done=rows["your_label"] != "")
    return rows.sort_values(by[0], ascending=by[1]).drop(columns="_done").reset_index(drop=True)


def audit_href(task_id: str, split: str) -> str:
    """The viewer with the audit panel and the informed stage open."""
    return viewer_href(task_id, split) + "&informed=1&audit=1"


def queue_section(rows: pd.DataFrame, n_contested: int) -> None:
    st.header("The contested labels")
    done = int((rows["your_label"] != "").sum())
    st.caption(
        f"{len(rows):,} task × dimension shown of {n_contested:,} contested · {done:,} "
        "re-labelled by you (this session). Click a column header to sort; each task opens "
        "the trajectory viewer with the reviewers' blind and informed labels, their comments "
        "and the verifier's verdicts at the top."
    )
    shown = pd.DataFrame(
        {
            "task": [audit_href(t, s) for t, s in zip(rows["task_id"], rows["split"], strict=True)],
            "split": rows["split"].map(short_split),
            "dimension": rows["dimension"],
            "reasons": rows["reasons"].map(lambda r: "; ".join(audit.REASON_TITLES[x] for x in r)),
            "n": rows["n_reasons"],
            "yours": rows["your_label"].map(lambda v: f"✓ {v}" if v else ""),
            "your note": rows["your_note"],
        }
    )
    st.dataframe(
        shown,
        hide_index=True,
        column_config={
            "task": st.column_config.LinkColumn(
                "task", display_text=r"task=([^&]+)", help="Opens the trajectory viewer."
            ),
            "split": st.column_config.TextColumn(width="small"),
            "dimension": st.column_config.TextColumn(width="small"),
            "reasons": st.column_config.TextColumn(width=420),
            "n": st.column_config.NumberColumn("reasons (n)", width="small"),
            "yours": st.column_config.TextColumn("your label", width="small"),
            "your note": st.column_config.TextColumn(width=160),
        },
    )


def relabel_section(rows: pd.DataFrame) -> None:
    """One task and dimension at a time: success / failure / unsure and a short note."""
    st.header("Re-label")
    if rows.empty:
        st.info("No contested task matches these filters.")
        return
    keys = [f"{d}|{t}" for t, d in zip(rows["task_id"], rows["dimension"], strict=True)]
    split_of = dict(zip(rows["task_id"], rows["split"], strict=True))
    done = dict(zip(keys, rows["your_label"], strict=True))

    def label(key: str) -> str:
        dim, task = key.split("|", 1)
        mark = f" · ✓ {done[key]}" if done.get(key) else ""
        return plain(f"{task} · {dim}{mark}", 200)

    with st.form("audit_relabel", border=True):
        key = st.selectbox("Task and dimension", keys, format_func=label, key="audit_pick")
        left, right = st.columns([1, 2])
        verdict = left.radio(
            "Your label", L.LABELS, horizontal=True, key="audit_label",
            format_func=LABEL_WORDS.get,
            help="Unsure excludes the task from the 'your labels' reference (counted).",
        )  # fmt: skip
        note = right.text_input(
            "Short note (optional)", max_chars=L.MAX_NOTE_CHARS, key="audit_note"
        )
        saved = st.form_submit_button("Save my label", icon=":material/check:")
    if saved and key:
        dim, task = key.split("|", 1)
        st.session_state[state.LABELS_KEY] = L.set_label(
            state.session_labels(), split_of[task], task, dim, verdict, note
        )
        st.toast(f"Saved: {plain(task, 120)} · {dim} = {verdict}")
        st.rerun()


def files_section(tasks: dict[str, str]) -> None:
    """Download this session's labels; upload a labels file (merged into them)."""
    st.header("Your labels")
    mine = state.session_labels()
    n = 0 if mine is None else len(mine)
    st.markdown(
        f"**{n:,}** label(s) in this session. They are the **Your labels** reference on "
        "Agreement, Judges and Slices (your label where given, the final label elsewhere; "
        "*unsure* excludes the task). They live in this browser session only: download "
        "them to keep them."
    )
    left, right = st.columns(2)
    with left:
        if n:
            csv_download("Download my labels", L.download_frame(mine), "my_labels", "audit_dl")
        else:
            st.caption("Nothing to download yet.")
        if n and st.button("Forget my labels", key="audit_forget", icon=":material/delete:"):
            st.session_state.pop(state.LABELS_KEY, None)
            st.rerun()
    with right:
        file = st.file_uploader(
            "Upload a labels file (CSV: task_id, dimension, label, note; 5 MB at most)",
            type=["csv"],
            key="audit_upload",
        )
    if file is None:
        st.session_state.pop(UPLOAD_SEEN, None)
        return
    data = file.getvalue()
    digest = hashlib.sha256(data).hexdigest()
    if st.session_state.get(UPLOAD_SEEN) != digest:
        st.session_state[UPLOAD_SEEN] = digest
        try:
            got = L.read_labels(data, file.name, tasks)
        except L.LabelsError as exc:
            st.session_state[UPLOAD_NOTE] = (str(exc), None)
        else:
            st.session_state[state.LABELS_KEY] = L.merge(state.session_labels(), got.labels)
            said = f"Read {len(got.labels):,} label(s) from the file."
            if got.n_dropped:
                said += f" {got.n_dropped:,} row(s) dropped (listed below)."
            if got.cut_notes:
                said += f" {got.cut_notes:,} note(s) cut to {L.MAX_NOTE_CHARS} characters."
            st.session_state[UPLOAD_NOTE] = (said, got.dropped if got.n_dropped else None)
            st.rerun()
    said, dropped = st.session_state.get(UPLOAD_NOTE, ("", None))
    if said:
        (st.warning if dropped is not None or "Read" not in said else st.success)(inert(said, 600))
    if dropped is not None:
        st.dataframe(dropped, hide_index=True)


def reference_note(table: pd.DataFrame, dimension: str, splits: list[str]) -> None:
    """Under a page's numbers when its reference is "your labels": how many tasks are yours."""
    counts = L.reference_counts(state.session_labels(), table, dimension, splits)
    st.caption(f"{dimension.capitalize()} · {counts.sentence()}")


def your_labels_notes(raters: dict[str, str], table: pd.DataFrame, splits: list[str]) -> None:
    """`reference_note` for each chosen rater (id -> its dimension) that is "your labels"."""
    for rater, dimension in raters.items():
        if rater in YOUR_LABELS.values():
            reference_note(table, dimension, splits)


def audit_param() -> bool:
    """The viewer's ``?audit=1`` (the Audit page's links): show `viewer_panel`. Another
    value is explained and ignored."""
    asked = st.query_params.get(params.VIEWER_AUDIT.name)
    if asked is None or asked in ("0", "1"):
        return asked == "1"
    url.explain(params.VIEWER_AUDIT.noun, asked, "no audit view", why="only audit=1 shows it")
    return False


def task_reasons(bench: Bench, task_id: str) -> list[str]:
    """The titles of the reasons a task is contested (any dimension), for the panel."""
    long = cached_reasons(bench.verdicts, state.source_spec())
    mine = long[long["task_id"] == task_id]
    return [
        f"{audit.REASON_TITLES[r]} ({d})"
        for r, d in zip(mine["reason"], mine["dimension"], strict=True)
    ]


def viewer_panel(task: viewer.TaskVerdicts, reasons: list[str]) -> None:
    """Above the fold in the viewer (`?audit=1`): why the task is contested, every
    reviewer's blind and informed labels with their comments, and the verifier's verdicts."""
    with st.container(border=True):
        said = "; ".join(reasons) if reasons else "not contested"
        st.markdown(f"**Audit** · why this task is contested: {inert(said, 800)}")
        rows = []
        for line in [*task.verifiers, *task.references]:
            if line.rater in ("uv_outcome_success", "uv_process") or line.kind == "reference":
                rows.append({"who": line.title, "stage": "—", "outcome": "", "process": ""})
                rows[-1][line.dimension] = line.text
        for card in task.reviews:
            rows.append(
                {
                    "who": card.annotator,
                    "stage": "blind",
                    "outcome": viewer.label_text(card.outcome_label, card.outcome_raw),
                    "process": viewer.label_text(card.process_label, card.process_raw)
                    + ("" if card.process_score is None else f" ({card.process_score:.2f})"),
                    "comment": card.outcome_comment,
                }
            )
            if card.informed is not None:
                i = card.informed
                rows.append(
                    {
                        "who": card.annotator,
                        "stage": "informed",
                        "outcome": f"{i.outcome_agreement} → " + viewer.label_text(i.outcome_label),
                        "process": f"{i.process_agreement} → " + viewer.label_text(i.process_label),
                        "comment": i.outcome_comment or i.process_comment,
                    }
                )
        frame = pd.DataFrame(rows, columns=["who", "stage", "outcome", "process", "comment"])
        st.dataframe(
            frame.fillna(""),
            hide_index=True,
            column_config={
                "who": st.column_config.TextColumn(width=190),
                "stage": st.column_config.TextColumn(width=70),
                "outcome": st.column_config.TextColumn(width=150),
                "process": st.column_config.TextColumn(width=120),
                "comment": st.column_config.TextColumn(width=340),
            },
        )
        st.caption(
            f"Universal Verifier rubric score: {task.uv_score_text()}. Informed: the "
            "reviewer's answer to the verdict shown → the label it implies."
        )


@state.bounded_cache(
    max_entries=8, max_bytes=8 * state.MB, show_spinner="Computing the ceiling (bootstraps)…"
)
def cached_ceiling(
    _table: pd.DataFrame, _long: pd.DataFrame, source: str, splits: tuple, cluster: str
) -> list[ceiling.CeilingRecord]:
    """`lib.analysis.ceiling.ceiling_records` on the dataset's labels (no upload plays a
    part: the verifier is the Universal Verifier, the reference the final label)."""
    return ceiling.ceiling_records(_table, list(splits), boot=Bootstrap(unit=cluster), long=_long)


def ceiling_frame(records: list[ceiling.CeilingRecord], dimension: str) -> pd.DataFrame:
    """The side-by-side table of one dimension (or both); the split column only when the
    records cover two splits."""
    rows = []
    for r in records:
        if dimension != ALL and r.dimension != dimension:
            continue
        diff = r.parity_diff
        rows.append(
            {
                "split": short_split(r.split),
                "dimension": r.dimension,
                "tasks": ceiling.variant_title(r.variant),
                "left out": r.n_excluded,
                "reviewers κ": "n/a (one reviewer per task)"
                if r.reviewer_kappa.reason == ceiling.NO_PAIRS
                else fmt.value_with_ci(r.reviewer_kappa),
                "UV κ vs final": fmt.value_with_ci(r.uv_kappa),
                "n": r.uv_n,
                "UV − reviewers κ": "n/a"
                if diff.reason == ceiling.NO_PAIRS
                else f"undefined ({diff.reason})"
                if diff.value is None
                else fmt.signed_diff(diff, diff.ci),
                # the Agreement page's words for the verdict, never its id
                "parity": VERDICT_CELLS.get(r.parity_verdict or "", "n/a"),
            }
        )
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    if frame["split"].nunique() == 1:
        frame = frame.drop(columns="split")
    if dimension != ALL:
        frame = frame.drop(columns="dimension")
    return frame


def ceiling_section(records: list[ceiling.CeilingRecord], dimension: str) -> None:
    st.header("The ceiling with and without the contested tasks")
    st.markdown(
        "How much of the Universal Verifier's disagreement with the humans sits on tasks the "
        "humans themselves dispute? Each row leaves out the tasks one reason flags (on that "
        "dimension), the last row of a split every contested task."
    )
    frame = ceiling_frame(records, dimension)
    if frame.empty:
        st.info("No task in this split and dimension.")
        return
    st.dataframe(
        frame,
        hide_index=True,
        height=35 * (len(frame) + 1) + 3,
        column_config={
            "tasks": st.column_config.TextColumn(width=240),
            "split": st.column_config.TextColumn(width=70),
            "dimension": st.column_config.TextColumn(width=75),
            "left out": st.column_config.NumberColumn(width=65),
            "n": st.column_config.NumberColumn(width=50, help="Tasks the UV kappa is on."),
            "parity": st.column_config.TextColumn(
                width=135, help="The parity verdict of the Δκ interval (the Agreement page's)."
            ),
        },
    )
    st.caption(
        "Reviewers κ: the blind reviewers' pooled pairwise kappa (om2w only). UV κ vs final: "
        "the Universal Verifier's verdict against the final label (process verdict: rubric "
        "score ≥ 0.8). UV − reviewers κ: the paired kappa difference on the same reviewer "
        "pairs, and the parity verdict its interval gives (as on the Agreement page). "
        "Left out: tasks of the split the row leaves out. "
        + _no_width_words(records, dimension)
        + fmt.method_caption(records[0].bootstrap, [r.n_clusters for r in records])
    )


def _no_width_words(records: list[ceiling.CeilingRecord], dimension: str) -> str:
    """Why the table's intervals without width have none, said in full once (the cell's
    own "(no width: ...)" is cut by the column)."""
    shown = [r for r in records if dimension == ALL or r.dimension == dimension]
    estimates = [e for r in shown for e in (r.reviewer_kappa, r.uv_kappa, r.parity_diff)]
    why = {e.ci.reason for e in estimates if e.ci is not None and e.ci.defined and e.ci.reason}
    words = sorted(w.removeprefix("no width: ") for w in why)
    return f"Intervals without width: {'; '.join(words)}. " if words else ""
