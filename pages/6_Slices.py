"""Slices: where does a verifier go wrong? Agreement on every slice of the tasks."""

from ui.frame import ensure_frame

ensure_frame()

import streamlit as st

from lib.analysis import agreement as A
from lib.analysis import slices as S
from lib.analysis.slice_values import SLICE_DIMS, SLICE_TITLES
from lib.table.verdicts import rater_title
from lib.vocab import DIMENSIONS, HUMAN_REFERENCE
from ui import audit as audit_view
from ui import params as P
from ui import slices as view
from ui import url
from ui.agreement import uploads_key
from ui.safe_text import plain
from ui.sidebar import current_cluster, current_split, current_splits
from ui.state import get_bench, source_spec, verdicts

NONE = "none"

bench = get_bench()
table = verdicts(bench)
split, splits, cluster = current_split(), current_splits(), current_cluster()
source, uploads = source_spec(), uploads_key()
st.title("Slices: where does a verifier go wrong?")
st.markdown(
    "A verifier's agreement with the humans, broken down by what a task is (website or "
    "task family, length, screenshots) and how its run and its review went. Slices are "
    "ranked by how much worse than the verifier's overall figure they are."
)

dims_of: dict[str, list[str]] = {}  # an uploaded verifier may judge both dimensions
for rater, dim in A.verifiers(table):
    dims_of.setdefault(rater, []).append(dim)
verifiers = list(dims_of)
if not verifiers:
    st.info("No verifier verdicts in this data.")
    st.stop()


def rater_label(rater: str) -> str:
    return plain(rater_title(rater))


c1, c2, c3 = st.columns(3)
dim_box = st.container()
verifier = url.choice(P.SLICES_VERIFIER, verifiers, verifiers[0], where=c1, format_func=rater_label)
dimensions = [d for d in DIMENSIONS if d in dims_of[verifier]]
dimension = url.choice(
    P.SLICES_DIMENSION,
    dimensions,
    dimensions[0],
    where=dim_box,
    format_func=str.title,
    show=len(dimensions) > 1,
)
references = A.references(table, dimension, splits) or [HUMAN_REFERENCE[dimension]]
default_ref = (
    HUMAN_REFERENCE[dimension] if HUMAN_REFERENCE[dimension] in references else references[0]
)
reference = url.choice(
    P.SLICES_REFERENCE, references, default_ref, where=c2, format_func=rater_label
)
audit_view.your_labels_notes({reference: dimension}, table, splits)
others = [NONE, *(v for v in verifiers if v != verifier and dimension in dims_of[v])]
other = url.choice(
    P.SLICES_VS,
    others,
    NONE,
    where=c3,
    format_func=lambda v: "nobody" if v == NONE else rater_label(v),
)
c1, c2, c3 = st.columns(3)
slice_dim = url.choice(
    P.SLICES_SLICE,
    [view.ALL_DIMS, *SLICE_DIMS],
    view.ALL_DIMS,
    where=c1,
    format_func=lambda d: "every dimension" if d == view.ALL_DIMS else SLICE_TITLES[d],
)
metric = url.choice(
    P.SLICES_SORT, list(S.slice_metrics()), "kappa", where=c2, format_func=view.metric_word
)
min_n = url.number(P.SLICES_MIN_N, 1, 1000, S.DEFAULT_MIN_N, where=c3)

dims = view.dims_of(slice_dim)
args = (table, bench.tasks, source, uploads, split, verifier, reference, dimension, dims)
records = view.cached_records(*args, cluster, min_n)
twin = view.cached_records(*args, "site" if cluster == "task" else "task", min_n)
ranked = S.rank_slices(records, metric)
st.caption(view.context_caption(verifier, reference, split, records, min_n))
if not ranked:
    st.info("No task of this selection has a slice value here.")
    st.stop()
rows = S.selection_rows(
    table, view.cached_table(bench.tasks, table, source, uploads, split, dimension),
    verifier, reference, dimension, split, cluster,
)  # fmt: skip
view.overall_section(ranked, metric)
title = f"{rater_title(verifier)}: {view.metric_word(metric)} per slice"
view.chart_section(ranked, metric, title, min_n)
view.table_section(ranked, twin, cluster, f"slices_{verifier}_{split}_{cluster}", metric)

st.header("Tasks of one slice")
keys = [view.slice_key(r) for r in ranked]
labels = {view.slice_key(r): view.slice_label(r) for r in ranked}
chosen = url.choice(P.SLICES_VALUE, keys, keys[0], format_func=labels.get)
record = next(r for r in ranked if view.slice_key(r) == chosen)
view.tasks_section(rows, record, verifier, reference)

if other != NONE:
    st.header("Two verifiers side by side")
    paired = view.cached_paired(
        table, bench.tasks, source, uploads, split, verifier, other, reference, dimension,
        dims, cluster, min_n,
    )  # fmt: skip
    view.paired_section(paired, verifier, other, metric, keys)
