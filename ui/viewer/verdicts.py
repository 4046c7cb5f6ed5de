"""Every verdict on one task: verifiers (with the rubric or the judge's text), humans
(blind, and the informed stage behind a toggle kept in `?informed=`)."""

from __future__ import annotations

import streamlit as st

from lib import viewer
from lib.table.gpt_eval import parse_gpt_eval
from lib.uploads.predictions import display_name
from ui import params, safe_text, url
from ui.state import SCORE_FILES_KEY, UPLOADS_KEY
from ui.viewer.text import LABEL_COLOR, LONG_TEXT_PREVIEW, _md, field_line, label_badge, text_block

INFORMED_KEY = params.VIEWER_INFORMED.key


def verdict_row(line: viewer.VerdictLine) -> None:
    """`Title  [badge]  score 0.53` on one line."""
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        st.markdown(_md(line.title), width="content")
        st.badge(_md(line.text), color=LABEL_COLOR.get(line.label, "gray"))
        if line.score is not None:
            st.caption(f"score {line.score:.2f}", width="content")


def verifiers_section(
    verdicts: viewer.TaskVerdicts, split: str, task_id: str | None = None
) -> None:
    """Every verifier's verdict (uploads included), the rubric score against its threshold,
    and the text behind `gpt_eval_json` (om2w judge or the Universal Verifier's rubric);
    then the rubric of each verifier uploaded as score files that scored `task_id`."""
    st.header("Verifiers")
    for line in verdicts.verifiers:
        verdict_row(line)
    field_line("Universal Verifier rubric score", verdicts.uv_score_text())
    gpt = verdicts.gpt
    if gpt.problem:
        st.warning(_md(f"gpt_eval_json: {gpt.problem}"))
    if verdicts.rubric is not None:
        _rubric(verdicts.rubric)
    elif gpt.text:
        status = gpt.status or "no Status line"
        score = "not evaluated" if gpt.score is None else f"{gpt.score:g}"
        title = f"Online-Mind2Web judge's text (status: {status}, score: {score})"
        st.markdown(f"**{_md(title)}**")
        safe_text.show_long_text("Judge's text", gpt.text, preview_chars=LONG_TEXT_PREVIEW)
    else:
        st.caption("gpt_eval_json: not evaluated or empty.")
    if task_id is not None:
        uploaded_rubrics(task_id)


def uploaded_rubrics(task_id: str) -> None:
    """The rubric card of every verifier uploaded as score files, for this task: the same
    reader (`parse_gpt_eval`) and card as the Universal Verifier's."""
    kept = st.session_state.get(SCORE_FILES_KEY) or {}
    uploaded = st.session_state.get(UPLOADS_KEY)
    loaded = set() if uploaded is None else set(uploaded["rater"])
    for rater, cells in kept.items():
        cell = cells.get(task_id) if rater in loaded else None
        if cell is None:
            continue
        gpt = parse_gpt_eval(cell)
        name = f"{display_name(rater)} (yours)"
        if gpt.problem:
            st.warning(_md(f"{name}: {gpt.problem}"))
        rubric = viewer.parse_rubric(gpt)
        if rubric is not None:
            _rubric(rubric, name)


def _points(value: float | None) -> str:
    return "?" if value is None else f"{value:g}"


CHANGE_BADGE = {
    "lowered": ("lowered by the screenshots", "red", ":material/arrow_downward:"),
    "raised": ("raised by the screenshots", "blue", ":material/arrow_upward:"),
}


def passes_caption(rubric: viewer.RubricView) -> str:
    """What the card's points are, built from the rubric it describes."""
    n = len(rubric.items)
    if rubric.passes == "one":
        return (
            "Only one pass is recorded for this task: the points are the verifier's first "
            "pass, from the agent's actions and answer only (no screenshot-grounded points)."
        )
    lowered, raised = len(rubric.lowered), len(rubric.raised)
    changed = (
        f"The screenshots lowered {lowered} and raised {raised} of the {n} criteria."
        if lowered or raised
        else f"The screenshots changed none of the {n} criteria."
    )
    lead = (
        "Each criterion was scored twice: from the agent's actions and answer only, then "
        "grounded in the screenshots. The points shown (action-only → screenshots) are the "
        "screenshot-grounded ones, as in the verifier's total."
    )
    if rubric.passes == "mixed":
        with_post = sum(i.has_post for i in rubric.items)
        lead += (
            f" Only {with_post} of the {n} criteria have the screenshot pass; the others "
            "show their one (action-only) pass."
        )
    return f"{lead} {changed}"


def total_note(rubric: viewer.RubricView) -> str | None:
    """When the score file's own total differs from the criteria's sum, say both."""
    shown, recorded = rubric.shown_total, rubric.total_earned
    if recorded is None or shown is None or abs(shown - recorded) <= 1e-6:
        return None
    return (
        f"The score file's total is {recorded:g} points; its criteria add up to {shown:g} "
        "(shown above)."
    )


