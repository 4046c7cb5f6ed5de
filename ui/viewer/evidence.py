"""The Universal Verifier's evidence on one task: the relevance heatmap, each criterion's
chosen screenshots and evidence, the penalty criteria (`lib.viewer.VerifierEvidence`).

Choosing a criterion happens in the stepper (`ui.stepper`, above the filmstrip): it jumps
to the criterion's most relevant screenshot in the browser, with no server run.
"""

from __future__ import annotations

import streamlit as st

from lib import viewer
from lib.charts.relevance import relevance_heatmap
from lib.table.gpt_eval import parse_gpt_eval
from lib.uploads.predictions import display_name
from ui import safe_text, vega
from ui.state import SCORE_FILES_KEY, UPLOADS_KEY
from ui.viewer.text import _md, field_line, text_block

ABSENT = (
    "The verifier's intermediate steps (the relevance of each screenshot to each criterion, "
    "the screenshots it chose, its evidence, the penalty criteria) are not recorded for this "
    "task."
)


def _shots(shots: tuple[int, ...]) -> str:
    return ", ".join(str(k) for k in shots) if shots else "none"


def heatmap_caption(ev: viewer.VerifierEvidence, n_stored: int) -> str:
    """What the heatmap shows, from the evidence it is drawn from."""
    d = ev.relevance
    n_shots, n_crit = d["screenshot"].nunique(), d["criterion"].nunique()
    text = (
        f"Relevance (0-10) of each screenshot to each criterion as the verifier scored it: "
        f"{n_shots} screenshots x {n_crit} criteria, {len(d)} cells. Outlined: the screenshots "
        "it chose for a criterion, whose evidence it read. Screenshot numbers count from 0, "
        "as `step=` does."
    )
    declared = ev.n_screenshots_declared
    if declared is not None:
        text += f" The verifier counted {declared} screenshots;"
        text += f" this trajectory stores {n_stored}."
    return text


def evidence_section(verdicts: viewer.TaskVerdicts, traj: viewer.Trajectory) -> None:
    """The verifier's evidence where the row carries it; says so where it does not. Only
    for rows holding the Universal Verifier's score file (the internal split). Then the
    evidence of each verifier uploaded as score files that scored this task."""
    ev = verdicts.evidence
    if verdicts.rubric is not None or ev.present:
        st.subheader("The Universal Verifier's evidence", anchor=False)
        _evidence(ev, traj, "uv")
    for rater, name, theirs in uploaded_evidence(traj.task_id):
        st.subheader(f"{_md(name, 200)}: evidence", anchor=False)
        _evidence(theirs, traj, rater)


def uploaded_evidence(task_id: str) -> list[tuple[str, str, viewer.VerifierEvidence]]:
    """(rater, name, evidence) of each loaded verifier uploaded as score files with a file
    for this task that records the intermediate steps (the same `parse_evidence`)."""
    kept = st.session_state.get(SCORE_FILES_KEY) or {}
    uploaded = st.session_state.get(UPLOADS_KEY)
    loaded = set() if uploaded is None else set(uploaded["rater"])
    out = []
    for rater, cells in kept.items():
        cell = cells.get(task_id) if rater in loaded else None
        if cell is None:
            continue
        gpt = parse_gpt_eval(cell)
        rubric = viewer.parse_rubric(gpt)
        names = [item.criterion for item in rubric.items] if rubric else []
        ev = viewer.parse_evidence(gpt, names)
        if ev.present:
            out.append((rater, f"{display_name(rater)} (yours)", ev))
    return out


def _evidence(ev: viewer.VerifierEvidence, traj: viewer.Trajectory, key: str) -> None:
    for problem in ev.problems:
        st.caption(_md(problem))
    if not ev.present:
        st.caption(ABSENT)
        return
    if ev.absent:
        st.caption("Not recorded for this task: " + _md(", ".join(ev.absent)) + ".")
    if key == "uv" and ev.criteria and any(c.best is not None for c in ev.criteria):
        st.caption(
            "Choose a criterion under the screenshot (“Verifier's evidence”) to jump to its most "
            "relevant screenshot: the first the verifier chose for it, else its highest "
            "relevance (ties: the later screenshot). The filmstrip marks the chosen ones."
        )
    if ev.has_relevance:
        labels = {c.index: safe_text.plain(c.label, 300) for c in ev.criteria}  # chart text
        chosen = {c.index: c.chosen for c in ev.criteria}
        chart = relevance_heatmap(ev.relevance, labels, chosen)
        vega.altair_chart(chart, width="content", key=f"relevance_{key}")
        st.caption(heatmap_caption(ev, traj.n_screenshots))
    for criterion in ev.criteria:
        _criterion(criterion)
    _penalties(ev)


def _criterion(c: viewer.CriterionEvidence) -> None:
    title = f"{c.label}: chosen screenshots {_shots(c.chosen)}"
    with st.expander(_md(title, 300), expanded=False):
        best = "none" if c.best is None else f"screenshot {c.best}"
        field_line("Most relevant", best)
        if c.reality_check:
            text_block("Reality check", c.reality_check)
        if not c.entries:
            st.caption("No evidence entries are recorded for this criterion.")
        for entry in c.entries:
            shot = "screenshot not named" if entry.screenshot is None else f"{entry.screenshot}"
            st.markdown(f"**Screenshot {_md(shot)}**")
            text_block("Evidence", entry.evidence, empty="(none given)")
            if entry.analysis:
                text_block("Analysis for the criterion", entry.analysis)
            text_block("Discrepancies", entry.discrepancies, empty="(none given)")
            text_block(
                "Environment issues confirmed", entry.environment_issues, empty="(none given)"
            )


def _penalties(ev: viewer.VerifierEvidence) -> None:
    st.markdown("**Penalty criteria** (unsolicited side effects that cost points)")
    needs = {True: "yes", False: "no", None: "not given"}[ev.requires_penalty]
    field_line("A penalty required", needs)
    if not ev.penalties:
        st.caption("None listed.")
    for penalty in ev.penalties:
        with st.container(border=True):
            st.markdown(f"**{_md(penalty.title, 500)}**")
            for key, value in penalty.fields:
                text_block(_md(key, 200), value)
    if ev.penalty_reasoning:
        text_block("Penalty reasoning", ev.penalty_reasoning)
