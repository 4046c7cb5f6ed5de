"""What the screenshots bought: the Universal Verifier's action-only pass against its
screenshot-grounded pass, each judged by the humans.

The verifier scores every rubric criterion twice (`gpt_eval_json`, internal split):
`earned_points` from the agent's actions and answer only, then `post_image_earned_points`
grounded in the screenshots; its total (hence `uv_rubric_score`) is the post-image sum.
So each row has two process verdicts at the same threshold ``t`` (the app's process
threshold, `lib.table.labels.UV_PROCESS_THRESHOLD`, or the page's):

- action-only: ``sum(earned_points) / sum(max_points) >= t``;
- grounded: ``sum(post_image_earned_points) / sum(max_points) >= t``.

Both are compared with the same human labels on the same tasks (the final process label,
the final and the blind-majority outcome labels: the references Agreement uses), and the
difference grounded minus action-only gets a *paired* cluster-bootstrap interval
(`lib.metrics.paired_bootstrap_diff`: one draw of tasks, or websites/families, applied to
both passes), which is what the screenshots bought in kappa, accuracy and FPR.

A criterion the screenshots *lowered* has fewer post-image than action-only points
(raised: more). A task is lowered when any of its criteria is (it can be both lowered and
raised); the share of those tasks the humans failed says whether the screenshots caught
real failures (the paper's defence against hallucinated claims).

Rows are classified (`STATUSES`), and only `BOTH` rows enter the numbers; the others are
counted: `ONE_PASS` (the rubric has action-only points only: older rows, and the
project's demo mirror today), `INCOMPLETE` (a criterion without numeric points of a pass
it should carry, or no positive maximum), `NO_RUBRIC` (no rubric at all: om2w rows, rows
the verifier did not score).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from lib import metrics as M
from lib.analysis.agreement import table_splits
from lib.analysis.shares import Share, share
from lib.table.clusters import cluster_ids
from lib.table.gpt_eval import parse_gpt_eval
from lib.vocab import BOOTSTRAP, OUTCOME, PROCESS, UV_THRESHOLD, Bootstrap

BOTH, ONE_PASS, INCOMPLETE, NO_RUBRIC = (
    "both passes",
    "one pass recorded",
    "incomplete rubric",
    "no rubric",
)
STATUSES: tuple[str, ...] = (BOTH, ONE_PASS, INCOMPLETE, NO_RUBRIC)

REFERENCES: tuple[tuple[str, str], ...] = (
    ("final_human_process_label", PROCESS),
    ("final_human_outcome_label", OUTCOME),
    ("majority_human_outcome_vote", OUTCOME),
)
"""(reference rater, its dimension): each pass's verdict is compared with each."""
HUMAN_PROCESS, HUMAN_OUTCOME = REFERENCES[0][0], REFERENCES[1][0]
METRICS: tuple[str, ...] = ("kappa", "accuracy", "fpr")
"""The paired differences shown: agreement, and the false passes the screenshots remove."""

SAME_ERRORS = "no width: both passes make the same errors on every task"
"""Why a difference has no width when the two passes' verdicts are equal on every task
the metric counts (the FPR: every task the humans failed): every resample draws the same
errors on both sides. Not "too few tasks": it happens at n = 154 (issue 37)."""

LOWERED, RAISED, UNCHANGED, ALL_TASKS = "lowered", "raised", "unchanged", "all"
GROUPS: tuple[str, ...] = (LOWERED, RAISED, UNCHANGED, ALL_TASKS)
"""Task groups whose human failure rates are given (a task may be lowered and raised)."""

PASS_COLUMNS = [
    "split",
    "task_id",
    "status",
    "n_criteria",
    "max_points",
    "action_points",
    "grounded_points",
    "criteria_lowered",
    "criteria_raised",
]


