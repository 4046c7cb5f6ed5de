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


MARGIN_HELP = (
    "The largest kappa shortfall still called 'as good as the reviewers'. 0.10 is about a "
    "fifth of the reviewers' kappa with each other on om2w, smaller than the step between "
    "two of Landis & Koch's agreement bands."
)

RECONCILE = (
    "Why these kappas are lower than on the Agreement page's table: there the verifier is "
    "compared with the adjudicated label (several reviewers' judgements merged, so less "
    "noisy); here it is compared with one reviewer at a time, and so are the reviewers "
    "with each other, so the parity test compares like with like."
)

POWER_WORDS = "too few reviewers per task for this test to pass"


@state.bounded_cache(max_entries=16, max_bytes=8 * state.MB)
def cached_parity(
    _table: pd.DataFrame,
    source: str,
    uploads: str,
    cluster: str,
    epsilon: float,
    threshold: float,
    verifiers: tuple[str, ...] | None,
    margin: float = P.MARGIN,
    _labels: pd.DataFrame | None = None,
) -> list[P.ParityRecord]:
    """`lib.analysis.parity.parity_records` of the shown verifiers (``uv_process`` at
    ``threshold``), at margin ``margin``; with the session's own labels (``_labels``, in the
    key through ``uploads``: `ui.agreement.uploads_key` hashes them), the records with you."""
    table = _table if threshold == UV_THRESHOLD else with_uv_threshold(_table, threshold)
    boot = Bootstrap(unit=cluster)
    return P.parity_records(table, boot, epsilon, verifiers, margin, _labels)


YOU_TITLE = "Your labels"
PANEL_WORDS = {None: "reviewers", P.PANEL: "reviewers + you", P.CANDIDATE: "reviewers"}
"""Who the verifier (or your labels) is compared with, per `YourPart.role`."""


def _title(record: P.ParityRecord, threshold: float) -> str:
    if record.you is not None and record.you.role == P.CANDIDATE:
        return f"{YOU_TITLE} ({record.dimension})"
    title = verifier_title(record.verifier, threshold)
    if record.verifier not in VERIFIERS:
        title += f" ({record.dimension})"
    return title


def panel_words(record: P.ParityRecord) -> str:
    return PANEL_WORDS[None if record.you is None else record.you.role]


def difference_words(record: P.ParityRecord) -> str:
    """The paired difference's verdict in words (`lib.analysis.parity.verdict_words`)."""
    k = record.kappa
    d, ci = k.diff, k.diff.ci
    if k.words is not None:
        return k.words
    if not d.diff.defined:
        return f"undefined ({d.diff.reason})"
    return f"difference {fmt.plus_minus(d.diff.value)}; no interval ({ci.reason})"


def power_text(record: P.ParityRecord) -> str:
    """`` a verifier exactly as good as a reviewer passes 61% of the time on this panel``."""
    if record.alt_power is None:
        return ""
    return (
        f"a verifier exactly as good as a reviewer would pass {record.alt_power:.0%} of the "
        "time on this panel"
    )


def alt_words(record: P.ParityRecord) -> str:
    """The alt-test's result: winning rate, pass or fail (or too little power to pass),
    who was tested, and the test's power on this panel."""
    alt = record.alt
    if not alt.winning_rate.defined:
        return f"alt-test not run ({alt.winning_rate.reason})"
    tested = alt.tested
    won = sum(d.rejected for d in tested)
    if record.low_power_fail:
        verdict = f"does not pass: {POWER_WORDS}"
    else:
        verdict = "passes" if alt.passed else "fails"
    power = power_text(record)
    who = "annotators" if record.you is not None and record.you.role == P.PANEL else "reviewers"
    return (
        f"alt-test (ε = {alt.epsilon:.2f}) {verdict}: it wins against {won} of {len(tested)} "
        f"{who} (winning rate {alt.winning_rate.value:.2f}, pass ≥ {P.PASS_RATE:.1f}); "
        f"advantage probability {alt.advantage_probability.value:.2f}"
        + (f"; {power}" if power else "")
    )


def _alt_cell(record: P.ParityRecord) -> str:
    alt = record.alt
    if alt.passed is None:
        return "undefined"
    word = "pass" if alt.passed else "low power" if record.low_power_fail else "fail"
    return f"{word} {alt.winning_rate.value:.2f}"


VERDICT_CELLS = {
    P.EQUIVALENT: "as good (±δ)",
    P.INFERIOR: "worse",
    P.SUPERIOR: "more than each other",
    P.NON_INFERIOR: "not worse by > δ",
    P.UNDETERMINED: "cannot tell",
}


