"""The task header: instruction, start URL, final answer, verdict badges, the Hub link."""

from __future__ import annotations

import dataclasses

import pandas as pd
import streamlit as st

from lib import viewer
from lib.data.load import Bench
from lib.table.verdicts import rater_title
from lib.viewer import links
from lib.vocab import short_split
from ui import params, safe_text
from ui.viewer.text import INLINE_MAX, _md, label_badge, text_block


def task_header(task: pd.Series, traj: viewer.Trajectory, verdicts: viewer.TaskVerdicts) -> None:
    """Instruction, start URL, final answer with its flags, and the verdicts at a glance."""
    split = str(task["split"])
    started = viewer.as_text(task.get("start_timestamp")) or "unknown"
    st.caption(
        _md(
            f"Split {short_split(split)} ({split}) · {traj.parsed.n_actions} "
            f"actions · {traj.n_screenshots} screenshots · started {started}"
        )
    )
    left, right = st.columns([3, 2], gap="large")
    with left:
        text_block("Instruction", task.get("instruction"))
        st.markdown("**Start URL**")
        url = viewer.as_text(task.get("init_url"))
        if url:
            st.code(safe_text.plain(url, INLINE_MAX), language=None, wrap_lines=True)
        else:
            st.caption("(none given)")
    with right:
        text_block("Final answer", task.get("final_answer"))
        for flag in viewer.answer_flags(task, traj.parsed):
            st.warning(flag, icon=":material/flag:")  # our own wording (lib.viewer)


SUMMARY_CHARS = 280
"""Characters of the instruction in the summary above the stepper (the header below the
stepper has all of it)."""

SUMMARY_RATERS = ("uv_outcome_success", "uv_process", "final_human_outcome_label")


WHY_KEY = "_viewer_why"
"""Session state: (task id, `why=` value) of the trajectory opened from an error list."""


def current_why(task_id: str) -> str | None:
    """`?why=` while the viewer shows the task it was opened with (so Copy link keeps it);
    dropped from the URL once the visitor moves to another task."""
    asked = st.query_params.get(params.VIEWER_WHY.name)
    held = st.session_state.get(WHY_KEY)
    if asked is not None and (held is None or held[1] != asked):
        held = st.session_state[WHY_KEY] = (task_id, asked)
    if held is None:
        return None
    if held[0] != task_id:
        st.query_params.pop(params.VIEWER_WHY.name, None)
        st.session_state.pop(WHY_KEY, None)
        return None
    if asked is None:
        st.query_params[params.VIEWER_WHY.name] = held[1]
    return held[1]


def why_focus(
    verdicts: viewer.TaskVerdicts, why: str | None
) -> tuple[viewer.TaskVerdicts, str | None, str | None]:
    """The verdicts with the `why=` verifier's lines first, the line that says why the
    trajectory was opened, and that verifier's id (None, None for no usable `why=`: a
    value that names no verifier of this task is ignored, never echoed)."""
    parsed = links.parse_why(why)
    if parsed is None:
        return verdicts, None, None
    kind, rater = parsed
    mine = [line for line in verdicts.verifiers if line.rater == rater]
    if not mine:
        return verdicts, None, None
    line = next((m for m in mine if m.dimension == "outcome"), mine[0])
    reference = REFERENCE_OF.get(line.dimension, "final_human_outcome_label")
    ref = next((r for r in verdicts.references if r.rater == reference), None)
    words = links.why_words(
        kind, rater_title(rater), line.text, ref.text if ref is not None else "missing"
    )
    others = [v for v in verdicts.verifiers if v.rater != rater]
    return dataclasses.replace(verdicts, verifiers=mine + others), words, rater


REFERENCE_OF = {"outcome": "final_human_outcome_label", "process": "final_human_process_label"}


def task_summary(
    task: pd.Series,
    verdicts: viewer.TaskVerdicts,
    why_line: str | None = None,
    focus: str | None = None,
) -> None:
    """The instruction's first words and the verdicts at a glance, above the stepper, so
    that the first screen (1400 x 900) shows what the agent was asked and who judged what
    beside the screenshot (issue 30: they were at y ~ 1,280 and ~ 1,500 px). Opened from
    an error list (``why_line``, ``focus``): that line, and that verifier's verdict first."""
    text = viewer.as_text(task.get("instruction")).strip()
    more = " *(all of it below)*" if len(text) > SUMMARY_CHARS else ""
    with st.container(key="viewer_summary", gap="small"):
        if why_line:
            st.info(_md(why_line), icon=":material/manage_search:")
        st.markdown(f"**Instruction:** {_md(text, SUMMARY_CHARS) or '(empty)'}{more}")
        shown = (focus, *SUMMARY_RATERS) if focus else SUMMARY_RATERS
        with st.container(horizontal=True, gap="small"):
            for line in verdicts.verifiers + verdicts.references:
                if line.rater in shown:
                    label_badge(line.title, line.label, _short_verdict(line))


def _short_verdict(line: viewer.VerdictLine) -> str:
    if line.rater == "uv_process" and line.score is not None:
        return f"{line.text} (score {line.score:.2f})"
    return line.text


def hub_link(bench: Bench, task: pd.Series) -> None:
    """A link to this trajectory's row in the Hub dataset viewer (Hub sources only)."""
    source = bench.source
    if source.kind != "hub":
        return
    href = links.hub_viewer_href(source.location, str(task["split"]), int(task["row"]))
    st.link_button(
        "View in the Hub dataset viewer",
        href,
        icon=":material/open_in_new:",
        help="This trajectory's row on huggingface.co (opens a new tab).",
    )
