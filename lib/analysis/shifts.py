"""Shifts: how seeing the Universal Verifier's verdict changed the reviewers' labels.

In the om2w split every reviewer labelled each trajectory twice: blind, then after seeing
the Universal Verifier's verdict, saying whether they agree. The informed label is
derived once, in `lib.table.labels.informed_label` from the verdict shown (`shown_verdict`),
and stored in the verdict table as rater `JudgeN@informed` with the agreement category
in `raw`. This module joins each reviewer's blind and informed rows on (task,
dimension) and measures the shift:

- flips (blind label != informed label), toward or against the verdict shown, success ->
  failure vs failure -> success, and McNemar's exact test on the paired labels;
- Cohen's kappa and raw agreement of the reviewers with the verdict shown, blind vs
  informed, with a paired task-bootstrap interval for the difference;
- the inter-reviewer kappa (pairs of reviewers on the same task), blind vs informed;
- the paper's Table 13 (`verifier_errors`): the Universal Verifier's FPR, FNR and kappa
  against the reviewers' blind labels and against their informed labels, pooled over
  reviewers, on the same reviews in both stages (paired interval of informed - blind).

The page (`pages/3_Shifts.py`) and `python -m lib.report` (key `shifts`) both call
`shift_summaries` / `inter_reviewer_shift`, so they show the same numbers.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from lib.data.load import Bench
from lib.metrics import (
    Estimate,
    Value,
    mcnemar_exact,
    paired_bootstrap_diff,
)
from lib.table.clusters import check_mode, cluster_ids
from lib.table.labels import (
    AGREE,
    DISAGREE,
    NOT_GIVEN,
    informed_label,
)
from lib.table.pairs import co_raters
from lib.table.verdicts import shown_process_verdict, shown_verdicts
from lib.vocab import (
    ALL,
    BOOTSTRAP,
    SPLITS,
    UNIT_WORDS,
    Bootstrap,
    reviewer_sort_key,
)

DIMENSIONS: tuple[str, ...] = ("outcome", "process")
"""The pooled group: every reviewer's reviews together."""
ALL_TITLE = "All reviewers"

KEYS = ["split", "task_id", "annotator"]
LABEL_WORDS = {1: "success", 0: "failure"}
S2F = "success → failure"
F2S = "failure → success"

# Why a review has no (blind, informed) pair, checked in this order.
BLIND_MISSING = "blind label missing"
NO_INFORMED_ANSWER = "informed: not given"
OTHER_ANSWER = "informed: other value"
VERDICT_MISSING = "verdict shown missing"


def _doc(obj: Any) -> str:
    """A docstring as one Markdown paragraph per docstring paragraph."""
    paragraphs = (inspect.getdoc(obj) or "").split("\n\n")
    return "\n\n".join(" ".join(p.split()) for p in paragraphs)


def derivation_markdown() -> str:
    """The derivation rule for the page, taken from the docstrings of the code that applies it.

    Stating it from the docstrings (not in new prose) keeps the page and the code from
    drifting apart.
    """
    process = _doc(shown_process_verdict).replace(">=", "≥")
    return (
        f"**Informed label.** {_doc(informed_label)}\n\n"
        "**Verdict shown, outcome:** the Universal Verifier's own boolean "
        "`uv_outcome_success`.\n\n"
        f"**Verdict shown, process:** {process}"
    )


def informed_splits(table: pd.DataFrame, splits: Iterable[str] | None = None) -> list[str]:
    """The splits (of `splits`, default all) whose reviews have an informed stage.

    In the dataset that is om2w only: the internal split was reviewed blind only, so its
    reviewers have no informed rows in the verdict table.
    """
    present = set(table.loc[table["stage"] == "informed", "split"].dropna())
    wanted = list(SPLITS) if splits is None else list(splits)
    ordered = [s for s in SPLITS if s in wanted] + [s for s in wanted if s not in SPLITS]
    return [s for s in ordered if s in present]


