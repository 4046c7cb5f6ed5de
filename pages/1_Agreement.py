"""Agreement: each verifier against the human reviewers, with bootstrap intervals."""

from ui.frame import ensure_frame

ensure_frame()

from typing import Any

import pandas as pd
import streamlit as st

from lib import agreement as A
from lib.charts import agreement as charts
from lib.labels import UV_PROCESS_THRESHOLD
from ui import fmt, url
from ui.sidebar import current_splits
from ui.state import UPLOADS_KEY, get_bench, source_spec, verdicts

REFERENCE_KEY, VERIFIER_KEY, THRESHOLD_KEY = "reference", "verifier", "threshold"
WIDGET = {name: f"agreement_{name}" for name in (REFERENCE_KEY, VERIFIER_KEY, THRESHOLD_KEY)}
PROCESS_REFERENCE = A.DEFAULT_REFERENCE[A.PROCESS]


def uploads_key() -> str:
    """A fingerprint of this session's uploaded verdicts (part of the cache keys)."""
    uploaded = st.session_state.get(UPLOADS_KEY)
    if uploaded is None or len(uploaded) == 0:
        return ""
    return str(int(pd.util.hash_pandas_object(uploaded.astype(str), index=False).sum()))


@st.cache_data(max_entries=32, show_spinner="Computing agreement and bootstrap intervals…")
def cached_records(_table: pd.DataFrame, source: str, threshold: float, uploads: str) -> list:
    return A.agreement_records(_table, threshold)


@st.cache_data(max_entries=4, show_spinner=False)
def cached_bands(_table: pd.DataFrame, source: str) -> dict[str, dict[str, Any]]:
    return {dim: A.reviewer_band(_table, dim) for dim in (A.OUTCOME, A.PROCESS)}


@st.cache_data(max_entries=32, show_spinner=False)
def cached_roc(
    _table: pd.DataFrame, source: str, uploads: str, reference: str, splits: tuple, threshold: float
) -> A.RocResult:
    return A.roc_result(_table, reference, splits, threshold)


