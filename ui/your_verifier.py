"""The "Your verifier" page's pieces: the upload callbacks, the validation report, the
scores of an uploaded verifier against the humans and against the Universal Verifier.

Wording and display tables live here; parsing is `lib.uploads.predictions`, numbers
`lib.analysis.your_verifier`
and `lib.analysis.agreement`.
"""

from __future__ import annotations

import logging

import pandas as pd
import streamlit as st

from lib.analysis import agreement, failure_steps
from lib.analysis import your_verifier as compare
from lib.metrics import registry
from lib.table.verdicts import rater_title
from lib.uploads import predictions, score_files
from lib.viewer.links import VIEWER_FILE, viewer_href, why_value
from lib.vocab import HUMAN_REFERENCE, UV_THRESHOLD, short_split
from ui import agreement as agreement_view
from ui import fmt, state, url
from ui import params as P
from ui.frame import PAGES
from ui.safe_text import inert, plain
from ui.sidebar import current_bootstrap
from ui.state import (
    HISTORY_KEY,
    SCORE_FILES_KEY,
    UPLOADS_KEY,
    get_bench,
    links_query,
    verdicts,
)

UPLOADER_KEY = "predictions_file"
MANY_KEY = "score_files_many"  # several JSON score files at once (`lib.uploads.score_files`)
LAST_KEY = "predictions_last_upload"  # what the last upload gave: shown until the next one
REMOVE_KEY = "predictions_remove"
KEPT_DROPPED = 1_000
"""Dropped rows of a rejected file kept in session state (the message gives the count)."""
NAME_MAX = 200
"""Characters of a file or verifier name shown at most."""

log = logging.getLogger(__name__)

FORMAT_HELP = f"""
One row per (verifier, task). **CSV**, **TSV**, **JSON Lines** (or a JSON array of
objects) or **parquet**, at most {predictions.MAX_BYTES // 2**20} MB.

| column | | values |
|---|---|---|
| `task_id` | required | a task id of the loaded data |
| `outcome` | required | a verdict label (spellings below) |
| `process` | optional | the same spellings; empty = no process verdict for that task |
| `score` | optional | a number in [0, 1], e.g. your rubric score |
| `split` | optional | `fara7b_om2w_browserbase` (or `om2w`), `internal`: must be the task's |
| `verifier` | optional | a name per row: several verifiers in one file (default: file name) |
| `version` | optional | your verifier's version; versions are ordered as they first appear |
| `run` | optional | a repeated run of a version: 1, 2, 3 … (empty = 1) |

**Versions and runs** (optional): one file may hold one verifier's versions × runs, and
several verifiers. The other pages score each verifier's last version (its lowest run);
the *Iterations* section scores every version and run. At most
{predictions.MAX_VERSIONS_PER_VERIFIER} versions per verifier,
{predictions.MAX_RUNS_PER_VERSION} runs per version and
{predictions.MAX_VERSION_RUNS_PER_SESSION} version-runs per session; a verifier with versions
counts once towards the {predictions.MAX_VERIFIERS_PER_SESSION}-verifier cap. The row limit
below still applies. A file without these columns is read exactly as before.

**Label spellings** (any case, spaces trimmed): success = {predictions.LABEL_SPELLINGS[0]};
failure = {predictions.LABEL_SPELLINGS[1]}.

**Limits** (one server is shared by every visitor): at most
{predictions.MAX_BYTES // 2**20} MB, {predictions.MAX_ROWS:,} data rows (on larger data
{predictions.MAX_VERIFIERS_PER_FILE} per loaded task: one row per task for each verifier) and
{predictions.MAX_COLUMNS} columns per file (only the eight columns above are read; others are
ignored), {predictions.MAX_CELL_CHARS:,} characters per cell, JSON nested at most
{predictions.MAX_DEPTH} levels with numbers of at most {predictions.MAX_NUMBER_CHARS}
digits; **at most {predictions.MAX_VERIFIERS_PER_FILE} verifiers per file and
{predictions.MAX_VERIFIERS_PER_SESSION} per browser session** (remove some to add others).

**What is rejected, what is dropped.** A file over a limit, empty, not a table (e.g. an
image, a line that is not JSON), without a `task_id` or `outcome` column, or with no valid
row is rejected whole: nothing is added. Otherwise each bad row is dropped and listed with
its row number (row 1 = the first data row) and reasons: unknown or empty task id, empty
or unreadable outcome, unreadable process label, score not a number or outside [0, 1],
split unknown or not the task's. A task id that appears twice for the same verifier is
ambiguous: **both** rows are dropped. Every other row is used whole.

**Or your verifier's own score files** (the Universal Verifier's output format, as
microsoft/fara's `verify_trajectories.py` writes it: the internal split's `gpt_eval_json`):
a **.zip** of one JSON file per task (task id = the file's `task_id` field, else its name
without `.json`), a **JSON Lines** file of `{{"task_id": ..., "score_file": {{...}}}}`, or
several **.json** files at once (second uploader). Verdicts: outcome =
`rubric_outcome_verification.output_success` (else `outcome_success`); process =
`rubric_is_success` (else score ≥ {UV_THRESHOLD:g}); score = post-image points earned / max.
A zip is checked before anything is extracted (at most {score_files.MAX_ENTRIES:,} entries,
{score_files.MAX_TOTAL_BYTES // 2**20} MB uncompressed, {score_files.MAX_RATIO}× compression,
no path outside the archive, no archive inside); a file that cannot be used is listed with
its reason and the others are used. Points that are not finite or not within [0, max] are
not used (listed).
"""


