"""Continuous process scores: the Universal Verifier's rubric score against the reviewers'
blind process scores, and reviewer against reviewer (the paper's Figure 11 and Table 14).

The process verdicts elsewhere are labels cut from scores; here the scores are compared as
numbers. Comparisons (`COMPARISONS`), each on the chosen split(s), one row per pair of
scores:

- ``uv_vs_reviewers``: `uv_rubric_score` against every blind review's
  `human_process_score` (one row per task and reviewer: the paper's 215 pairs);
- ``uv_vs_median``: against the task's median reviewer score (the dataset's
  `median_human_rubric_score_agnostic`, the score of the `final_human_process_label` row);
- ``reviewer_vs_reviewer``: every two reviewers of the same task, each pair in both orders
  (as `lib.analysis.agreement.reviewer_band`: the statistics then do not depend on who is called A;
  ``n`` counts ordered rows, ``n_pairs`` the unordered pairs);
- ``uv_vs:<Judge>``: against one reviewer's scores.

Each gets Pearson r, Spearman rho and the mean absolute difference with cluster-bootstrap
intervals (`lib.metrics.score_intervals`, clusters from ``boot.unit``), and three Cohen's
kappas on binary verdicts: on the binary labels (the reviewers' blind process labels, the
task-level `final_human_process_label`, the verifier's own verdict), and on the scores cut
at the verifier's threshold (0.8 both sides) and at a human threshold ``t`` (the human
side's score >= t, the verifier's still >= 0.8; between reviewers both >= t). The paper's
reviewer-vs-reviewer kappa is 0.45 on labels but 0.36 on scores cut at 0.8: a reviewer's
binary label is not always their score >= 0.8.

A row with a missing score on either side is excluded from the score statistics and
counted (``n_missing``); the internal split has no reviewer scores at all, so its score
statistics are undefined (n = 0), never 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from lib import metrics as M
from lib.table.clusters import cluster_ids
from lib.table.pairs import co_raters
from lib.vocab import ALL, BOOTSTRAP, PROCESS, SPLITS, UV_THRESHOLD, Bootstrap, reviewer_sort_key

UV = "uv_process"
MEDIAN = "final_human_process_label"  # its score is the median reviewer score
REVIEWERS = "reviewers"

COMPARISONS: dict[str, str] = {
    "uv_vs_reviewers": "Universal Verifier score vs each reviewer's score",
    "uv_vs_median": "Universal Verifier score vs the median reviewer score",
    "reviewer_vs_reviewer": "reviewer vs reviewer (same task)",
}
"""The pooled comparisons, in display order; ``uv_vs:<reviewer>`` adds one per reviewer."""

PER_REVIEWER = "uv_vs:"

SCORE_NAMES: tuple[str, ...] = M.SCORE_METRICS
KAPPA_NAMES: tuple[str, ...] = ("kappa_labels", "kappa_verifier_threshold", "kappa_human_threshold")

FRAME_COLUMNS = ["split", "task_id", "a", "b", "score_a", "score_b", "label_a", "label_b"]


@dataclass(frozen=True)
class ScoreComparison:
    """One comparison of two scores on one split selection (see the module docstring).

    ``frame``: its rows (`FRAME_COLUMNS`; missing scores and labels kept missing).
    ``estimates``: `SCORE_NAMES` and `KAPPA_NAMES` as `lib.metrics.Estimate`. ``n_rows``
    every row (review, task or reviewer pair) the comparison covers, ``n``
    with both scores (what the score statistics and threshold kappas use), ``n_missing``
    rows excluded for a missing score, ``n_labels`` rows with both binary labels (the label
    kappa); ``n_clusters`` / ``n_clusters_labels`` the clusters their bootstraps resampled.
    """

    split: str
    comparison: str
    rater_a: str
    rater_b: str
    reference: str
    n_rows: int
    n: int
    n_missing: int
    n_labels: int
    n_pairs: int
    n_tasks: int
    n_clusters: int
    n_clusters_labels: int
    estimates: Mapping[str, M.Estimate]
    verifier_threshold: float
    human_threshold: float
    bootstrap: Bootstrap = BOOTSTRAP
    frame: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False, compare=False)


def split_names(split: str) -> list[str]:
    """`all` -> every split; a split name -> itself."""
    return list(SPLITS) if split == ALL else [split]


def _process_rows(table: pd.DataFrame, splits: Sequence[str]) -> pd.DataFrame:
    keep = table["split"].isin(list(splits)) & (table["dimension"] == PROCESS)
    return table[keep.to_numpy()]


def _as_frame(rows: pd.DataFrame) -> pd.DataFrame:
    out = rows.reindex(columns=FRAME_COLUMNS).astype(
        {"split": "string", "task_id": "string", "a": "string", "b": "string"}
    )
    for side in ("a", "b"):
        out[f"score_{side}"] = pd.to_numeric(out[f"score_{side}"], errors="coerce").astype(float)
        out[f"label_{side}"] = out[f"label_{side}"].astype("Float64").astype(float)
    return out.sort_values(["split", "task_id", "a", "b"], ignore_index=True)


def _uv(rows: pd.DataFrame) -> pd.DataFrame:
    """The verifier's score per task; its binary verdict is its score >= its threshold."""
    uv = rows.loc[rows["rater"] == UV, ["split", "task_id", "score"]]
    uv = uv.drop_duplicates(["split", "task_id"]).rename(columns={"score": "score_a"})
    verdict = (uv["score_a"] >= UV_THRESHOLD).astype(float)
    return uv.assign(a=UV, label_a=verdict.where(uv["score_a"].notna()))


