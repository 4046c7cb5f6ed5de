"""The step view: the in-browser stepper (`ui.stepper`), neighbour prefetch, the steps table."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from lib import viewer
from lib.analysis.failure_steps import failure_marks, marks_from_steps
from lib.data.load import Bench
from lib.table.trajlog import steps_table
from lib.uploads.predictions import display_name
from ui import fetch, safe_text
from ui.state import SCORE_FILES_KEY, UPLOADS_KEY, live_failure_steps
from ui.stepper import stepper
from ui.viewer.media import trajectory_media
from ui.viewer.text import show_notices

TABLE_CHARS_MAX = 2_000_000
"""Characters of text the "All steps" table sends at most (it is sent even while its
expander is closed): each text cell gets an equal share, between 100 and 20,000."""
TABLE_TEXT_COLUMNS = ("tool", "summary", "url", "time", "thoughts", "problems")
STEPS_TABLE_KEY = "_viewer_steps_table"
STEP_NOTICE_SEEN = "_viewer_step_notice_seen"
JUMP_KEY = "_viewer_jump"
NOT_FETCHED = "Screenshot {k} could not be fetched from the Hub: see the message above (Retry)."


def opening_step(traj: viewer.Trajectory) -> int:
    """The step the stepper opens at: `?step=` resolved, out-of-range links corrected.

    The browser owns the step after that (the component writes `step=` itself), so the
    server reads it only to open a view and to say what it corrected.
    """
    asked = st.query_params.get("step")
    step, notice = viewer.resolve_step(asked, traj.n_positions)
    if notice is not None:
        if st.session_state.get(STEP_NOTICE_SEEN) != (traj.task_id, asked):
            show_notices([notice])
            st.session_state[STEP_NOTICE_SEEN] = (traj.task_id, asked)
        st.query_params["step"] = str(step)
    return step


def step_view(
    bench: Bench, traj: viewer.Trajectory, evidence: viewer.VerifierEvidence | None = None
) -> None:
    """The stepper: screenshot with the action drawn, details, filmstrip, all in the browser;
    with the verifier's `evidence`, its criteria to jump to and its chosen screenshots marked.

    Screenshots are fetched first when the source is the Hub (`ui.fetch` shows progress
    and, on failure, why with a Retry button); the steps are still shown without them.
    """
    step = opening_step(traj)
    fetch.moved_notice(bench)
    shots_ok = traj.log_only or fetch.ensure_screenshots(
        bench, traj.split, traj.row, traj.n_screenshots
    )
    if traj.log_only:
        shots = problems = thumbs = []
    elif shots_ok:
        shots, problems, thumbs = trajectory_media(bench, traj)
    else:  # not fetched: each step says so (the error and Retry are above the stepper)
        shots = thumbs = [None] * traj.n_screenshots
        problems = [NOT_FETCHED.format(k=k) for k in range(traj.n_screenshots)]
    jump = st.session_state.get(JUMP_KEY)
    jump = jump[1:] if jump and jump[0] == traj.task_id else None
    marks = (
        viewer.stepper_evidence(evidence, traj.n_positions, traj.n_screenshots)
        if evidence is not None and evidence.present
        else None
    )
    data = viewer.stepper_data(traj, step, shots, problems, thumbs, jump, marks)
    data["failures"] = uploaded_failure_marks(traj.task_id, len(data["steps"]))
    stepper(data)
    if shots_ok and not traj.log_only:
        path = fetch.fetch_path(bench, traj.split, traj.row)
        if path:
            st.caption(f"Screenshots obtained by: {safe_text.inert(path, 300)}")


def uploaded_failure_marks(task_id: str, n_steps: int) -> list[dict]:
    """Where each verifier uploaded as score files says the agent went wrong on this task
    (`first_failure_step`), for the filmstrip's marks (`lib.analysis.failure_steps`)."""
    steps = live_failure_steps()  # from the score files, or from a link (no files then)
    kept = st.session_state.get(SCORE_FILES_KEY) or {}
    uploaded = st.session_state.get(UPLOADS_KEY)
    loaded = set() if uploaded is None else set(uploaded["rater"])
    cells = {r: c for r, c in kept.items() if r in loaded and r not in steps}
    names = {r: f"{display_name(r)} (yours)" for r in (*steps, *cells)}
    marks = marks_from_steps(steps, task_id, n_steps, names)
    return marks + (failure_marks(cells, task_id, n_steps, names) if cells else [])


def prefetch_neighbours(bench: Bench, matches: pd.DataFrame, task_id: str) -> None:
    """Fetch the next and the previous trajectory of the current list in the background,
    so moving through the list finds their screenshots cached (`ui.fetch.prefetch`:
    bounded, one at a time, replaced by the next call). Only neighbours in the shown
    trajectory's split: one queue serves one split."""
    ids = matches["task_id"].tolist()
    if task_id not in ids:
        return
    at = ids.index(task_id)
    split = str(matches["split"].iloc[at])
    rows = [
        int(bench.task(ids[j])["row"])
        for j in (at + 1, at - 1)
        if 0 <= j < len(ids) and matches["split"].iloc[j] == split
    ]
    if rows:
        fetch.prefetch(bench, split, rows)


def table_cell_max(n_rows: int) -> int:
    """Characters one text cell of the steps table keeps (TABLE_CHARS_MAX shared)."""
    share = TABLE_CHARS_MAX // max(n_rows * len(TABLE_TEXT_COLUMNS), 1)
    return min(max(share, 100), 20_000)


def steps_table_section(traj: viewer.Trajectory) -> None:
    """All steps in one table; selecting a row jumps to that step."""
    cell = table_cell_max(traj.parsed.n_actions)
    table = steps_table(traj.parsed, cell)
    if table.empty:
        st.caption("The log holds no action.")
        return
    long = [
        c
        for c in TABLE_TEXT_COLUMNS
        if table[c].str.contains("more characters)", regex=False).any()
    ]
    if long:
        st.caption(
            f"{len(table):,} steps: to keep the page light, the "
            f"{', '.join(long)} cells are cut at {cell:,} characters here."
        )
    counter = st.session_state.get(STEPS_TABLE_KEY, 0)
    key = f"viewer_steps_{counter}"
    # The callback outlives the run (the session keeps it, for a while even after its tab
    # closed): it holds the step numbers and the task id only, never the parsed log.
    steps, task_id = [int(s) for s in table["step"]], traj.task_id

    def jump() -> None:
        rows = st.session_state[key].selection.rows
        if rows:
            st.session_state[JUMP_KEY] = (task_id, counter + 1, steps[rows[0]])
            st.session_state[STEPS_TABLE_KEY] = counter + 1

    st.dataframe(
        table,
        hide_index=True,
        key=key,
        on_select=jump,
        selection_mode="single-row",
        column_config={
            "step": st.column_config.NumberColumn("step", width="small"),
            "thoughts": st.column_config.TextColumn("thoughts", width="large"),
        },
    )