def on_upload() -> None:
    """Parse the file just chosen (in memory, never written to disk) and keep its rows.

    A callback runs before the page script, outside the page's error boundary
    (`ui.frame._run_page`), so it is its own boundary: any exception becomes a message
    shown by `show_last_upload`, and the session's verifiers are replaced only once the
    new set is complete (nothing half-added). Session state keeps the message and the
    dropped-rows table, never the exception: its traceback would keep the parser's frames
    (the file's bytes and every parsed cell) alive for the life of the session.
    """
    file = st.session_state.get(UPLOADER_KEY)
    if file is None:  # the file was cleared from the widget: keep the loaded verifiers
        return
    _load([file])


def on_upload_many() -> None:
    """Several JSON score files chosen at once: read together as one verifier."""
    files = st.session_state.get(MANY_KEY) or []
    if files:
        _load(list(files))


def _load(files: list) -> None:
    """Parse the chosen file(s) by type (`score_files.parse_upload`) and keep their rows."""
    name = getattr(files[0], "name", "") or "(no name)"
    if len(files) > 1:
        name = f"{len(files)} score files"
    try:
        uploaded = st.session_state.get(UPLOADS_KEY)
        taken = set() if uploaded is None else set(uploaded["rater"])
        history = live_history()
        held = predictions.version_runs(history)
        named = [(getattr(f, "name", "") or "(no name)", f.getvalue()) for f in files]
        read = score_files.read_upload(named, get_bench().tasks, taken, held)
        upload = read.upload
        combined = predictions.add_upload(uploaded, upload)
        histories = predictions.add_history(history, upload)
    except predictions.PredictionsError as exc:
        dropped = None if exc.dropped is None else exc.dropped.head(KEPT_DROPPED).copy()
        total = 0 if exc.dropped is None else len(exc.dropped)
        st.session_state[LAST_KEY] = {
            "filename": name,
            "error": str(exc),
            "dropped": dropped,
            "n_dropped": total,
        }
        return
    except Exception as exc:  # the boundary: never a traceback for a file
        log.exception("upload %r failed", name[:NAME_MAX])
        st.session_state[LAST_KEY] = {
            "filename": name,
            "error": f"{name} could not be read ({type(exc).__name__}). "
            "Check that it is a predictions table as described above.",
        }
        return
    st.session_state[UPLOADS_KEY] = combined
    st.session_state[HISTORY_KEY] = histories
    if read.cells and upload.raters:  # the rubric cards of the Trajectory page
        kept = dict(st.session_state.get(SCORE_FILES_KEY) or {})
        kept[upload.raters[0]] = read.cells
        st.session_state[SCORE_FILES_KEY] = kept
        steps = dict(st.session_state.get(state.FAILURE_STEPS_KEY) or {})
        steps[upload.raters[0]] = failure_steps.steps_by_task(read.cells)
        st.session_state[state.FAILURE_STEPS_KEY] = steps
        flagged = dict(st.session_state.get(state.FLAGGED_KEY) or {})
        flagged |= failure_steps.flagged_tasks({upload.raters[0]: read.cells})
        st.session_state[state.FLAGGED_KEY] = flagged
    st.session_state[LAST_KEY] = {"filename": name, "upload": upload}