def reviews(table: pd.DataFrame, splits: Sequence[str]) -> pd.DataFrame:
    """Every blind review's process score and label: split, task_id, b, score_b, label_b."""
    rows = _process_rows(table, splits)
    blind = rows[(rows["kind"] == "human") & (rows["stage"] == "blind")]
    out = blind[["split", "task_id", "annotator", "score", "label"]].rename(
        columns={"annotator": "b", "score": "score_b", "label": "label_b"}
    )
    return out.drop_duplicates(["split", "task_id", "b"])


def comparison_frame(table: pd.DataFrame, splits: Sequence[str], comparison: str) -> pd.DataFrame:
    """The rows of one comparison (`FRAME_COLUMNS`): every review, task or reviewer pair the
    comparison covers, a missing score kept missing (the caller excludes and counts it)."""
    rows = _process_rows(table, splits)
    if comparison == "uv_vs_median":
        med = rows.loc[rows["rater"] == MEDIAN, ["split", "task_id", "score", "label"]]
        med = med.drop_duplicates(["split", "task_id"])
        med = med.rename(columns={"score": "score_b", "label": "label_b"}).assign(b=MEDIAN)
        return _as_frame(med.merge(_uv(rows), on=["split", "task_id"], how="left").assign(a=UV))
    revs = reviews(table, splits)
    if comparison == "reviewer_vs_reviewer":
        both = revs.rename(columns={"b": "rater", "score_b": "score", "label_b": "label"})
        pairs = co_raters(both, "rater", values=("score", "label"))
        return _as_frame(pairs)
    if comparison.startswith(PER_REVIEWER):
        revs = revs[revs["b"] == comparison[len(PER_REVIEWER) :]]
    elif comparison != "uv_vs_reviewers":
        raise ValueError(f"unknown comparison {comparison!r}")
    merged = revs.merge(_uv(rows), on=["split", "task_id"], how="left").assign(a=UV)
    return _as_frame(merged)


def reviewers_with_scores(table: pd.DataFrame, splits: Sequence[str]) -> list[str]:
    """The reviewers with at least one blind process score here, in the reviewer order."""
    revs = reviews(table, splits)
    names = revs.loc[revs["score_b"].notna(), "b"].astype(str).unique()
    return sorted(names, key=reviewer_sort_key)


def _cut(scores: np.ndarray, threshold: float) -> np.ndarray:
    return np.where(np.isnan(scores), np.nan, (scores >= threshold).astype(float))


def _kappa(a: np.ndarray, b: np.ndarray, clusters: np.ndarray, boot: Bootstrap) -> M.Estimate:
    c = M.confusion(a, b)
    ci = M.bootstrap_intervals(a, b, clusters, ("kappa",), boot)["kappa"]
    return M.Estimate.of(M.kappa(c), ci)


