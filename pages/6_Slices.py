"""Slices: where does a verifier go wrong? Agreement on every slice of the tasks."""

from ui.frame import ensure_frame

ensure_frame()

import streamlit as st

from lib import agreement as A
from lib import slices as S
from lib.slice_values import SLICE_DIMS, SLICE_TITLES
from lib.verdicts import rater_title
from lib.vocab import DIMENSIONS, HUMAN_REFERENCE
from ui import slices as view
from ui import url
from ui.agreement import uploads_key
from ui.safe_text import plain
from ui.sidebar import current_cluster, current_split, current_splits
from ui.state import get_bench, source_spec, verdicts

NONE = "none"
W = {
    k: f"slices_{k}"
    for k in ("verifier", "dimension", "vs", "reference", "slice", "sort", "min_n", "value")
}

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
default_verifier = verifiers[0]
asked = url.read("verifier", W["verifier"], verifiers, default_verifier)
view.explain("verifier", asked, default_verifier)
url.fallback(W["verifier"], verifiers, default_verifier)
verifier = st.session_state[W["verifier"]]
dimensions = [d for d in DIMENSIONS if d in dims_of[verifier]]
asked = url.read("dimension", W["dimension"], dimensions, dimensions[0])
view.explain("dimension", asked, dimensions[0])
url.fallback(W["dimension"], dimensions, dimensions[0])
dimension = st.session_state[W["dimension"]]
references = A.references(table, dimension, splits) or [HUMAN_REFERENCE[dimension]]
default_ref = (
    HUMAN_REFERENCE[dimension] if HUMAN_REFERENCE[dimension] in references else references[0]
)
others = [NONE, *(v for v in verifiers if v != verifier and dimension in dims_of[v])]
dim_options = [view.ALL_DIMS, *SLICE_DIMS]
for name, options, default in (
    ("reference", references, default_ref),
    ("vs", others, NONE),
    ("slice", dim_options, view.ALL_DIMS),
    ("sort", list(S.SLICE_METRICS), "kappa"),
):
    view.explain(name, url.read(name, W[name], options, default), default)
    url.fallback(W[name], options, default)
asked = url.read("min_n", W["min_n"], view.min_n_valid, S.DEFAULT_MIN_N, parse=int)
view.explain("a minimum n of", asked, str(S.DEFAULT_MIN_N))

c1, c2, c3 = st.columns(3)
verifier = c1.selectbox(
    "Verifier", verifiers, key=W["verifier"], format_func=lambda v: plain(rater_title(v))
)
reference = c2.selectbox(
    "Human reference", references, key=W["reference"], format_func=lambda v: plain(rater_title(v))
)
other = c3.selectbox(
    "Beside it (paired)",
    others,
    key=W["vs"],
    format_func=lambda v: "nobody" if v == NONE else plain(rater_title(v)),
)
if len(dimensions) > 1:
    st.radio("Dimension", dimensions, key=W["dimension"], horizontal=True, format_func=str.title)
url.write("dimension", W["dimension"], dimension, dimensions[0])
c1, c2, c3 = st.columns(3)
slice_dim = c1.selectbox(
    "Slice by",
    dim_options,
    key=W["slice"],
    format_func=lambda d: "every dimension" if d == view.ALL_DIMS else SLICE_TITLES[d],
)
metric = c2.selectbox(
    "Rank by", list(S.SLICE_METRICS), key=W["sort"], format_func=view.METRIC_WORDS.get
)
min_n = int(c3.number_input("Minimum n", 1, 1000, key=W["min_n"], step=1))
for name in ("verifier", "reference", "vs", "slice", "sort"):
    default = {"verifier": default_verifier, "reference": default_ref, "vs": NONE}.get(
        name, {"slice": view.ALL_DIMS, "sort": "kappa"}.get(name)
    )
    url.write(name, W[name], str(st.session_state[W[name]]), default)
url.write("min_n", W["min_n"], str(min_n), str(S.DEFAULT_MIN_N))

dims = view.dims_of(slice_dim)
args = (table, bench.tasks, source, uploads, split, verifier, reference, dimension, dims)
records = view.cached_records(*args, cluster, min_n)
twin = view.cached_records(*args, "site" if cluster == "task" else "task", min_n)
ranked = S.rank_slices(records, metric)
st.caption(view.context_caption(verifier, reference, split, records, cluster, min_n))
if not ranked:
    st.info("No task of this selection has a slice value here.")
    st.stop()
view.overall_section(ranked, metric)
title = f"{rater_title(verifier)}: {view.METRIC_WORDS[metric]} per slice"
view.chart_section(ranked, metric, title)
view.table_section(ranked, twin, cluster, f"slices_{verifier}_{split}_{cluster}")

st.subheader("Tasks of one slice")
keys = [view.slice_key(r) for r in ranked]
asked = url.read("value", W["value"], keys, keys[0])
view.explain("slice", asked, keys[0])
url.fallback(W["value"], keys, keys[0])
labels = {view.slice_key(r): view.slice_label(r) for r in ranked}
chosen = st.selectbox("Slice", keys, key=W["value"], format_func=labels.get)
url.write("value", W["value"], chosen, keys[0])
record = next(r for r in ranked if view.slice_key(r) == chosen)
rows = S.selection_rows(
    table, view.cached_table(bench.tasks, table, source, uploads, split, dimension),
    verifier, reference, dimension, split, cluster,
)  # fmt: skip
view.tasks_section(rows, record, verifier, reference)

if other != NONE:
    st.subheader("Two verifiers side by side")
    paired = view.cached_paired(
        table, bench.tasks, source, uploads, split, verifier, other, reference, dimension,
        dims, cluster, min_n,
    )  # fmt: skip
    view.paired_section(paired, verifier, other, metric, keys)