def on_remove() -> None:
    chosen = st.session_state.get(REMOVE_KEY) or []
    names = {predictions.display_name(r): r for r in uploaded_raters()}
    gone = [names[c] for c in chosen if c in names]
    st.session_state[UPLOADS_KEY] = predictions.remove_raters(
        st.session_state.get(UPLOADS_KEY), gone
    )
    history = live_history()
    if history is not None:
        st.session_state[HISTORY_KEY] = history[~history["rater"].isin(gone)]
    kept = st.session_state.get(SCORE_FILES_KEY) or {}
    st.session_state[SCORE_FILES_KEY] = {r: c for r, c in kept.items() if r not in gone}
    steps = st.session_state.get(state.FAILURE_STEPS_KEY) or {}
    st.session_state[state.FAILURE_STEPS_KEY] = {r: v for r, v in steps.items() if r not in gone}
    flagged = st.session_state.get(state.FLAGGED_KEY) or {}
    st.session_state[state.FLAGGED_KEY] = {r: v for r, v in flagged.items() if r not in gone}
    st.session_state[REMOVE_KEY] = []


def live_history() -> pd.DataFrame | None:
    """The session's version histories of the verifiers still loaded (a shared link that
    replaced the uploads leaves none), or None."""
    history = st.session_state.get(HISTORY_KEY)
    if history is None or len(history) == 0:
        return None
    live = history[history["rater"].isin(uploaded_raters())]
    return live if len(live) else None


def uploaded_raters() -> list[str]:
    uploaded = st.session_state.get(UPLOADS_KEY)
    if uploaded is None or len(uploaded) == 0:
        return []
    return list(dict.fromkeys(uploaded["rater"].tolist()))


def choose_verifier(raters: list[str]) -> tuple[str, str]:
    """The verifier scored and its dimension, both in the URL (`ui.params.YOUR_VERIFIER`,
    ``?verifier=mine:<name>`` as on Agreement and Slices; `YOUR_DIMENSION`). A link's
    verifier this session does not have, or a dimension it does not give, is said in one
    line and the first is shown (`ui.url.choice`)."""
    left, right = st.columns(2)
    rater = url.choice(
        P.YOUR_VERIFIER,
        raters,
        raters[0],
        where=left,
        format_func=lambda r: plain(rater_title(r), 200),
        why=lambda _: "no such verifier",
    )
    dims = compare.dimensions(st.session_state[UPLOADS_KEY], rater) or ["outcome"]
    dimension = url.choice(
        P.YOUR_DIMENSION,
        dims,
        dims[0],
        where=right,
        why=lambda _: f"not a dimension **{inert(rater_title(rater), NAME_MAX)}** judges",
        say_stale=lambda dropped, shown: dimension_dropped(rater, dropped, shown),
    )
    return rater, dimension


def dimension_dropped(rater: str, dropped: str, shown: str) -> str:
    """The one line said when the visitor picks a verifier that has no label for the dimension
    chosen before (`ui.url.choice`'s ``say_stale``): which verifier, what is shown instead."""
    return (
        f"**{inert(rater_title(rater), NAME_MAX)}** gives no **{inert(dropped, 300)}** "
        f"label; showing its **{inert(shown, 300)}** scores."
    )


def _dropped_table(dropped: pd.DataFrame) -> None:
    """Dropped rows with their full reasons, in a grid (`st.dataframe` cells are plain
    text; `st.table` cells are Markdown and would render a task id's markup)."""
    st.dataframe(
        dropped,
        hide_index=True,
        column_config={"reason": st.column_config.TextColumn("reason", width="large")},
    )


