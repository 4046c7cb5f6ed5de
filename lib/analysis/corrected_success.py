"""The agent's success rate as a verifier reports it, and corrected for the verifier's errors.

A benchmark's success rate is what its verifier says. The paper's Table 3 shows how far that
can be from the truth: a benchmark's own verifier reported 74.6 % success where the
Universal Verifier said 37.9 % (`TABLE3_CAPTION`). Knowing a verifier's sensitivity
``Se = 1 - FNR`` and specificity ``Sp = 1 - FPR`` against the humans, the Rogan-Gladen
estimator (Rogan & Gladen 1978, Am. J. Epidemiol. 107(1): 71-76) corrects the rate it
reports:

    corrected = (reported + Sp - 1) / (Se + Sp - 1), clipped to [0, 1]

It is **not defined when Se + Sp <= 1** (the verifier's verdicts carry no information about
success: `NOT_DEFINED`).

- ``reported``: the share of the tasks the verifier judged that it calls a success.
- ``Se``, ``Sp``: on the tasks where the verifier and the reference both have a label.
- The interval: a percentile bootstrap over tasks (or websites/families: ``boot.unit``);
  each resample draws the clusters once and recomputes the reported rate, Se and Sp from
  them, so it carries the uncertainty of all three (FPR and FNR included). Resamples where
  Se + Sp <= 1 are dropped; more than half dropped: undefined.

On this dataset every task has a human label, so on the same tasks the corrected rate is
exactly the humans' own success rate (the estimator is exact on its calibration sample);
it differs when the verifier judges tasks no human labelled. Both are reported.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from lib import metrics
from lib.metrics import Estimate, Interval, Value
from lib.metrics.bootstrap import one_interval
from lib.table.clusters import cluster_ids
from lib.table.verdicts import REFERENCES
from lib.vocab import ALL, BOOTSTRAP, HUMAN_REFERENCE, OUTCOME, SPLITS, Bootstrap

NOT_DEFINED = "not defined: sensitivity + specificity <= 1 (the verdicts carry no information)"
TABLE3_CAPTION = (
    "Why correct it: in the paper's Table 3 a benchmark's own verifier reported 74.6 % "
    "success where the Universal Verifier said 37.9 %: the success rate a benchmark "
    "publishes is only as good as its verifier."
)
METHOD = "percentile bootstrap of the Rogan-Gladen estimate (reported rate, Se and Sp redrawn)"


def rogan_gladen(reported: float, sensitivity: float, specificity: float) -> Value:
    """The corrected prevalence, clipped to [0, 1]; undefined when Se + Sp <= 1.

    >>> round(rogan_gladen(0.6, 0.8, 0.8).value, 6)  # (0.6 + 0.8 - 1) / (0.8 + 0.8 - 1)
    0.666667
    >>> rogan_gladen(0.6, 0.5, 0.5).reason == NOT_DEFINED
    True
    """
    youden = sensitivity + specificity - 1.0
    if not np.isfinite(youden) or youden <= 0:
        return Value(None, NOT_DEFINED)
    return Value(float(np.clip((reported + specificity - 1.0) / youden, 0.0, 1.0)))


def _rg_arrays(sums: np.ndarray) -> np.ndarray:
    """(..., 6) sums [judged, judged positive, tp, fp, fn, tn] -> corrected (NaN undefined)."""
    judged, positive, tp, fp, fn, tn = (sums[..., i] for i in range(6))
    with np.errstate(divide="ignore", invalid="ignore"):
        reported = positive / judged
        se = tp / (tp + fn)
        sp = tn / (tn + fp)
        youden = se + sp - 1.0
        out = np.clip((reported + sp - 1.0) / youden, 0.0, 1.0)
    return np.where(np.isfinite(out) & (youden > 0), out, np.nan)


def per_cluster_sums(pred: np.ndarray, ref: np.ndarray, codes: np.ndarray, k: int) -> np.ndarray:
    """(K, 6) per cluster: tasks judged, judged positive, and the 2x2 on the tasks with both."""
    out = np.zeros((k, 6))
    judged = ~np.isnan(pred)
    np.add.at(out[:, 0], codes[judged], 1.0)
    np.add.at(out[:, 1], codes[judged & (pred == 1)], 1.0)
    both = judged & ~np.isnan(ref)
    cat = np.where(pred[both] == 1, np.where(ref[both] == 1, 2, 3), np.where(ref[both] == 1, 4, 5))
    np.add.at(out, (codes[both], cat), 1.0)
    return out


def corrected_rate(
    pred: np.ndarray, ref: np.ndarray, clusters: np.ndarray, boot: Bootstrap = BOOTSTRAP
) -> dict[str, object]:
    """Reported, corrected (with its interval), Se, Sp, the reference's own rate, the counts.

    ``pred`` / ``ref``: 1/0/NaN per task; ``clusters``: the resampling unit of each task.
    """
    codes, uniques = pd.factorize(pd.Series(np.asarray(clusters, dtype=object)), sort=True)
    sums = per_cluster_sums(pred, ref, codes.astype(np.int64), len(uniques))
    total = sums.sum(axis=0)
    judged, positive, tp, fp, fn, tn = total
    reported = Value(positive / judged) if judged else Value(None, "n = 0")
    se = Value(tp / (tp + fn)) if tp + fn else Value(None, "no reference success")
    sp = Value(tn / (tn + fp)) if tn + fp else Value(None, "no reference failure")
    if reported.value is None or se.value is None or sp.value is None:
        point = Value(None, reported.reason or se.reason or sp.reason)
    else:
        point = rogan_gladen(reported.value, se.value, sp.value)
    used = sums[sums[:, 0] > 0]
    if used.shape[0] < 2:
        why = "n = 0" if used.shape[0] == 0 else metrics.ONE_CLUSTER
        ci = Interval(None, None, why, 0, boot.n_resamples, boot.level, METHOD)
    else:
        draws = metrics.resample_metrics(used, boot.n_resamples, boot.seed)
        iv = one_interval(_rg_arrays(draws), boot.level)
        ci = Interval(iv.low, iv.high, iv.reason, iv.n_valid, iv.n_resamples, iv.level, METHOD)
    labelled = ref[~np.isnan(ref) & ~np.isnan(pred)]  # the calibration tasks
    return {
        "reported": reported,
        "corrected": Estimate.of(point, ci),
        "sensitivity": se,
        "specificity": sp,
        "reference_rate": Value(float(labelled.mean())) if labelled.size else Value(None, "n = 0"),
        "n_judged": int(judged),
        "n_calibration": int(tp + fp + fn + tn),
        "n_clusters": int(used.shape[0]),
    }


@dataclass(frozen=True)
class CorrectedSuccess:
    """One verifier on one split (or `all`): the agent's success rate, reported and corrected."""

    verifier: str
    reference: str
    split: str
    reported: Value
    corrected: Estimate
    sensitivity: Value
    specificity: Value
    reference_rate: Value
    n_judged: int
    n_calibration: int
    n_clusters: int
    bootstrap: Bootstrap = BOOTSTRAP


