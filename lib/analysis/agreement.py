"""Agreement of every verifier with the human references, with task-bootstrap intervals.

The Agreement page and `python -m lib.report` (key ``agreement``) both call
`agreement_records`, so they print the same numbers.

Who is compared with whom
-------------------------
- A *verifier* is any rater of kind ``verifier`` in the verdict table (the dataset's five
  and any uploaded one), taken per dimension: an outcome verifier is compared with the
  outcome references, a process verifier (``uv_process``) with the process reference.
- *References*: the task-level human labels of the same dimension
  (``final_human_outcome_label``, the default, and ``majority_human_outcome_vote``;
  ``final_human_process_label``), and for the outcome, each reviewer's blind label
  (``Judge9``, ...).
- The rows of a comparison are the tasks where the reference has a row: every task of
  the split for a task-level reference, the tasks that reviewer judged for a reviewer.
  A missing label on either side excludes the task and is counted (``n_missing_*``);
  it is never read as a failure.
- Splits: each split on its own, and ``all`` = both splits pooled. Bootstrap clusters are
  tasks (task ids are unique across splits), resampled with `lib.metrics.resample_weights`
  (2,000 resamples, seed 0): the intervals are exactly those of
  `lib.metrics.binary_report` on the same rows (a test checks it).

Human-human band
----------------
`reviewer_band`: how well the reviewers agree with each other, on the om2w tasks that
two or three reviewers labelled blind. Choice: the *pooled pairwise* kappa. Every pair of
reviewers who both labelled a task is one comparison, entered in both orders (A vs B and
B vs A) so the result does not depend on which reviewer is called A; Cohen's kappa of
that pooled symmetric table (with equal marginals it equals Scott's pi over the pairs).
A task with three reviewers contributes its three pairs. The interval resamples tasks
with all their pairs. We prefer it to the range of per-pair kappas because the reviewer
pairs share only a dozen tasks or so each, and the range of a dozen noisy kappas mostly
measures noise.

Speed
-----
All verifiers x references x splits (about 130 comparisons) take well under 0.5 s with
2,000 resamples (``bench/agreement_speed.py``): labels are laid out once as one array
per rater, and `lib.metrics.batch_intervals` bootstraps every comparison in one call
(comparisons with the same number of tasks share one resample-weight matrix and one
matrix product). This module holds no interval code: it only chooses the rows.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import pandas as pd

from lib import metrics as M
from lib.table.clusters import DEFAULT_CLUSTER_MODE, check_mode, cluster_ids
from lib.table.pairs import co_raters, pair
from lib.table.verdicts import OM2W, REFERENCES, VERIFIERS, rater_title, with_uv_threshold
from lib.vocab import (
    ALL,
    BOOTSTRAP,
    HUMAN_REFERENCE,
    OUTCOME,
    PROCESS,
    SPLIT_SHORT,
    SPLITS,
    UV_THRESHOLD,
    UV_VERDICT,
    Bootstrap,
    reviewer_sort_key,
)

REVIEWER_DIMENSIONS: tuple[str, ...] = (OUTCOME,)
"""Dimensions where each reviewer's blind label is offered as a reference."""

REVIEWER_PAIRS = "reviewer_pairs"
"""`verifier` and `reference` of the human-human band records in the report."""

UV_PROCESS = UV_VERDICT[PROCESS]


def value_keys() -> dict[str, str]:
    """A record's metrics (record key -> `lib.metrics` name), in the registry's order:
    every metric of `lib.metrics.registry.METRICS`, read when called."""
    return {m.key: m.name for m in M.registry.METRICS}


def ci_keys() -> tuple[str, ...]:
    """The metrics a record has an interval for (`lib.metrics.registry.interval_names`)."""
    return M.registry.interval_names()


SPLIT_TITLES = {**SPLIT_SHORT, ALL: "both (pooled)"}

_RATER_KEY = tuple[str, str]  # (rater id, dimension)


# ---------------------------------------------------------------------------------------
# Raters
# ---------------------------------------------------------------------------------------