def show_last_upload() -> None:
    last = st.session_state.get(LAST_KEY)
    if not last:
        return
    if "error" in last:
        kept = " Verifiers loaded before are unchanged." if uploaded_raters() else ""
        st.error(
            f"**Nothing was loaded.** {inert(last['error'], 2000)}{kept}",
            icon=":material/block:",
        )
        dropped = last.get("dropped")
        if dropped is not None and len(dropped):
            if last.get("n_dropped", 0) > len(dropped):
                st.caption(f"The first {len(dropped):,} of {last['n_dropped']:,} rows:")
            _dropped_table(dropped)
        return
    upload: predictions.Upload = last["upload"]
    names = ", ".join(f"**{inert(predictions.display_name(r), NAME_MAX)}**" for r in upload.raters)
    st.success(
        f"**{inert(upload.filename, NAME_MAX)}** ({upload.file_format}): "
        f"{upload.n_rows} rows read, "
        f"**{upload.n_used} used**, {len(upload.dropped)} dropped. Added: {names}.",
        icon=":material/check_circle:",
    )
    for note in upload.notes:
        st.info(inert(note, 2000), icon=":material/info:")
    if len(upload.dropped):
        st.warning(
            f"**{len(upload.dropped)} row(s) dropped**, listed below with every reason "
            "(row 1 = the first data row, line 2 of a CSV). The other rows are scored.",
            icon=":material/warning:",
        )
        _dropped_table(upload.dropped)
        if upload.unknown_task_ids:
            ids = upload.unknown_task_ids
            st.markdown(
                f"**{len(ids)} unknown task id(s)** (not in the loaded data): "
                + ", ".join(f"**{inert(t, NAME_MAX)}**" for t in ids[:50])
                + (f" … and {len(ids) - 50} more" if len(ids) > 50 else "")
            )
    st.markdown("**Coverage**: tasks of each split the file labels.")
    st.dataframe(
        upload.coverage,
        hide_index=True,
        column_config={
            "outcome coverage": st.column_config.ProgressColumn(
                "outcome coverage", format="percent", min_value=0.0, max_value=1.0
            )
        },
    )


AGREEMENT_COLUMNS = ["split", "n", "missing (verifier / reference)", "kappa", "accuracy"]
AGREEMENT_COLUMNS += ["FPR", "FNR", "F1", "AC1"]


def _agreement_table(records: list[agreement.AgreementRecord]) -> pd.DataFrame:
    frame = agreement_view.display_frame(records, fmt.value_with_ci)
    return frame[[c for c in AGREEMENT_COLUMNS if c in frame.columns]]


def _band_caption(table: pd.DataFrame, dimension: str, splits: list[str]) -> str:
    """The human-human band, for scale (om2w: the split with several reviewers per task)."""
    if agreement.OM2W not in splits:
        return ""
    band = agreement.reviewer_band(table, dimension, boot=current_bootstrap())
    kappa = fmt.value_with_ci(
        agreement.value_of(band, "kappa"), agreement.interval_of(band, "kappa")
    )
    return (
        f" For scale: the reviewers agree with each other at kappa {kappa} on om2w "
        f"(pooled pairwise, {band.n_pairs} reviewer pairs on {band.n_tasks} tasks)."
    )


def _comparison_table(comparisons: list[compare.SplitComparison]) -> pd.DataFrame:
    rows = []
    for comp in comparisons:
        for name, d in comp.diffs.items():
            rows.append(
                {
                    "split": short_split(comp.split),
                    "metric": registry.get(name).title,
                    "yours": fmt.value_with_ci(d.a),
                    "Universal Verifier": fmt.value_with_ci(d.b),
                    "yours − UV [95% CI]": fmt.signed_diff(d.diff, d.ci),
                    "n tasks (all three labelled)": comp.n_paired,
                }
            )
    return pd.DataFrame(rows)


