"""Home: what the loaded data holds, and what each page answers."""

from ui.frame import ensure_frame

ensure_frame()

import streamlit as st

from lib.analysis import home as summary
from lib.data.schema import TRAJECTORY_COLUMNS
from ui.frame import PAGES
from ui.safe_text import inert, plain
from ui.sidebar import current_split, current_splits
from ui.state import get_bench, links_query

bench = get_bench()
splits = current_splits()
tasks = bench.tasks[bench.tasks["split"].isin(splits)]
annotations = bench.annotations[bench.annotations["split"].isin(splits)]
verdicts = bench.verdicts[bench.verdicts["split"].isin(splits)]

st.title("CUAVerifierBench explorer")
st.markdown(
    "How well do **verifiers** (judges that read a computer-use agent's trajectory and "
    "decide whether the task was done) agree with **human reviewers**? "
    f"Source: {inert(bench.source.label(), 300)}. Split shown: **{current_split()}**."
)

st.header("Pages")
query = links_query(bench) or None  # split, cluster, v=: a new tab keeps them
for page in PAGES[1:]:
    st.page_link(
        page.file,
        label=f"**{page.title}**: {page.question}",
        icon=page.icon,
        query_params=query,
    )

st.header("Trajectories and reviews per split")
# The widest table of the page: a short header (the full one as help) keeps it inside a
# 1400 px window (tests/browser/test_browser_wide_tables.py).
st.dataframe(
    summary.split_overview(tasks, annotations),
    hide_index=True,
    column_config={
        "tasks with 1 / 2 / 3+ reviewers": st.column_config.Column(
            "1 / 2 / 3+ reviewers", help="Tasks with 1 / 2 / 3 or more blind reviewers."
        )
    },
)

# One table per row: side by side, both were cut at a 1400 px window (issue 21).
st.header("Reviewers")
st.caption("Tasks each anonymised reviewer reviewed (blind stage).")
st.dataframe(summary.reviewer_load(annotations), hide_index=True, height="content")
st.header("Label balance")
st.caption(
    "Task-level verdicts. Missing = null or empty, excluded from every metric and "
    "counted; other = a value that is neither success nor failure. The blind majority "
    "stores a 1:1 tie as failure (0), as the dataset does: those are counted apart."
)
st.dataframe(summary.label_balance(verdicts), hide_index=True, height="content")

st.header("Missing values")
columns = [c for c in TRAJECTORY_COLUMNS if c not in ("screenshots", "task_id")]
missing = summary.missing_values(tasks, columns)
if missing.empty:
    st.caption("No missing values in the trajectories table.")
else:
    st.caption(
        "Null or empty cells in the trajectories table: missing / rows, per split. "
        "`median_human_rubric_score_agnostic` is null by design in internal (no blind "
        "process scores there)."
    )
    st.dataframe(summary.missing_matrix(missing), hide_index=True, height="content")

if bench.warnings:
    with st.expander(f"Data warnings ({len(bench.warnings)})", expanded=True):
        for warning in bench.warnings:
            st.text(plain(warning, 2000))
