"""The Shifts page's sections: the headline numbers and flip matrix, agreement with the
verifier per reviewer, the flipped cases; and the helpers that word them.

Wording and display tables live here; the numbers come from `lib.analysis.shifts`.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import parse_qs, urlsplit

import pandas as pd
import streamlit as st

from lib.analysis import shifts
from lib.charts import shifts as charts
from lib.metrics import Estimate
from lib.viewer.links import viewer_href
from ui import fmt, params, state, url, vega
from ui.download import csv_download
from ui.safe_text import inert, show_long_text

MEASURES = {"agreement": ("Raw agreement", True), "kappa": ("Cohen's kappa", False)}
"""``?measure=`` value -> (its words, whether it is a share drawn as a percent)."""


def kappa_metric(column, label: str, result: shifts.BlindInformed, help: str) -> None:
    """A blind → informed metric; the delta is the change with its interval."""
    flat = not result.diff.defined or round(result.diff.value, 2) == 0
    column.metric(
        label,
        blind_to_informed(result),
        fmt.signed_diff(result.diff, result.diff.ci),
        delta_color="off" if flat else "normal",
        delta_arrow="off" if flat else "auto",
        help=help,
    )


def percent_change(result: shifts.BlindInformed) -> str:
    """`70% → 86% (+16 points [+10, +21])` for a share measured blind and informed."""

    def pct(v: Estimate) -> str:
        return f"{v.value:.0%}" if v.defined else f"undefined ({v.reason})"

    text = f"{pct(result.blind)} → {pct(result.informed)}"
    if result.diff.defined:
        text += f" ({100 * result.diff.value:+.0f} points"
        ci = result.diff.ci
        if ci is not None and ci.defined:
            text += f" [{100 * ci.low:+.0f}, {100 * ci.high:+.0f}]"
            text += f" ({ci.reason})" if ci.reason else ""
        text += ")"
    return text


def blind_to_informed(result: shifts.BlindInformed) -> str:
    return f"{result.blind.fmt(2, 'undefined')} → {result.informed.fmt(2, 'undefined')}"


def counts_line(counts: dict[str, int]) -> str:
    """Markdown `answer: count · …`; the answers are raw dataset values, made inert."""
    return (
        " · ".join(f"{inert(k, 200) if k else '(empty)'}: {v}" for k, v in counts.items()) or "none"
    )


CASE_COLUMNS = {
    "trajectory": st.column_config.LinkColumn(
        "task", display_text=r"task=([^&]+)", help="Opens the trajectory viewer."
    ),
    "reviewer": st.column_config.TextColumn(width="small"),
    "blind": st.column_config.TextColumn("blind label", width="small"),
    "blind comment": st.column_config.TextColumn(width=108),
    "informed answer": st.column_config.TextColumn(
        "answer", width="small", help="The informed agreement value as stored."
    ),
    "informed comment": st.column_config.TextColumn(width=122),
    "verifier verdict shown": st.column_config.TextColumn("verdict shown", width=110),
    "flip": st.column_config.TextColumn(width=105),
    "toward verifier": st.column_config.CheckboxColumn("toward", width="small"),
}


def _word(label: object) -> str:
    return "" if pd.isna(label) else shifts.LABEL_WORDS[int(label)]


def _case_columns(rows: pd.DataFrame) -> dict[str, object]:
    """The columns every list of reviews starts with: viewer link, reviewer, blind label."""
    v = state.link_payload()  # links open a new tab: carry the uploads (?v=)
    links = [viewer_href(t, s, v=v) for t, s in zip(rows["task_id"], rows["split"], strict=True)]
    return {
        "trajectory": pd.Series(links, index=rows.index, dtype=object),
        "reviewer": rows["annotator"].astype(str),
        "dimension": rows["dimension"].astype(str),
        "blind": rows["blind"].map(_word),
    }


def flipped_display(rows: pd.DataFrame) -> pd.DataFrame:
    """`lib.analysis.shifts.flipped_cases` side by side, in words, with a link to the viewer."""
    columns = _case_columns(rows)
    columns["blind comment"] = rows["blind_comment"].astype(str)
    columns["informed answer"] = rows["agreement_value"].astype(str)
    columns["informed comment"] = rows["informed_comment"].astype(str)
    columns["informed"] = rows["informed"].map(_word)
    columns["verifier verdict shown"] = rows["shown"].map(_word)
    columns["flip"] = rows["direction"].astype(str)
    columns["toward verifier"] = rows["toward_verifier"].astype(bool)
    return pd.DataFrame(columns).reset_index(drop=True)


def other_answers_display(rows: pd.DataFrame) -> pd.DataFrame:
    """`lib.analysis.shifts.other_answers` as the page lists them."""
    columns = _case_columns(rows)
    columns["informed answer"] = rows["agreement_value"].astype(str)
    columns["informed comment"] = rows["informed_comment"].astype(str)
    columns["verifier verdict shown"] = rows["shown"].map(_word)
    return pd.DataFrame(columns).reset_index(drop=True)


def flipped_table(cases, where: str) -> None:
    """The flipped reviews; selecting one shows both comments in full."""
    st.caption(
        f"Each flipped review side by side; the task opens the trajectory viewer. Select a "
        f"row to read both comments in full. n = {len(cases)} reviews · split: {where}."
    )
    event = st.dataframe(
        cases,
        hide_index=True,
        column_order=list(CASE_COLUMNS),
        column_config=CASE_COLUMNS,
        on_select="rerun",
        selection_mode="single-row",
        key="shifts_cases",
    )
    picked = event.selection.rows if event is not None else []
    if not picked:
        return
    case = cases.iloc[picked[0]]
    href = str(case["trajectory"])  # ours: lib.viewer.links.viewer_href, url-encoded
    task = parse_qs(urlsplit(href).query).get("task", [""])[0]
    with st.container(border=True):
        st.markdown(
            f"**{inert(case['reviewer'], 200)}** on [{inert(task, 200)}]({href}): "
            f"{inert(case['flip'])} (verdict shown: {inert(case['verifier verdict shown'])})"
        )
        left, right = st.columns(2)
        left.caption(f"Blind: {inert(case['blind'], 200)}")
        with left:
            show_long_text("Blind comment", case["blind comment"] or "(no comment)")
        right.caption(
            f"Informed: {inert(case['informed answer'] or '(empty)', 200)} → "
            f"{inert(case['informed'], 200)}"
        )
        with right:
            show_long_text("Informed comment", case["informed comment"] or "(no comment)")


def no_informed_stage(asked: list[str]) -> None:
    names = fmt.split_label(asked)
    st.info(
        f"**The {names} split had no informed stage.** Its reviewers labelled each "
        "trajectory once, blind, and were never shown a verifier's verdict, so there is no "
        "shift to measure. Choose om2w (`fara7b_om2w_browserbase`) or both splits in the "
        "sidebar.",
        icon=":material/visibility_off:",
    )


def headline_section(
    chosen: shifts.ReviewerShift,
    inter: shifts.BlindInformed,
    dimension: str,
    whose: str,
    use: Sequence[str],
) -> None:
    """Flip rate, flips toward the verifier, both kappas blind -> informed, the flip matrix."""
    flips = chosen.flips
    where = fmt.split_label(use)
    st.header(f"{dimension.capitalize()} labels of {inert(whose, 200)}")
    a, b, c, d = st.columns(4)
    a.metric(
        "Labels flipped",
        f"{flips.flip_rate.value:.0%}" if flips.flip_rate.defined else "undefined",
        f"{flips.flips} of {flips.eligible} reviews",
        delta_color="off",
        delta_arrow="off",
        help="Reviews whose informed label differs from the blind one, of the reviews "
        "with both labels.",
    )
    b.metric(
        "Toward the verifier",
        f"{flips.toward_verifier} of {flips.flips}",
        f"{flips.against_verifier} against",
        delta_color="off",
        delta_arrow="off",
        help="A flip toward the verifier ends on the verdict shown (the reviewer agreed); "
        "against, on its opposite (the reviewer first matched it, then disagreed).",
    )
    kappa_metric(
        c,
        "Kappa with the verifier",
        chosen.kappa,
        "Cohen's kappa of the reviewers' labels with the verdict they were shown, "
        "blind → informed, on the same reviews; the change has a 95% paired bootstrap "
        "interval.",
    )
    kappa_metric(
        d,
        "Kappa between reviewers",
        inter,
        "Cohen's kappa between reviewers of the same task (every pair, both orders), "
        "blind → informed, on the pairs with all four labels. Always pooled.",
    )
    excluded = flips.reviews - flips.eligible
    st.caption(
        f"{fmt.n_caption(flips.eligible, excluded, use, 'reviews')}  \n"
        f"Kappa with the verifier: n = {chosen.kappa.n} reviews on {chosen.kappa.n_tasks} "
        f"tasks · between reviewers (all reviewers): n = {inter.n} pairs on "
        f"{inter.n_tasks} tasks.  \n"
        f"{fmt.method_caption(chosen.kappa, [chosen.kappa.n_clusters, inter.n_clusters])} "
        "Paired: the same resampled "
        "tasks give both stages."
    )

    matrix_col, facts_col = st.columns([3, 4])
    with matrix_col:
        st.markdown("**Flip matrix** (eligible reviews)")
        vega.altair_chart(charts.flip_matrix_chart(charts.matrix_frame(flips)), width="content")
        st.caption(f"n = {flips.eligible} reviews · split: {where} · dashed cells are flips.")
    with facts_col:
        p = flips.mcnemar_p
        p_text = f"{p.value:.3g}" if p.defined else f"undefined ({p.reason})"
        st.markdown(
            f"- **{flips.flips}** of **{flips.eligible}** labels flipped: "
            f"**{flips.success_to_failure}** {shifts.S2F}, "
            f"**{flips.failure_to_success}** {shifts.F2S}.\n"
            f"- **{flips.toward_verifier}** flips moved toward the verdict shown, "
            f"**{flips.against_verifier}** against it.\n"
            f"- McNemar's exact test (success → failure vs failure → success): "
            f"p = **{p_text}** (n = {flips.eligible} paired reviews).\n"
            f"- Agreement with the verdict shown: {percent_change(chosen.agreement)}.\n"
            f"- Informed answers ({flips.reviews} reviews): {counts_line(flips.answers)}.\n"
            f"- Not in the matrix ({excluded}): {counts_line(flips.excluded)}."
        )
        st.caption(f"split: {where} · {fmt.method_caption(chosen.agreement)}")


TABLE13_TITLES = {"fpr": "FPR", "fnr": "FNR", "kappa": "Cohen's kappa"}
"""Row titles of the Table 13 section, by `shifts.TABLE13_METRICS` name."""


def table13_frame(result: shifts.VerifierErrors) -> pd.DataFrame:
    """One row per metric: blind, informed, the paired change, n."""
    return pd.DataFrame(
        [
            {
                "metric": TABLE13_TITLES[name],
                "blind": fmt.value_with_ci(m.blind),
                "informed": fmt.value_with_ci(m.informed),
                "blind → informed [95% CI]": fmt.signed_diff(m.diff, m.diff.ci),
                "n reviews": m.n,
            }
            for name, m in result.metrics.items()
        ]
    )


def table13_section(result: shifts.VerifierErrors, dimension: str, where: str) -> None:
    """The paper's Table 13: the Universal Verifier's errors against blind and informed labels."""
    st.header("The Universal Verifier against blind and against informed labels")
    st.dataframe(table13_frame(result), hide_index=True)
    first = result.metrics[shifts.TABLE13_METRICS[0]]
    verdict = "its outcome verdict" if dimension == "outcome" else "its rubric score ≥ 0.8"
    st.caption(
        f"The verdict the reviewers were shown ({verdict}) scored against the reviewers' "
        f"{dimension} labels, all {result.n_reviewers} reviewers pooled: FPR = share of "
        "reviews labelled failure that the verifier passes, FNR = share labelled success it "
        f"fails. The same {first.n} reviews ({first.n_tasks} tasks) in both stages, so the "
        "change is paired · split: "
        f"{where} · {fmt.method_caption(first, [m.n_clusters for m in result.metrics.values()])}"
    )


def per_reviewer_section(summaries: Sequence[shifts.ReviewerShift], where: str) -> None:
    """Each reviewer's agreement with the verdict shown, blind and informed."""
    st.header("Agreement with the Universal Verifier, per reviewer")
    metric = url.choice(
        params.SHIFTS_MEASURE, list(MEASURES), "agreement", format_func=lambda m: MEASURES[m][0]
    )
    measure, percent = MEASURES[metric]
    vega.altair_chart(
        charts.agreement_dumbbell(charts.agreement_frame(summaries, metric), measure, percent),
        width="stretch",
    )
    st.caption(
        f"Blind (grey) and informed (blue) {measure.lower()} of each reviewer with the "
        f"verdict shown, on the reviews with both labels (n per row) · split: {where}. "
        "Hover a point for the change and its 95% interval."
    )
    with st.expander("The numbers per reviewer"):
        table = summary_table(summaries)
        formats = {
            "flip rate": st.column_config.NumberColumn(format="percent"),
            "agreement blind": st.column_config.NumberColumn(format="percent"),
            "agreement informed": st.column_config.NumberColumn(format="percent"),
            "McNemar p": st.column_config.NumberColumn(format="%.3g"),
            "kappa blind": st.column_config.NumberColumn(format="%.2f"),
            "kappa informed": st.column_config.NumberColumn(format="%.2f"),
            "kappa change": st.column_config.NumberColumn(format="%+.2f"),
        }
        split_at = table.columns.get_loc("agreement blind")  # flips, then agreement
        for title, columns in (
            ("Flips", list(table.columns[:split_at])),
            ("Agreement and kappa with the verdict shown",
             ["reviewer", *table.columns[split_at:]]),
        ):  # fmt: skip
            st.markdown(f"**{title}**")  # two tables: each fits a 1400 px window
            st.dataframe(table[columns], hide_index=True, column_config=formats)
        if summaries:
            counts = [r.n_clusters for s in summaries for r in (s.kappa, s.agreement)]
            st.caption(f"split: {where} · {fmt.method_caption(summaries[0].kappa, counts)}")
        csv_download(
            "Download per reviewer (CSV)", table, f"shifts_reviewers_{where}", "shifts_csv"
        )