def verifiers(table: pd.DataFrame) -> list[tuple[str, str]]:
    """(verifier id, dimension) pairs in the table: the dataset's first, then uploads."""
    rows = table.loc[table["kind"] == "verifier", ["rater", "dimension"]].drop_duplicates()
    pairs = [(str(r), str(d)) for r, d in rows.itertuples(index=False)]
    known = list(VERIFIERS)
    return sorted(pairs, key=lambda p: (known.index(p[0]) if p[0] in known else len(known),))


def reviewers(table: pd.DataFrame, splits: Iterable[str] | None = None) -> list[str]:
    """Blind reviewer ids with at least one row in ``splits`` (all splits by default)."""
    rows = table[(table["kind"] == "human") & (table["stage"] == "blind")]
    if splits is not None:
        rows = rows[rows["split"].isin(list(splits))]
    return sorted({str(r) for r in rows["rater"]}, key=reviewer_sort_key)


def references(
    table: pd.DataFrame, dimension: str, splits: Iterable[str] | None = None
) -> list[str]:
    """Reference ids for a dimension with a row in ``splits``: task-level ones, then reviewers."""
    rows = table if splits is None else table[table["split"].isin(list(splits))]
    task_level = rows.loc[
        (rows["kind"] == "reference") & (rows["dimension"] == dimension), "rater"
    ].unique()
    present = {str(r) for r in task_level}
    refs = [r for r in REFERENCES if r in present] + sorted(present - set(REFERENCES))
    if dimension in REVIEWER_DIMENSIONS:
        refs += reviewers(rows)
    return refs


def verifier_title(verifier: str, threshold: float = UV_THRESHOLD) -> str:
    """`lib.table.verdicts.rater_title` with the threshold in use (the process verdict names it)."""
    return rater_title(verifier, threshold)


def record_title(record: AgreementRecord) -> str:
    """A record's verifier on screen; an uploaded verifier also names its dimension (it may
    have an outcome and a process record in the same split)."""
    title = verifier_title(record.verifier, record.uv_threshold or UV_THRESHOLD)
    if record.verifier not in VERIFIERS and record.verifier != REVIEWER_PAIRS:
        title += f" ({record.dimension})"
    return title


def reference_title(reference: str) -> str:
    """`lib.table.verdicts.rater_title` (a reviewer's blind labels as `Judge9`), and the row of
    the reviewers' pairwise agreement."""
    if reference == REVIEWER_PAIRS:
        return "Reviewers, pairwise (blind)"
    return rater_title(reference)


def split_groups(splits: Sequence[str], pooled: bool = True) -> list[tuple[str, list[str]]]:
    """(record split name, splits it covers): each split, then ``all`` if there are two."""
    groups = [(s, [s]) for s in splits]
    if pooled and len(splits) > 1:
        groups.append((ALL, list(splits)))
    return groups


def table_splits(table: pd.DataFrame) -> list[str]:
    """Splits present in the table, in the dataset's order."""
    present = {str(s) for s in table["split"].unique()}
    return [s for s in SPLITS if s in present] + sorted(present - set(SPLITS))


# ---------------------------------------------------------------------------------------
# Labels laid out once: one array per (rater, dimension) over all tasks
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LabelMatrix:
    """Every task once (sorted by task id), and per (rater, dimension) its labels.

    ``labels[key]`` is 1.0 / 0.0 / NaN for every task (NaN also where the rater has no
    row); ``present[key]`` says where it has a row (possibly with a missing label);
    ``scores[key]`` the continuous score or NaN. ``cluster`` numbers task ids in sorted
    order, the bootstrap's clusters.
    """

    split: np.ndarray
    task_id: np.ndarray
    cluster: np.ndarray
    site_cluster: np.ndarray
    labels: dict[_RATER_KEY, np.ndarray]
    present: dict[_RATER_KEY, np.ndarray]
    scores: dict[_RATER_KEY, np.ndarray]

    def clusters(self, mode: str = DEFAULT_CLUSTER_MODE) -> np.ndarray:
        """Cluster codes of every task: tasks (``cluster``) or websites/families."""
        return self.cluster if check_mode(mode) == "task" else self.site_cluster

    def in_splits(self, splits: Iterable[str]) -> np.ndarray:
        return np.isin(self.split, list(splits))

    def label(self, key: _RATER_KEY) -> np.ndarray:
        return self.labels.get(key, np.full(self.split.shape, np.nan))

    def has(self, key: _RATER_KEY) -> np.ndarray:
        return self.present.get(key, np.zeros(self.split.shape, dtype=bool))

    def score(self, key: _RATER_KEY) -> np.ndarray:
        return self.scores.get(key, np.full(self.split.shape, np.nan))


