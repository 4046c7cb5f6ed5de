"""Agreement: each verifier against the human reviewers, with bootstrap intervals."""

from ui.frame import ensure_frame

ensure_frame()


import streamlit as st

from lib import agreement as A
from lib.labels import UV_PROCESS_THRESHOLD
from ui import agreement as view
from ui import fmt, url
from ui.agreement import (
    PROCESS_REFERENCE,
    cached_bands,
    cached_records,
    uploads_key,
    url_threshold,
)
from ui.safe_text import inert, plain
from ui.sidebar import current_cluster, current_splits
from ui.state import get_bench, source_spec, verdicts

REFERENCE_KEY, VERIFIER_KEY, THRESHOLD_KEY = "reference", "verifier", "threshold"
WIDGET = {name: f"agreement_{name}" for name in (REFERENCE_KEY, VERIFIER_KEY, THRESHOLD_KEY)}


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
        f"The link asks for {REFERENCE_KEY} **{inert(asked, 300)}**: "
        + ("that reviewer judged no task in" if elsewhere else "no such outcome reference in")
        + f" split {fmt.split_label(splits)}; showing "
        f"{inert(A.reference_title(defaults[REFERENCE_KEY]).lower())}. "
        f"Known: {inert(', '.join(reference_options), 2000)}."
    )
asked = url.read(VERIFIER_KEY, WIDGET[VERIFIER_KEY], verifier_options, defaults[VERIFIER_KEY])
if asked is not None:
    st.warning(
        f"The link asks for {VERIFIER_KEY} **{inert(asked, 300)}**: no such verifier; showing "
        f"the first. Known: {inert(', '.join(verifier_options), 2000)}."
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
        f"The link asks for {THRESHOLD_KEY} **{inert(asked, 300)}**: not a number in [0, 1]; "
        f"using {UV_PROCESS_THRESHOLD}."
    )

left, middle, right = st.columns([3, 3, 2])
reference = left.selectbox(
    "Human reference for outcome verdicts",
    reference_options,
    format_func=lambda r: plain(A.reference_title(r), 200),
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
    format_func=lambda v: plain(A.verifier_title(v, threshold), 200),
    key=WIDGET[VERIFIER_KEY],
)
url.write(REFERENCE_KEY, WIDGET[REFERENCE_KEY], reference, defaults[REFERENCE_KEY])
url.write(VERIFIER_KEY, WIDGET[VERIFIER_KEY], verifier, defaults[VERIFIER_KEY])
url.write(THRESHOLD_KEY, WIDGET[THRESHOLD_KEY], f"{threshold:.2f}", f"{UV_PROCESS_THRESHOLD:.2f}")
dimension = next(d for v, d in verifier_dims if v == verifier)
detail_reference = reference if dimension == A.OUTCOME else PROCESS_REFERENCE

cluster = current_cluster()
by_mode = {m: cached_records(table, source, threshold, uploads, m) for m in ("task", "site")}
records = by_mode[cluster]
shown = A.select(records, groups, reference, PROCESS_REFERENCE)
bands = cached_bands(table, source, cluster)

view.overview_section(shown, bands, reference, splits)
view.table_section(shown, reference, groups)
view.design_effect_section(
    A.select(by_mode["task"], groups, reference, PROCESS_REFERENCE),
    A.select(by_mode["site"], groups, reference, PROCESS_REFERENCE),
    cluster,
)
view.detail_section(records, verifier, dimension, detail_reference, groups, splits, threshold)
view.roc_section(table, source, uploads, reference, splits, threshold)
view.disagreements_section(
    table, bench.tasks, verifier, detail_reference, splits, dimension, threshold
)