def flipped_section(paired: pd.DataFrame, dimension: str, who: str, whose: str, where: str) -> None:
    """The flipped reviews (with links), and informed answers of no known category."""
    cases = flipped_display(shifts.flipped_cases(paired, dimension, who))
    st.header(f"Flipped cases ({len(cases)})")
    if cases.empty:
        st.caption(f"No {dimension} label of {inert(whose, 200)} flipped · split: {where}.")
    else:
        flipped_table(cases, where)
        csv_download(
            "Download the flipped cases (CSV)",
            cases,
            f"shifts_flips_{dimension}_{where}",
            "shifts_flips_csv",
        )
    others = other_answers_display(shifts.other_answers(paired, dimension))
    if not others.empty:
        st.markdown(f"**Informed answers that are neither agree nor disagree ({len(others)})**")
        st.caption(
            "Kept as their own category: they give no informed label. "
            f"n = {len(others)} reviews · split: {where}."
        )
        st.dataframe(
            others,
            hide_index=True,
            column_order=[c for c in CASE_COLUMNS if c in others.columns],
            column_config=CASE_COLUMNS,
        )


def summary_table(summaries: Sequence[shifts.ReviewerShift]) -> pd.DataFrame:
    """One row per reviewer (and all): the numbers behind the chart, for a table."""
    rows = []
    for s in summaries:
        f = s.flips
        rows.append(
            {
                "reviewer": shifts.ALL_TITLE if s.annotator == shifts.ALL else s.annotator,
                "reviews": f.reviews,
                "eligible": f.eligible,
                "flips": f.flips,
                "flip rate": f.flip_rate.value,
                "toward verifier": f.toward_verifier,
                "against verifier": f.against_verifier,
                shifts.S2F: f.success_to_failure,
                shifts.F2S: f.failure_to_success,
                "McNemar p": f.mcnemar_p.value,
                "agreement blind": s.agreement.blind.value,
                "agreement informed": s.agreement.informed.value,
                "kappa blind": s.kappa.blind.value,
                "kappa informed": s.kappa.informed.value,
                "kappa change": s.kappa.diff.value,
                "kappa change CI": fmt.interval_text(s.kappa.diff.ci),
            }
        )
    return pd.DataFrame(rows)
