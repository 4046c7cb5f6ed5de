"""Trajectory: what the agent saw and did, step by step, beside every verdict.

URL: `Trajectory?split=<split>&task=<task_id>&step=<k>` plus the picker's search and
filters (see `ui.viewer`, a package of one module per concern). Stepping runs in the
browser (`ui.stepper`): no rerun per step.
"""

from ui.frame import ensure_frame

ensure_frame()

import streamlit as st

from lib import viewer
from ui import audit as audit_view
from ui import viewer as view
from ui.iterations import task_history_section
from ui.safe_text import inert
from ui.sidebar import current_split, current_splits
from ui.state import get_bench, source_spec, verdicts, verifier_ids

bench = get_bench()
spec = source_spec()
table = verdicts(bench)

st.title("Trajectory", anchor=False)  # no link stop before the viewer (Tab order)
show_audit = audit_view.audit_param()  # ?audit=1: the Audit page's panel, above the fold

catalog = view.catalog(bench, spec)
search_col, task_col, filter_col = st.columns([2, 5, 1], vertical_alignment="bottom")
with search_col:
    query = view.search_box()
with filter_col:
    flt, unusable = view.filter_controls(catalog, verifier_ids(table), query)
view.show_unusable(unusable)
splits = current_splits()
matches = viewer.filter_tasks(catalog, flt, splits, table)
in_split = int(catalog["split"].isin(splits).sum())
with task_col:
    task_id = view.task_picker(
        catalog, matches, current_split(), (repr(flt), repr(splits)), in_split
    )
if task_id is None:
    st.stop()

task = bench.task(task_id)
traj = viewer.load_trajectory(task)
task_verdicts = viewer.task_verdicts(table, bench.annotations, task)
# opened from a verifier's error list (?why=fp:<rater>): its verdict first, and why
task_verdicts, why_line, focus = view.why_focus(task_verdicts, view.current_why(task_id))

view.task_summary(task, task_verdicts, why_line, focus)
if show_audit:
    audit_view.viewer_panel(task_verdicts, audit_view.task_reasons(bench, task_id))
view.step_view(bench, traj, task_verdicts.evidence)
view.prefetch_neighbours(bench, matches, task_id)
st.caption(
    "Screenshot k shows the page before the agent's action k. The counter counts from 1 "
    '("Step 1 of 5" is the start page); the link\'s `step=`, the screenshot and the action '
    "numbers count from 0, as the dataset does. Step with the buttons, the Left/Right "
    "arrow keys, the slider or the filmstrip; the link follows the step."
)
view.hub_link(bench, task)

view.task_header(task, traj, task_verdicts)
for note in traj.notes():
    st.info(inert(note, 2000), icon=":material/info:")  # our sentences, the parser's reasons

with st.expander(f"All steps ({traj.parsed.n_actions} actions)", expanded=False):
    view.steps_table_section(traj)
view.evidence_section(task_verdicts, traj)
task_history_section(table, traj.split, task_id)

verifiers_col, humans_col = st.columns(2, gap="large")
with verifiers_col:
    view.verifiers_section(task_verdicts, traj.split, task_id)
with humans_col:
    view.humans_section(task_verdicts, traj.split)
