"""The choice to exclude the tasks an uploaded verifier's own score files flag as ambiguous
or invalid (`?flagged=exclude`), drawn on Your verifier and Agreement.

Each uploaded verifier loses its own rows on the tasks **its** score files flag
(`lib.analysis.failure_steps.without_flagged`); the humans and the other verifiers keep
theirs. The page then says how many tasks were excluded, per verifier.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from lib.analysis import failure_steps
from lib.uploads import predictions
from ui import params as P
from ui import url
from ui.safe_text import inert
from ui.state import FLAGGED_KEY, SCORE_FILES_KEY, UPLOADS_KEY

OPTIONS = ("include", "exclude")
LABELS = {"include": "Keep them", "exclude": "Exclude them from the numbers"}
_MEMO_KEY = "_flagged_tasks_memo"
_CHOICE_KEY = "_flagged_choice"
"""Session state: the last choice on either page (not a widget key: kept between pages)."""


def flagged_by_rater() -> dict[str, set[str]]:
    """Per uploaded verifier still in the session, the tasks its score files flag (kept on
    upload, or carried by a link: `ui.state.FLAGGED_KEY`; else parsed once per set of kept
    score files)."""
    flagged = dict(st.session_state.get(FLAGGED_KEY) or {})
    kept = st.session_state.get(SCORE_FILES_KEY) or {}
    if any(r not in flagged for r in kept):
        held = st.session_state.get(_MEMO_KEY)
        if held is None or held[0] is not kept:
            held = (kept, failure_steps.flagged_tasks(kept))
            st.session_state[_MEMO_KEY] = held
        flagged = held[1] | flagged
    uploads = st.session_state.get(UPLOADS_KEY)
    present = set() if uploads is None else set(uploads["rater"].unique())
    return {r: set(tasks) for r, tasks in flagged.items() if tasks and r in present}


def exclude_flagged(
    table: pd.DataFrame, param: P.Param, where: Any = None
) -> tuple[pd.DataFrame, str]:
    """Draw the choice (only when an uploaded verifier flags a task), say what it excluded,
    and return the table to compute from and a suffix for the cache keys.

    `param`: the page's (`ui.params.YOUR_FLAGGED`, `AGREEMENT_FLAGGED`: one widget key per
    page); entering the other page without `?flagged=`, the session's last choice is put
    in its URL, so the choice holds on both pages."""
    flagged = flagged_by_rater()
    if not flagged:
        return table, ""
    box = where if where is not None else st
    entering = param.key not in st.session_state and st.query_params.get(param.name) is None
    if entering and st.session_state.get(_CHOICE_KEY) == "exclude":
        st.query_params[param.name] = "exclude"
    asked = url.read(param.name, param.key, OPTIONS, "include")
    if asked is not None:  # a fixed line: the value itself is not quoted (`echoed` False)
        box.warning(
            "The link's `flagged=` value is not a choice here (`include` or `exclude`); "
            f"showing **{LABELS['include']}**.",
            icon=":material/link_off:",
        )
    value = box.radio(
        P.FLAGGED_LABEL,
        OPTIONS,
        key=param.key,
        format_func=LABELS.get,
        horizontal=True,
        on_change=url.touched(param.key),
        help="Tasks an uploaded verifier's own score files flag in "
        "error_taxonomy.task_verification (is_ambiguous or is_invalid): excluded, that "
        "verifier's verdicts on them are left out of its numbers (the humans' and the other "
        "verifiers' stay).",
    )
    url.write(param.name, param.key, str(value), "include")
    st.session_state[_CHOICE_KEY] = str(value)
    if value != "exclude":
        n = sum(len(t) for t in flagged.values())
        box.caption(
            f"{n} task verdict(s) flagged ambiguous or invalid by the uploaded verifiers' own "
            "score files are included in the numbers."
        )
        return table, ""
    kept, counts = failure_steps.without_flagged(table, flagged)
    for rater, n in counts.items():
        name = inert(predictions.display_name(rater), 200)
        box.caption(f"{n} tasks excluded (flagged ambiguous or invalid by {name}).")
    return kept, ":flagged-excluded"