def label_matrix(table: pd.DataFrame, raters: Iterable[str] | None = None) -> LabelMatrix:
    """Lay the verifier, reference and blind reviewer rows out as arrays (see `LabelMatrix`).

    ``raters`` keeps only those rater ids (faster when a caller needs two). A duplicated
    (split, task, rater, dimension) row keeps the last one.
    """
    if raters is not None:
        table = table[table["rater"].isin(list(raters))]
    kind, stage = table["kind"], table["stage"]
    rows = table[kind.isin(["verifier", "reference"]) | ((kind == "human") & (stage == "blind"))]
    keys = rows[["split", "task_id"]].astype(str)
    tasks = keys.drop_duplicates().sort_values(["task_id", "split"], ignore_index=True)
    task_index = pd.MultiIndex.from_frame(tasks)
    pos = task_index.get_indexer(pd.MultiIndex.from_frame(keys))
    n = len(tasks)
    label_values = rows["label"].to_numpy(dtype=np.float64, na_value=np.nan)
    score_values = rows["score"].to_numpy(dtype=np.float64, na_value=np.nan)
    labels, present, scores = {}, {}, {}
    groups = rows.groupby([rows["rater"].astype(str), rows["dimension"].astype(str)]).indices
    for key, idx in groups.items():
        lab, pres, sco = np.full(n, np.nan), np.zeros(n, dtype=bool), np.full(n, np.nan)
        lab[pos[idx]] = label_values[idx]
        pres[pos[idx]] = True
        sco[pos[idx]] = score_values[idx]
        labels[key], present[key], scores[key] = lab, pres, sco
    cluster, _ = pd.factorize(tasks["task_id"], sort=True)
    site, _ = pd.factorize(cluster_ids(tasks["task_id"], "site"), sort=True)
    return LabelMatrix(
        split=tasks["split"].to_numpy(dtype=object),
        task_id=tasks["task_id"].to_numpy(dtype=object),
        cluster=cluster.astype(np.intp),
        site_cluster=site.astype(np.intp),
        labels=labels,
        present=present,
        scores=scores,
    )


def _rows(matrix: LabelMatrix, reference: _RATER_KEY, splits: Iterable[str]) -> np.ndarray:
    """The tasks of a comparison: in the splits, and the reference has a row there."""
    return matrix.in_splits(splits) & matrix.has(reference)


def paired_labels(
    table: pd.DataFrame,
    verifier: str,
    reference: str,
    splits: Iterable[str],
    dimension: str | None = None,
) -> pd.DataFrame:
    """The rows of one comparison: split, task_id, verifier, reference (1/0/NaN), score.

    The rows `agreement_records` uses (the tasks where the reference has a row), joined
    by `lib.table.pairs.pair`; the tests check the records against this independent join.
    """
    dimension = dimension or _dimension_of(table, verifier)
    rows = pair(table, verifier, reference, dimension, splits, how="right")
    return pd.DataFrame(
        {
            "split": rows["split"].to_numpy(dtype=object),
            "task_id": rows["task_id"].to_numpy(dtype=object),
            "verifier": rows["label_a"].to_numpy(dtype=np.float64, na_value=np.nan),
            "reference": rows["label_b"].to_numpy(dtype=np.float64, na_value=np.nan),
            "score": rows["score_a"].to_numpy(dtype=np.float64, na_value=np.nan),
        }
    )


