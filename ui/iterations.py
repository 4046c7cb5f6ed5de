"""The Iterations section of Your verifier: an uploaded verifier's versions and repeated runs,
the commit rule with its noise floor, stability, and what changed between two versions;
and the viewer's table of every version-run's verdict on one task.

Numbers: `lib.analysis.iterations`; chart: `lib.charts.iterations`. Uploaded names and
versions are shown through `ui.safe_text` (`plain` in grids and selectboxes, `inert` in
Markdown).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from lib.analysis import iterations as it
from lib.charts import iterations as charts
from lib.digest import frame_digest
from lib.metrics import Interval
from lib.table.verdicts import rater_title
from lib.uploads import predictions
from lib.viewer.links import VIEWER_FILE, viewer_query
from lib.vocab import ALL, HUMAN_REFERENCE, short_split
from ui import fmt, state, url, vega
from ui import params as P
from ui.agreement import uploads_key
from ui.safe_text import inert, plain
from ui.sidebar import current_bootstrap, current_cluster

TITLE = "Iterations: versions and repeated runs"
REFERENCE_KEY = P.ITER_REFERENCE.key
SPLIT_KEY = P.ITER_SPLIT.key
FROM_KEY = P.ITER_FROM.key
TO_KEY = P.ITER_TO.key
TASK_KEY = "iterations_task"
NAME_MAX = 60
_DIGEST_KEY = "_iterations_history_digest"
SHOWN_TASKS = 200
"""Unstable / gained / lost tasks listed at most (the count says how many there are)."""

RULE_WORDS = (
    "**The commit rule** (the paper's, applied in file order): the first version is "
    "committed; a later version is committed when, against the last committed version and "
    "on the same tasks (those where both versions' every run and the reference have a "
    "label), its kappa gain is larger than the noise floor and its FPR does not rise. "
    "Otherwise it says why: *kappa fell*, *FPR rose*, or *gain below the noise floor*. "
    "The differences' intervals: a paired task bootstrap (one draw of tasks scores both "
    "versions). **Noise floor**: the range (max − min) of kappa over the runs of one "
    "version, the largest over the versions with two or more runs."
)


def session_history() -> pd.DataFrame | None:
    """The histories of the verifiers still loaded in this session (see `ui.your_verifier`)."""
    history = st.session_state.get(state.HISTORY_KEY)
    uploaded = st.session_state.get(state.UPLOADS_KEY)
    if history is None or len(history) == 0 or uploaded is None or len(uploaded) == 0:
        return None
    live = history[history["rater"].isin(set(uploaded["rater"]))]
    return live if len(live) else None


def history_key(history: pd.DataFrame) -> str:
    """The history's SHA-256 (kept with the frame it describes: hashed once per upload)."""
    held = st.session_state.get(_DIGEST_KEY)
    if held is not None and held[0] is history:
        return held[1]
    key = frame_digest(history.reset_index(drop=True))
    st.session_state[_DIGEST_KEY] = (history, key)
    return key


@state.bounded_cache(max_entries=16, max_bytes=32 * state.MB, show_spinner="Scoring versions…")
def cached_iterations(
    _table: pd.DataFrame,
    _history: pd.DataFrame,
    source: str,
    uploads: str,
    history: str,
    cluster: str,
    verifier: str,
    reference: str,
    split: str,
    dimension: str,
) -> it.IterationResult:
    boot = current_bootstrap()
    return it.iterations(_table, _history, verifier, reference, split, dimension, boot)


