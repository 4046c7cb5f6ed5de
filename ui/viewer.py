"""Streamlit pieces of the trajectory viewer (pages/4_Trajectory.py).

URL contract (`lib.links`): `?split=<split>&task=<task_id>&step=<k>`, plus the picker's
search (`q`), filters (`disagree`, `reviewer`, `outcome`, `family`, `actions`, `shots`)
and `informed=1`, so a shared link opens exactly the view meant. `split` is the
sidebar's bound widget and is never written here; the others go through `ui.url` (the
URL wins only when it changed from outside: a deep link, Back/forward).

Stepping happens in the browser (`ui.stepper`): the page hands the component the
trajectory once (steps and screenshot URLs) and the component writes `step=` itself,
with no server run. The server reads `step=` only to open a trajectory at that step.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from lib import images, links, viewer
from lib.data import Bench
from lib.schema import SPLIT_SHORT
from lib.trajlog import steps_table
from lib.verdicts import rater_title
from lib.vocab import reviewer_sort_key
from ui import fetch, params, safe_text, state, url
from ui.stepper import stepper

TASK_KEY = "viewer_task"
INFORMED_KEY = params.VIEWER_INFORMED.key
SEARCH_KEY = params.VIEWER_SEARCH.key
STEPS_TABLE_KEY = "_viewer_steps_table"
ANY = "(any)"

LABEL_COLOR = {1: "green", 0: "red", None: "gray"}


# ---------------------------------------------------------------------------
# Cached data


@state.bounded_cache(2, 128 * state.MB)
def catalog(_bench: Bench, spec: str) -> pd.DataFrame:
    """The picker's catalog of one source (`lib.viewer.build_catalog`)."""
    return viewer.build_catalog(_bench.tasks, _bench.annotations, _bench.verdicts)


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


SEARCH_MAX = 300
"""Characters of a search taken from a link at most."""

FILTER_PARAMS = {p.name: p.key for p in params.VIEWER_FILTERS}
"""URL parameter -> widget key of each filter (`ui.url`)."""


def show_unusable(asked: dict[str, str | None]) -> None:
    """Say which filter values of a link are not offered here (those filters are off)."""
    for name, value in asked.items():
        if value is not None:
            st.warning(
                f"The link's {name} **{safe_text.inert(value, 300)}** is not offered here; "
                "that filter is off.",
                icon=":material/link_off:",
            )


def search_box() -> str:
    """Free-text search over task ids and instructions, kept in `?q=`."""
    asked = url.read("q", SEARCH_KEY, lambda v: len(v) <= SEARCH_MAX, "")
    url.explain("search", asked, "all tasks", why=f"longer than {SEARCH_MAX} characters")
    query = st.text_input(
        "Search",
        key=SEARCH_KEY,
        placeholder="task id or words of the instruction",
        help="Every word must occur in the task id or the instruction (case-insensitive).",
    )
    url.write("q", SEARCH_KEY, query, default="")
    if asked is not None:
        st.caption(f"The link's search is longer than {SEARCH_MAX} characters; it is off.")
    return query


def _range_parser(top: int):
    def parse(value: str) -> tuple[int, int]:
        low, high = (int(v) for v in value.split("-", 1))
        return low, high

    def valid(value: str) -> bool:
        try:
            low, high = parse(value)
        except ValueError:
            return False
        return 0 <= low <= high <= top

    return parse, valid