def _dimension_of(table: pd.DataFrame, rater: str) -> str:
    dims = table.loc[table["rater"] == rater, "dimension"].unique()
    if len(dims) != 1:
        raise ValueError(f"say the dimension of {rater!r}: it has {list(dims)}")
    return str(dims[0])


# ---------------------------------------------------------------------------------------
# All comparisons at once
# ---------------------------------------------------------------------------------------


@dataclass
class _Comparison:
    split: str
    verifier: str
    reference: str
    dimension: str
    confusion: M.Confusion
    per_cluster: np.ndarray  # (K, 4) counts per task, tasks in sorted order


def _compare(
    matrix: LabelMatrix,
    verifier: _RATER_KEY,
    reference: _RATER_KEY,
    group: Sequence[str],
    cluster: str = DEFAULT_CLUSTER_MODE,
) -> tuple[M.Confusion, np.ndarray]:
    rows = _rows(matrix, reference, group)
    pred, ref = matrix.label(verifier)[rows], matrix.label(reference)[rows]
    return M.comparison_counts(pred, ref, matrix.clusters(cluster)[rows])


@dataclass(frozen=True)
class AgreementRecord:
    """One verifier x reference x split comparison (see `agreement_records`).

    A typed result, not a JSON dict: the pages and charts read attributes, and only
    `lib.report` turns records into JSON (`lib.report.agreement_json`). ``estimates``
    holds every metric of `value_keys` by name as `lib.metrics.Estimate` (value, its
    interval for `ci_keys` or None, why it is undefined); `reasons` lists the reasons.
    """

    split: str
    verifier: str
    reference: str
    dimension: str
    uv_threshold: float | None
    n: int
    n_tasks: int
    n_missing_verifier: int
    n_missing_reference: int
    n_excluded: int
    tp: int
    fp: int
    fn: int
    tn: int
    estimates: Mapping[str, M.Estimate]
    kappa_misleads: bool
    bootstrap: Bootstrap
    n_clusters: int = field(metadata=M.NOT_IN_REPORT)
    """Clusters the bootstrap resampled (with a complete row): the caption's count. Not a
    report key (the report's keys stay as they were)."""


@dataclass(frozen=True)
class BandRecord(AgreementRecord):
    """The human-human band (`reviewer_band`): an `AgreementRecord` whose ``verifier`` and
    ``reference`` are `REVIEWER_PAIRS` and ``n`` counts ordered pairs, plus the unordered
    pairs and the reviewers behind them."""

    n_pairs: int
    n_reviewers: int


def reasons(record: AgreementRecord) -> dict[str, str]:
    """Why each undefined value (``<key>``) and interval (``<metric>_ci``) is undefined:
    the values in `value_keys` order, then the intervals in `ci_keys` order."""
    est = record.estimates
    out = {key: est[key].reason for key in value_keys() if est[key].reason}
    for name in ci_keys():
        ci = est[name].ci
        if ci is not None and ci.reason:
            out[f"{name}_ci"] = ci.reason
    return out


def _record(
    comparison: _Comparison,
    values: dict[str, M.Value],
    intervals: dict[str, M.Interval],
    threshold: float | None,
    bootstrap: Bootstrap,
    n_clusters: int,
) -> AgreementRecord:
    c = comparison.confusion
    estimates = {
        key: M.Estimate.of(values[name], intervals.get(name)) for key, name in value_keys().items()
    }
    return AgreementRecord(
        split=comparison.split,
        verifier=comparison.verifier,
        reference=comparison.reference,
        dimension=comparison.dimension,
        uv_threshold=threshold,
        n=c.n,
        n_tasks=c.n,  # one row per task: tasks with both labels
        n_missing_verifier=c.n_missing_pred,
        n_missing_reference=c.n_missing_ref,
        n_excluded=c.n_excluded,
        tp=c.tp,
        fp=c.fp,
        fn=c.fn,
        tn=c.tn,
        estimates=estimates,
        kappa_misleads=M.kappa_misleads(c),
        bootstrap=bootstrap,
        n_clusters=int(n_clusters),
    )


