"""The Judges page's sections: metrics of one pair, its off-diagonal tasks, the reviewers,
the panel, every pair as a table; and its URL and heatmap-click helpers.

Display tables and wording live here; the numbers come from `lib.analysis.judges`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import streamlit as st

from lib.analysis import judges, scores
from lib.charts import judges as charts
from lib.metrics import Value
from lib.table.verdicts import UPLOAD_PREFIX
from lib.viewer.links import viewer_href
from lib.vocab import HUMAN_REFERENCE, UV_VERDICT, Bootstrap, short_split
from ui import fmt, params, state, url, vega
from ui.download import csv_download
from ui.sidebar import current_bootstrap

A_KEY, B_KEY = "judges_a", "judges_b"
CELLS = {"both": None, "a1b0": "A 1, B 0", "a0b1": "A 0, B 1"}
"""The off-diagonal filter: URL value -> the cell shown (None: both)."""
CELL_WORDS = {"both": "both disagreements", "a1b0": "A 1, B 0", "a0b1": "A 0, B 1"}


def rows_of(table: pd.DataFrame, splits: Sequence[str], dimension: str) -> pd.DataFrame:
    """The verdict rows of one dimension in these splits: every `lib.analysis.judges` call of the
    page reads only these, so the page filters once and hands them on (same answers)."""
    keep = table["split"].isin(list(splits)) & (table["dimension"] == dimension)
    return table[keep.to_numpy()]


UPLOADS_SHOWN = 5
"""Uploaded verifiers in the heatmap and the table of every pair by default (the first
ones; raters A and B are always in): a session (or a shared link) may hold 20, and every
shown rater is a row and a column of pairs (issue 26: 760 verifiers from a chained link
cost 13.1 s of CPU and 1.6 GB on this page, and over 1 GB in each browser tab)."""


def shown_raters(options: Sequence[str], chosen: Sequence[str], n_uploads: int) -> list[str]:
    """The raters the heatmap and the pair table show, in `options` order: the dataset's
    raters, the first ``n_uploads`` uploaded verifiers, and the chosen pair (always).

    >>> shown_raters(["uv", "mine:a", "mine:b", "mine:c"], ["mine:c", "uv"], 1)
    ['uv', 'mine:a', 'mine:c']
    """
    mine = [r for r in options if r.startswith(UPLOAD_PREFIX)]
    keep = set(mine[: max(int(n_uploads), 0)]) | set(chosen)
    return [r for r in options if not r.startswith(UPLOAD_PREFIX) or r in keep]


def hidden_uploads_note(options: Sequence[str], shown: Sequence[str]) -> str | None:
    """What the heatmap and table leave out, and how to see it (None when nothing is)."""
    mine = [r for r in options if r.startswith(UPLOAD_PREFIX)]
    hidden = [r for r in mine if r not in set(shown)]
    if not hidden:
        return None
    return (
        f"{len(hidden)} of your {len(mine)} uploaded verifiers are not in the heatmap and the "
        f"table of every pair: raise *{params.JUDGES_UPLOADS.label}*, or choose one as rater "
        "A or B."
    )


def off_diagonal_table(off: pd.DataFrame) -> pd.DataFrame:
    """`lib.analysis.judges.off_diagonal` as the page shows it: a viewer link per task, the short
    split name, the cell in words (`A 1, B 0` / `A 0, B 1`), the labels and instruction."""
    v = state.link_payload()  # links open a new tab: carry the uploads (?v=)
    return pd.DataFrame(
        {
            "task": [
                viewer_href(t, s, v=v) for t, s in zip(off["task_id"], off["split"], strict=True)
            ],
            "split": [short_split(s) for s in off["split"]],
            "cell": np.where(off["label_a"] == 1, "A 1, B 0", "A 0, B 1"),
            "A": off["label_a"].astype("Int64").to_numpy(),
            "B": off["label_b"].astype("Int64").to_numpy(),
            "instruction": off["instruction"].to_numpy() if "instruction" in off else None,
        }
    )


def apply_pick(key: str, options: list[str], dimension: str | None = None) -> None:
    """The heatmap's on_select callback: a clicked cell becomes the pair (before the rerun).

    The heatmap is one dimension: a click also sets rater B's dimension to it (``dimension``),
    so a pair chosen across dimensions gives way to the clicked one."""
    picked = charts.picked_pair(st.session_state.get(key))
    if picked is not None and picked[0] in options and picked[1] in options:
        st.session_state[A_KEY], st.session_state[B_KEY] = picked
        if dimension is not None:
            st.session_state[params.JUDGES_B_DIMENSION.key] = dimension


_FOLLOWS = "_judges_b_follows"


def follow_dimension(dimension: str) -> None:
    """A change of the page's dimension puts rater B back on it: a pair across dimensions
    is a choice of B's dimension, not something a change of A's should create. (A link that
    sets both is read after this, so the link wins.)"""
    if st.session_state.get(_FOLLOWS) not in (None, dimension):
        st.session_state[params.JUDGES_B_DIMENSION.key] = dimension
    st.session_state[_FOLLOWS] = dimension


def b_options(
    table: pd.DataFrame, splits: Sequence[str], dimension_b: str, default: str
) -> tuple[list[str], str]:
    """Rater B's choices on its dimension (A's, or the other across dimensions) and its
    default: the task-level human label of that dimension when it has one."""
    options = judges.raters(table, splits, dimension_b)
    final = HUMAN_REFERENCE[dimension_b]
    if default not in options:
        default = final if final in options else (options[0] if options else default)
    return options, default


def pair_words(detail: judges.PairDetail) -> str:
    """`process` for a pair on one dimension; `A on process, B on outcome` across them."""
    if detail.crossed:
        return f"A on {detail.dimension}, B on {detail.b_dimension}"
    return detail.dimension


def share_text(share: Value, n: int) -> str:
    return fmt.value_with_ci(share) if not share.defined else f"{share.value:.0%} of {n}"


def pair_section(
    detail: judges.PairDetail,
    splits: Sequence[str],
    where: str,
    labels: dict[str, str],
    tasks: pd.DataFrame,
) -> None:
    """Counts, agreement, kappa and McNemar of one pair; its 2x2 chart; the discordant tasks."""
    rater_a, rater_b = detail.rater_a, detail.rater_b
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Shared tasks (n)", detail.n)
    est = detail.estimates
    agreement, kappa = est["agreement"], est["kappa"]
    m2.metric("Raw agreement", fmt.value_with_ci(agreement.as_value()))
    m2.caption(f"95% CI {fmt.interval_text(agreement.ci)}")
    m3.metric(
        "Cohen's kappa", fmt.value_with_ci(kappa.as_value()) if kappa.defined else "undefined"
    )
    kappa_ci = fmt.interval_text(kappa.ci)
    m3.caption(f"95% CI {kappa_ci}" if kappa.defined else str(kappa.reason))
    m4.metric("McNemar exact p", fmt.p_value(est["mcnemar_p"].as_value()))
    m4.caption(f"on {detail.confusion.fp + detail.confusion.fn} discordant tasks")
    st.caption(fmt.n_caption(detail.n, detail.n_excluded, splits))
    st.caption(fmt.method_caption(detail))
    c = detail.confusion
    st.markdown(
        f"A says success on {share_text(est['positive_a'].as_value(), detail.n)} shared tasks, "
        f"B on {share_text(est['positive_b'].as_value(), detail.n)}. McNemar's exact test looks "
        "only at the "
        f"{c.fp + c.fn} discordant tasks (A 1 B 0: **{c.fp}**, A 0 B 1: **{c.fn}**): a small p "
        "means one side says success more often than the other."
    )
    st.caption(
        f"Table: both 1 = {c.tp} · A 1, B 0 = {c.fp} · A 0, B 1 = {c.fn} · both 0 = {c.tn}"
        f" · n = {c.n} · split: {where} · {pair_words(detail)}"
    )
    if detail.crossed:
        st.caption(
            f"Across dimensions: A's {detail.dimension} labels against B's "
            f"{detail.b_dimension} labels on the same tasks. The paper's second principle: "
            "process and outcome diverge, e.g. when the environment blocks an agent that "
            "did everything right (process 1, outcome 0), or a lucky answer without the "
            "work (outcome 1, process 0). Kappa here measures how far one predicts the other."
        )

    chart_col, note_col = st.columns([3, 2])
    with chart_col:
        vega.altair_chart(
            charts.confusion_chart(judges.shares(detail), labels[rater_a], labels[rater_b]),
            width="content",
        )
    with note_col:
        st.caption(
            "Each cell: the count, its share of A's row (how B labelled the tasks A put there) "
            "and of B's column. The diagonal is agreement."
        )
        if any(r.endswith(judges.INFORMED_SUFFIX) for r in (rater_a, rater_b)):
            st.caption(
                "Informed labels are derived: a reviewer who *agrees* with the Universal "
                "Verifier's verdict is given that verdict, one who *disagrees* its opposite. "
                "Kappa of an informed label with the Universal Verifier is high by construction."
            )

    st.markdown("**The tasks behind the off-diagonal cells**")
    view = off_diagonal_table(judges.off_diagonal(detail, tasks))
    which = url.choice(params.JUDGES_SHOW, list(CELLS), "both", format_func=CELL_WORDS.get)
    if CELLS[which] is not None:
        view = view[view["cell"] == CELLS[which]]
    if view.empty:
        st.caption("No such task: the two raters agree on every shared task.")
    else:
        st.dataframe(
            view,
            hide_index=True,
            column_config={
                "task": st.column_config.LinkColumn(
                    "task (opens the trajectory)", display_text=r"task=([^&]+)"
                ),
                "instruction": st.column_config.TextColumn(width="large"),
            },
        )
        st.caption(f"{len(view)} tasks · split: {where}")


def reviewers_section(
    table: pd.DataFrame, splits: Sequence[str], dimension: str, where: str
) -> None:
    # reviewers --------------------------------------------------------------------------
    st.header("Reviewers")
    profiles = judges.reviewer_profiles(table, splits, dimension, boot=current_bootstrap())
    if profiles.empty:
        st.caption(f"No reviewer labels for {dimension} in {where}.")
    else:
        view = pd.DataFrame(
            {
                "reviewer": profiles["reviewer"],
                "stage": profiles["stage"],
                "tasks": profiles["tasks"],
                "unlabelled": profiles["unlabelled"],
                "leniency": profiles["leniency"] * 100,
                "κ with final label": [
                    fmt.value_with_ci(v, i)
                    for v, i in zip(
                        profiles["kappa_final"], profiles["kappa_final_ci"], strict=True
                    )
                ],
                "n (final)": profiles["n_final"],
                "κ with Universal Verifier": [
                    fmt.value_with_ci(v, i)
                    for v, i in zip(profiles["kappa_uv"], profiles["kappa_uv_ci"], strict=True)
                ],
                "n (UV)": profiles["n_uv"],
            }
        )
        st.dataframe(
            view,
            hide_index=True,
            height=35 * (len(view) + 1) + 3,
            column_config={
                "tasks": st.column_config.NumberColumn(help="Tasks the reviewer labelled 1 or 0."),
                "unlabelled": st.column_config.NumberColumn(
                    help="Reviewed without a usable label (e.g. `partial`, no informed answer)."
                ),
                "leniency": st.column_config.NumberColumn(
                    "leniency (share success)", format="%.0f%%", help="Successes / tasks."
                ),
            },
        )
        st.caption(
            f"Split: {where} · dimension: {dimension}. Final label = "
            f"`{HUMAN_REFERENCE[dimension]}`; Universal Verifier = `{UV_VERDICT[dimension]}`. "
            "In om2w "
            "the final label was adjudicated from the reviewers' own labels, so kappa with it is "
            "not independent of the reviewer. "
            + fmt.method_caption(
                profiles.attrs["bootstrap"],
                [*profiles["clusters_final"], *profiles["clusters_uv"]],
            )
        )


def panel_section(table: pd.DataFrame, splits: Sequence[str], dimension: str, where: str) -> None:
    # the panel ----------------------------------------------------------------------------
    st.header("The human panel")
    rows, n_clusters = [], []
    boot = current_bootstrap()
    for stage in ("blind", "informed"):
        report = judges.panel(table, splits, dimension, stage, boot)
        counts = report["counts"]
        if counts["n_tasks"] == 0 and stage == "informed" and counts["n_tasks_dropped"] == 0:
            continue
        n_clusters.append(counts["n_clusters"])
        for name, title in (
            ("fleiss_kappa", "Fleiss' kappa"),
            ("krippendorff_alpha", "Krippendorff's alpha"),
        ):
            rows.append(
                {
                    "stage": stage,
                    "statistic": title,
                    "value [95% CI]": fmt.value_with_ci(
                        report["metrics"][name], report["ci"][name]
                    ),
                    "tasks (n)": counts["n_tasks"],
                    "ratings": counts["n_ratings"],
                    "tasks with < 2 labels (dropped)": counts["n_tasks_dropped"],
                }
            )
    st.dataframe(pd.DataFrame(rows), hide_index=True)
    st.caption(
        f"Split: {where} · dimension: {dimension}. All reviewers' labels of a stage as one panel "
        "(2 or 3 per task in om2w; internal has one reviewer per task, so no panel). Fleiss' kappa "
        "in the Fleiss-Cuzick form for a varying number of raters; Krippendorff's alpha, nominal. "
        + (
            fmt.method_caption(Bootstrap(**report["bootstrap"]), n_clusters)
            if any(n_clusters)
            else ""
        )
    )


def pairs_table_section(
    pairs: pd.DataFrame,
    options: list[str],
    labels: dict[str, str],
    dimension: str,
    where: str,
    hidden: str | None = None,
) -> None:
    # every pair as a table ----------------------------------------------------------------
    with st.expander("Every pair as a table"):
        flat = judges.unordered(pairs, options)
        flat = flat[flat["n"] > 0]
        table = pd.DataFrame(
            {
                "A": flat["rater_a"].map(labels),
                "B": flat["rater_b"].map(labels),
                "n": flat["n"],
                "agreement": flat["agreement"] * 100,
                "kappa": [
                    f"{k:.3f}" if pd.notna(k) else f"undefined ({r})"
                    for k, r in zip(flat["kappa"], flat["kappa_reason"].astype(object), strict=True)
                ],
                "both 1": flat["a1b1"],
                "A 1 B 0": flat["a1b0"],
                "A 0 B 1": flat["a0b1"],
                "both 0": flat["a0b0"],
                "McNemar p": flat["mcnemar_p"],
            }
        )
        st.dataframe(
            table,
            hide_index=True,
            column_config={
                "agreement": st.column_config.NumberColumn(format="%.0f%%"),
                "McNemar p": st.column_config.NumberColumn(format="%.3f"),
            },
        )
        st.caption(
            f"Split: {where} · dimension: {dimension}. No intervals here (they cost a bootstrap "
            "per pair); `python -m lib.report` gives every pair with its interval."
        )
        if hidden:
            st.caption(hidden)
        csv_download(
            "Download every pair (CSV)",
            table.rename(columns={"agreement": "agreement %"}),
            f"judges_pairs_{dimension}_{where}",
            "judges_csv",
        )


# ---------------------------------------------------------------------------------------
# Continuous process scores
# ---------------------------------------------------------------------------------------

HUMAN_THRESHOLD_DEFAULT = 0.8
"""The human threshold t by default: the verifier's own (`lib.vocab.UV_THRESHOLD`)."""