def _labels(table: pd.DataFrame, rater: str, splits: list[str]) -> pd.DataFrame:
    rows = table[
        (table["rater"] == rater) & (table["dimension"] == OUTCOME) & table["split"].isin(splits)
    ]
    return rows[["split", "task_id", "label"]].drop_duplicates(["split", "task_id"])


def _float(labels: pd.Series) -> np.ndarray:
    return labels.astype("Float64").to_numpy(dtype="float64", na_value=np.nan)


def corrected_success(
    table: pd.DataFrame,
    verifiers: list[str],
    splits: list[str] | None = None,
    reference: str = HUMAN_REFERENCE[OUTCOME],
    boot: Bootstrap = BOOTSTRAP,
) -> list[CorrectedSuccess]:
    """Every outcome verifier x split (each given, then `all` when there are several)."""
    splits = list(SPLITS) if splits is None else list(splits)
    groups = [[s] for s in splits] + ([splits] if len(splits) > 1 else [])
    # the rows of these raters' outcome labels, selected once; the reference's labels of a
    # group once, not once per verifier (issue 39: the same rows, fewer passes)
    table = table[(table["dimension"] == OUTCOME) & table["rater"].isin([*verifiers, reference])]
    refs: dict[int, pd.DataFrame] = {}
    out = []
    for verifier in verifiers:
        for at, group in enumerate(groups):
            mine = _labels(table, verifier, group)
            if mine["label"].notna().sum() == 0:
                continue
            if at not in refs:
                refs[at] = _labels(table, reference, group).rename(columns={"label": "ref"})
            ref = refs[at]
            rows = mine.merge(ref, on=["split", "task_id"], how="left")
            clusters = cluster_ids(rows["task_id"].to_numpy(dtype=object), boot.unit)
            r = corrected_rate(_float(rows["label"]), _float(rows["ref"]), clusters, boot)
            out.append(
                CorrectedSuccess(
                    verifier=verifier,
                    reference=reference,
                    split=group[0] if len(group) == 1 else ALL,
                    bootstrap=boot,
                    **r,  # type: ignore[arg-type]
                )
            )
    return out


def outcome_verifiers(table: pd.DataFrame) -> list[str]:
    """Every verifier with an outcome label (the dataset's, then uploads), never a reference."""
    rows = table[(table["kind"] == "verifier") & (table["dimension"] == OUTCOME)]
    present = list(dict.fromkeys(rows.loc[rows["label"].notna(), "rater"].astype(str)))
    return [r for r in present if r not in REFERENCES]


def report_records(table: pd.DataFrame, boot: Bootstrap = BOOTSTRAP) -> list[CorrectedSuccess]:
    """The report's `corrected_success`: every outcome verifier x split (each, then `all`)."""
    return corrected_success(table, outcome_verifiers(table), list(SPLITS), boot=boot)
