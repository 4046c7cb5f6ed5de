"""Agreement: each verifier against the human reviewers, with bootstrap intervals."""

from ui.frame import ensure_frame

ensure_frame()


import streamlit as st

from lib.analysis import agreement as A
from lib.table.verdicts import YOUR_LABELS
from lib.uploads import predictions
from lib.vocab import UV_THRESHOLD
from ui import agreement as view
from ui import audit as audit_view
from ui import fmt, url
from ui import params as P
from ui import parity as parity_view
from ui.agreement import PROCESS_REFERENCE, cached_bands, cached_records, uploads_key
from ui.corrected_success import corrected_section
from ui.flagged import exclude_flagged
from ui.safe_text import plain
from ui.sidebar import current_cluster, current_splits
from ui.state import get_bench, session_labels, source_spec, verdicts

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

# --- choices (all in the URL, so a link reproduces the view: ui.params) ----------------
reference_options = A.references(table, A.OUTCOME, splits)
verifier_dims = A.verifiers(table)
verifier_options = list(dict.fromkeys(v for v, _ in verifier_dims))


def reference_why(asked: str) -> str:
    elsewhere = asked in A.references(table, A.OUTCOME)  # e.g. a reviewer of the other split
    return (
        "that reviewer judged no task in" if elsewhere else "no such outcome reference in"
    ) + f" split {fmt.split_label(splits)}"


left, middle, right = st.columns([3, 3, 2])
reference = url.choice(
    P.AGREEMENT_REFERENCE,
    reference_options,
    reference_options[0],
    where=left,
    format_func=lambda r: plain(A.reference_title(r), 200),
    why=reference_why,
    help="Final = after adjudication; blind majority stores a 1:1 tie as failure; a "
    "reviewer's blind label compares the verifier on the tasks that reviewer judged. "
    "The process verdict is always compared with the final process label.",
)
threshold = url.number(
    P.AGREEMENT_THRESHOLD,
    0.0,
    1.0,
    UV_THRESHOLD,
    where=right,
    step=0.01,
    help="The Universal Verifier's process verdict is uv_rubric_score ≥ this (default 0.8).",
)
verifier = url.choice(
    P.AGREEMENT_VERIFIER,
    verifier_options,
    verifier_options[0],
    where=middle,
    format_func=lambda v: plain(A.verifier_title(v, threshold), 200),
    why=lambda _: "no such verifier",
)
n_uploads = url.number(
    P.AGREEMENT_UPLOADS,
    0,
    predictions.MAX_VERIFIERS_PER_SESSION,
    view.UPLOADS_SHOWN,
    where=right,
    help="How many of your uploaded verifiers (the first ones) the chart and table show; "
    "the verifier chosen for the details is always shown.",
)
dimension = next(d for v, d in verifier_dims if v == verifier)
# An uploaded verifier's own ambiguous / invalid tasks, excluded on request (?flagged=).
table, flagged_key = exclude_flagged(table, P.AGREEMENT_FLAGGED)
uploads += flagged_key
# "Your labels" (the Audit page's re-labels) replace the final label on both dimensions.
yours = reference == YOUR_LABELS[A.OUTCOME]
process_ref = YOUR_LABELS[A.PROCESS] if yours else PROCESS_REFERENCE
if yours:
    audit_view.reference_note(table, A.OUTCOME, splits)
    audit_view.reference_note(table, A.PROCESS, splits)
detail_reference = reference if dimension == A.OUTCOME else process_ref

# Only what the page shows is computed: the shown verifiers against the chosen reference
# (and the process reference), in the sidebar's unit and, for the design-effect note,
# the other unit (issue 18: every reviewer x every upload x both units cost 9.7 s at 100x).
cluster = current_cluster()
compared = (
    tuple(view.shown_verifiers(verifier_options, verifier, n_uploads)),
    tuple(dict.fromkeys([reference, process_ref])),
)
by_mode = {
    m: cached_records(table, source, threshold, uploads, m, *compared) for m in ("task", "site")
}
records = by_mode[cluster]
shown = A.select(records, groups, reference, process_ref)
bands = cached_bands(table, source, cluster)

view.overview_section(shown, bands, reference, splits, process_ref)
hidden = view.hidden_uploads_note(verifier_options, compared[0])
if hidden:
    st.caption(hidden)
view.table_section(shown, reference, groups)
st.header(parity_view.TITLE)
epsilon, margin = parity_view.epsilon_input(P.AGREEMENT_EPSILON, P.AGREEMENT_MARGIN)
parity = parity_view.cached_parity(
    table, source, uploads, cluster, epsilon, threshold, compared[0], margin, session_labels()
)
parity_view.parity_section(parity, threshold)
view.design_effect_section(
    A.select(by_mode["task"], groups, reference, process_ref),
    A.select(by_mode["site"], groups, reference, process_ref),
    cluster,
)
view.detail_section(records, verifier, dimension, detail_reference, groups, splits, threshold)
view.roc_section(table, source, reference, splits, threshold)
view.disagreements_section(
    table, bench.tasks, verifier, detail_reference, splits, dimension, threshold
)
corrected_section(table, source, uploads, cluster, compared[0], splits)