POOLED_ROWS = ("pearson", "spearman", "mad", *scores.KAPPA_NAMES)


@state.bounded_cache(
    max_entries=16,
    max_bytes=16 * state.MB,
    show_spinner="Comparing the process scores (a bootstrap per statistic): first time only…",
)
def cached_scores(
    _table: pd.DataFrame, source: str, split: str, threshold: float, cluster: str
) -> list[scores.ScoreComparison]:
    """`lib.analysis.scores.score_comparisons`: it reads only the verifier's and the
    reviewers' rows, so a session's uploads are not part of the key."""
    return scores.score_comparisons(_table, split, threshold, Bootstrap(unit=cluster))


STAT_SHORT: dict[str, str] = {
    "pearson": "Pearson r",
    "spearman": "Spearman ρ",
    "mad": "mean |A − B|",
    "kappa_labels": "κ, binary labels",
}


def score_rows(records: Sequence[scores.ScoreComparison], where: str) -> pd.DataFrame:
    """One row per comparison and statistic: the value with its interval, n, the rows
    excluded for a missing score (or label), the clusters resampled, the split, the
    reference (B) and the interval's method."""
    rows = []
    for r in records:
        side_a, side_b = scores.short_sides(r.comparison)
        for name in POOLED_ROWS:
            est = r.estimates[name]
            on_labels = name == "kappa_labels"
            n = r.n_labels if on_labels else r.n
            method = "percentile bootstrap" if est.ci is not None and est.ci.defined else "none"
            rows.append(
                {
                    "A": side_a,
                    "B (reference)": side_b,
                    "statistic": _stat_words(r, name),
                    "value [95% CI]": fmt.value_with_ci(est),
                    "n": n,
                    "excluded": r.n_rows - n,
                    "clusters": r.n_clusters_labels if on_labels else r.n_clusters,
                    "split": where,
                    "interval": method,
                }
            )
    return pd.DataFrame(rows)