def agreement_records(
    table: pd.DataFrame,
    threshold: float = UV_THRESHOLD,
    splits: Sequence[str] | None = None,
    pooled: bool = True,
    boot: Bootstrap = BOOTSTRAP,
    *,
    only_verifiers: Collection[str] | None = None,
    only_references: Collection[str] | None = None,
) -> list[AgreementRecord]:
    """One record per split x verifier x reference, with cluster-bootstrap intervals.

    Parameters
    ----------
    table : the verdict table (`lib.table.verdicts`), with any uploaded verifier rows
    threshold : rubric-score threshold of the ``uv_process`` verdict (default 0.8)
    splits : splits to cover (default: all in the table); with two or more and
        ``pooled``, records with ``split == "all"`` pool them
    boot : the bootstrap settings; ``boot.unit`` is what it resamples, ``task`` or
        ``site`` (`lib.table.clusters`). Every record carries it as ``bootstrap``.
    only_verifiers, only_references : compute only these raters' comparisons (the page
        asks for what it shows: its cost then grows with the shown comparisons, not with
        every reviewer x every uploaded verifier); None = all. Each record is the same as
        in the full run (every comparison has its own bootstrap stream).

    Returns
    -------
    `AgreementRecord` s (the README lists the report's fields; `lib.report` flattens
    them): ``split``, ``verifier``, ``reference``, ``dimension``, ``uv_threshold`` (the
    rubric-score threshold of ``uv_process`` in force; it changes only the uv_process
    records), counts (``n``, ``n_tasks``, ``n_missing_verifier``,
    ``n_missing_reference``, ``n_excluded``, ``tp``, ``fp``, ``fn``, ``tn``),
    ``estimates`` (every metric of `value_keys` as `lib.metrics.Estimate`, with its
    interval for `ci_keys`), the flag ``kappa_misleads`` and ``bootstrap`` (settings).

    Every verifier gets a record in every split, also where it has no verdict (e.g.
    ``om2w_judge`` on internal: n = 0, all metrics None with a reason); a reviewer is a
    reference only in the splits they reviewed.
    """
    if threshold != UV_THRESHOLD:
        table = with_uv_threshold(table, threshold)
    splits = list(splits) if splits is not None else table_splits(table)
    chosen = [(v, d) for v, d in verifiers(table) if only_verifiers is None or v in only_verifiers]
    refs = {
        dim: [r for r in references(table, dim) if only_references is None or r in only_references]
        for dim in dict.fromkeys([OUTCOME, PROCESS, *(d for _, d in chosen)])
    }
    wanted = None
    if only_verifiers is not None or only_references is not None:
        wanted = {v for v, _ in chosen} | {r for rs in refs.values() for r in rs}
    matrix = label_matrix(table, wanted)
    comparisons: list[_Comparison] = []
    for name, group in split_groups(splits, pooled):
        in_group = matrix.in_splits(group)
        for verifier, dimension in chosen:
            for reference in refs[dimension]:
                ref_key = (reference, dimension)
                if not (matrix.has(ref_key) & in_group).any():
                    continue
                c, counts = _compare(matrix, (verifier, dimension), ref_key, group, boot.unit)
                comparisons.append(_Comparison(name, verifier, reference, dimension, c, counts))
    values = M.batch_values([c.confusion for c in comparisons])
    per_cluster = [c.per_cluster for c in comparisons]
    intervals = M.batch_intervals(per_cluster, ci_keys(), boot)
    return [
        _record(c, v, iv, threshold, boot, c.per_cluster.shape[0])
        for c, v, iv in zip(comparisons, values, intervals, strict=True)
    ]


# ---------------------------------------------------------------------------------------
# Human-human band
# ---------------------------------------------------------------------------------------


def reviewer_pairs(
    table: pd.DataFrame, dimension: str = OUTCOME, split: str = OM2W
) -> pd.DataFrame:
    """Every ordered pair of distinct reviewers with a blind label on the same task.

    Columns ``task_id``, ``a``, ``b``, ``label_a``, ``label_b``; each unordered pair
    appears twice (A, B) and (B, A). Reviews with a missing label are left out.
    """
    rows = table[
        (table["kind"] == "human")
        & (table["stage"] == "blind")
        & (table["dimension"] == dimension)
        & (table["split"] == split)
        & table["label"].notna()
    ][["task_id", "rater", "label"]].astype({"task_id": str, "rater": str})
    pairs = co_raters(rows, "rater", on=["task_id"])
    return pairs.astype({"label_a": "float64", "label_b": "float64"})


