"""Streamlit pieces of the trajectory viewer (pages/4_Trajectory.py).

URL contract (`lib.links`): `?split=<split>&task=<task_id>&step=<k>`. `split` is the
sidebar's bound widget and is never written here; `task` and `step` go through
`ui.url` like every page's choices: a keyed widget is re-seeded from the URL only when
the URL changed from outside (a deep link, back/forward), so each step the user takes
is one history entry and Back works inside the page.

Memory and speed: images are read one at a time (`Bench.screenshot_png`), drawn once
and kept in bounded `st.cache_data` caches keyed by (source, split, task, step); the
step view is an `st.fragment`, so a step switch reruns only that part of the page.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from lib import images, viewer
from lib.data import Bench
from lib.schema import SPLIT_SHORT
from lib.trajlog import steps_table
from lib.verdicts import rater_title
from lib.vocab import reviewer_sort_key
from ui import fetch, safe_text, url

TASK_KEY = "viewer_task"
STEP_KEY = "viewer_step"
PREV_KEY = "viewer_prev"
NEXT_KEY = "viewer_next"
INFORMED_KEY = "viewer_informed"
SEARCH_KEY = "viewer_search"
STEPS_TABLE_KEY = "_viewer_steps_table"
ANY = "(any)"

LAYER_CACHE = 512
"""Action layers kept (transparent PNGs of about 10-30 kB each)."""
THUMB_CACHE = 400
"""Filmstrip thumbnails kept (about 10-30 kB each)."""

LABEL_COLOR = {1: "green", 0: "red", None: "gray"}


# ---------------------------------------------------------------------------
# Cached data


@st.cache_data(max_entries=2, show_spinner=False)
def catalog(_bench: Bench, spec: str) -> pd.DataFrame:
    """The picker's catalog of one source (`lib.viewer.build_catalog`)."""
    return viewer.build_catalog(_bench.tasks, _bench.annotations, _bench.verdicts)


@dataclass(frozen=True)
class StepImage:
    """What the image area of one step shows: a checked screenshot plus its action layer,
    or a placeholder and why."""

    problem: str | None
    layer: bytes | None = None
    placeholder: bytes | None = None


@st.cache_data(max_entries=LAYER_CACHE, show_spinner=False)
def step_image(
    _traj: viewer.Trajectory, _png: bytes | None, spec: str, split: str, task_id: str, position: int
) -> StepImage:
    """Check one step's screenshot and draw its action layer (cached, bounded, small).

    Keyed by (source, split, task, step); `_traj` and `_png` (that step's stored bytes,
    read once per render by the caller) are not hashed. The cache holds only the small
    layer and placeholder images, never the screenshot itself.
    """
    view = _traj.view(position)
    index = view.screenshot_index
    check = viewer.check_png(_png, index)
    if check.problem or check.size is None:
        problem = check.problem or "No screenshot."
        return StepImage(problem, placeholder=viewer.placeholder_png(problem))
    if check.size[0] * check.size[1] > images.MAX_PIXELS:  # never sent to st.image: it decodes
        problem = f"Screenshot {index} {images.too_large_reason(check.size)}."
        return StepImage(problem, placeholder=viewer.placeholder_png(problem))
    return StepImage(None, layer=viewer.action_layer(view.action, check.size))


@st.cache_data(max_entries=THUMB_CACHE, show_spinner=False)
def thumb(_bench: Bench, spec: str, split: str, task_id: str, row: int, index: int) -> bytes:
    """A filmstrip thumbnail of one screenshot (cached, bounded)."""
    return viewer.render_thumb(_bench.screenshot_png(split, row, index), index)


# ---------------------------------------------------------------------------
# Text


LONG_TEXT_PREVIEW = 3000
"""Characters of a dataset text shown before "… (N more characters)" and an expander: a
1 MB instruction made the page 1.3 million pixels tall."""


INLINE_MAX = 2000
"""Characters of a dataset value shown inline (a field, a badge, a caption) at most."""


def _md(value: object, max_chars: int = INLINE_MAX) -> str:
    """A dataset value as inert Markdown (`ui.safe_text.inert`); None/NaN/NA give ""."""
    return safe_text.inert(viewer.as_text(value), max_chars)


def text_block(label: str, value: object, empty: str = "(empty)") -> None:
    """A bold label and dataset text shown as plain text (never Markdown or HTML)."""
    text = viewer.as_text(value)
    st.markdown(f"**{label}**")
    if text.strip():
        safe_text.show_long_text(label, text, preview_chars=LONG_TEXT_PREVIEW)
    else:
        st.caption(empty)