def _version_table(result: it.IterationResult) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The main columns (they fit 1400 px) and the rest (under *More columns*)."""
    main, more = [], []
    for r in result.versions:
        diff_k, diff_f = r.diffs.get("kappa"), r.diffs.get("fpr")
        version = plain(r.version, NAME_MAX)
        main.append(
            {
                "#": r.order,
                "version": version,
                "rule": "committed" if r.committed else f"not committed: {r.why_not}",
                "runs": r.n_runs,
                "kappa": fmt.value_with_ci(r.estimates["kappa"]),
                "Δ kappa vs committed": _diff(diff_k),
                "FPR": fmt.value_with_ci(r.estimates["fpr"]),
                "Δ FPR vs committed": _diff(diff_f),
            }
        )
        more.append(
            {
                "#": r.order,
                "version": version,
                "n": r.n,
                "n paired": r.n_paired,
                "compared with": "—" if r.compared_with is None else plain(r.compared_with, 60),
                "FNR": fmt.value_with_ci(r.estimates["fnr"]),
                "kappa range over runs": _spread(r.spreads["kappa"]),
                "FPR range": _spread(r.spreads["fpr"]),
                "FNR range": _spread(r.spreads["fnr"]),
            }
        )
    return pd.DataFrame(main), pd.DataFrame(more)


def _diff(diff) -> str:
    return "—" if diff is None else fmt.signed_diff(diff, diff.ci or _no_ci())


def _no_ci() -> Interval:
    return Interval(None, None, "not computed")


def _spread(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def _task_picker(tasks: list[tuple[str, str]], key: str, what: str) -> None:
    """A task of the list opened in the viewer in this tab (this session keeps the versions)."""
    if not tasks:
        return
    options = [f"{short_split(s)} · {t}" for s, t in tasks[:SHOWN_TASKS]]
    left, right = st.columns([3, 2], vertical_alignment="bottom")
    chosen = left.selectbox(
        f"Open one of the {what} in the viewer",
        range(len(options)),
        format_func=lambda i: plain(options[i], 200),
        key=key,
    )
    _, task = tasks[chosen or 0]
    with right:
        st.page_link(
            VIEWER_FILE,
            label=f"Open {inert(task, 80)} (every version's verdict)",
            query_params=viewer_query(task),
            icon=":material/open_in_new:",
        )


def _task_list(tasks: tuple[tuple[str, str], ...]) -> str:
    shown = ", ".join(f"**{inert(t, 80)}**" for _, t in tasks[:SHOWN_TASKS])
    more = len(tasks) - SHOWN_TASKS
    return shown + (f" … and {more} more" if more > 0 else "") if tasks else "none"


def iterations_section(table: pd.DataFrame, rater: str, dimension: str) -> None:
    """The section for one uploaded verifier (only when its file had versions or runs)."""
    st.header(TITLE)
    history = session_history()
    if history is None or not (history["rater"] == rater).any():
        st.caption(
            "Add a `version` column (and `run` for repeated runs) to your file to see the "
            "development loop here: kappa per version, the paper's commit rule with a "
            "run-to-run noise floor, stability across runs, and what changed between versions. "
            "The sample history file above has 10 versions."
        )
        return
    dims = it.history_dimensions(history, rater)
    if dimension not in dims:
        st.caption(f"This verifier's versions have no {dimension} label.")
        return
    refs = it.references(table, dimension) or [HUMAN_REFERENCE[dimension]]
    splits = it.history_splits(history, rater)
    left, right = st.columns(2)
    reference = url.choice(
        P.ITER_REFERENCE,
        refs,
        refs[0],
        where=left,
        format_func=lambda r: plain(rater_title(r), 200),
    )
    split = url.choice(
        P.ITER_SPLIT,
        splits,
        splits[-1],
        where=right,
        format_func=lambda s: "all (pooled)" if s == ALL else short_split(s),
    )
    result = cached_iterations(
        table,
        history,
        state.source_spec(),
        uploads_key(),
        history_key(history),
        current_cluster(),
        rater,
        reference,
        split,
        dimension,
    )
    if not result.versions:
        st.caption("No version has a label on a task the reference labels.")
        return
    committed = [r.version for r in result.versions if r.committed]
    noise = (
        f"**{inert(it.NO_REPEATS, 80)}**: the rule uses 0."
        if not result.noise_floor_known
        else f"**Noise floor: {result.noise_floor:.3f}** (kappa range over runs)."
    )
    st.markdown(
        f"**{len(result.versions)} versions** of {inert(rater_title(rater), 200)}, "
        f"{len(committed)} committed; {noise} Versions are ordered as they first appear in "
        "the uploaded file."
    )
    vega.altair_chart(charts.loop_chart(charts.loop_frame(result)), width="stretch")
    where = "all splits pooled" if split == ALL else short_split(split)
    st.caption(
        f"Kappa of each version against {inert(rater_title(reference), 200)} ({dimension}, "
        f"{where}; with repeated runs the median over runs, its interval the {it.MEDIAN_METHOD}"
        "). The line steps up at each committed version; the other marks say why a version "
        f"was not committed. {result.n_missing_reference} task(s) without a reference label "
        f"are left out. {fmt.method_caption(result)}"
    )
    rejected = [r for r in result.versions if not r.committed]
    if rejected:
        st.markdown(
            "**Not committed**: "
            + "; ".join(f"{inert(r.version, NAME_MAX)} ({r.why_not})" for r in rejected)
            + "."
        )
    st.markdown(RULE_WORDS)
    main, more = _version_table(result)
    st.dataframe(
        main,
        hide_index=True,
        column_config={"rule": st.column_config.TextColumn("rule", width="medium")},
    )
    with st.expander("More columns: n, FNR, ranges over runs", expanded=False):
        st.dataframe(more, hide_index=True)

    st.subheader("Stability across repeated runs")
    if not result.stability:
        st.caption("No version has two or more runs: add a `run` column (1, 2, 3) to see it.")
    for s in result.stability:
        spreads = ", ".join(
            f"{name} {_spread(s.spreads[name])}" for name in ("kappa", "fpr", "fnr")
        )
        flip = "undefined" if s.flip_rate is None else f"{s.flip_rate:.3f}"
        st.markdown(
            f"Version **{inert(s.version, NAME_MAX)}** ({s.n_runs} runs, {s.n_tasks} tasks "
            f"judged by two or more runs): flip rate **{flip}** (per task, the share of pairs "
            f"of runs that disagree, averaged); range over runs: {spreads}. "
            f"**{len(s.unstable_tasks)} unstable task(s)** (some run disagrees with another): "
            + _task_list(s.unstable_tasks)
        )
        _task_picker(list(s.unstable_tasks), f"{TASK_KEY}_unstable_{s.order}", "unstable tasks")

    st.subheader("What changed between two versions")
    names = [(r.order, r.version) for r in result.versions]
    if len(names) < 2:
        st.caption("One version only.")
        return
    left, right = st.columns(2)
    labels = {str(o): f"{o}. {plain(v, NAME_MAX)}" for o, v in names}
    orders = list(labels)  # a version's place in the file: `?iter_from=3&iter_to=10`

    def why(_: str) -> str:
        return f"not a version's place in the file here (1 to {len(orders)})"

    before = url.choice(
        P.ITER_FROM, orders, orders[-2], where=left, format_func=labels.get, why=why
    )
    after = url.choice(P.ITER_TO, orders, orders[-1], where=right, format_func=labels.get, why=why)
    before, after = int(before), int(after)
    change = it.version_change(table, history, rater, before, after, reference, split, dimension)
    if change is None:
        return
    p = "undefined" if change.mcnemar_p is None else f"{change.mcnemar_p:.3g}"
    st.markdown(
        f"On {change.n} tasks both versions and the reference label: "
        f"**{len(change.gained)} gained** (now agree with the reference), "
        f"**{len(change.lost)} lost**; {change.test}: p = {p}. A version's verdict is the "
        "majority of its runs (a tie: its lowest run)."
    )
    st.markdown("Gained: " + _task_list(change.gained))
    st.markdown("Lost: " + _task_list(change.lost))
    _task_picker([*change.gained, *change.lost], f"{TASK_KEY}_changed", "changed tasks")


def task_history_section(table: pd.DataFrame, split: str, task_id: str) -> None:
    """The viewer: every version-run verdict of this session's uploaded histories on a task,
    beside the humans' final label."""
    history = session_history()
    rows = it.task_history(history, split, task_id)
    if rows.empty:
        return
    st.subheader("Your verifiers' versions and runs on this task")

    def word(v: object) -> str:
        return "missing" if v is None or pd.isna(v) else ("success" if int(v) else "failure")

    shown = pd.DataFrame(
        {
            "verifier": [plain(predictions.display_name(r), NAME_MAX) for r in rows["rater"]],
            "version": [plain(v, NAME_MAX) for v in rows["version"]],
            "run": rows["run"].astype(int).tolist(),
            "outcome": [word(v) for v in rows["outcome"]],
            "process": [word(v) for v in rows["process"]],
        }
    )
    if (shown["process"] == "missing").all():
        shown = shown.drop(columns=["process"])
    human = table[
        (table["rater"] == HUMAN_REFERENCE["outcome"])
        & (table["split"] == split)
        & (table["task_id"] == task_id)
    ]["label"]
    humans = word(human.iloc[0]) if len(human) else "missing"
    st.dataframe(shown, hide_index=True, height=min(len(shown), 40) * 35 + 38)
    st.caption(
        f"{len(shown)} version-run verdict(s), in file order. The humans' final outcome "
        f"label: **{humans}**."
    )