def reviewer_band(
    table: pd.DataFrame,
    dimension: str = OUTCOME,
    split: str = OM2W,
    boot: Bootstrap = BOOTSTRAP,
) -> BandRecord:
    """Pooled pairwise kappa of the blind reviewers (see the module docstring), as a record.

    A `BandRecord`: the fields of `agreement_records` (``verifier`` and ``reference`` are
    ``reviewer_pairs``; ``n`` counts ordered pairs, i.e. twice the unordered ones) plus
    ``n_pairs`` (unordered) and ``n_reviewers``.
    """
    pairs = reviewer_pairs(table, dimension, split)
    with M.one_blas_thread():
        report = M.binary_report(
            pairs["label_a"],
            pairs["label_b"],
            cluster_ids(pairs["task_id"], boot.unit),
            boot,
        )
    c = M.Confusion(*(report["counts"][k] for k in ("tp", "fp", "fn", "tn")))
    comparison = _Comparison(split, REVIEWER_PAIRS, REVIEWER_PAIRS, dimension, c, np.zeros((0, 4)))
    k = report["counts"]["n_clusters"]
    record = _record(comparison, report["metrics"], report["ci"], None, boot, k)
    complete = pairs["label_a"].notna() & pairs["label_b"].notna()
    return BandRecord(
        **{f.name: getattr(record, f.name) for f in fields(record)}
        | {"n_tasks": int(pairs.loc[complete, "task_id"].nunique())},
        n_pairs=c.n // 2,
        n_reviewers=int(pairs["a"].nunique()),
    )


def report_records(bench: Any, boot: Bootstrap = BOOTSTRAP) -> list[AgreementRecord]:
    """The ``agreement`` key of `python -m lib.report`: the dataset's verdicts at 0.8.

    Every verifier x reference x split (and ``all``) record of `agreement_records`, then
    the human-human band records (`reviewer_band`, om2w, outcome and process).
    """
    table = bench.verdicts
    records = agreement_records(table, UV_THRESHOLD, boot=boot)
    if (table["split"] == OM2W).any():
        records += [reviewer_band(table, dim, boot=boot) for dim in (OUTCOME, PROCESS)]
    return records


# ---------------------------------------------------------------------------------------
# Frames for the page: tables, chart data, disagreements, ROC
# ---------------------------------------------------------------------------------------


def value_of(record: AgreementRecord, key: str) -> M.Value:
    """A record's metric as `Value` (with its reason when undefined)."""
    return record.estimates[key].as_value()


def interval_of(record: AgreementRecord, name: str) -> M.Interval | None:
    """A record's interval of a `ci_keys` metric, or None if it has none."""
    estimate = record.estimates.get(name)
    return None if estimate is None else estimate.ci


def select(
    records: Iterable[AgreementRecord],
    splits: Iterable[str],
    reference: str,
    process_reference: str = HUMAN_REFERENCE[PROCESS],
) -> list[AgreementRecord]:
    """The records a page shows: outcome verifiers against ``reference``, process
    verifiers against ``process_reference``, in the given splits (a name or ``all``)."""
    splits = list(splits)
    chosen = {OUTCOME: reference, PROCESS: process_reference}
    order = {s: i for i, s in enumerate(splits)}
    out = [r for r in records if r.split in order and chosen.get(r.dimension) == r.reference]
    return sorted(out, key=lambda r: order[r.split])


