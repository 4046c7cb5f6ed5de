"""Your verifier against the Universal Verifier, on the same tasks, against the same humans.

The question a researcher iterating on a verifier asks is not "what is my kappa" alone
but "is it better than the Universal Verifier, on these tasks, beyond noise". Both
verifiers are scored against the task-level human label (`final_human_outcome_label`,
or `final_human_process_label` for the process dimension) on exactly the tasks where
all three have a label, and the difference (yours minus UV) gets a paired, task-clustered
bootstrap interval (`lib.metrics.paired_bootstrap_diff`: one draw of tasks is applied to
both sides, so the interval reflects the two verifiers' correlation).

The Universal Verifier's process verdict is its rubric score >= 0.8 (its default).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from lib import metrics
from lib.analysis import agreement as agreement_lib
from lib.table.clusters import cluster_ids
from lib.table.pairs import pair
from lib.vocab import BOOTSTRAP, HUMAN_REFERENCE, SPLITS, UV_VERDICT, Bootstrap

"""The Universal Verifier's rater id per dimension."""
"""The human reference per dimension (adjudicated task-level label)."""
DIFF_METRICS: tuple[str, ...] = ("kappa", "fpr", "fnr")


@dataclass(frozen=True)
class SplitComparison:
    """Yours vs the UV on one split.

    `n_yours`: tasks of the split your verifier has a label for; `n_paired`: tasks where
    yours, the UV and the human reference all have a label (the rows every number uses);
    `n_disagree`: tasks where yours and the UV both have a label and differ.
    """

    split: str
    dimension: str
    n_yours: int
    n_paired: int
    n_disagree: int
    diffs: dict[str, metrics.PairedDiff]
    bootstrap: Bootstrap = BOOTSTRAP

    @property
    def n_clusters(self) -> int:
        """Clusters the paired bootstrap resampled (those with all three labels)."""
        return next(iter(self.diffs.values())).n_clusters


def dimensions(table: pd.DataFrame, rater: str) -> list[str]:
    """The dimensions (`outcome`, `process`) the rater gives at least one label for."""
    rows = table[(table["rater"] == rater) & table["label"].notna()]
    present = set(rows["dimension"])
    return [d for d in UV_VERDICT if d in present]


def aligned(
    table: pd.DataFrame, rater: str, dimension: str = "outcome", splits: Iterable[str] = SPLITS
) -> pd.DataFrame:
    """One row per task your verifier judged: `split, task_id, yours, uv, human` (Int8 / NA)."""
    splits = list(splits)
    uv = pair(table, rater, UV_VERDICT[dimension], dimension, splits, how="left")
    human = pair(table, rater, HUMAN_REFERENCE[dimension], dimension, splits, how="left")
    # Both pairs have exactly your verifier's tasks, in the same (split, task) order.
    return pd.DataFrame(
        {
            "split": uv["split"],
            "task_id": uv["task_id"],
            "yours": uv["label_a"],
            "uv": uv["label_b"],
            "human": human["label_b"],
        }
    )


def _float(labels: pd.Series) -> np.ndarray:
    return labels.astype("Float64").to_numpy(dtype="float64", na_value=np.nan)


def compare(
    table: pd.DataFrame,
    rater: str,
    dimension: str = "outcome",
    splits: Iterable[str] = SPLITS,
    boot: Bootstrap = BOOTSTRAP,
) -> list[SplitComparison]:
    """Per split (skipping splits your verifier does not cover): paired kappa/FPR/FNR diffs.

    ``boot.unit``: the paired bootstrap resamples tasks or websites/families (`lib.table.clusters`).
    """
    frame = aligned(table, rater, dimension, splits)
    out = []
    for split in splits:
        rows = frame[frame["split"] == split]
        if rows.empty:
            continue
        yours, uv, human = (_float(rows[c]) for c in ("yours", "uv", "human"))
        clusters = cluster_ids(rows["task_id"].to_numpy(), boot.unit)
        diffs = {
            name: metrics.paired_bootstrap_diff(yours, human, uv, human, clusters, name, boot)
            for name in DIFF_METRICS
        }
        differ = (rows["yours"] != rows["uv"]).fillna(False)
        both = rows["yours"].notna() & rows["uv"].notna() & differ
        out.append(
            SplitComparison(
                split=split,
                dimension=dimension,
                n_yours=int(rows["yours"].notna().sum()),
                n_paired=diffs[DIFF_METRICS[0]].n,
                n_disagree=int(both.sum()),
                diffs=diffs,
                bootstrap=boot,
            )
        )
    return out


def disagreements(
    table: pd.DataFrame, rater: str, dimension: str = "outcome", splits: Iterable[str] = SPLITS
) -> pd.DataFrame:
    """Tasks where your verifier and the UV give different labels, with the humans' label.

    Columns: split, task_id, yours, uv, human (1/0; human missing when unlabelled) and
    closer: ``yours``, ``uv`` or ``unknown`` (human label missing); with binary labels
    that differ, exactly one of the two matches a known human label. Rows only: the
    page's wording and links are `ui.your_verifier.disagreements_display`.
    """
    frame = aligned(table, rater, dimension, splits)
    differ = (frame["yours"] != frame["uv"]).fillna(False)
    rows = frame[frame["yours"].notna() & frame["uv"].notna() & differ]
    same = (rows["yours"] == rows["human"]).fillna(False).to_numpy(dtype=bool)
    closer = np.where(rows["human"].isna().to_numpy(), "unknown", np.where(same, "yours", "uv"))
    out = rows[["split", "task_id", "yours", "uv", "human"]].reset_index(drop=True)
    return out.assign(closer=closer)


def agreement(
    table: pd.DataFrame,
    rater: str,
    dimension: str = "outcome",
    splits: Iterable[str] = SPLITS,
    pooled: bool = False,
    boot: Bootstrap = BOOTSTRAP,
) -> list[agreement_lib.AgreementRecord]:
    """Your verifier against the human reference, per split: the Agreement page's records.

    Calls `lib.analysis.agreement.agreement_records` (so the numbers are those of the Agreement
    page, with the same ``boot``) on the rows it needs: your verifier and the
    task-level references. Splits your verifier does not cover are left out.
    """
    splits = [s for s in splits if ((table["rater"] == rater) & (table["split"] == s)).any()]
    if not splits:
        return []
    subset = table[(table["rater"] == rater) | (table["kind"] == "reference")]
    records = agreement_lib.agreement_records(subset, splits=splits, pooled=pooled, boot=boot)
    return [
        r
        for r in records
        if r.verifier == rater
        and r.dimension == dimension
        and r.reference == HUMAN_REFERENCE[dimension]
    ]