def _number(value: Any) -> float | None:
    """A finite float, or None (bools, text and NaN are not points)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def rubric_passes(raw: Any) -> dict[str, Any]:
    """One `gpt_eval_json` cell's two passes: status, criteria, max and both pass totals,
    criteria lowered and raised (the `PASS_COLUMNS` after split and task id).

    Examples
    --------
    >>> import json
    >>> items = [{"max_points": 2, "earned_points": 2, "post_image_earned_points": 1},
    ...          {"max_points": 3, "earned_points": 1, "post_image_earned_points": 1}]
    >>> cell = json.dumps({"score": 0.4, "gpt_response_text": json.dumps({"rubric_items": items})})
    >>> p = rubric_passes(cell)
    >>> p["status"], p["action_points"], p["grounded_points"], p["criteria_lowered"]
    ('both passes', 3.0, 2.0, 1)
    """
    out: dict[str, Any] = {c: None for c in PASS_COLUMNS[2:]}
    items = parse_gpt_eval(raw).rubric.get("rubric_items")
    items = [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []
    if not items:
        return out | {"status": NO_RUBRIC}
    grounded_given = any("post_image_earned_points" in i for i in items)
    maxima = [_number(i.get("max_points")) for i in items]
    action = [_number(i.get("earned_points")) for i in items]
    grounded = [_number(i.get("post_image_earned_points")) for i in items]
    out |= {"n_criteria": len(items)}
    if any(v is None for v in maxima + action) or sum(maxima) <= 0:  # type: ignore[arg-type]
        return out | {"status": INCOMPLETE}
    out |= {"max_points": float(sum(maxima)), "action_points": float(sum(action))}
    if not grounded_given:
        return out | {"status": ONE_PASS}
    if any(v is None for v in grounded):
        return out | {"status": INCOMPLETE}
    pairs = list(zip(action, grounded, strict=True))
    return out | {
        "status": BOTH,
        "grounded_points": float(sum(grounded)),  # type: ignore[arg-type]
        "criteria_lowered": sum(g < a for a, g in pairs),  # type: ignore[operator]
        "criteria_raised": sum(g > a for a, g in pairs),  # type: ignore[operator]
    }


def passes_frame(tasks: pd.DataFrame) -> pd.DataFrame:
    """One row per task: `PASS_COLUMNS`, from its `gpt_eval_json` (`rubric_passes`)."""
    rows = [
        {"split": s, "task_id": t, **rubric_passes(raw)}
        for s, t, raw in zip(tasks["split"], tasks["task_id"], tasks["gpt_eval_json"], strict=True)
    ]
    frame = pd.DataFrame(rows, columns=PASS_COLUMNS)
    for column in ("n_criteria", "criteria_lowered", "criteria_raised"):
        frame[column] = frame[column].astype("Int64")
    for column in ("max_points", "action_points", "grounded_points"):
        frame[column] = frame[column].astype("float64")
    return frame


def _verdict(points: pd.Series, max_points: pd.Series, threshold: float) -> pd.Series:
    """``points / max >= threshold`` as Int8, missing where the points are."""
    score = points / max_points
    return (score >= threshold).astype("Int8").where(score.notna(), pd.NA)


def _labels(table: pd.DataFrame, rater: str) -> pd.Series:
    """One rater's label per (split, task_id)."""
    rows = table.loc[table["rater"] == rater, ["split", "task_id", "label"]]
    return rows.drop_duplicates(["split", "task_id"]).set_index(["split", "task_id"])["label"]


def task_frame(
    tasks: pd.DataFrame, table: pd.DataFrame, splits: Sequence[str], threshold: float
) -> pd.DataFrame:
    """The passes of the tasks in ``splits`` with both verdicts at ``threshold`` and the
    human labels of every reference (missing stays missing): the task list's rows."""
    frame = passes_frame(tasks.loc[tasks["split"].isin(list(splits))])
    frame["action_score"] = frame["action_points"] / frame["max_points"]
    frame["grounded_score"] = frame["grounded_points"] / frame["max_points"]
    frame["action_verdict"] = _verdict(frame["action_points"], frame["max_points"], threshold)
    frame["grounded_verdict"] = _verdict(frame["grounded_points"], frame["max_points"], threshold)
    keys = pd.MultiIndex.from_frame(frame[["split", "task_id"]])
    for rater, _ in REFERENCES:
        frame[rater] = _labels(table, rater).reindex(keys).astype("Int8").to_numpy()
    return frame.reset_index(drop=True)


@dataclass(frozen=True)
class PassComparison:
    """Both passes against one human reference: ``diff.a`` grounded, ``diff.b``
    action-only, ``diff.diff`` grounded minus action-only with its paired interval."""

    reference: str
    dimension: str
    metric: str
    diff: M.PairedDiff
    n_missing_reference: int  # two-pass tasks without this reference's label


@dataclass(frozen=True)
class HumanFailures:
    """How often the humans failed one group of two-pass tasks (`GROUPS`)."""

    group: str
    n_tasks: int
    process: Share  # the share with human process label 0
    outcome: Share  # the share with human outcome label 0