def filter_controls(
    cat: pd.DataFrame, verifiers: list[str], query: str
) -> tuple[viewer.TaskFilter, dict[str, str | None]]:
    """The filters popover, each filter kept in the URL.

    Returns the chosen TaskFilter and the link's values that could not be used (for
    `show_unusable`, below the pickers rather than inside the narrow column).
    """
    reviewers = sorted(
        {n for names in cat["reviewers"] for n in names.split(", ") if n},
        key=reviewer_sort_key,
    )
    family_options = sorted(cat["family"].unique())
    top = max(int(cat["n_actions"].max()) if len(cat) else 0, 1)
    parse_range, valid_range = _range_parser(top)
    keys = FILTER_PARAMS
    asked = {
        "disagree": url.read("disagree", keys["disagree"], verifiers, ANY),
        "reviewer": url.read("reviewer", keys["reviewer"], reviewers, ANY),
        "outcome": url.read("outcome", keys["outcome"], viewer.OUTCOME_CHOICES, ANY),
        "family": url.read(
            "family",
            keys["family"],
            lambda v: all(f in family_options for f in v.split(",")),
            [],
            parse=lambda v: v.split(","),
        ),
        "actions": url.read("actions", keys["actions"], valid_range, (0, top), parse=parse_range),
        "shots": url.read("shots", keys["shots"], viewer.SCREENSHOT_CHOICES, "any"),
    }
    low_high = st.session_state.get(keys["actions"])
    if not (isinstance(low_high, tuple | list) and valid_range(f"{low_high[0]}-{low_high[1]}")):
        st.session_state[keys["actions"]] = (0, top)  # another source: other bounds
    with st.popover("Filters", icon=":material/filter_list:", width="stretch"):
        left, middle, right = st.columns(3)
        with left:
            disagree = st.selectbox(
                "Verifier disagrees with the humans",
                [ANY, *verifiers],
                format_func=lambda r: r if r == ANY else safe_text.plain(rater_title(r), 200),
                key=keys["disagree"],
                help="Keep tasks where this verifier's label differs from the final human "
                "label of the same dimension (outcome or process); both must be present.",
            )
            reviewer = st.selectbox(
                "Reviewer",
                [ANY, *reviewers],
                key=keys["reviewer"],
                format_func=lambda r: safe_text.plain(r, 200),
            )
        with middle:
            outcome = st.selectbox(
                "Human outcome (final)",
                [ANY, *viewer.OUTCOME_CHOICES],
                key=keys["outcome"],
            )
            families = st.multiselect(
                "Site or task family",
                family_options,
                key=keys["family"],
                format_func=lambda f: safe_text.plain(f, 200),
            )
        with right:
            low, high = st.slider("Number of actions", 0, top, key=keys["actions"])
            shots = st.segmented_control(
                "Screenshots",
                viewer.SCREENSHOT_CHOICES,
                format_func={"any": "any", "with": "with", "without": "log only"}.get,
                key=keys["shots"],
            )
    url.write("disagree", keys["disagree"], disagree, default=ANY)
    url.write("reviewer", keys["reviewer"], reviewer, default=ANY)
    url.write("outcome", keys["outcome"], outcome, default=ANY)
    url.write("family", keys["family"], ",".join(families), default="")
    url.write("actions", keys["actions"], f"{low}-{high}", default=f"0-{top}")
    url.write("shots", keys["shots"], shots or "any", default="any")
    chosen = viewer.TaskFilter(
        query=query or "",
        disagree_with=None if disagree == ANY else disagree,
        reviewer=None if reviewer == ANY else reviewer,
        human_outcome=None if outcome == ANY else outcome,
        families=tuple(families),
        min_steps=low if low > 0 else None,
        max_steps=high if high < top else None,
        screenshots=shots or "any",
    )
    return chosen, asked


TASK_CHANGED = "_viewer_task_changed"
TASK_NOTICE = "_viewer_task_notice"


def _on_task_change() -> None:
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
    if chosen not in matching:
        st.warning(
            f"This task is outside the chosen split or filters ({len(matches)} of "
            f"{len(cat)} tasks match). It is shown because the link or your earlier choice "
            "named it; pick a task from the list to stay inside the filters.",
            icon=":material/filter_alt_off:",
        )
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
# Step view: the in-browser stepper


