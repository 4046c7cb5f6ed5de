"""The Inside the verifier page's sections: what the screenshots bought (the Universal
Verifier's two passes against the humans) and process against outcome (the 2x2 quadrants).

Wording and display tables live here; the numbers come from `lib.analysis.two_pass` and
`lib.analysis.quadrant`. Every caption is built from the result it describes.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from lib.analysis import quadrant as Q
from lib.analysis import two_pass as T
from lib.analysis.shares import Share
from lib.charts import quadrant as charts
from lib.table.verdicts import rater_title
from lib.uploads import score_files
from lib.uploads.predictions import display_name
from lib.viewer.links import viewer_href
from lib.vocab import UV_THRESHOLD, Bootstrap
from ui import fmt, state, vega
from ui.download import csv_download
from ui.safe_text import inert, plain
from ui.state import SCORE_FILES_KEY

TITLE = "Inside the verifier"
METRIC_WORDS = {"kappa": "Cohen's kappa", "accuracy": "accuracy", "fpr": "FPR (false passes)"}
GROUP_WORDS = {
    T.LOWERED: "lowered (a criterion lost points)",
    T.RAISED: "raised (a criterion gained points)",
    T.UNCHANGED: "unchanged",
    T.ALL_TASKS: "all tasks with both passes",
}
LINK = st.column_config.LinkColumn(
    "task", display_text=r"task=([^&]+)", help="Open the task in the trajectory viewer"
)


VERIFIER_KEY = "inside_verifier"
UV_NAME = "Universal Verifier"


def choose_verifier(
    tasks: pd.DataFrame, table: pd.DataFrame, source: str
) -> tuple[pd.DataFrame, str, str]:
    """The verifier whose two passes the page shows: the Universal Verifier, or one
    uploaded as score files in this session (then the tasks carry its score files). Returns
    (tasks, the cache key's source part, the verifier's name)."""
    kept = st.session_state.get(SCORE_FILES_KEY) or {}
    loaded = set(table.loc[table["kind"] == "verifier", "rater"])
    mine = {f"{display_name(r)} (yours)": r for r in kept if r in loaded}
    if not mine:
        return tasks, source, UV_NAME
    name = st.selectbox(
        "Verifier",
        [UV_NAME, *mine],
        key=VERIFIER_KEY,
        help="The Universal Verifier (the dataset's score files), or a verifier you uploaded "
        "as score files on Your verifier (this session only).",
    )
    if name not in mine:
        return tasks, source, UV_NAME
    cells = kept[mine[name]]
    key = f"{source}|score files|{mine[name]}|{score_files.cells_digest(cells)}"
    return score_files.with_score_files(tasks, cells), key, name


def chosen_rater(table: pd.DataFrame) -> str | None:
    """The rater id of the uploaded verifier chosen in `choose_verifier`, or None (UV)."""
    name = st.session_state.get(VERIFIER_KEY)
    kept = st.session_state.get(SCORE_FILES_KEY) or {}
    loaded = set(table.loc[table["kind"] == "verifier", "rater"])
    mine = {f"{display_name(r)} (yours)": r for r in kept if r in loaded}
    return mine.get(name) if name else None


@state.bounded_cache(max_entries=16, max_bytes=8 * state.MB)
def cached_two_pass(
    _tasks: pd.DataFrame,
    _table: pd.DataFrame,
    source: str,
    splits: tuple[str, ...],
    threshold: float,
    cluster: str,
) -> T.TwoPassResult:
    """`lib.analysis.two_pass.two_pass` on `_tasks`' score files (`source` names them: the
    dataset's, or an uploaded verifier's with their digest, `choose_verifier`)."""
    return T.two_pass(_tasks, _table, list(splits), threshold, Bootstrap(unit=cluster))


@state.bounded_cache(max_entries=16, max_bytes=8 * state.MB)
def cached_quadrants(
    _table: pd.DataFrame,
    source: str,
    splits: tuple[str, ...],
    threshold: float,
    cluster: str,
    own_labels: bool = False,
) -> Q.QuadrantResult:
    """`lib.analysis.quadrant.quadrants` (`source` names the verifier in the UV's place: the
    dataset's, or an uploaded verifier's score files with their digest)."""
    return Q.quadrants(_table, list(splits), threshold, Bootstrap(unit=cluster), own_labels)


def _label(value: object, yes: str = "pass", no: str = "fail") -> str:
    return "missing" if pd.isna(value) else (yes if int(value) == 1 else no)


def share_text(s: Share, missing: bool = True) -> str:
    """`0.67 [0.21, 0.94] (2/3, 1 unlabelled)`, or `undefined (n = 0)`; without the
    unlabelled count when ``missing`` is False (a table that gives it in a column)."""
    text = fmt.value_with_ci(s.estimate)
    if s.n:
        text += f" ({s.x}/{s.n}"
        text += f", {s.n_missing} unlabelled)" if s.n_missing and missing else ")"
    elif s.n_missing and missing:
        text += f" ({s.n_missing} unlabelled)"
    return text


def _share_clusters(failures: tuple[T.HumanFailures, ...]) -> list[int]:
    """The clusters each share's interval rested on (for the caption's range)."""
    return [s.n_clusters for f in failures for s in (f.process, f.outcome)]


def _excluded_text(counts: dict[str, int]) -> str:
    parts = [f"{counts[s]} {s}" for s in T.STATUSES[1:] if counts[s]]
    return f" Excluded: {', '.join(parts)}." if parts else ""


def _threshold_words(threshold: float) -> str:
    return f"process verdict = points / max points ≥ {threshold:g}"


def comparison_frame(result: T.TwoPassResult) -> pd.DataFrame:
    """One row per (reference, metric): each pass's value and the paired difference."""
    rows = []
    for c in result.comparisons:
        d = c.diff
        rows.append(
            {
                "reference": rater_title(c.reference),
                "metric": METRIC_WORDS[c.metric],
                "action-only": fmt.value_with_ci(d.b),
                "with screenshots": fmt.value_with_ci(d.a),
                "difference (paired)": fmt.signed_diff(d.diff, d.ci),
                "n": d.n,
                "unlabelled": c.n_missing_reference,
            }
        )
    return pd.DataFrame(rows)


