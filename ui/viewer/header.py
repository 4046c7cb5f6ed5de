"""The task header: instruction, start URL, final answer, verdict badges, the Hub link."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from lib import viewer
from lib.data.load import Bench
from lib.viewer import links
from lib.vocab import short_split
from ui import safe_text
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


def task_summary(task: pd.Series, verdicts: viewer.TaskVerdicts) -> None:
    """The instruction's first words and the verdicts at a glance, above the stepper, so
    that the first screen (1400 x 900) shows what the agent was asked and who judged what
    beside the screenshot (issue 30: they were at y ~ 1,280 and ~ 1,500 px)."""
    text = viewer.as_text(task.get("instruction")).strip()
    more = " *(all of it below)*" if len(text) > SUMMARY_CHARS else ""
    with st.container(key="viewer_summary", gap="small"):
        st.markdown(f"**Instruction:** {_md(text, SUMMARY_CHARS) or '(empty)'}{more}")
        with st.container(horizontal=True, gap="small"):
            for line in verdicts.verifiers + verdicts.references:
                if line.rater in SUMMARY_RATERS:
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
