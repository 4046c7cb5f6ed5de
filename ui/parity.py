"""The human-parity section (Agreement and Your verifier pages): the paired kappa difference
and the alt-test of `lib.analysis.parity`, in words and one table.
Numbers come from `lib.analysis.parity`;
every sentence is built from the record it describes."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from lib.analysis import parity as P
from lib.analysis.agreement import verifier_title
from lib.metrics import Value
from lib.table.verdicts import VERIFIERS, with_uv_threshold
from lib.vocab import UV_THRESHOLD, Bootstrap
from ui import fmt, state, url
from ui.safe_text import inert

EPSILON_HELP = (
    "The alt-test's cost advantage granted to the verifier: it 'wins' against a reviewer "
    "when it represents the other reviewers at least as well as that reviewer, up to ε "
    "(Calderon et al. suggest 0.2 for experts, 0.15 for skilled annotators, 0.1 for crowd "
    "workers; smaller when the humans agree less)."
)


@state.bounded_cache(max_entries=16, max_bytes=8 * state.MB)
def cached_parity(
    _table: pd.DataFrame,
    source: str,
    uploads: str,
    cluster: str,
    epsilon: float,
    threshold: float,
    verifiers: tuple[str, ...] | None,
) -> list[P.ParityRecord]:
    """`lib.analysis.parity.parity_records` of the shown verifiers (``uv_process`` at
    ``threshold``)."""
    table = _table if threshold == UV_THRESHOLD else with_uv_threshold(_table, threshold)
    return P.parity_records(table, Bootstrap(unit=cluster), epsilon, verifiers)


def _title(record: P.ParityRecord, threshold: float) -> str:
    title = verifier_title(record.verifier, threshold)
    if record.verifier not in VERIFIERS:
        title += f" ({record.dimension})"
    return title


def difference_words(record: P.ParityRecord) -> str:
    """The paired difference in words, with the margins its interval allows."""
    k = record.kappa
    d, ci = k.diff, k.diff.ci
    if not d.diff.defined:
        return f"undefined ({d.diff.reason})"
    if not ci.defined:
        return f"difference {fmt.plus_minus(d.diff.value)}; no interval ({ci.reason})"
    lo, hi = ci.low, ci.high
    if k.words == P.BELOW:
        return f"{k.words}: {-hi:.2f} to {-lo:.2f} lower kappa than the reviewers with each other"
    if k.words == P.ABOVE:
        return f"{k.words}: {lo:.2f} to {hi:.2f} higher kappa than the reviewers with each other"
    return (
        f"{k.words}: the interval holds 0; it allows up to {-lo:.2f} lower or "
        f"{hi:.2f} higher kappa than the reviewers with each other"
    )


def alt_words(record: P.ParityRecord) -> str:
    """The alt-test's result: winning rate, pass or fail, who was tested."""
    alt = record.alt
    if not alt.winning_rate.defined:
        return f"alt-test not run ({alt.winning_rate.reason})"
    tested = alt.tested
    won = sum(d.rejected for d in tested)
    verdict = "passes" if alt.passed else "fails"
    return (
        f"alt-test (ε = {alt.epsilon:.2f}) {verdict}: it wins against {won} of {len(tested)} "
        f"reviewers (winning rate {alt.winning_rate.value:.2f}, pass ≥ {P.PASS_RATE:.1f}); "
        f"advantage probability {alt.advantage_probability.value:.2f}"
    )


def parity_frame(records: Sequence[P.ParityRecord], threshold: float) -> pd.DataFrame:
    """One row per record, every number as text."""
    rows = []
    for r in records:
        k, alt = r.kappa, r.alt
        rows.append(
            {
                "verifier": _title(r, threshold),
                "kappa vs reviewers": fmt.value_with_ci(k.diff.a),
                "reviewers' kappa": fmt.value_with_ci(k.diff.b),
                "difference [95% CI]": fmt.signed_diff(k.diff.diff, k.diff.ci),
                "verdict": (k.words or "undefined").split()[0],
                "alt-test (winning rate)": (
                    "undefined"
                    if alt.passed is None
                    else f"{'pass' if alt.passed else 'fail'} {alt.winning_rate.value:.2f}"
                ),
                "tasks": k.n_tasks,
            }
        )
    return pd.DataFrame(rows)