def compare(
    table: pd.DataFrame,
    split: str,
    comparison: str,
    human_threshold: float = UV_THRESHOLD,
    boot: Bootstrap = BOOTSTRAP,
) -> ScoreComparison:
    """One comparison on one split (or ``all``) with every statistic and its interval."""
    splits = split_names(split)
    frame = comparison_frame(table, splits, comparison)
    x, y = frame["score_a"].to_numpy(float), frame["score_b"].to_numpy(float)
    clusters = np.asarray(cluster_ids(frame["task_id"].astype(object), boot.unit), dtype=object)
    values = M.score_metrics(x, y)
    cis = M.score_intervals(x, y, clusters, SCORE_NAMES, boot)
    estimates = {name: M.Estimate.of(values[name], cis[name]) for name in SCORE_NAMES}
    among_reviewers = comparison == "reviewer_vs_reviewer"
    a_cut = human_threshold if among_reviewers else UV_THRESHOLD
    la, lb = frame["label_a"].to_numpy(float), frame["label_b"].to_numpy(float)
    estimates["kappa_labels"] = _kappa(la, lb, clusters, boot)
    estimates["kappa_verifier_threshold"] = _kappa(
        _cut(x, UV_THRESHOLD), _cut(y, UV_THRESHOLD), clusters, boot
    )
    # the threshold kappas use the rows with both scores, as the score statistics do
    both = ~(np.isnan(x) | np.isnan(y))
    a_t = np.where(both, _cut(x, a_cut), np.nan)
    estimates["kappa_human_threshold"] = _kappa(a_t, _cut(y, human_threshold), clusters, boot)
    n = int(both.sum())
    has_labels = ~(np.isnan(la) | np.isnan(lb))
    b = REVIEWERS if comparison in ("uv_vs_reviewers", "reviewer_vs_reviewer") else None
    rater_b = b or (MEDIAN if comparison == "uv_vs_median" else comparison[len(PER_REVIEWER) :])
    return ScoreComparison(
        split=split,
        comparison=comparison,
        rater_a=REVIEWERS if among_reviewers else UV,
        rater_b=rater_b,
        reference=reference_words(comparison),
        n_rows=len(frame),
        n=n,
        n_missing=len(frame) - n,
        n_labels=int(has_labels.sum()),
        n_pairs=n // 2 if among_reviewers else n,
        n_tasks=int(frame.loc[both, "task_id"].nunique()),
        n_clusters=int(pd.unique(clusters[both]).size),
        n_clusters_labels=M.resampled_clusters(la, lb, clusters),
        estimates=estimates,
        verifier_threshold=UV_THRESHOLD,
        human_threshold=float(human_threshold),
        bootstrap=boot,
        frame=frame,
    )


SHORT: dict[str, tuple[str, str]] = {
    "uv_vs_reviewers": ("Universal Verifier", "each review's score"),
    "uv_vs_median": ("Universal Verifier", "median reviewer score"),
    "reviewer_vs_reviewer": ("a reviewer", "another reviewer, same task"),
}
"""Each pooled comparison's sides (A, B) in a few words, for a table cell."""


def short_sides(comparison: str) -> tuple[str, str]:
    """(A, B) of a comparison in a few words (a table cell; `reference_words` says more)."""
    if comparison in SHORT:
        return SHORT[comparison]
    return "Universal Verifier", f"{comparison[len(PER_REVIEWER) :]}'s scores"


def reference_words(comparison: str) -> str:
    """What side B of a comparison is, in words (the table's *reference* column)."""
    if comparison == "uv_vs_median":
        return "median blind reviewer score of the task (dataset column)"
    if comparison == "uv_vs_reviewers":
        return "each blind reviewer's process score (one row per review)"
    if comparison == "reviewer_vs_reviewer":
        return "another blind reviewer of the same task (each pair in both orders)"
    return f"{comparison[len(PER_REVIEWER) :]}'s blind process scores"


def comparisons(table: pd.DataFrame, splits: Sequence[str]) -> list[str]:
    """The pooled comparisons, then one per reviewer with a score here."""
    return [*COMPARISONS, *(PER_REVIEWER + r for r in reviewers_with_scores(table, splits))]


def score_comparisons(
    table: pd.DataFrame,
    split: str,
    human_threshold: float = UV_THRESHOLD,
    boot: Bootstrap = BOOTSTRAP,
) -> list[ScoreComparison]:
    """Every comparison of `comparisons` on one split (the page's table)."""
    table = _process_rows(table, split_names(split))  # once, not once per comparison
    return [
        compare(table, split, name, human_threshold, boot)
        for name in comparisons(table, split_names(split))
    ]


def report_records(bench: Any, boot: Bootstrap = BOOTSTRAP) -> list[ScoreComparison]:
    """`scores` of `python -m lib.report`: every comparison on each split, then `all`, at
    the human threshold 0.8 (the verifier's; `lib.report.score_json` flattens them)."""
    table = bench.verdicts
    return [r for split in (*SPLITS, ALL) for r in score_comparisons(table, split, boot=boot)]