def field_line(label: str, value: object) -> None:
    """`**label:** value` on one line, with the value escaped."""
    st.markdown(f"**{label}:** {_md(value)}")


def show_notices(notices: list[viewer.Notice]) -> None:
    for notice in notices:
        text = _md(notice.text)
        if notice.level == "warning":
            st.warning(text, icon=":material/link_off:")
        else:
            st.info(text, icon=":material/info:")


def label_badge(title: str, label: int | None, text: str) -> None:
    """A coloured badge `title: text` (green success, red failure, grey missing)."""
    st.badge(
        _md(f"{title}: {text}"),
        color=LABEL_COLOR.get(label, "gray"),
    )


# ---------------------------------------------------------------------------
# Choosing a trajectory


def search_box() -> str:
    """Free-text search over task ids and instructions."""
    return st.text_input(
        "Search",
        key=SEARCH_KEY,
        placeholder="task id or words of the instruction",
        help="Every word must occur in the task id or the instruction (case-insensitive).",
    )


def filter_controls(cat: pd.DataFrame, verifiers: list[str], query: str) -> viewer.TaskFilter:
    """The filters expander; returns the chosen TaskFilter (with the search `query`)."""
    with st.expander("Filters", icon=":material/filter_list:"):
        left, middle, right = st.columns(3)
        with left:
            disagree = st.selectbox(
                "Verifier disagrees with the humans",
                [ANY, *verifiers],
                format_func=lambda r: r if r == ANY else safe_text.plain(rater_title(r), 200),
                key="viewer_f_disagree",
                help="Keep tasks where this verifier's label differs from the final human "
                "label of the same dimension (outcome or process); both must be present.",
            )
            reviewers = sorted(
                {n for names in cat["reviewers"] for n in names.split(", ") if n},
                key=reviewer_sort_key,
            )
            reviewer = st.selectbox(
                "Reviewer",
                [ANY, *reviewers],
                key="viewer_f_reviewer",
                format_func=lambda r: safe_text.plain(r, 200),
            )
        with middle:
            outcome = st.selectbox(
                "Human outcome (final)",
                [ANY, *viewer.OUTCOME_CHOICES],
                key="viewer_f_outcome",
            )
            families = st.multiselect(
                "Site or task family",
                sorted(cat["family"].unique()),
                key="viewer_f_family",
                format_func=lambda f: safe_text.plain(f, 200),
            )
        with right:
            top = max(int(cat["n_actions"].max()) if len(cat) else 0, 1)
            low, high = st.slider("Number of actions", 0, top, (0, top), key="viewer_f_steps")
            shots = st.segmented_control(
                "Screenshots",
                viewer.SCREENSHOT_CHOICES,
                default="any",
                format_func={"any": "any", "with": "with", "without": "log only"}.get,
                key="viewer_f_shots",
            )
    return viewer.TaskFilter(
        query=query or "",
        disagree_with=None if disagree == ANY else disagree,
        reviewer=None if reviewer == ANY else reviewer,
        human_outcome=None if outcome == ANY else outcome,
        families=tuple(families),
        min_steps=low if low > 0 else None,
        max_steps=high if high < top else None,
        screenshots=shots or "any",
    )


TASK_CHANGED = "_viewer_task_changed"
TASK_NOTICE = "_viewer_task_notice"
STEP_NOTICE = "_viewer_step_notice"


def _on_task_change() -> None:
    st.session_state[STEP_KEY] = 0
    st.session_state[TASK_CHANGED] = True


TASK_LABEL_MAX = 160
"""Characters of a task's picker label (id and instruction) at most: a 1 MB instruction
must not become a 1 MB option."""