def _keys_as_string(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    out = frame.copy()
    for column in columns:
        out[column] = out[column].astype("string")
    return out


def _text(values: pd.Series) -> pd.Series:
    """Free text as stored, with null shown as "" (comments, raw agreement values)."""
    return values.astype("string").fillna("")


def _annotation_text(annotations: pd.DataFrame, splits: Sequence[str]) -> pd.DataFrame:
    """Per (review, dimension): the stored agreement value and both comments."""
    ann = annotations[annotations["split"].isin(splits)]
    parts = []
    for dimension in DIMENSIONS:
        part = ann[KEYS].copy()
        part["dimension"] = dimension
        for target, column in (
            ("agreement_value", f"informed_{dimension}_agreement"),
            ("blind_comment", f"{dimension}_comment"),
            ("informed_comment", f"informed_{dimension}_comment"),
        ):
            source = ann[column] if column in ann else pd.Series(pd.NA, index=ann.index)
            part[target] = _text(source)
        parts.append(part)
    frame = pd.concat(parts, ignore_index=True)
    frame = _keys_as_string(frame, [*KEYS, "dimension"])
    return frame.drop_duplicates([*KEYS, "dimension"])


def _reasons(out: pd.DataFrame) -> pd.Series:
    """Why each review has no (blind, informed) pair, the first that applies; NA if it has."""
    known = out["agreement"].isin([AGREE, DISAGREE])
    conditions = [
        out["blind"].isna().to_numpy(),
        (out["agreement"] == NOT_GIVEN).to_numpy(),
        (~known).to_numpy(),
        out["shown"].isna().to_numpy(),
    ]
    choices = [BLIND_MISSING, NO_INFORMED_ANSWER, OTHER_ANSWER, VERDICT_MISSING]
    reason = np.select(conditions, choices, default="")
    return pd.Series(reason, index=out.index, dtype="string").replace("", pd.NA)


PAIRED_COLUMNS = [
    *KEYS,
    "dimension",
    "blind",
    "blind_raw",
    "agreement",
    "agreement_value",
    "shown",
    "informed",
    "eligible",
    "excluded_because",
    "flipped",
    "toward_verifier",
    "against_verifier",
    "direction",
    "blind_comment",
    "informed_comment",
]


def paired_reviews(
    table: pd.DataFrame, annotations: pd.DataFrame, splits: Iterable[str] | None = None
) -> pd.DataFrame:
    """One row per (split, task, reviewer, dimension) of the splits with an informed stage.

    Columns: `blind` and `informed` (Int8 1/0/NA) from the verdict table (reviewer and
    `reviewer@informed` rows); `blind_raw` (a blind value that is not a label, e.g.
    `partial`); `agreement` (the category: `agree`, `disagree`, `not given`, or the
    unknown value itself); `agreement_value` (the value as stored); `shown` (the verdict
    the reviewer was shown, `lib.table.verdicts.shown_verdicts`, read from the verdict table);
    `eligible` (both labels present);
    `excluded_because` (why not); `flipped`, `toward_verifier` (informed == shown),
    `against_verifier`, `direction` (`success → failure` / `failure → success`);
    `blind_comment`, `informed_comment`.

    Only splits with an informed stage are included (see `informed_splits`), so a split
    reviewed blind only gives no rows rather than rows of missing informed labels.
    """
    use = informed_splits(table, splits)
    human = _keys_as_string(
        table[(table["kind"] == "human") & table["split"].isin(use)],
        [*KEYS, "dimension", "stage"],
    )
    cols = [*KEYS, "dimension", "label", "raw"]
    blind = human.loc[human["stage"] == "blind", cols].rename(
        columns={"label": "blind", "raw": "blind_raw"}
    )
    informed = human.loc[human["stage"] == "informed", cols].rename(
        columns={"label": "informed", "raw": "agreement"}
    )
    out = blind.merge(informed, on=[*KEYS, "dimension"], how="outer")
    out["agreement"] = out["agreement"].fillna(NOT_GIVEN)
    out = out.merge(_annotation_text(annotations, use), on=[*KEYS, "dimension"], how="left")
    shown = shown_verdicts(table)
    shown = shown[shown["split"].isin(use)]
    out = out.merge(shown, on=["split", "task_id", "dimension"], how="left")
    for column in ("agreement_value", "blind_comment", "informed_comment"):
        out[column] = _text(out[column])
    for column in ("blind", "informed", "shown"):
        out[column] = out[column].astype("Int8")

    out["eligible"] = (out["blind"].notna() & out["informed"].notna()).astype(bool)
    out["excluded_because"] = _reasons(out)
    # An informed label exists only with a shown verdict, so the two reasons agree.
    out.loc[out["eligible"], "excluded_because"] = pd.NA
    same = (out["blind"] == out["informed"]).fillna(True).astype(bool)
    out["flipped"] = out["eligible"] & ~same
    toward = (out["informed"] == out["shown"]).fillna(False).astype(bool)
    out["toward_verifier"] = out["flipped"] & toward
    out["against_verifier"] = out["flipped"] & ~toward
    direction = np.where(out["blind"].fillna(0).astype(int) == 1, S2F, F2S)
    out["direction"] = pd.Series(np.where(out["flipped"], direction, ""), index=out.index)
    out["direction"] = out["direction"].astype("string")
    rank = {name: i for i, name in enumerate(reviewers(out))}
    out["_rank"] = out["annotator"].map(rank)
    out = out.sort_values(["split", "task_id", "_rank", "dimension"])
    return out[PAIRED_COLUMNS].reset_index(drop=True)


def reviewers(paired: pd.DataFrame) -> list[str]:
    """The reviewers in a paired frame, in natural order (`Judge9` before `Judge11`)."""
    return sorted(paired["annotator"].dropna().unique().tolist(), key=reviewer_sort_key)


# ---------------------------------------------------------------------------------------
# Statistics
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BlindInformed:
    """A metric blind vs informed on the same rows; `diff` = informed - blind.

    `blind`, `informed` and `diff` are `lib.metrics.Estimate` s; `diff.ci` is the
    percentile interval of the difference over a paired cluster bootstrap (one set of
    resampled clusters applied to both stages); `n` counts the rows used (reviews, or
    reviewer pairs), `n_tasks` the tasks they come from, `n_clusters` the clusters the
    bootstrap resampled (tasks, or websites/families under ``bootstrap.unit == "site"``).
    """

    metric: str
    blind: Estimate
    informed: Estimate
    diff: Estimate
    n: int
    n_tasks: int
    n_clusters: int = 0
    bootstrap: Bootstrap = BOOTSTRAP


@dataclass(frozen=True)
class FlipStats:
    """How one reviewer's (or all reviewers') labels moved from blind to informed.

    `matrix` counts the eligible reviews by (blind, informed) label, keys
    `success → success`, `success → failure`, `failure → success`, `failure → failure`.
    `answers` counts the agreement categories of every review (`agree`, `disagree`,
    `not given`, unknown values by name), `values` the agreement values as stored (""
    for empty), and `excluded` the reviews without a pair by reason.
    """

    annotator: str
    reviews: int
    eligible: int
    flips: int
    flip_rate: Value
    toward_verifier: int
    against_verifier: int
    success_to_failure: int
    failure_to_success: int
    mcnemar_p: Value
    matrix: dict[str, int] = field(default_factory=dict)
    answers: dict[str, int] = field(default_factory=dict)
    values: dict[str, int] = field(default_factory=dict)
    excluded: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class ReviewerShift:
    """Everything the page shows for one reviewer (or `all`) on one dimension."""

    annotator: str
    dimension: str
    flips: FlipStats
    kappa: BlindInformed
    agreement: BlindInformed


def _counts(values: pd.Series) -> dict[str, int]:
    return {str(k): int(v) for k, v in values.value_counts(sort=True).items()}


def flip_stats(paired: pd.DataFrame, annotator: str = ALL) -> FlipStats:
    """Flip counts, flip rate and McNemar's exact test of the rows of `paired`.

    The flip rate is flips / eligible (reviews with both labels); McNemar tests whether
    success -> failure and failure -> success are equally likely (p = 1.0 when nothing
    flipped; undefined when no review is eligible).
    """
    eligible = paired[paired["eligible"]]
    blind = eligible["blind"].astype(int)
    informed = eligible["informed"].astype(int)
    flips = int(eligible["flipped"].sum())
    matrix = {
        f"{LABEL_WORDS[b]} → {LABEL_WORDS[i]}": int(((blind == b) & (informed == i)).sum())
        for b in (1, 0)
        for i in (1, 0)
    }
    n = len(eligible)
    return FlipStats(
        annotator=annotator,
        reviews=len(paired),
        eligible=n,
        flips=flips,
        flip_rate=Value(flips / n) if n else Value(None, "n = 0"),
        toward_verifier=int(eligible["toward_verifier"].sum()),
        against_verifier=int(eligible["against_verifier"].sum()),
        success_to_failure=matrix[S2F],
        failure_to_success=matrix[F2S],
        mcnemar_p=mcnemar_exact(paired["informed"], paired["blind"]),
        matrix=matrix,
        answers=_counts(paired["agreement"]),
        values=_counts(paired["agreement_value"]),
        excluded=_counts(paired["excluded_because"].dropna()),
    )


def _clusters(frame: pd.DataFrame, cluster: str) -> Any:
    """Bootstrap unit: the task (split + id, in case a page pools several splits), or its
    website/family (`lib.table.clusters.cluster_ids`) with ``cluster="site"``."""
    if check_mode(cluster) == "site":
        return cluster_ids(frame["task_id"].astype(str).tolist(), cluster)
    return frame["split"].astype(str) + "/" + frame["task_id"].astype(str)


def _blind_informed(
    frame: pd.DataFrame,
    columns: tuple[str, str, str, str],
    metric: str,
    boot: Bootstrap,
) -> BlindInformed:
    """``columns`` = informed pred, informed ref, blind pred, blind ref of ``frame``."""
    informed_pred, informed_ref, blind_pred, blind_ref = (frame[c] for c in columns)
    diff = paired_bootstrap_diff(
        informed_pred,
        informed_ref,
        blind_pred,
        blind_ref,
        _clusters(frame, boot.unit),
        metric=metric,
        boot=boot,
    )
    complete = frame[list(columns)].notna().all(axis=1).to_numpy(dtype=bool)
    task_keys = frame["split"].astype(str) + "/" + frame["task_id"].astype(str)
    return BlindInformed(
        metric,
        Estimate.of(diff.b),
        Estimate.of(diff.a),
        Estimate.of(diff.diff, diff.ci),
        diff.n,
        n_tasks=int(task_keys[complete].nunique()),
        n_clusters=diff.n_clusters,
        bootstrap=boot,
    )


def verifier_agreement(
    paired: pd.DataFrame,
    metric: str = "kappa",
    boot: Bootstrap = BOOTSTRAP,
) -> BlindInformed:
    """`metric` of the reviewers' labels against the verdict shown, blind vs informed.

    Uses the eligible reviews (blind, informed and shown all present), so both stages are
    measured on the same reviews; the interval of the difference resamples tasks.
    `metric="accuracy"` is the share of reviews that match the verdict shown; informed,
    it is the share of `agree` answers.
    """
    return _blind_informed(
        paired,
        ("informed", "shown", "blind", "shown"),
        metric,
        boot,
    )


def reviewer_shift(
    paired: pd.DataFrame,
    dimension: str,
    annotator: str = ALL,
    boot: Bootstrap = BOOTSTRAP,
) -> ReviewerShift:
    """Flip statistics and agreement with the verifier of one reviewer (or `all`)."""
    rows = paired[paired["dimension"] == dimension]
    if annotator != ALL:
        rows = rows[rows["annotator"] == annotator]
    return ReviewerShift(
        annotator=annotator,
        dimension=dimension,
        flips=flip_stats(rows, annotator),
        kappa=verifier_agreement(rows, "kappa", boot),
        agreement=verifier_agreement(rows, "accuracy", boot),
    )


def shift_summaries(
    paired: pd.DataFrame,
    dimension: str,
    boot: Bootstrap = BOOTSTRAP,
) -> list[ReviewerShift]:
    """`all` first, then every reviewer in natural order."""
    groups = [ALL, *reviewers(paired[paired["dimension"] == dimension])]
    return [reviewer_shift(paired, dimension, g, boot) for g in groups]


def reviewer_pairs(paired: pd.DataFrame, dimension: str) -> pd.DataFrame:
    """Every ordered pair of distinct reviewers of the same task: (a, b) and (b, a).

    Columns `split, task_id, a, b, blind_a, blind_b, informed_a, informed_b`. Each
    unordered pair appears in both orders, so Cohen's kappa on these rows does not depend
    on which reviewer is called a: it is Scott's pi of the pairs, which equals Fleiss'
    kappa when every task has two reviewers. A task with three reviewers gives three
    unordered pairs.
    """
    rows = paired[paired["dimension"] == dimension]
    frame = co_raters(rows, "annotator", values=("blind", "informed"))
    for column in ("blind_a", "blind_b", "informed_a", "informed_b"):
        frame[column] = frame[column].astype("Int8")
    return frame


def inter_reviewer_shift(
    paired: pd.DataFrame,
    dimension: str,
    boot: Bootstrap = BOOTSTRAP,
) -> BlindInformed:
    """Kappa between reviewers of the same task, blind vs informed, with a paired interval.

    Uses the reviewer pairs where both reviewers have both labels (`reviewer_pairs`), so
    both stages are measured on the same pairs; resamples tasks. `n` counts unordered
    pairs.
    """
    pairs = reviewer_pairs(paired, dimension)
    result = _blind_informed(
        pairs,
        ("informed_a", "informed_b", "blind_a", "blind_b"),
        "kappa",
        boot,
    )
    return replace(result, n=result.n // 2)


TABLE13_METRICS: tuple[str, ...] = ("fpr", "fnr", "kappa")
"""The metrics of the paper's Table 13, in its order."""


@dataclass(frozen=True)
class VerifierErrors:
    """Table 13 of one split and dimension: the verdict shown (the Universal Verifier's)
    against the reviewers' labels, blind vs informed, pooled over reviewers.

    ``metrics[name]`` is a `BlindInformed` (``blind``, ``informed``, ``diff`` = informed -
    blind with its paired interval; ``n`` reviews used, the same in both stages)."""

    split: str
    dimension: str
    metrics: dict[str, BlindInformed]
    n_reviewers: int


def verifier_errors(
    paired: pd.DataFrame, dimension: str, boot: Bootstrap = BOOTSTRAP
) -> VerifierErrors:
    """The Universal Verifier's FPR, FNR and kappa against the reviewers (Table 13).

    The verifier is the rater under study (``pred`` = the verdict shown), a reviewer's
    label the reference: FPR = verdicts of success on reviews labelled failure / reviews
    labelled failure. Rows: the reviews of ``paired`` (one split) with a blind label, an
    informed label and a shown verdict, so both stages are measured on the same reviews,
    by the same reviewers; the interval of informed - blind resamples ``boot.unit``
    clusters once for both stages.
    """
    rows = paired[paired["dimension"] == dimension]
    columns = ("shown", "informed", "shown", "blind")
    metrics = {m: _blind_informed(rows, columns, m, boot) for m in TABLE13_METRICS}
    used = rows[list(dict.fromkeys(columns))].notna().all(axis=1)
    split = ", ".join(sorted(rows["split"].astype(str).unique()))
    return VerifierErrors(split, dimension, metrics, int(rows.loc[used, "annotator"].nunique()))


def verifier_error_records(bench: Bench, boot: Bootstrap = BOOTSTRAP) -> list[VerifierErrors]:
    """The ``uv_blind_informed`` key of `python -m lib.report`: Table 13 per split with an
    informed stage and per dimension."""
    out = []
    for split in informed_splits(bench.verdicts):
        paired = paired_reviews(bench.verdicts, bench.annotations, [split])
        out += [replace(verifier_errors(paired, d, boot), split=split) for d in DIMENSIONS]
    return out


# ---------------------------------------------------------------------------------------
# Frames for charts and tables
# ---------------------------------------------------------------------------------------


def _select(paired: pd.DataFrame, dimension: str | None, annotator: str) -> pd.DataFrame:
    rows = paired if dimension is None else paired[paired["dimension"] == dimension]
    return rows if annotator == ALL else rows[rows["annotator"] == annotator]


def flipped_cases(
    paired: pd.DataFrame, dimension: str | None = None, annotator: str = ALL
) -> pd.DataFrame:
    """The flipped reviews (rows of `paired`, its columns), optionally only one dimension
    and / or one reviewer. The page's side-by-side wording is `ui.shifts.flipped_display`.
    """
    rows = _select(paired, dimension, annotator)
    return rows[rows["flipped"]].reset_index(drop=True)


def other_answers(
    paired: pd.DataFrame, dimension: str | None = None, annotator: str = ALL
) -> pd.DataFrame:
    """Reviews whose informed answer is neither agree, disagree nor empty (kept visible):
    rows of `paired`; the page's wording is `ui.shifts.other_answers_display`."""
    rows = _select(paired, dimension, annotator)
    return rows[~rows["agreement"].isin([AGREE, DISAGREE, NOT_GIVEN])].reset_index(drop=True)


# ---------------------------------------------------------------------------------------
# Headless report
# ---------------------------------------------------------------------------------------


def ci_method(result: BlindInformed) -> str:
    """The report's ``ci_method``, said from the result: its unit, its clusters, its
    settings ("paired percentile bootstrap over websites/families (61 clusters), ...")."""
    b = result.bootstrap
    unit = UNIT_WORDS.get(b.unit, b.unit)
    return (
        f"paired percentile bootstrap over {unit} ({result.n_clusters} clusters), "
        f"{b.n_resamples} resamples, seed {b.seed}"
    )


@dataclass(frozen=True)
class ShiftRecord:
    """One reviewer (or `all`) on one split and dimension, for the report (`report_records`):
    the page's `ReviewerShift`, and for `all` the inter-reviewer kappa (`inter`).
    `lib.report.shift_json` flattens it (README, key `shifts`)."""

    split: str
    shift: ReviewerShift
    inter: BlindInformed | None = None


def split_records(
    table: pd.DataFrame,
    annotations: pd.DataFrame,
    split: str,
    boot: Bootstrap = BOOTSTRAP,
) -> list[ShiftRecord]:
    """Records of one split: per dimension, `all` (with the inter-reviewer kappa) first."""
    paired = paired_reviews(table, annotations, [split])
    out = []
    for dimension in DIMENSIONS:
        inter = inter_reviewer_shift(paired, dimension, boot)
        for s in shift_summaries(paired, dimension, boot):
            out.append(ShiftRecord(split, s, inter if s.annotator == ALL else None))
    return out


def report_records(bench: Bench, boot: Bootstrap = BOOTSTRAP) -> list[ShiftRecord]:
    """The `shifts` key of `python -m lib.report`: every split with an informed stage."""
    records: list[ShiftRecord] = []
    for split in informed_splits(bench.verdicts):
        records += split_records(bench.verdicts, bench.annotations, split, boot)
    return records


__all__ = [
    "ALL",
    "DIMENSIONS",
    "TABLE13_METRICS",
    "BlindInformed",
    "FlipStats",
    "ReviewerShift",
    "ShiftRecord",
    "VerifierErrors",
    "derivation_markdown",
    "flip_stats",
    "flipped_cases",
    "informed_splits",
    "inter_reviewer_shift",
    "other_answers",
    "paired_reviews",
    "report_records",
    "reviewer_pairs",
    "reviewer_shift",
    "reviewers",
    "shift_summaries",
    "verifier_agreement",
    "verifier_error_records",
    "verifier_errors",
]