def url_threshold(text: str) -> float | None:
    """The threshold a link asks for, or None when it is not a number in [0, 1]."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if 0.0 <= value <= 1.0 else None


bench = get_bench()
table = verdicts(bench)
splits = current_splits()
groups = [name for name, _ in A.split_groups(splits)]
source, uploads = source_spec(), uploads_key()

st.title("Agreement with the human reviewers")
st.markdown(
    "How often does each verifier agree with the human reviewers, how does it err, and is "
    "it as good as the humans are with each other? **False positives cost most**: a "
    "verifier that passes failed runs inflates every agent's score."
)

# --- choices (all in the URL, so a link reproduces the view) -----------------------------
reference_options = A.references(table, A.OUTCOME, splits)
verifier_dims = A.verifiers(table)
verifier_options = list(dict.fromkeys(v for v, _ in verifier_dims))
defaults = {
    REFERENCE_KEY: reference_options[0],
    VERIFIER_KEY: verifier_options[0],
    THRESHOLD_KEY: UV_PROCESS_THRESHOLD,
}
for key, options in ((REFERENCE_KEY, reference_options), (VERIFIER_KEY, verifier_options)):
    url.fallback(WIDGET[key], options, defaults[key])  # e.g. another split's reviewer
asked = url.read(REFERENCE_KEY, WIDGET[REFERENCE_KEY], reference_options, defaults[REFERENCE_KEY])
if asked is not None:
    elsewhere = asked in A.references(table, A.OUTCOME)  # e.g. a reviewer of the other split
    st.warning(
        f"The link asks for {REFERENCE_KEY} `{asked}`: "
        + ("that reviewer judged no task in" if elsewhere else "no such outcome reference in")
        + f" split {fmt.split_label(splits)}; showing "
        f"{A.reference_title(defaults[REFERENCE_KEY]).lower()}. "
        f"Known: {', '.join(reference_options)}."
    )
asked = url.read(VERIFIER_KEY, WIDGET[VERIFIER_KEY], verifier_options, defaults[VERIFIER_KEY])
if asked is not None:
    st.warning(
        f"The link asks for {VERIFIER_KEY} `{asked}`: no such verifier; showing the first. "
        f"Known: {', '.join(verifier_options)}."
    )
asked = url.read(
    THRESHOLD_KEY,
    WIDGET[THRESHOLD_KEY],
    lambda value: url_threshold(value) is not None,
    UV_PROCESS_THRESHOLD,
    parse=url_threshold,
)
if asked is not None:
    st.warning(
        f"The link asks for {THRESHOLD_KEY} `{asked}`: not a number in [0, 1]; "
        f"using {UV_PROCESS_THRESHOLD}."
    )

left, middle, right = st.columns([3, 3, 2])
reference = left.selectbox(
    "Human reference for outcome verdicts",
    reference_options,
    format_func=A.reference_title,
    key=WIDGET[REFERENCE_KEY],
    help="Final = after adjudication; blind majority stores a 1:1 tie as failure; a "
    "reviewer's blind label compares the verifier on the tasks that reviewer judged. "
    "The process verdict is always compared with the final process label.",
)
threshold = right.slider(
    "Process verdict: rubric score ≥",
    0.0,
    1.0,
    step=0.01,
    key=WIDGET[THRESHOLD_KEY],
    help="The Universal Verifier's process verdict is uv_rubric_score ≥ this (default 0.8).",
)
verifier = middle.selectbox(
    "Verifier for the details below",
    verifier_options,
    format_func=lambda v: A.verifier_title(v, threshold),
    key=WIDGET[VERIFIER_KEY],
)
url.write(REFERENCE_KEY, WIDGET[REFERENCE_KEY], reference, defaults[REFERENCE_KEY])
url.write(VERIFIER_KEY, WIDGET[VERIFIER_KEY], verifier, defaults[VERIFIER_KEY])
url.write(THRESHOLD_KEY, WIDGET[THRESHOLD_KEY], f"{threshold:.2f}", f"{UV_PROCESS_THRESHOLD:.2f}")
dimension = next(d for v, d in verifier_dims if v == verifier)
detail_reference = reference if dimension == A.OUTCOME else PROCESS_REFERENCE

records = cached_records(table, source, threshold, uploads)
shown = A.select(records, groups, reference, PROCESS_REFERENCE)
bands = cached_bands(table, source)

# --- overview: kappa and FPR per verifier --------------------------------------------------
st.subheader("Each verifier against the humans")
st.caption(
    f"Outcome verdicts against **{A.reference_title(reference)}**, the process verdict "
    f"against **{A.reference_title(PROCESS_REFERENCE)}** · split: {fmt.split_label(splits)}"
    + (" (each split, and both pooled)" if len(splits) > 1 else "")
    + " · hover a point for its n."
)
kappa_frame = A.forest_frame(shown, "kappa")
fpr_frame = A.forest_frame(shown, "fpr")
band = A.band_frame(bands, kappa_frame)
low = min([-0.2, *kappa_frame["low"].dropna(), *band["low"]])
st.markdown(
    "**Cohen's kappa** against the humans (grey band: the reviewers with each other) and "
    "**false-positive rate** (share of failed runs the verifier passes)"
)
st.altair_chart(charts.forest_panels(kappa_frame, band, fpr_frame, (low - 0.05, 1.0)))
band_text = "; ".join(
    f"{dim} {fmt.value_with_ci(A.value_of(b, 'kappa'), A.interval_of(b, 'kappa'))} "
    f"({b['n_pairs']} reviewer pairs on {b['n_tasks']} om2w tasks)"
    for dim, b in bands.items()
)
st.caption(
    f"Grey band = 95% interval of the human-human kappa, with a tick at its value: "
    f"{band_text}. It pools every pair of reviewers who labelled the same om2w task blind "
    "(each pair in both orders, so no reviewer is 'the reference'); internal has one "
    "reviewer per task, so the band always comes from om2w. A verifier whose interval "
    "overlaps the band agrees with the humans about as often as they agree with each other."
)
undrawn = kappa_frame[kappa_frame["value"].isna()]
if not undrawn.empty:
    st.caption(
        "Not drawn (kappa undefined): "
        + "; ".join(f"{r.verifier} on {r.split}: {r.label}" for r in undrawn.itertuples())
    )
st.caption(fmt.method_caption())
misleading = [r for r in shown if r["kappa_misleads"] and r["kappa"] is not None]
if misleading:
    st.info(
        "**One class dominates, so kappa misleads** for these comparisons: read raw "
        "agreement and Gwet's AC1 beside it.\n\n"
        + "\n".join(f"- {A.kappa_note(r, fmt.value_with_ci)}" for r in misleading),
        icon=":material/balance:",
    )

# --- the table -----------------------------------------------------------------------------
st.subheader("All metrics")
st.dataframe(
    A.display_frame(shown, fmt.value_with_ci),
    hide_index=True,
    height=min(36 * (len(shown) + 1) + 4, 640),
    key="agreement_table",
)
st.caption(
    "n = tasks where both sides have a label; missing = tasks with a missing verdict or "
    "reference, excluded (never counted as failure). Success rate = share judged success. "
    f"FPR = false positives / reference failures; FNR = false negatives / reference "
    f"successes. {fmt.method_caption()}"
)
st.download_button(
    "Download the metrics (CSV)",
    A.csv_frame(shown).to_csv(index=False),
    file_name=f"agreement_{reference}_{'_'.join(groups)}.csv",
    mime="text/csv",
    key="agreement_csv",
    on_click="ignore",
    icon=":material/download:",
)

# --- one verifier in detail ----------------------------------------------------------------
st.subheader(
    f"{A.verifier_title(verifier, threshold)} against {A.reference_title(detail_reference)}"
)
detail = A.select(
    [r for r in records if r["verifier"] == verifier and r["dimension"] == dimension],
    groups,
    detail_reference,
    detail_reference,
)
if not detail:
    st.info(f"{A.reference_title(detail_reference)} has no label in {fmt.split_label(splits)}.")
for column, record in zip(st.columns(3), detail, strict=False):  # same size for 1 or 3
    with column:
        title = A.SPLIT_TITLES.get(record["split"], record["split"])
        if record["n"]:
            st.altair_chart(
                charts.confusion_chart(A.confusion_frame(record), title), width="content"
            )
        else:
            st.markdown(f"**{title}**: no task with both labels.")
        lines = [
            f"{label} {fmt.value_with_ci(A.value_of(record, key), A.interval_of(record, key))}"
            for key, label in (("kappa", "kappa"), ("fpr", "FPR"), ("fnr", "FNR"))
        ]
        st.caption(
            " · ".join(lines) + f"  \n{fmt.n_caption(record['n'], record['n_excluded'], title)}"
        )
        if record["kappa_misleads"]:
            st.warning(
                "One class dominates here, so kappa misleads: "
                + A.kappa_note(record, fmt.value_with_ci),
                icon=":material/balance:",
            )

# --- ROC of the rubric score -----------------------------------------------------------------
st.subheader("Universal Verifier rubric score: the threshold on the ROC curve")
roc_options = list(dict.fromkeys([PROCESS_REFERENCE, reference]))
roc_reference = st.radio(
    "Score against",
    roc_options,
    format_func=A.reference_title,
    key="roc_reference",
    horizontal=True,
)
roc = cached_roc(table, source, uploads, roc_reference, tuple(splits), threshold)
roc_left, roc_right = st.columns([3, 2])
with roc_left:
    if roc.curve.empty:
        st.info(f"No ROC curve: {roc.auc.reason}.")
    else:
        st.altair_chart(
            charts.roc_chart(
                roc.curve, roc.point, f"uv_rubric_score vs {A.reference_title(roc_reference)}"
            )
        )
with roc_right:
    st.metric("AUC [95% CI]", fmt.value_with_ci(roc.auc, roc.auc_ci), border=True)
    st.caption(
        fmt.n_caption(roc.n, roc.n_excluded, splits)
        + (" (pooled)" if len(splits) > 1 else "")
        + f" · reference: {A.reference_title(roc_reference)}. {fmt.method_caption()}"
    )
    if not roc.point.empty:
        point = roc.point.iloc[0]
        st.markdown(
            f"At **score ≥ {threshold:.2f}** (red point): FPR **{point['fpr']:.2f}**, "
            f"recall **{point['tpr']:.2f}**. Move the threshold slider above to move the "
            "point; the process rows of the chart and table follow it."
        )

# --- disagreements ---------------------------------------------------------------------------
st.subheader("Where they disagree")
wrong = A.disagreements(
    table, bench.tasks, verifier, detail_reference, splits, dimension, threshold
)
link = st.column_config.LinkColumn(
    "task", display_text=r"task=([^&]+)", help="Open the task in the trajectory viewer"
)
columns = {"link": link, "instruction": st.column_config.TextColumn("instruction", width="large")}
st.caption(
    f"{A.verifier_title(verifier, threshold)} against {A.reference_title(detail_reference)} "
    f"· split: {fmt.split_label(splits)}. Click a task to open it in the trajectory viewer."
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