def failures_frame(result: T.TwoPassResult) -> pd.DataFrame:
    rows = [
        {
            "tasks": GROUP_WORDS[f.group],
            "n": f.n_tasks,
            "humans failed the process": share_text(f.process),
            "humans failed the outcome": share_text(f.outcome),
        }
        for f in result.failures
    ]
    return pd.DataFrame(rows)


def _points(value: float) -> str:
    return "missing" if pd.isna(value) else f"{value:g}"


def two_pass_tasks_frame(result: T.TwoPassResult) -> pd.DataFrame:
    """The two-pass tasks, changed ones first, each linked to the viewer (the numbers
    as columns are in the CSV download)."""
    t = result.tasks
    change = []
    for lo, hi in zip(t["criteria_lowered"], t["criteria_raised"], strict=True):
        words = [f"{lo} lowered"] if lo else []
        words += [f"{hi} raised"] if hi else []
        change.append(", ".join(words) or "unchanged")
    v = state.link_payload()  # links open a new tab: carry the uploads (?v=)
    links = [
        viewer_href(task, split, v=v) for task, split in zip(t["task_id"], t["split"], strict=True)
    ]
    points = [
        f"{_points(a)} → {_points(g)} of {_points(m)}"
        for a, g, m in zip(t["action_points"], t["grounded_points"], t["max_points"], strict=True)
    ]
    verdicts = [
        f"{_label(a)} → {_label(g)}"
        for a, g in zip(t["action_verdict"], t["grounded_verdict"], strict=True)
    ]
    frame = pd.DataFrame(
        {
            "link": links,
            "criteria": change,
            "points (action-only → with screenshots)": points,
            "process verdict": verdicts,
            "human process": [_label(v) for v in t[T.HUMAN_PROCESS]],
            "human outcome": [_label(v, "success", "failure") for v in t[T.HUMAN_OUTCOME]],
        }
    )
    changed = (t["criteria_lowered"] > 0) | (t["criteria_raised"] > 0)
    return frame.iloc[(~changed).astype(int).argsort(kind="stable")]