@dataclass(frozen=True)
class TwoPassResult:
    """Everything the section and the report show, for ``splits`` at ``threshold``."""

    splits: tuple[str, ...]
    threshold: float
    counts: dict[str, int]  # rows per status (`STATUSES`)
    n_criteria: int  # criteria of the two-pass rows
    criteria_lowered: int
    criteria_raised: int
    flips: dict[str, int]  # verdict changes: "pass -> fail", "fail -> pass"
    comparisons: tuple[PassComparison, ...]
    failures: tuple[HumanFailures, ...]
    tasks: pd.DataFrame  # `task_frame` rows with both passes
    bootstrap: Bootstrap
    n_clusters: int  # clusters of the two-pass rows

    @property
    def n(self) -> int:
        return self.counts[BOTH]


def _failed(labels: pd.Series) -> list[float]:
    """1 where the humans failed the task, 0 where they passed it, NaN where unlabelled."""
    return [np.nan if pd.isna(v) else float(v == 0) for v in labels]


def same_errors_reason(
    diff: M.PairedDiff, both: pd.DataFrame, ref: pd.Series, metric: str
) -> M.PairedDiff:
    """``diff`` with `SAME_ERRORS` as its interval's reason when the interval has no width
    because the passes agree on every task the metric counts (the FPR's failures, the
    FNR's successes, every labelled task otherwise)."""
    ci = diff.ci
    if not ci.defined or ci.high - ci.low > 1e-12:
        return diff
    a, g = both["action_verdict"], both["grounded_verdict"]
    rows = ref.notna() & a.notna() & g.notna()
    if metric == "fpr":
        rows &= ref == 0
    elif metric == "fnr":
        rows &= ref == 1
    if not rows.any() or not bool((a[rows] == g[rows]).all()):
        return diff
    return replace(diff, diff=replace(diff.diff, ci=replace(ci, reason=SAME_ERRORS)))


def two_pass(
    tasks: pd.DataFrame,
    table: pd.DataFrame,
    splits: Sequence[str],
    threshold: float = UV_THRESHOLD,
    boot: Bootstrap = BOOTSTRAP,
) -> TwoPassResult:
    """The two passes of the tasks in ``splits`` (see the module docstring)."""
    frame = task_frame(tasks, table, splits, threshold)
    counts = {s: int((frame["status"] == s).sum()) for s in STATUSES}
    both = frame.loc[frame["status"] == BOTH].reset_index(drop=True)
    clusters = cluster_ids(both["task_id"].tolist(), boot.unit)
    comparisons = []
    for reference, dimension in REFERENCES:
        ref = both[reference]
        for metric in METRICS:
            diff = M.paired_bootstrap_diff(
                both["grounded_verdict"], ref, both["action_verdict"], ref, clusters, metric, boot
            )
            diff = same_errors_reason(diff, both, ref, metric)
            missing = int(ref.isna().sum())
            comparisons.append(PassComparison(reference, dimension, metric, diff, missing))
    lowered = both["criteria_lowered"].fillna(0) > 0
    raised = both["criteria_raised"].fillna(0) > 0
    masks = {LOWERED: lowered, RAISED: raised, UNCHANGED: ~(lowered | raised)}
    masks[ALL_TASKS] = pd.Series(True, index=both.index)
    failures = []
    for group in GROUPS:
        rows = both.loc[masks[group].to_numpy()]
        ids = cluster_ids(rows["task_id"].tolist(), boot.unit)
        failures.append(
            HumanFailures(
                group,
                len(rows),
                share(_failed(rows[HUMAN_PROCESS]), ids, boot),
                share(_failed(rows[HUMAN_OUTCOME]), ids, boot),
            )
        )
    a, g = both["action_verdict"], both["grounded_verdict"]
    flips = {"pass -> fail": int(((a == 1) & (g == 0)).sum())}
    flips["fail -> pass"] = int(((a == 0) & (g == 1)).sum())
    return TwoPassResult(
        tuple(splits),
        float(threshold),
        counts,
        int(both["n_criteria"].sum()),
        int(both["criteria_lowered"].sum()),
        int(both["criteria_raised"].sum()),
        flips,
        tuple(comparisons),
        tuple(failures),
        both,
        boot,
        len(set(clusters)) if len(both) else 0,
    )


def report_records(bench: Any, boot: Bootstrap = BOOTSTRAP) -> list[TwoPassResult]:
    """The ``two_pass`` key of `python -m lib.report`: one result per split that has a
    rubric (any status but `NO_RUBRIC`), at the default threshold."""
    out = []
    for split in table_splits(bench.tasks):
        result = two_pass(bench.tasks, bench.verdicts, [split], UV_THRESHOLD, boot)
        if result.counts[NO_RUBRIC] < sum(result.counts.values()):
            out.append(result)
    return out