def disagreements(
    table: pd.DataFrame,
    tasks: pd.DataFrame,
    verifier: str,
    reference: str,
    splits: Iterable[str],
    dimension: str,
    threshold: float = UV_THRESHOLD,
) -> pd.DataFrame:
    """Tasks where the verifier and the reference disagree (rows of `paired_labels`).

    Columns: split, task_id, verifier, reference (1/0, never missing), score (NaN when
    the verifier has none), instruction ("" when unknown). Rows only: the page's wording
    (false positive / negative, links, split titles) is `ui.agreement.disagreements_display`.
    """
    if verifier == UV_PROCESS:
        table = with_uv_threshold(table, threshold)
    pairs = paired_labels(table, verifier, reference, splits, dimension)
    pairs = pairs[pairs["verifier"].notna() & pairs["reference"].notna()]
    pairs = pairs[pairs["verifier"] != pairs["reference"]]
    info = tasks[["split", "task_id", "instruction"]].astype({"split": str, "task_id": str})
    out = pairs.merge(info, on=["split", "task_id"], how="left")
    out["instruction"] = out["instruction"].fillna("").astype(str)
    return out.reset_index(drop=True)


@dataclass(frozen=True)
class RocResult:
    """ROC of a continuous score against a reference label, with the threshold's point."""

    curve: pd.DataFrame  # fpr, tpr, threshold
    point: pd.DataFrame  # one row: fpr, tpr, threshold (empty when undefined)
    auc: M.Value
    auc_ci: M.Interval
    n: int
    n_tasks: int
    n_missing_reference: int
    n_excluded: int  # tasks missing the score, the label or both
    n_clusters: int = 0  # clusters the AUC bootstrap resampled (tasks or websites/families)
    bootstrap: Bootstrap = BOOTSTRAP


def roc_result(
    table: pd.DataFrame,
    reference: str,
    splits: Iterable[str],
    threshold: float = UV_THRESHOLD,
    verifier: str = UV_PROCESS,
    boot: Bootstrap = BOOTSTRAP,
    reference_dimension: str | None = None,
) -> RocResult:
    """ROC of the verifier's score (the UV rubric score) against a human reference.

    Rows: the tasks of ``splits`` where the reference has a row (as in
    `agreement_records`); a task missing the score or the label is left out and counted.
    The AUC interval resamples ``boot.unit`` clusters (`lib.metrics.auc_ci`). The point
    is the verdict ``score >= threshold``, the verdict the page's metrics use.
    ``reference_dimension`` defaults to the task-level reference's own dimension, and to
    outcome for a reviewer (whose blind outcome label is the reference, as in `references`).
    """
    matrix = label_matrix(table, (verifier, reference))
    ref_dim = reference_dimension or (
        REFERENCES[reference].dimension if reference in REFERENCES else REVIEWER_DIMENSIONS[0]
    )
    rows = _rows(matrix, (reference, ref_dim), splits)
    score_dim = _dimension_of(table, verifier)
    scores = matrix.score((verifier, score_dim))[rows]
    ref = matrix.label((reference, ref_dim))[rows]
    clusters = matrix.task_id[rows]
    fpr, tpr, thresholds, auc = M.roc(scores, ref)
    units = cluster_ids(clusters, boot.unit)
    with M.one_blas_thread():
        interval = M.auc_ci(scores, ref, units, boot)
    curve = pd.DataFrame({"fpr": fpr, "tpr": tpr, "threshold": thresholds})
    curve["threshold"] = curve["threshold"].where(np.isfinite(curve["threshold"]), None)
    point_fpr, point_tpr = M.point_at_threshold(scores, ref, threshold)
    point = pd.DataFrame(columns=["fpr", "tpr", "threshold"])
    if point_fpr.defined and point_tpr.defined:
        point = pd.DataFrame(
            {"fpr": [point_fpr.value], "tpr": [point_tpr.value], "threshold": [threshold]}
        )
    keep = ~(np.isnan(scores) | np.isnan(ref))
    return RocResult(
        curve=curve,
        point=point,
        auc=auc,
        auc_ci=interval,
        n=int(keep.sum()),
        n_tasks=len(np.unique(clusters[keep])),
        n_excluded=int((~keep).sum()),
        n_missing_reference=int(np.isnan(ref).sum()),
        n_clusters=len(set(np.asarray(units, dtype=object)[keep].tolist())),
        bootstrap=boot,
    )