SCORE_COLUMNS = {
    "A": st.column_config.TextColumn(width=105),
    "B (reference)": st.column_config.TextColumn(width=140),
    "statistic": st.column_config.TextColumn(width=140),
    "value [95% CI]": st.column_config.TextColumn(width=130),
    "n": st.column_config.NumberColumn(width=45),
    "excluded": st.column_config.NumberColumn(
        width=65, help="Rows without both scores (for the label κ: without both labels)."
    ),
    "clusters": st.column_config.NumberColumn(width=60, help="Clusters the bootstrap resampled."),
    "split": st.column_config.TextColumn(width=90),
    "interval": st.column_config.TextColumn(width=115),
}


def _stat_words(r: scores.ScoreComparison, name: str) -> str:
    if name == "kappa_verifier_threshold":
        return f"κ, both ≥ {r.verifier_threshold:g}"
    if name == "kappa_human_threshold":
        among = r.comparison == "reviewer_vs_reviewer"
        a = "" if among else f"UV ≥ {r.verifier_threshold:g}, "
        return f"κ, {a}human ≥ {r.human_threshold:g}"
    return STAT_SHORT[name]


def scores_section(table: pd.DataFrame, source: str, split: str, where: str) -> None:
    """The Universal Verifier's rubric score against the reviewers' scores (Figure 11 of
    the paper) and reviewer against reviewer (Table 14), with the human threshold ``t``
    (``?human_threshold=``)."""
    st.header("Continuous process scores")
    st.markdown(
        "The process verdicts above are scores cut at a threshold. Here the scores "
        "themselves: the Universal Verifier's rubric score against the reviewers' blind "
        "process scores (each review, and the task's median), and reviewer against "
        "reviewer. A human threshold **t** (median reviewer score ≥ t) stands beside the "
        f"verifier's {scores.UV_THRESHOLD:g}."
    )
    threshold = url.number(
        params.JUDGES_HUMAN_THRESHOLD,
        0.0,
        1.0,
        HUMAN_THRESHOLD_DEFAULT,
        step=0.05,
        help="A task is a human process success when its median reviewer score is at least "
        f"t; the verifier's verdict stays its score ≥ {scores.UV_THRESHOLD:g}.",
    )
    boot = current_bootstrap()
    records = cached_scores(table, source, split, threshold, boot.unit)
    by_name = {r.comparison: r for r in records}
    median = by_name["uv_vs_median"]
    data = charts.score_scatter_data(
        median.frame, median.verifier_threshold, median.human_threshold
    )
    if data.empty:
        st.info(
            f"No task in {where} has both a Universal Verifier rubric score and a median "
            f"reviewer score ({median.n_missing} tasks with a missing score): the internal "
            "split was reviewed without scores."
        )
    else:
        chart_col, note_col = st.columns([3, 2])
        with chart_col:
            vega.altair_chart(
                charts.score_scatter(data, median.verifier_threshold, median.human_threshold),
                width="content",
            )
        with note_col:
            agree = int((data["verdicts"] == charts.SCORE_AGREE).sum())
            st.caption(
                f"{median.n} tasks with both scores ({median.n_missing} excluded: a score "
                f"missing) · split: {where}. Vertical rule: the verifier's threshold "
                f"{median.verifier_threshold:g}; horizontal: the human threshold "
                f"{median.human_threshold:g} (median ≥ t is a human success). The verdicts "
                f"agree on {agree} of {len(data)} tasks. Pearson r "
                f"{fmt.value_with_ci(median.estimates['pearson'])}."
            )
    pooled_names = [c for c in scores.COMPARISONS if c in by_name]
    pooled = [by_name[c] for c in pooled_names]
    pooled_rows = score_rows(pooled, where)
    st.dataframe(
        pooled_rows,
        hide_index=True,
        column_config=SCORE_COLUMNS,
        height=35 * (len(pooled_rows) + 1) + 3,
    )
    ones = [r for r in records if r.comparison.startswith(scores.PER_REVIEWER)]
    if ones:
        with st.expander(f"Each reviewer ({len(ones)}) against the Universal Verifier"):
            st.dataframe(score_rows(ones, where), hide_index=True, column_config=SCORE_COLUMNS)
    counts = [
        k
        for r in records
        for k, n in ((r.n_clusters, r.n), (r.n_clusters_labels, r.n_labels))
        if n > 0
    ]
    st.caption(
        f"Split: {where}. B, the reference: "
        + "; ".join(
            f"*{scores.short_sides(c)[1]}*: {scores.reference_words(c)}" for c in pooled_names
        )
        + ". Scores: the verifier's `uv_rubric_score`, each blind review's "
        "`human_process_score`, the task's median reviewer score "
        "(`median_human_rubric_score_agnostic`); a row with a missing score is excluded and "
        "counted. Binary labels: the verifier's verdict (score ≥ "
        f"{median.verifier_threshold:g}), each review's blind process label, the task-level "
        "`final_human_process_label`. Reviewer vs reviewer takes every two reviewers of a "
        "task in both orders, so n counts each pair twice."
    )
    if counts:
        st.caption(
            "Pearson, Spearman, mean absolute difference and every kappa here: "
            + fmt.method_caption(median.bootstrap, counts)
        )