def two_pass_section(result: T.TwoPassResult, who: str = UV_NAME) -> None:
    """What the screenshots bought, or why nothing can be said (no row carries both passes).
    `who`: the verifier whose score files these are (the Universal Verifier, or an upload)."""
    st.header("What the screenshots bought")
    lead = "The Universal Verifier scores" if who == UV_NAME else f"{inert(who, 200)} scores"
    st.markdown(
        f"{lead} each rubric criterion twice: first from the agent's "
        "actions and answer only, then grounded in the screenshots (its check against "
        "claims the screenshots do not bear out); its rubric score is the second pass. "
        "Here each pass's process verdict is compared with the humans on the same tasks."
    )
    where, c = fmt.split_label(list(result.splits)), result.counts
    if result.n == 0:
        st.info(
            f"No task of split {where} records both passes, so there is nothing to compare. "
            f"{c[T.ONE_PASS]} rows carry the action-only points only (no "
            "post_image_earned_points: one pass recorded), "
            f"{c[T.INCOMPLETE]} an incomplete rubric, {c[T.NO_RUBRIC]} no rubric "
            "(om2w rows, or the verifier did not run).",
            icon=":material/photo_library:",
        )
        return
    st.caption(
        f"{fmt.n_caption(result.n, 0, list(result.splits), 'tasks with both passes')}; "
        f"{_threshold_words(result.threshold)} for both passes.{_excluded_text(c)}"
    )
    st.markdown(
        f"The screenshots **lowered {result.criteria_lowered}** of {result.n_criteria} "
        f"criteria and **raised {result.criteria_raised}**; they turned "
        f"**{result.flips['pass -> fail']}** action-only passes into failures and "
        f"**{result.flips['fail -> pass']}** failures into passes."
    )
    st.dataframe(comparison_frame(result), hide_index=True, key="inside_two_pass_metrics")
    counts = [x.diff.n_clusters for x in result.comparisons]
    st.caption(
        "Each pass against each human reference on the same n tasks (unlabelled: tasks "
        "without that reference's label, excluded); the two passes' values are point "
        "estimates, the interval is the difference's (with screenshots minus action-only): "
        "a paired bootstrap, one draw of clusters for both passes. "
        + fmt.method_caption(result.bootstrap, counts)
    )
    st.subheader("How often the humans failed the tasks the screenshots changed")
    st.dataframe(failures_frame(result), hide_index=True, key="inside_two_pass_failures")
    st.caption(
        f"Share of the group's tasks whose final human process label (or final outcome "
        f"label) is a failure; unlabelled tasks are excluded and counted · split: {where}. "
        "A task can be both lowered and raised. "
        + fmt.method_caption(result.bootstrap, _share_clusters(result.failures))
    )
    st.subheader("The tasks")
    st.caption(
        f"The {result.n} tasks with both passes, those whose criteria the screenshots "
        "changed first; points and verdicts read action-only → with screenshots. "
        "Click a task to open it in the trajectory viewer."
    )
    st.dataframe(
        two_pass_tasks_frame(result),
        column_config={"link": LINK},
        hide_index=True,
        key="inside_two_pass_tasks",
    )
    csv_download("Download the two passes (CSV)", result.tasks, "two_passes", "inside_two_pass_csv")


def _cell_title(cell: Q.Cell) -> str:
    return f"{Q.CELL_WORDS[(cell.process, cell.outcome)]} ({cell.n})"


def agreement_frame(result: Q.QuadrantResult) -> pd.DataFrame:
    """One row per (quadrant, cell): its n and the verifier's agreement with the humans."""
    rows = []
    for q in result.quadrants:
        for cell in q.cells:
            row = {
                "quadrant": Q.SHORT[q.rater],
                "cell": Q.CELL_WORDS[(cell.process, cell.outcome)],
                "n": cell.n,
            }
            for name in Q.AGREEMENTS:
                row[f"agree on {name}"] = share_text(cell.agreement[name], missing=False)
            row["unlabelled"] = cell.agreement["both"].n_missing
            rows.append(row)
    return pd.DataFrame(rows)


