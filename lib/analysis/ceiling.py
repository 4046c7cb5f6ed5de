"""The ceiling with and without the contested tasks (the Audit page, the report's `ceiling`).

How much of the verifier's "error" sits on tasks the humans themselves dispute? For each
split and dimension, three figures side by side, each with its bootstrap interval:

- ``reviewer_kappa``: the blind reviewers' pooled pairwise kappa
  (`lib.analysis.agreement.reviewer_band`: the human ceiling; om2w only, where tasks have
  two or more reviewers);
- ``uv_kappa``: the Universal Verifier's kappa against the final (adjudicated) label
  (`agreement_records`; the process verdict at its default threshold 0.8);
- ``parity``: the paired kappa difference verifier minus reviewers on the same reviewer
  pairs, its verdict and the verdict in words (`lib.analysis.parity.kappa_difference`).

Each is computed on all tasks (``all``), without each reason's tasks (``without:<reason>``,
the tasks that reason flags on that dimension, `lib.analysis.audit`), and without every
contested task of the dimension (``without:contested``). A reason that flags no task of a
split and dimension gives no row (it would repeat ``all``). No interval code here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from lib import metrics as M
from lib.analysis import agreement as A
from lib.analysis import audit, parity
from lib.vocab import BOOTSTRAP, DIMENSIONS, HUMAN_REFERENCE, SPLITS, UV_VERDICT, Bootstrap

ALL_TASKS = "all"
WITHOUT_CONTESTED = "without:contested"
NO_PAIRS = "no task with two blind reviewers in this split"


SHORT: dict[str, str] = {
    "tie": "ties",
    "adjudicated": "adjudicated tasks",
    "partial": "partial labels",
    "changed_informed": "changed when informed",
    "against_verifier": "changed against the verifier",
    "process_contradiction": "label vs own score",
    "internal_decisive": "decisive verifier disputes",
}
"""Each reason in two or three words (a table row's name)."""


def variant_title(variant: str) -> str:
    """A variant in words (the table's first column)."""
    if variant == ALL_TASKS:
        return "All tasks"
    if variant == WITHOUT_CONTESTED:
        return "Without any contested"
    reason = variant.removeprefix("without:")
    return "Without " + SHORT.get(reason, reason)


@dataclass(frozen=True)
class CeilingRecord:
    """One split x dimension x variant: the three figures as `lib.metrics.Estimate` s."""

    split: str
    dimension: str
    variant: str
    n_tasks: int
    """Tasks of the split left in."""
    n_excluded: int
    """Tasks of the split left out by the variant."""
    reviewer_kappa: M.Estimate
    reviewer_n_pairs: int
    uv_kappa: M.Estimate
    uv_n: int
    parity_diff: M.Estimate
    parity_words: str | None
    parity_verdict: str | None
    """One of `lib.analysis.parity.VERDICTS` (None without reviewer pairs)."""
    n_clusters: int
    bootstrap: Bootstrap = field(default=BOOTSTRAP)


def _without(table: pd.DataFrame, split: str, tasks: set[tuple[str, str]]) -> pd.DataFrame:
    rows = table[table["split"] == split]
    if not tasks:
        return rows
    drop = {t for s, t in tasks if s == split}
    return rows[~rows["task_id"].isin(drop)]


def _has_pairs(table: pd.DataFrame, dimension: str, split: str) -> bool:
    return len(A.reviewer_pairs(table, dimension, split)) > 0


def _one(
    table: pd.DataFrame, split: str, dimension: str, variant: str, excluded: set, boot: Bootstrap
) -> CeilingRecord:
    rows = _without(table, split, excluded)
    verifier = UV_VERDICT[dimension]
    (uv,) = A.agreement_records(
        rows,
        splits=[split],
        pooled=False,
        boot=boot,
        only_verifiers=[verifier],
        only_references=[HUMAN_REFERENCE[dimension]],
    )
    none = M.Estimate(None, None, NO_PAIRS)
    reviewer, n_pairs, diff, words, verdict = none, 0, none, None, None
    if _has_pairs(rows, dimension, split):
        band = A.reviewer_band(rows, dimension, split, boot)
        reviewer, n_pairs = band.estimates["kappa"], band.n_pairs
        kd = parity.kappa_difference(rows, verifier, dimension, split, boot)
        diff, words, verdict = kd.diff.diff, kd.words, kd.verdict
    n_all = int(table.loc[table["split"] == split, "task_id"].nunique())
    n_left = int(rows["task_id"].nunique())
    return CeilingRecord(
        split=split,
        dimension=dimension,
        variant=variant,
        n_tasks=n_left,
        n_excluded=n_all - n_left,
        reviewer_kappa=reviewer,
        reviewer_n_pairs=n_pairs,
        uv_kappa=uv.estimates["kappa"],
        uv_n=uv.n,
        parity_diff=diff,
        parity_words=words,
        parity_verdict=verdict,
        n_clusters=uv.n_clusters,
        bootstrap=boot,
    )


def ceiling_records(
    table: pd.DataFrame,
    splits: list[str] | None = None,
    dimensions: tuple[str, ...] = DIMENSIONS,
    boot: Bootstrap = BOOTSTRAP,
    long: pd.DataFrame | None = None,
) -> list[CeilingRecord]:
    """Every split x dimension x variant (module docstring). ``long``: `audit.reason_rows`
    of the table when the caller has it already."""
    long = audit.reason_rows(table) if long is None else long
    splits = [s for s in (splits or SPLITS) if (table["split"] == s).any()]
    out: list[CeilingRecord] = []
    for split in splits:
        for dimension in dimensions:
            mine = long[(long["split"] == split) & (long["dimension"] == dimension)]
            variants: list[tuple[str, set]] = [(ALL_TASKS, set())]
            for reason in audit.REASON_IDS:
                hit = mine[mine["reason"] == reason]
                if len(hit):
                    tasks = set(zip(hit["split"], hit["task_id"], strict=True))
                    variants.append((f"without:{reason}", tasks))
            if len(mine):
                every = set(zip(mine["split"], mine["task_id"], strict=True))
                variants.append((WITHOUT_CONTESTED, every))
            for variant, excluded in variants:
                out.append(_one(table, split, dimension, variant, excluded, boot))
    return out


def report_records(bench: Any, boot: Bootstrap = BOOTSTRAP) -> list[CeilingRecord]:
    """The report's ``ceiling`` key: both splits and dimensions, on the dataset's labels."""
    return ceiling_records(bench.verdicts, boot=boot)