def reviewers_frame(records: Sequence[P.ParityRecord], threshold: float) -> pd.DataFrame:
    """The alt-test per held-out reviewer."""
    rows = []
    for r in records:
        for d in r.alt.duels:
            rows.append(
                {
                    "verifier": _title(r, threshold),
                    "reviewer": d.reviewer,
                    "tasks": d.n_tasks,
                    "verifier wins (W_f)": round(d.verifier_wins, 3),
                    "reviewer wins (W_h)": round(d.reviewer_wins, 3),
                    "p-value": f"not tested (< {r.alt.min_tasks} tasks)"
                    if d.p_value is None
                    else fmt.p_value(Value(d.p_value)),
                    "verifier wins": "—" if d.p_value is None else "yes" if d.rejected else "no",
                }
            )
    return pd.DataFrame(rows)


TITLE = "As good as a human? The human-parity tests"


def epsilon_input(param: object) -> float:
    """The alt-test's ε, kept in the URL (``?epsilon=``), in a narrow column."""
    box = st.columns([1, 3])[0]
    low, high = P.EPSILON_RANGE
    return url.number(param, low, high, P.EPSILON, where=box, step=0.01, help=EPSILON_HELP)


def parity_section(records: Sequence[P.ParityRecord], threshold: float) -> None:
    """Both tests for the given records, in words, a table and the per-reviewer details
    (below the page's `TITLE` header and `epsilon_input`)."""
    if not records:
        st.info(
            "No split has two or more reviewers' blind labels on a task for these verifiers, "
            "so human parity cannot be tested here.",
            icon=":material/group_off:",
        )
        return
    splits = sorted({r.split for r in records})
    st.markdown(
        "**Paired difference**: on every task that two reviewers labelled blind, the verifier "
        "takes one reviewer's place and is compared with the other; kappa(verifier, reviewer) "
        "minus kappa(reviewer, reviewer) on the same pairs, with a paired interval. "
        "**Alt-test** (Calderon, Reichart & Dror, ACL 2025): each reviewer is held out in turn, "
        "and the verifier and that reviewer are scored by how well they match the other "
        "reviewers; the verifier passes when it wins against at least half of them."
    )
    for r in records:
        st.markdown(
            f"- **{inert(_title(r, threshold))}**: {difference_words(r)} ({r.kappa.n_tasks} "
            f"tasks, {r.kappa.n_pairs} reviewer pairs); {alt_words(r)}."
        )
    st.dataframe(parity_frame(records, threshold), hide_index=True)
    missing = [r for r in records if r.kappa.n_missing_verifier]
    first = records[0]
    st.caption(
        f"Split: {fmt.split_label(splits)} (the only split with two or more reviewers on a "
        f"task), the reviewers' blind labels only. Verdict: below / above = the whole 95% "
        "interval of the difference is below / above 0; within = it holds 0. "
        + (
            "Tasks without the verifier's label are left out of both sides: "
            + "; ".join(
                f"{inert(_title(r, threshold))} {r.kappa.n_missing_verifier}" for r in missing
            )
            + ". "
            if missing
            else ""
        )
        + fmt.method_caption(first.kappa.bootstrap, [r.kappa.n_clusters for r in records])
        + f" Alt-test: one-sided t-test per reviewer with at least {first.alt.min_tasks} "
        f"tasks, Benjamini-Yekutieli at q = {first.alt.q_fdr:.2f}, ε = {first.alt.epsilon:.2f}."
    )
    with st.expander("Alt-test per held-out reviewer"):
        st.dataframe(reviewers_frame(records, threshold), hide_index=True)
        st.caption(
            "W_f: share of the reviewer's tasks where the verifier matches the other "
            "reviewers at least as well as the reviewer does; W_h the reverse (ties count for "
            "both). The verifier wins the duel with a reviewer when the test rejects "
            "mean(W_h − W_f) ≥ ε; a reviewer with too few tasks is not tested (—)."
        )
