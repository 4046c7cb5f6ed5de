"""Choosing a trajectory: the cached catalog and the task selectbox, kept in `?task=`."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from lib import viewer
from lib.data.load import Bench
from ui import safe_text, state, url
from ui.viewer.text import show_notices

TASK_KEY = "viewer_task"


@state.bounded_cache(2, 128 * state.MB)
def catalog(_bench: Bench, spec: str) -> pd.DataFrame:
    """The picker's catalog of one source (`lib.viewer.build_catalog`)."""
    return viewer.build_catalog(_bench.tasks, _bench.annotations, _bench.verdicts)


TASK_CHANGED = "_viewer_task_changed"
TASK_NOTICE = "_viewer_task_notice"
NARROWED = "_viewer_narrowed"
"""The split and filters of the last run (`narrowing`), to tell when they changed."""


def _on_task_change() -> None:
    st.session_state[TASK_CHANGED] = True


TASK_LABEL_MAX = 160
"""Characters of a task's picker label (id and instruction) at most: a 1 MB instruction
must not become a 1 MB option."""


def task_picker(
    cat: pd.DataFrame,
    matches: pd.DataFrame,
    split_option: str,
    narrowing: object = None,
    in_split: int | None = None,
) -> str | None:
    """The task selectbox, kept in sync with `?task=`; returns the task to show.

    The URL decides when it changed from outside (deep link, back/forward). The URL's
    task is offered even when it does not match the split or filters (it is then listed
    first), so a shared link never jumps elsewhere. But when the reader changes the
    search, filters or split (`narrowing`, any comparable value, differs from the last
    run's) and the task on screen no longer matches, the first matching task replaces it:
    a filter filters what is shown. Picking another task writes `task` and `step=0`; a
    corrected URL (unknown id) keeps its step. `in_split`: the tasks of the chosen split
    (the count's denominator; default the whole catalog).
    """
    asked = st.query_params.get("task")
    resolved, notices = viewer.resolve_task(cat, asked, split_option, matches["task_id"].tolist())
    if resolved is None:
        st.info("There are no trajectories in this data.")
        return None
    from_url = url.changed("task", TASK_KEY)
    if from_url:
        st.session_state[TASK_KEY] = resolved
        st.session_state[TASK_NOTICE] = (resolved, notices)
    known = set(cat["task_id"])
    if st.session_state[TASK_KEY] not in known:
        st.session_state[TASK_KEY] = resolved
    matching = set(matches["task_id"])
    options = matches["task_id"].tolist()
    before = st.session_state.get(NARROWED)
    st.session_state[NARROWED] = narrowing
    left = st.session_state[TASK_KEY]
    narrowed = before is not None and before != narrowing and not from_url
    if narrowed and options and left not in matching:
        st.session_state[TASK_KEY] = options[0]
        st.session_state[TASK_CHANGED] = True  # a new task starts at step 0
        note = f"Task {left} does not match the new choice; showing {options[0]}."
        st.session_state[TASK_NOTICE] = (options[0], [viewer.Notice("info", note)])
    current = st.session_state[TASK_KEY]
    total = len(cat) if in_split is None else in_split
    if current not in matching:
        options = [current, *options]
    labels = dict(zip(cat["task_id"], cat["label"], strict=True))
    off = " (outside the chosen split or filters)"
    st.selectbox(
        f"Task ({len(matches)} of {total} match)",
        options,
        key=TASK_KEY,
        format_func=lambda t: (
            safe_text.plain(labels[t], TASK_LABEL_MAX) + ("" if t in matching else off)
        ),
        on_change=_on_task_change,
        placeholder="Type to search the list",
    )
    chosen = st.session_state[TASK_KEY]
    by_user = st.session_state.pop(TASK_CHANGED, False)
    reset = by_user or "step" not in st.query_params
    url.write("task", TASK_KEY, chosen, also={"step": "0"} if reset else None)
    stored_task, stored = st.session_state.get(TASK_NOTICE, (None, []))
    shown = stored if stored_task == chosen else []
    if not any(n.level == "info" for n in shown):
        shown = shown + viewer.resolve_task(cat, chosen, split_option)[1]
    show_notices(shown)
    if chosen not in matching:
        st.warning(
            f"This task is outside the chosen split or filters ({len(matches)} of "
            f"{total} tasks match). It is shown because the link or your earlier choice "
            "named it; pick a task from the list to stay inside the filters.",
            icon=":material/filter_alt_off:",
        )
    return chosen