def parity_frame(records: Sequence[P.ParityRecord], threshold: float) -> pd.DataFrame:
    """One row per record, every number as text."""
    rows = []
    with_you = any(r.you is not None for r in records)
    for r in records:
        k = r.kappa
        rows.append(
            {
                "verifier": _title(r, threshold),
                **({"panel": panel_words(r)} if with_you else {}),
                "kappa vs reviewers": fmt.value_with_ci(k.diff.a),
                "reviewers' kappa": fmt.value_with_ci(k.diff.b),
                "difference [95% CI]": fmt.signed_diff(k.diff.diff, k.diff.ci),
                "verdict": VERDICT_CELLS.get(k.verdict or "", "undefined"),
                "alt-test": _alt_cell(r),
                "power": "—" if r.alt_power is None else f"{r.alt_power:.0%}",
                "tasks": k.n_tasks,
            }
        )
    return pd.DataFrame(rows)


def reviewers_frame(records: Sequence[P.ParityRecord], threshold: float) -> pd.DataFrame:
    """The alt-test per held-out reviewer."""
    rows = []
    with_you = any(r.you is not None for r in records)
    for r in records:
        for d in r.alt.duels:
            rows.append(
                {
                    "verifier": _title(r, threshold),
                    **({"panel": panel_words(r)} if with_you else {}),
                    "reviewer": "you" if d.reviewer == P.YOU else d.reviewer,
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


def epsilon_input(param: object, margin_param: object | None = None) -> tuple[float, float]:
    """The alt-test's ε and the equivalence margin δ, kept in the URL (``?epsilon=``,
    ``?margin=``), side by side in narrow columns."""
    left, right, _ = st.columns([1, 1, 2])
    low, high = P.EPSILON_RANGE
    epsilon = url.number(param, low, high, P.EPSILON, where=left, step=0.01, help=EPSILON_HELP)
    if margin_param is None:
        return epsilon, P.MARGIN
    low, high = P.MARGIN_RANGE
    margin = url.number(margin_param, low, high, P.MARGIN, where=right, step=0.01, help=MARGIN_HELP)
    return epsilon, margin


def parity_section(records: Sequence[P.ParityRecord], threshold: float) -> None:
    """Both tests for the given records, in words, a table and the per-reviewer details
    (below the page's `TITLE` header and `epsilon_input`); the records with your labels in
    their own part below (`your_labels_part`)."""
    yours = [r for r in records if r.you is not None]
    _reviewers_part([r for r in records if r.you is None], threshold)
    if yours:
        your_labels_part(yours, threshold)
    elsewhere = P.labels_not_tested(state.session_labels(), records)
    if elsewhere:
        st.caption(
            "Your labels not in the parity tests (a split without two or more reviewers "
            "on a task): "
            + "; ".join(f"{fmt.split_label(s)} {d} {n:,}" for s, d, n in elsewhere)
            + "."
        )


def _reviewers_part(records: Sequence[P.ParityRecord], threshold: float) -> None:
    if not records:
        st.info(
            "No split has two or more reviewers' blind labels on a task for these verifiers, "
            "so human parity cannot be tested here.",
            icon=":material/group_off:",
        )
        return
    splits = sorted({r.split for r in records})
    margin = records[0].kappa.margin
    st.markdown(
        "**Paired difference**: on every task that two reviewers labelled blind, the verifier "
        "takes one reviewer's place and is compared with the other; kappa(verifier, reviewer) "
        "minus kappa(reviewer, reviewer) on the same pairs, with a paired interval. "
        f"The verdict is an equivalence test with margin δ = {margin:.2f} kappa (the largest "
        "shortfall still called as good): *as good* when the whole interval lies within "
        "±δ, *worse* when it is below 0, *not worse by more than δ* when its lower end is "
        "above −δ, and *cannot tell* otherwise. "
        "**Alt-test** (Calderon, Reichart & Dror, ACL 2025): each reviewer is held out in turn, "
        "and the verifier and that reviewer are scored by how well they match the other "
        "reviewers; the verifier passes when it wins against at least half of them."
    )
    st.caption(RECONCILE)
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
        f"task), the reviewers' blind labels only. Verdict, the first that applies: as good "
        f"= the whole 95% interval of the difference inside ±{margin:.2f}; worse = below 0; "
        "more than each other = above 0 (a copy of one reviewer lands here); not worse by "
        "> δ = lower end above −δ; cannot tell = otherwise. A verifier giving every task "
        "the same label is worse by definition. "
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
        f"tasks, Benjamini-Yekutieli at q = {first.alt.q_fdr:.2f}, ε = {first.alt.epsilon:.2f} "
        "(alt-test column: pass, fail or low power, and the winning rate); power: the share "
        "of 200 simulated panels of the same tasks and reviewers "
        "(reviewers agreeing with the kappa above) where a verifier exactly as good as a "
        f'reviewer passes (seeded); below 50% a fail reads "{POWER_WORDS}".'
    )
    with st.expander("Alt-test per held-out reviewer"):
        st.dataframe(reviewers_frame(records, threshold), hide_index=True)
        st.caption(
            "W_f: share of the reviewer's tasks where the verifier matches the other "
            "reviewers at least as well as the reviewer does; W_h the reverse (ties count for "
            "both). The verifier wins the duel with a reviewer when the test rejects "
            "mean(W_h − W_f) ≥ ε; a reviewer with too few tasks is not tested (—)."
        )


YOUR_TITLE = "With your labels"


def your_counts(records: Sequence[P.ParityRecord]) -> list[str]:
    """Per split and dimension: ``om2w outcome: 3 success / failure labels of yours, 1
    unsure (left out); used on 2–3 tasks`` (a task counts where the verifier has a label
    and two or more annotators)."""
    groups: dict[tuple[str, str], list[P.YourPart]] = {}
    for r in records:
        if r.you is not None:
            groups.setdefault((r.split, r.dimension), []).append(r.you)
    out = []
    for (split, dimension), parts in groups.items():
        used = sorted({p.n_used for p in parts})
        span = f"{used[0]:,}" if len(used) == 1 else f"{used[0]:,}–{used[-1]:,}"
        out.append(
            f"{fmt.split_label(split)} {dimension}: {parts[0].n_labels:,} success / failure "
            f"labels of yours, {parts[0].n_unsure:,} unsure (left out); used on {span} tasks"
        )
    return out


def your_labels_part(records: Sequence[P.ParityRecord], threshold: float) -> None:
    """The parity records with your labels (`lib.analysis.parity`: you join the panel, and
    your labels in the verifier's place): words, a table, the per-annotator details."""
    st.subheader(YOUR_TITLE)
    st.markdown(
        "Your labels (the Audit page's re-labels or your labels file) as one more human: "
        "**reviewers + you**: each verifier tested again with you as one more annotator of "
        "the panel (on a task you labelled, you are one more label to match, and the "
        "reviewers are held out against you too); **your labels**: your labels take the "
        "verifier's place, against the reviewers alone, on the reviewed tasks you labelled. "
        "Only your own success / failure labels count (not the final label used elsewhere)."
    )
    for r in records:
        tasks = (
            f"{r.kappa.n_tasks} tasks, {r.kappa.n_pairs} annotator pairs"
            + (f", {r.kappa.n_missing_verifier} reviewed tasks you did not label left out"
               if r.you is not None and r.you.role == P.CANDIDATE else "")
        )  # fmt: skip
        st.markdown(
            f"- **{inert(_title(r, threshold))}** vs {panel_words(r)}: "
            f"{difference_words(r)} ({tasks}); {alt_words(r)}."
        )
    st.dataframe(parity_frame(records, threshold), hide_index=True)
    first = records[0]
    st.caption(
        "Your labels: "
        + "; ".join(your_counts(records))
        + " (a task is used where the verifier has a label and two or more annotators). "
        f"Your labels as the candidate get a verdict on {P.MIN_YOUR_TASKS} or more reviewed "
        "tasks. You labelled after seeing the reviewers' labels and the verifier's verdicts "
        "(not blind), and the Audit page offers the contested tasks, where the reviewers "
        "disagree: read these as how the tests move with your judgement on those tasks, not "
        "as a blind panel. Your labels are tested in the alt-test only against a reviewer "
        f"with at least {first.alt.min_tasks} of your tasks, and you are tested as a held-out "
        f"annotator only with {first.alt.min_tasks} or more labels; below that you are listed "
        "(not tested) and still count in the others' scores. Split, margin, ε, intervals: as "
        "above; " + fmt.method_caption(first.kappa.bootstrap, [r.kappa.n_clusters for r in records])
    )
    with st.expander("Alt-test per held-out annotator, with your labels"):
        st.dataframe(reviewers_frame(records, threshold), hide_index=True)