def task_picker(cat: pd.DataFrame, matches: pd.DataFrame, split_option: str) -> str | None:
    """The task selectbox, kept in sync with `?task=`; returns the task to show.

    The URL decides when it changed from outside (deep link, back/forward). The URL's
    task is offered even when it does not match the split or filters (it is then listed
    first), so a shared link never jumps elsewhere. Picking another task writes
    `task` and `step=0`; a corrected URL (unknown id) keeps its step.
    """
    asked = st.query_params.get("task")
    resolved, notices = viewer.resolve_task(cat, asked, split_option, matches["task_id"].tolist())
    if resolved is None:
        st.info("There are no trajectories in this data.")
        return None
    if url.changed("task", TASK_KEY):
        st.session_state[TASK_KEY] = resolved
        st.session_state[TASK_NOTICE] = (resolved, notices)
    known = set(cat["task_id"])
    if st.session_state[TASK_KEY] not in known:
        st.session_state[TASK_KEY] = resolved
    current = st.session_state[TASK_KEY]
    matching = set(matches["task_id"])
    options = matches["task_id"].tolist()
    if current not in matching:
        options = [current, *options]
    labels = dict(zip(cat["task_id"], cat["label"], strict=True))
    off = " (outside the chosen split or filters)"
    st.selectbox(
        f"Task ({len(matches)} of {len(cat)} match)",
        options,
        key=TASK_KEY,
        format_func=lambda t: (
            safe_text.plain(labels[t], TASK_LABEL_MAX) + ("" if t in matching else off)
        ),
        on_change=_on_task_change,
        help="Type to search the list. The search box and the filters narrow it.",
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
    return chosen


# ---------------------------------------------------------------------------
# Task header


def task_header(task: pd.Series, traj: viewer.Trajectory, verdicts: viewer.TaskVerdicts) -> None:
    """Instruction, start URL, final answer with its flags, and the verdicts at a glance."""
    split = str(task["split"])
    started = viewer.as_text(task.get("start_timestamp")) or "unknown"
    st.caption(
        _md(
            f"Split {SPLIT_SHORT.get(split, split)} ({split}) · {traj.parsed.n_actions} "
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
    with st.container(horizontal=True, gap="small"):
        for line in verdicts.verifiers + verdicts.references:
            if line.rater in ("uv_outcome_success", "final_human_outcome_label", "uv_process"):
                label_badge(line.title, line.label, _short_verdict(line))


def _short_verdict(line: viewer.VerdictLine) -> str:
    if line.rater == "uv_process" and line.score is not None:
        return f"{line.text} (score {line.score:.2f})"
    return line.text


# ---------------------------------------------------------------------------
# Step view


def _go(step: int) -> None:
    st.session_state[STEP_KEY] = step


def _shift(by: int, last: int) -> None:
    st.session_state[STEP_KEY] = min(max(int(st.session_state.get(STEP_KEY, 0)) + by, 0), last)


def synced_step(traj: viewer.Trajectory) -> int:
    """The step shown, seeded from `?step=` when the URL changed from outside."""
    asked = st.query_params.get("step")
    step, notice = viewer.resolve_step(asked, traj.n_positions)
    if url.changed("step", STEP_KEY):
        st.session_state[STEP_KEY] = step
        st.session_state[STEP_NOTICE] = (traj.task_id, step, notice)
    last = traj.n_positions - 1
    current = min(max(int(st.session_state[STEP_KEY]), 0), last)
    st.session_state[STEP_KEY] = current
    return current


def step_nav(last: int) -> None:
    """Previous / Next (also the Left / Right arrow keys) and a slider over all steps."""
    step = int(st.session_state[STEP_KEY])
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        st.button(
            "Previous",
            key=PREV_KEY,
            icon=":material/chevron_left:",
            on_click=_shift,
            args=(-1, last),
            disabled=step <= 0,
            shortcut="Left",
        )
        st.button(
            "Next",
            key=NEXT_KEY,
            icon=":material/chevron_right:",
            icon_position="right",
            on_click=_shift,
            args=(1, last),
            disabled=step >= last,
            shortcut="Right",
        )
        if last > 0:
            st.slider("Step", 0, last, key=STEP_KEY, label_visibility="collapsed")


@st.fragment
def step_view(bench: Bench, spec: str, traj: viewer.Trajectory) -> None:
    """Navigation, the image with the action drawn, the step's details and a filmstrip.

    A fragment: buttons, slider and filmstrip rerun only this function, not the page.
    Without screenshots (log-only) the details take the image's place.
    """
    synced_step(traj)
    last = traj.n_positions - 1
    step_nav(last)
    step = int(st.session_state[STEP_KEY])
    url.write("step", STEP_KEY, str(step))  # every step: one history entry each
    view = traj.view(step)
    notice = st.session_state.get(STEP_NOTICE)
    if notice and notice[2] is not None and notice[:2] == (traj.task_id, step):
        show_notices([notice[2]])
    st.caption(_md(viewer.step_caption(view, traj.n_positions)))
    # screenshots fetched (Hub) before drawing; on failure: details only, no thumbnails
    # (they would cache placeholders), and ui.fetch shows why with a Retry button
    shots_ok = traj.log_only or fetch.ensure_screenshots(
        bench, traj.split, traj.row, traj.n_screenshots
    )
    if traj.log_only or not shots_ok:
        with st.container(border=True):
            step_details(view)
    else:
        image_col, detail_col = st.columns([2, 1], gap="medium")
        with image_col:
            show_step_image(bench, spec, traj, step)
        with detail_col:
            step_details(view)
    if shots_ok:
        filmstrip(bench, spec, traj, step)


SHOT_CSS = """<style>
.st-key-viewer_shot { position: relative; }
.st-key-viewer_shot_layer {
  position: absolute; top: 0; left: 0; width: 100%; pointer-events: none; z-index: 1;
}
</style>"""
"""Lays the action layer exactly over the screenshot (both are stretched to one width)."""


def shot_style() -> None:
    """Once per page run: the CSS that stacks the action layer on the screenshot."""
    st.html(SHOT_CSS)


def show_step_image(bench: Bench, spec: str, traj: viewer.Trajectory, step: int) -> None:
    """The stored screenshot untouched, with the action layer on top; or a placeholder."""
    view = traj.view(step)
    index = view.screenshot_index
    png = None if index is None else bench.screenshot_png(traj.split, traj.row, index)
    image = step_image(traj, png, spec, traj.split, traj.task_id, step)
    if image.problem:
        st.warning(_md(image.problem), icon=":material/broken_image:")
        if image.placeholder:
            st.image(image.placeholder, output_format="PNG", width="stretch")
        return
    with st.container(key="viewer_shot", gap=None):
        with st.container(key="viewer_shot_base", gap=None):
            st.image(png, output_format="PNG", width="stretch")
        if image.layer is not None:
            with st.container(key="viewer_shot_layer", gap=None):
                st.image(image.layer, output_format="PNG", width="stretch")
    _downloads(bench, traj, step, view.screenshot_index)


def _downloads(bench: Bench, traj: viewer.Trajectory, step: int, index: int) -> None:
    """Download buttons; the bytes are produced only when clicked."""
    name = f"{traj.task_id}_step{step}"

    def original() -> bytes:
        return bench.screenshot_png(traj.split, traj.row, index) or b""

    def drawn() -> bytes:
        return viewer.drawn_png(original(), traj.view(step).action, index)

    with st.container(horizontal=True, gap="small"):
        st.download_button(
            "Screenshot (PNG)",
            original,
            file_name=f"{name}.png",
            mime="image/png",
            icon=":material/download:",
            on_click="ignore",
            key="viewer_dl_original",
        )
        st.download_button(
            "With the action drawn (PNG)",
            drawn,
            file_name=f"{name}_action.png",
            mime="image/png",
            icon=":material/download:",
            on_click="ignore",
            key="viewer_dl_overlay",
        )
        st.caption(
            "Full size: hover the screenshot and use its fullscreen button (the plain "
            "screenshot), or download it."
        )


def filmstrip(bench: Bench, spec: str, traj: viewer.Trajectory, step: int) -> None:
    """A window of thumbnails around the current step, each with a button to jump there."""
    window = viewer.filmstrip_window(step, traj.n_positions)
    if len(window) <= 1:
        return
    cols = st.columns(viewer.FILMSTRIP_SIZE, gap="small")
    for col, position in zip(cols, window, strict=False):
        view = traj.views[position]
        with col:
            if view.screenshot_index is not None:
                st.image(
                    thumb(bench, spec, traj.split, traj.task_id, traj.row, view.screenshot_index),
                    output_format="PNG",
                    width="stretch",
                )
            tool = view.action.tool if view.action else "end" if position else "start"
            st.button(
                f"{position} · {_md(tool, 40)}",  # a button label is Markdown
                key=f"viewer_film_{position}",
                on_click=_go,
                args=(position,),
                type="primary" if position == step else "secondary",
                width="stretch",
                help=_md(viewer.step_caption(view, traj.n_positions)),
            )


def step_details(view) -> None:
    """Beside the image: the action, its arguments, thoughts, page URL and time."""
    action = view.action
    if action is None:
        st.markdown("**No action at this step**")
        st.caption(
            "This screenshot shows the page after the agent's last action."
            if view.screenshot_index
            else "The log has no action for this step."
        )
        return
    fields = viewer.step_fields(action)
    st.markdown(f"**Action {action.index}:** {_md(fields['summary'])}")
    if action.is_alias:
        st.caption(_md(f"Logged as {action.raw_tool} (an older name)."))
    text_block("Thoughts", action.thoughts, empty="(no thoughts logged)")
    st.markdown("**Page URL**")
    if action.url:
        st.code(safe_text.plain(action.url, INLINE_MAX), language=None, wrap_lines=True)
        if action.url_source == "tracked":
            st.caption("Not logged for this step: the last URL known from an earlier step.")
    else:
        st.caption("(not logged)")
    if action.timestamp:
        field_line("Time", action.timestamp)
    st.markdown("**Arguments**")
    st.json(action.arguments or {}, expanded=True)
    for problem in action.problems:
        st.warning(_md(problem), icon=":material/warning:")


def steps_table_section(traj: viewer.Trajectory) -> None:
    """All steps in one table; selecting a row jumps to that step."""
    table = steps_table(traj.parsed)
    if table.empty:
        st.caption("The log holds no action.")
        return
    counter = st.session_state.get(STEPS_TABLE_KEY, 0)
    key = f"viewer_steps_{counter}"

    def jump() -> None:
        rows = st.session_state[key].selection.rows
        if rows:
            st.session_state[STEP_KEY] = int(table["step"].iloc[rows[0]])
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


# ---------------------------------------------------------------------------
# Verdicts


def verdict_row(line: viewer.VerdictLine) -> None:
    """`Title  [badge]  score 0.53` on one line."""
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        st.markdown(_md(line.title), width="content")
        st.badge(_md(line.text), color=LABEL_COLOR.get(line.label, "gray"))
        if line.score is not None:
            st.caption(f"score {line.score:.2f}", width="content")


def verifiers_section(verdicts: viewer.TaskVerdicts, split: str) -> None:
    """Every verifier's verdict (uploads included), the rubric score against its threshold,
    and the text behind `gpt_eval_json` (om2w judge or the Universal Verifier's rubric)."""
    st.subheader("Verifiers")
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


def _points(value: float | None) -> str:
    return "?" if value is None else f"{value:g}"


def _rubric(rubric: viewer.RubricView) -> None:
    """The Universal Verifier's rubric: one card per criterion, then its outcome reasoning."""
    total = f"{_points(rubric.total_earned)} of {_points(rubric.total_max)} points"
    with st.expander(f"Universal Verifier rubric: {total}", expanded=True):
        for item in rubric.items:
            with st.container(horizontal=True, vertical_alignment="center", gap="small"):
                st.markdown(f"**{_md(item.criterion, 300)}**", width="content")
                full = item.earned is not None and item.earned == item.max_points
                none = not item.earned
                color = "green" if full else "red" if none else "orange"
                st.badge(f"{_points(item.earned)} / {_points(item.max_points)}", color=color)
            if item.description:
                st.caption(_md(item.description))
            if item.justification:
                safe_text.show_long_text("Justification", item.justification)
        if not rubric.items:
            st.caption("The rubric lists no criteria.")
        outcome = {True: "success", False: "failure", None: "not given"}[rubric.outcome_success]
        field_line("Outcome verdict in the rubric output", outcome)
        if rubric.primary_intent:
            text_block("Primary intent", rubric.primary_intent)
        text_block("Outcome reasoning", rubric.outcome_reasoning, empty="(none given)")


INFORMED_CAPTION = (
    "Informed stage: whether each reviewer agrees with the Universal Verifier's verdict they "
    "were shown (outcome; process = rubric score ≥ 0.8), and the label that implies: the "
    "shown verdict if they agree, its opposite if they disagree, none otherwise."
)


def humans_section(verdicts: viewer.TaskVerdicts, split: str) -> None:
    """Task-level human labels, then each reviewer's blind labels and comments; the
    informed stage only behind a toggle that is off by default."""
    st.subheader("Humans")
    for line in verdicts.references:
        verdict_row(line)
    st.caption(
        "Score of the final process label: the median of the reviewers' blind process "
        "scores. A 1:1 tie of the blind reviewers is stored as failure in the majority."
    )
    informed = st.toggle(
        "Show the informed stage",
        value=False,
        key=INFORMED_KEY,
        disabled=not verdicts.has_informed,
        help="Off by default, so you can first judge the run as the blind reviewers did. "
        "In the informed stage reviewers saw the Universal Verifier's verdict and said "
        "whether they agree.",
    )
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