def _rubric(rubric: viewer.RubricView, who: str = "Universal Verifier") -> None:
    """A verifier's rubric (the Universal Verifier's, or an uploaded one's): one card per
    criterion with both passes, then its outcome reasoning. The total in the title is the
    sum of the points shown."""
    shown = rubric.shown_total if rubric.items else rubric.total_earned
    total = f"{_points(shown)} of {_points(rubric.shown_max)} points"
    which = {"two": "screenshot-grounded", "mixed": "screenshot-grounded where recorded"}
    title = f"{who} rubric: {total} ({which.get(rubric.passes, 'one pass')})"
    with st.expander(title, expanded=True):
        if rubric.items:
            st.caption(passes_caption(rubric))
        note = total_note(rubric)
        if note:
            st.caption(note)
        if rubric.n_items_in_data > len(rubric.items):
            st.caption(
                f"The rubric lists {rubric.n_items_in_data:,} criteria; the first "
                f"{len(rubric.items):,} readable ones are shown."
            )
        for item in rubric.items:
            _criterion(item)
        if not rubric.items:
            st.caption("The rubric lists no criteria.")
        outcome = {True: "success", False: "failure", None: "not given"}[rubric.outcome_success]
        field_line("Outcome verdict in the rubric output", outcome)
        if rubric.primary_intent:
            text_block("Primary intent", rubric.primary_intent)
        text_block("Outcome reasoning", rubric.outcome_reasoning, empty="(none given)")


def points_badge(item: viewer.RubricItem) -> str:
    """`2 → 1 of 2 points` (both passes) or `2 of 2 points` (one pass)."""
    of = f"of {_points(item.max_points)} points"
    if item.has_post:
        return f"actions {_points(item.earned)} → screenshots {_points(item.post_earned)} {of}"
    return f"{_points(item.earned)} {of}"


def _criterion(item: viewer.RubricItem) -> None:
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        st.markdown(f"**{_md(item.criterion, 300)}**", width="content")
        points = item.points
        full = points is not None and points == item.max_points
        color = "green" if full else "red" if not points else "orange"
        st.badge(points_badge(item), color=color)
        if item.change in CHANGE_BADGE:
            words, badge_color, icon = CHANGE_BADGE[item.change]
            st.badge(words, color=badge_color, icon=icon)
    if item.description:
        st.caption(_md(item.description))
    if not item.has_post:
        if item.justification:
            text_block("Justification", item.justification)
        _notes(item)
        return
    text_block(
        "Justification, grounded in the screenshots", item.post_justification, empty="(none given)"
    )
    # the first pass is the contrast worth reading where the screenshots changed the points
    changed = item.change in CHANGE_BADGE
    with st.expander("First pass (actions only), reality notes, evidence", expanded=changed):
        text_block("Justification, actions only", item.justification, empty="(none given)")
        _notes(item)


def _notes(item: viewer.RubricItem) -> None:
    if item.reality_notes:
        text_block("Reality notes", item.reality_notes)
    if item.applicable_evidence:
        text_block("Applicable evidence", item.applicable_evidence)


INFORMED_CAPTION = (
    "Informed stage: whether each reviewer agrees with the Universal Verifier's verdict they "
    "were shown (outcome; process = rubric score ≥ 0.8), and the label that implies: the "
    "shown verdict if they agree, its opposite if they disagree, none otherwise."
)


def humans_section(verdicts: viewer.TaskVerdicts, split: str) -> None:
    """Task-level human labels, then each reviewer's blind labels and comments; the
    informed stage only behind a toggle that is off by default."""
    st.header("Humans")
    for line in verdicts.references:
        verdict_row(line)
    st.caption(
        "Score of the final process label: the median of the reviewers' blind process "
        "scores. A 1:1 tie of the blind reviewers is stored as failure in the majority."
    )
    asked = url.read("informed", INFORMED_KEY, ("1",), False, parse=lambda v: True)
    url.explain("the informed stage", asked, "blind stage only", why="only informed=1 shows it")
    informed = st.toggle(
        "Show the informed stage",
        key=INFORMED_KEY,
        disabled=not verdicts.has_informed,
        help="Off by default, so you can first judge the run as the blind reviewers did. "
        "In the informed stage reviewers saw the Universal Verifier's verdict and said "
        "whether they agree.",
    )
    url.write("informed", INFORMED_KEY, "1" if informed else "0", default="0")
    if not verdicts.has_informed:
        st.caption("This split was reviewed in the blind stage only.")
    elif informed:
        st.caption(INFORMED_CAPTION)
    if not verdicts.reviews:
        st.caption("No reviewer rows for this task.")
    for card in verdicts.reviews:
        _review(card, informed)


def _review(card: viewer.ReviewCard, informed: bool) -> None:
    with st.container(border=True):
        st.markdown(f"**{_md(card.annotator, 200)}** (blind stage)")
        with st.container(horizontal=True, gap="small"):
            label_badge(
                "outcome",
                card.outcome_label,
                viewer.label_text(card.outcome_label, card.outcome_raw),
            )
            label_badge(
                "process",
                card.process_label,
                viewer.label_text(card.process_label, card.process_raw),
            )
            score = "missing" if card.process_score is None else f"{card.process_score:.2f}"
            st.badge(f"process score {score}", color="gray")
        text_block("Outcome comment", card.outcome_comment, empty="(no comment)")
        if card.process_comment.strip():
            text_block("Process comment", card.process_comment)
        if informed and card.informed is not None:
            stage = card.informed
            st.markdown("**Informed stage** (after seeing the Universal Verifier's verdict)")
            with st.container(horizontal=True, gap="small"):
                for dim, agreement, label in (
                    ("outcome", stage.outcome_agreement, stage.outcome_label),
                    ("process", stage.process_agreement, stage.process_label),
                ):
                    held = "" if label is None else f" → {viewer.label_text(label)}"
                    label_badge(dim, label, f"{agreement}{held}")
            for dim, comment in (
                ("Outcome", stage.outcome_comment),
                ("Process", stage.process_comment),
            ):
                if comment.strip():
                    text_block(f"{dim} comment (informed)", comment)
