"""Audit: the contested human labels in one queue, and your own re-labels."""

from ui.frame import ensure_frame

ensure_frame()

import streamlit as st

from lib.analysis import audit
from lib.vocab import ALL
from ui import audit as view
from ui import params as P
from ui import url
from ui.sidebar import current_cluster, current_splits
from ui.state import get_bench, session_labels, source_spec

bench = get_bench()
splits = current_splits()

st.title("Audit: the contested human labels")
st.markdown(
    "Every number in this app is measured against human labels, and the humans disagree "
    "with each other and with themselves in countable places: blind ties, adjudications, "
    "labels that are neither correct nor incorrect, reviewers who changed their label once "
    "they saw the verifier's verdict, process labels that contradict the reviewer's own "
    "score, and single-reviewer tasks the verifier decisively disputes. Each reason is one "
    "rule; re-label any task and use **your labels** as the reference on the other pages."
)
with st.expander("The rules", expanded=False):
    st.markdown(audit.__doc__.split("Reasons (ids", 1)[1].split("\n", 1)[1])

long = view.cached_reasons(bench.verdicts, source_spec())
long = long[long["split"].isin(splits)]
n_tasks = int(bench.tasks["split"].isin(splits).sum())
view.counts_section(long, n_tasks, splits)

left, middle, right = st.columns([2, 3, 2])
dimension = url.choice(
    P.AUDIT_DIMENSION,
    list(view.DIM_OPTIONS),
    ALL,
    where=left,
    format_func=lambda d: "Both" if d == ALL else d.capitalize(),
)
reason = url.choice(
    P.AUDIT_REASON, [ALL, *audit.REASON_IDS], ALL, where=middle, format_func=view.reason_title
)
sort = url.choice(
    P.AUDIT_SORT, list(view.SORTS), "task", where=right, format_func=view.SORTS.__getitem__
)

records = view.cached_ceiling(bench.verdicts, long, source_spec(), tuple(splits), current_cluster())

rows = view.queue_frame(long, dimension, reason, sort, session_labels())
view.queue_section(rows, len(long[audit.KEYS].drop_duplicates()))
view.relabel_section(rows)
view.files_section(dict(zip(bench.tasks["task_id"], bench.tasks["split"], strict=True)))
view.ceiling_section(records, dimension)
