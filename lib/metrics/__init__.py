"""Agreement statistics for binary verdicts, with task-clustered bootstrap intervals.

Every page that compares two raters (a verifier against a human reference, one judge
against another, a reviewer's informed label against their blind one) needs the same
numbers. They live here, in pure numpy, so that pages, the headless report and the tests
compute them one way.

Conventions
-----------
- A label is 1, 0 or missing (NaN, None or pandas NA). Missing is never turned into 0:
  a two-sided metric uses the rows where both sides have a label, and `Confusion` says
  how many rows were dropped on each side.
- ``pred`` is the rater under study (verifier, judge A, the informed stage) and ``ref``
  the rater it is compared with (human reference, judge B, the blind stage). Counts are
  always ordered ``(tp, fp, fn, tn)``, with "positive" meaning label 1 (success).
- A metric that cannot be computed is ``Value(None, reason)``. NaN never leaves this
  module, except in the documented low-level array functions (`metric_arrays`), where
  it marks "undefined in this resample". Degenerate data (no rows, one class, all
  missing) never raises; malformed input (a label of 2, unequal lengths) does.
- Bootstrap intervals resample tasks (clusters), not rows: the rows of one task (several
  reviewers, several verifiers) are not independent, and resampling rows would make the
  intervals too narrow.
- A proportion (accuracy, precision, recall, FPR, FNR, specificity: `registry.proportions()`) gets
  a Clopper-Pearson interval on the effective n of the same clusters instead (`proportion`): a
  percentile interval cannot reach above a rate whose events were never observed. Every
  `Interval` says its ``method``; a defined one with no width says why (``reason``).
- The resampled unit is whatever label the caller passes as ``clusters`` for every row:
  the task id by default, the website / task family for a cluster bootstrap over sites
  (`lib.table.clusters.cluster_labels`). With fewer than two clusters every interval is
  undefined (``ONE_CLUSTER``): one resampled cluster gives a zero-width interval.
- Every bootstrap function takes its settings as one value, ``boot: Bootstrap``
  (`lib.vocab.Bootstrap`: n_resamples, seed, level, unit; default ``BOOTSTRAP``), never
  as loose arguments. ``boot.unit`` only names what ``clusters`` holds.
- A result record holds its numbers as `Estimate` (value, interval, reason) by name.

Layout
------
A facade, as `sklearn/metrics/__init__.py` is: callers import `lib.metrics`; the code
lives in one module per concern. `values` (Value, Interval, Estimate, Confusion, PairedDiff,
label coercion, `confusion`), `binary` (the binary metrics and `metric_arrays`), `bootstrap`
(the engine: resample weights in chunks, intervals, paired differences, `batch_intervals`),
`proportion` (cluster-adjusted Clopper-Pearson intervals), `ranking` (ROC, AUC), `paired`
(McNemar), `panel` (Fleiss, Krippendorff and their intervals), `continuous` (Pearson,
Spearman and mean absolute difference of two scores, with intervals), `results`
(`binary_report`, `to_jsonable`). `registry` declares every two-rater metric once (name,
formula, interval, title, better side, proportion, where the pages show it): everything
that lists metrics reads it (`docs/conventions.md`, *Add a metric*).
"""

from __future__ import annotations

from lib.metrics import registry
from lib.metrics.binary import (
    ac1,
    accuracy,
    f1,
    fnr,
    fpr,
    kappa,
    kappa_misleads,
    mcc,
    metric_arrays,
    metrics,
    precision,
    pred_positive_rate,
    recall,
    ref_positive_rate,
    specificity,
)
from lib.metrics.bootstrap import (
    BATCH_COMPARISONS,
    LARGE_K,
    ONE_CLUSTER,
    ZERO_WIDTH,
    batch_intervals,
    batch_values,
    bootstrap_ci,
    bootstrap_counts,
    bootstrap_intervals,
    cluster_counts,
    comparison_counts,
    one_blas_thread,
    paired_bootstrap_diff,
    resample_weights,
)
from lib.metrics.bootstrap import (
    resample_metrics as resample_metrics,  # tests check the engine directly
)
from lib.metrics.bootstrap import (
    resampled_by_type as resampled_by_type,
)
from lib.metrics.continuous import (
    SCORE_METRICS,
    score_intervals,
    score_metrics,
)
from lib.metrics.paired import (
    mcnemar_exact,
    mcnemar_p,
)
from lib.metrics.panel import (
    PANEL_METRICS,
    fleiss_kappa,
    krippendorff_alpha,
    panel_intervals,
    panel_report,
)
from lib.metrics.proportion import (
    CLOPPER_PEARSON,
    PERCENTILE,
    clopper_pearson_bounds,
    effective_n,
    proportion_cluster,
)
from lib.metrics.ranking import (
    auc_ci,
    point_at_threshold,
    roc,
)
from lib.metrics.results import (
    NOT_IN_REPORT,
    binary_report,
    resampled_clusters,
    to_jsonable,
)
from lib.metrics.values import (
    Confusion,
    Estimate,
    Interval,
    PairedDiff,
    Value,
    as_labels,
    as_scores,
    confusion,
)
from lib.vocab import BOOTSTRAP, Bootstrap

__all__ = [
    "BATCH_COMPARISONS",
    "BOOTSTRAP",
    "CLOPPER_PEARSON",
    "LARGE_K",
    "NOT_IN_REPORT",
    "ONE_CLUSTER",
    "PANEL_METRICS",
    "PERCENTILE",
    "SCORE_METRICS",
    "ZERO_WIDTH",
    "Bootstrap",
    "Confusion",
    "Estimate",
    "Interval",
    "PairedDiff",
    "Value",
    "ac1",
    "accuracy",
    "as_labels",
    "as_scores",
    "auc_ci",
    "batch_intervals",
    "batch_values",
    "binary_report",
    "bootstrap_ci",
    "bootstrap_counts",
    "bootstrap_intervals",
    "clopper_pearson_bounds",
    "cluster_counts",
    "comparison_counts",
    "confusion",
    "effective_n",
    "f1",
    "fleiss_kappa",
    "fnr",
    "fpr",
    "kappa",
    "kappa_misleads",
    "krippendorff_alpha",
    "mcc",
    "mcnemar_exact",
    "mcnemar_p",
    "metric_arrays",
    "metrics",
    "one_blas_thread",
    "paired_bootstrap_diff",
    "panel_intervals",
    "panel_report",
    "point_at_threshold",
    "precision",
    "pred_positive_rate",
    "proportion_cluster",
    "recall",
    "ref_positive_rate",
    "registry",
    "resample_weights",
    "resampled_clusters",
    "roc",
    "score_intervals",
    "score_metrics",
    "specificity",
    "to_jsonable",
]