STEP_NOTICE_SEEN = "_viewer_step_notice_seen"
JUMP_KEY = "_viewer_jump"
MEDIA_BYTES_MAX = 40_000_000
"""Screenshot bytes one trajectory may register as media files at most (a real trajectory
holds about 5-10 MB; the server keeps a session's registered files in memory until its
next run, shared between sessions showing the same bytes); later screenshots are named as
not loaded instead of growing the server's memory."""


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


def trajectory_media(
    bench: Bench, traj: viewer.Trajectory
) -> tuple[list[str | None], list[str | None], list[str | None]]:
    """Screenshot URLs (served by Streamlit's media file manager, as `st.image` does),
    why any is missing, and the filmstrip's URLs.

    The one place the viewer reads screenshot bytes (`bench.screenshot_png`): the
    browser fetches each URL once and caches it; the page hands over URLs, never bytes.
    Media files are per session and re-registered on each run (same bytes, same URL).
    """
    manager = _media_manager()
    urls: list[str | None] = []
    problems: list[str | None] = []
    total = 0
    for index in range(traj.n_screenshots):
        png = bench.screenshot_png(traj.split, traj.row, index)
        check = viewer.check_png(png, index)
        problem = check.problem
        if problem is None and check.size and check.size[0] * check.size[1] > images.MAX_PIXELS:
            problem = f"Screenshot {index} {images.too_large_reason(check.size)}."
        if problem is None and png and total + len(png) > MEDIA_BYTES_MAX:
            problem = f"Screenshot {index} is not loaded: this trajectory's screenshots exceed "
            problem += f"{MEDIA_BYTES_MAX // 1_000_000} MB."
        if problem is not None or not png or manager is None:
            urls.append(None)
            problems.append(problem or "No screenshot.")
            continue
        total += len(png)
        mime = _mime(png)
        urls.append(manager.add(png, mime, f"viewer.shot.{index}"))
        problems.append(None)
    return urls, problems, _thumb_urls(bench, traj, urls, manager)


def _thumb_urls(bench: Bench, traj: viewer.Trajectory, urls: list[str | None], manager) -> list:
    """The filmstrip's URLs: the 200 px thumbnail the fetch worker cached beside the PNGs
    (`bench.thumbnail_png`), else the full screenshot (not fetched or made yet)."""
    thumbs: list[str | None] = []
    for index, full in enumerate(urls):
        png = bench.thumbnail_png(traj.split, traj.row, index) if full else None
        if png and viewer.check_png(png, index).problem is None:
            thumbs.append(manager.add(png, _mime(png), f"viewer.thumb.{index}"))
        else:
            thumbs.append(full)
    return thumbs


def _mime(data: bytes) -> str:
    if data[:3] == b"\xff\xd8\xff":
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    return "image/png"


def _media_manager():
    from streamlit import runtime

    return runtime.get_instance().media_file_mgr if runtime.exists() else None


def step_view(bench: Bench, traj: viewer.Trajectory) -> None:
    """The stepper: screenshot with the action drawn, details, filmstrip, all in the browser.

    Screenshots are fetched first when the source is the Hub (`ui.fetch` shows progress
    and, on failure, why with a Retry button); the steps are still shown without them.
    """
    step = opening_step(traj)
    shots_ok = traj.log_only or fetch.ensure_screenshots(
        bench, traj.split, traj.row, traj.n_screenshots
    )
    if shots_ok and not traj.log_only:
        shots, problems, thumbs = trajectory_media(bench, traj)
    else:
        shots = problems = thumbs = []
    jump = st.session_state.get(JUMP_KEY)
    jump = jump[1:] if jump and jump[0] == traj.task_id else None
    stepper(viewer.stepper_data(traj, step, shots, problems, thumbs, jump))
    if shots_ok and not traj.log_only:
        path = fetch.fetch_path(bench, traj.split, traj.row)
        if path:
            st.caption(f"Screenshots obtained by: {safe_text.inert(path, 300)}")


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
            step = int(table["step"].iloc[rows[0]])
            st.session_state[JUMP_KEY] = (traj.task_id, counter + 1, step)
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