def cell_tasks_frame(result: Q.QuadrantResult, cell: Q.Cell, who: str = UV_NAME) -> pd.DataFrame:
    """A cell's tasks, each linked to the viewer, with every verdict beside it (the
    verifier's columns headed by ``who``: "UV" for the Universal Verifier)."""
    short = "UV" if who == UV_NAME else plain(who, 120)
    keys = pd.MultiIndex.from_arrays([list(cell.splits), list(cell.task_ids)])
    v = state.link_payload()  # links open a new tab: carry the uploads (?v=)
    f = result.frame.set_index(["split", "task_id"]).reindex(keys)
    return pd.DataFrame(
        {
            "link": [
                viewer_href(t, s, v=v) for s, t in zip(cell.splits, cell.task_ids, strict=True)
            ],
            f"{short} rubric score": f["uv_score"].round(3).to_numpy(),
            f"{short} process": [_label(v) for v in f["uv_process"]],
            f"{short} outcome": [_label(v, "success", "failure") for v in f["uv_outcome"]],
            "human process": [_label(v) for v in f["human_process"]],
            "human outcome": [_label(v, "success", "failure") for v in f["human_outcome"]],
        }
    )


def _quadrant_column(result: Q.QuadrantResult, q: Q.Quadrant, who: str = UV_NAME) -> None:
    st.subheader(Q.TITLES[q.rater] if q.rater != Q.UV or who == UV_NAME else inert(who, 200))
    vega.altair_chart(charts.quadrant_chart(charts.quadrant_frame(q)))
    if q.rater == Q.UV and who != UV_NAME:
        process = (
            f"its process verdict (rubric_is_success, else its score ≥ {UV_THRESHOLD:g})"
            if result.threshold == UV_THRESHOLD
            else f"its score (post-image points / max) ≥ {result.threshold:g} "
            "(rubric_is_success where a file has no score)"
        )
        what = (
            f"process = {process}, outcome = its outcome verdict (output_success), from its "
            "score files"
        )
    elif q.rater == Q.UV:
        what = (
            f"process = uv_rubric_score ≥ {result.threshold:g}, outcome = its own "
            "outcome verdict (uv_outcome_success)"
        )
    else:
        what = "process = final human process label, outcome = final (adjudicated) label"
    st.caption(f"{fmt.n_caption(q.n, q.n_excluded, list(result.splits))}; {what}.")
    for cell in q.cells:
        with st.expander(_cell_title(cell)):
            if cell.n == 0:
                st.caption("No task.")
            else:
                st.dataframe(
                    cell_tasks_frame(result, cell, who),
                    column_config={"link": LINK},
                    hide_index=True,
                    key=f"inside_{q.rater}_{cell.process}{cell.outcome}",
                )


def quadrant_section(result: Q.QuadrantResult, who: str = UV_NAME) -> None:
    """Both 2x2s side by side, the agreement inside each cell, each cell's tasks."""
    st.header("Process against outcome")
    st.markdown(
        "Process and outcome are judged apart because they diverge: a sound process can "
        "fail when the environment blocks the agent, and a flawed one can still succeed. "
        "The off-diagonal cells (dashed) are those divergences."
    )
    left, right = st.columns(2)
    for column, q in zip((left, right), result.quadrants, strict=True):
        with column:
            _quadrant_column(result, q, who)
    st.subheader("The verifier's agreement with the humans inside each cell")
    st.dataframe(agreement_frame(result), hide_index=True, key="inside_quadrant_agreement")
    st.caption(
        f"Share of the cell's tasks where {'the ' + UV_NAME if who == UV_NAME else inert(who)}'s "
        "verdict equals the "
        "humans' final label (process at the threshold above, outcome, both), as x/n; "
        "tasks without the labels compared are excluded (unlabelled: tasks missing a "
        f"label of either dimension) · split: "
        f"{fmt.split_label(list(result.splits))}. "
        + fmt.method_caption(
            result.bootstrap,
            [
                c.agreement[a].n_clusters
                for q in result.quadrants
                for c in q.cells
                for a in Q.AGREEMENTS
            ],
        )
    )
    csv_download(
        "Download the verdicts by task (CSV)",
        result.frame,
        "process_outcome",
        "inside_quadrant_csv",
    )
