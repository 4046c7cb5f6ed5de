"""Inside the verifier: what its screenshot pass bought, and process against outcome."""

from ui.frame import ensure_frame

ensure_frame()

import streamlit as st

from lib.vocab import UV_THRESHOLD
from ui import inside as view
from ui import params as P
from ui import url
from ui.sidebar import current_cluster, current_splits
from ui.state import get_bench, source_spec, verdicts

bench = get_bench()
table = verdicts(bench)
splits = tuple(current_splits())

st.title(view.TITLE)
st.markdown(
    "Why did the Universal Verifier decide what it did? Its score file records two "
    "scoring passes per rubric criterion, and it judges the process and the outcome apart; "
    "this page puts both beside the human labels."
)
threshold = url.number(
    P.INSIDE_THRESHOLD,
    0.0,
    1.0,
    UV_THRESHOLD,
    step=0.01,
    help="A process verdict is a pass when points / max points ≥ this (default 0.8), for "
    "both passes below and the verifier's quadrant.",
)
cluster, source = current_cluster(), source_spec()
tasks, key, who = view.choose_verifier(bench.tasks, table, source)
view.two_pass_section(view.cached_two_pass(tasks, table, key, splits, threshold, cluster), who)
rater = view.chosen_rater(table)
crossed = table if rater is None else view.score_files.in_uv_slots(table, rater)
# an uploaded verifier's process at the default threshold is its own verdict (issue 41:
# rubric_is_success, else its score >= 0.8); another threshold re-labels its scored tasks
result = view.cached_quadrants(crossed, key, splits, threshold, cluster, rater is not None)
view.quadrant_section(result, who)