def scores_section(
    rater: str, dimension: str, splits: list[str], table: pd.DataFrame | None = None
) -> None:
    """`table`: the verdicts to score (default: the session's; `ui.flagged` may have left
    out the tasks the verifier's score files flag)."""
    table = verdicts(get_bench()) if table is None else table
    reference = HUMAN_REFERENCE[dimension]
    st.header("Agreement with the humans")
    records = compare.agreement(table, rater, dimension, splits, boot=current_bootstrap())
    st.caption(
        f"Your verifier against `{reference}` (the adjudicated task-level human label), "
        "per split, computed exactly as on the Agreement page. FPR = share of failed tasks "
        "called success; FNR = share of successful tasks called failure. "
        + (
            fmt.method_caption(records[0].bootstrap, [r.n_clusters for r in records])
            if records
            else ""
        )
        + _band_caption(table, dimension, splits)
    )
    st.dataframe(_agreement_table(records), hide_index=True)
    dominated = [fmt.split_label(r.split) for r in records if r.kappa_misleads]
    if dominated:
        st.caption(
            f"One class dominates in {', '.join(dominated)}: read kappa together with "
            "accuracy and AC1 there."
        )

    st.header("Against the Universal Verifier, on the same tasks")
    baseline = (
        "its outcome verdict"
        if dimension == "outcome"
        else "its rubric score ≥ 0.8 (its default threshold)"
    )
    comparisons = compare.compare(table, rater, dimension, splits, boot=current_bootstrap())
    method = (
        fmt.method_caption(comparisons[0].bootstrap, [c.n_clusters for c in comparisons])
        if comparisons
        else ""
    )
    st.caption(
        f"Both verifiers scored against `{reference}` on the tasks where yours, the "
        f"Universal Verifier ({baseline}) and the humans all have a label. The difference is "
        "yours minus UV: above 0 is better for kappa, below 0 is better for FPR and FNR. "
        "Paired: each resample draws one set of clusters for both verifiers. An interval "
        "that contains 0 means no clear difference. "
        "*Yours* can differ slightly from the table above, which uses every task that "
        f"your verifier and the humans label. {method}"
    )
    st.dataframe(_comparison_table(comparisons), hide_index=True)

    gaps = disagreements_display(compare.disagreements(table, rater, dimension, splits), rater)
    per_split = ", ".join(f"{fmt.split_label(c.split)} {c.n_disagree}" for c in comparisons)
    st.markdown(
        f"**Tasks where your verifier and the Universal Verifier disagree**: {len(gaps)} "
        f"({per_split}). *Closer to humans* says which of the two matches the human label."
    )
    if gaps.empty:
        st.caption("None: on every task both judged, they give the same label.")
    else:
        st.dataframe(
            gaps,
            hide_index=True,
            column_config={
                "link": st.column_config.LinkColumn("open", display_text="trajectory ↗")
            },
        )
        if state.link_payload() is None:
            st.caption(
                "A trajectory link opens a new tab, which is a new session: your verdicts are "
                "too many for a link (see *Share* at the top), so these links open without them."
            )


def _word(label: object) -> str:
    if label is None or label is pd.NA or pd.isna(label):
        return "missing"
    return "success" if int(label) == 1 else "failure"


CLOSER = {"yours": "yours", "uv": "Universal Verifier", "unknown": "unknown"}


def _why(rater: str | None, yours: object, human: object) -> str | None:
    """`fp:<rater>` / `fn:<rater>` when yours is the one that errs against the humans."""
    if rater is None or pd.isna(yours) or pd.isna(human) or int(yours) == int(human):
        return None
    return why_value("fp" if int(yours) == 1 else "fn", rater)


def disagreements_display(rows: pd.DataFrame, rater: str | None = None) -> pd.DataFrame:
    """`lib.analysis.your_verifier.disagreements` in words: short split,
    labels as success / failure /
    missing, who is closer to the humans, and a link that opens the trajectory viewer."""
    payload = state.link_payload()  # links open a new tab: carry the uploads (?v=)
    return pd.DataFrame(
        {
            "split": [short_split(s) for s in rows["split"]],
            "task": rows["task_id"].astype(str).tolist(),
            "yours": [_word(v) for v in rows["yours"]],
            "Universal Verifier": [_word(v) for v in rows["uv"]],
            "humans": [_word(v) for v in rows["human"]],
            "closer to humans": [CLOSER[c] for c in rows["closer"]],
            "link": [
                viewer_href(t, s, v=payload, why=_why(rater, y, h))
                for t, s, y, h in zip(
                    rows["task_id"], rows["split"], rows["yours"], rows["human"], strict=True
                )
            ],
        }
    )


def where_else() -> None:
    st.header("Everywhere else")
    st.markdown(
        "Your verifiers are now ordinary raters on every page of this browser session: "
        "the Agreement page (intervals and the human-human band), the Judges matrices and "
        "drill-downs, the Trajectory viewer's verdict list, and the Slices page."
    )
    files = {p.file: p for p in PAGES}
    for file in ("pages/1_Agreement.py", "pages/2_Judges.py", VIEWER_FILE, "pages/6_Slices.py"):
        st.page_link(
            file,
            label=files[file].title,
            icon=files[file].icon,
            query_params=links_query() or None,  # the uploads: a new tab keeps them
        )
