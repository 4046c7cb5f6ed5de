"""Where does a verifier fail? Agreement with the humans on each slice of the tasks.

A researcher who sees "kappa 0.58" next asks where the verifier goes wrong. For every
value of every slice dimension (`lib.analysis.slice_values`: website/family, trajectory length,
screenshots, how the run ended, how the humans stood, the Universal Verifier's rubric
band) this measures a verifier against a human reference, beside its overall figure on
the same selection, and compares two verifiers on the same tasks.

Every statistic is `lib.metrics`' (point values via `confusion` / `metrics`, intervals
via `bootstrap_intervals`, paired differences via `paired_bootstrap_diff`); this module
only selects rows and cluster labels (`lib.table.clusters`: resample tasks or websites).
An interval over a single cluster (every website slice when websites are resampled) is
undefined with a reason, by `lib.metrics` itself.

Ranking (`rank_slices`): slices are ordered by how much worse than the overall figure
they are on one metric (lower kappa/accuracy, higher FPR/FNR). Only an honest slice is
ranked (`not_ranked`): one with ``n >= min_n``, a defined metric, not defined by the
verifier's own score (`lib.analysis.slice_values.Slice.own_score_of`, declared with each
slice: the Universal Verifier's rubric bands are circular for the Universal Verifier), and,
for kappa, where neither the verifier nor the reference says one class on every task
(kappa is then 0 or undefined by construction: "kappa not informative (one class)"). The
others follow, unranked, small n last.

An interval is never zero-width without a reason: `SliceStat.note` says why every
resample gave the same value (one class, or no disagreement in the slice).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from lib import metrics as M
from lib.analysis.slice_values import SLICE_DIMS, SliceTable, own_score, slice_table
from lib.table.clusters import check_mode, cluster_labels
from lib.table.pairs import pair
from lib.vocab import ALL, BOOTSTRAP, HUMAN_REFERENCE, Bootstrap

ALL_SPLITS = ALL  # kept as a name: callers and tests import it
DEFAULT_MIN_N = 10
HEAVY_TEXT: tuple[str, ...] = ("web_surfer_log", "gpt_eval_json")
"""Per-task texts no slice reads from a split's rows (the action counts are parsed once)."""


def slice_metrics() -> tuple[str, ...]:
    """The metrics measured per slice and offered for the ranking, in the page's order
    (`lib.metrics.registry`: every metric with a ``slice_column``; each says which side is
    better)."""
    return M.registry.slice_metrics()


ONE_CLASS = "kappa not informative (one class)"

# ---------------------------------------------------------------------------------------
# Metrics per slice
# ---------------------------------------------------------------------------------------


class _Resampled:
    """The ``cluster`` property both slice records share (defined once, from ``bootstrap``)."""

    bootstrap: Bootstrap

    @property
    def cluster(self) -> str:
        """What the bootstrap resampled: ``task`` or ``site`` (``bootstrap.unit``)."""
        return self.bootstrap.unit


@dataclass(frozen=True)
class SliceStat:
    """One metric on one slice, beside the verifier's overall figure on the same selection.

    ``value`` and ``overall`` are `lib.metrics.Estimate` s with their intervals; ``gap``
    (value - overall, undefined when either is) has none.
    """

    value: M.Estimate
    overall: M.Estimate
    gap: M.Estimate
    note: str | None = None  # why the interval is zero-width, when it is


@dataclass(frozen=True)
class SliceRecord(_Resampled):
    """A verifier against a reference on one slice (one value of one slice dimension).

    ``n`` tasks of the slice have both labels, ``n_excluded`` lack one (the slice has
    ``n_tasks = n + n_excluded`` tasks of the selection); ``n_clusters`` units were
    resampled (tasks or websites/families, ``bootstrap.unit``), ``overall_n_clusters``
    those of the overall figure's interval. ``small_n`` is ``n < min_n``.
    """

    split: str
    verifier: str
    reference: str
    dimension: str
    slice_dim: str
    value: str
    order: int
    n: int
    n_tasks: int
    n_excluded: int
    n_clusters: int
    small_n: bool
    stats: dict[str, SliceStat]
    bootstrap: Bootstrap
    """The settings its intervals were computed with (for `ui.fmt.method_caption`)."""
    overall_n_clusters: int = 0
    one_class: str | None = None  # "the verifier says failure on every task", or None
    own_score: bool = False  # the slice is defined by this verifier's own score


def one_class(pred: np.ndarray, ref: np.ndarray) -> str | None:
    """Which side says one class on every task with both labels (verifier first), in
    words, or None. Kappa is then 0 or undefined whatever the other side says."""
    complete = ~(np.isnan(pred) | np.isnan(ref))
    if not complete.any():
        return None
    for who, labels in (("verifier", pred), ("reference", ref)):
        values = np.unique(labels[complete])
        if values.size == 1:
            word = "success" if values[0] == 1 else "failure"
            return f"the {who} says {word} on every task"
    return None


def zero_width_note(ci: M.Interval, n: int, constant: str | None) -> str | None:
    """Why a defined interval has no width (every resample gave the same value), or None."""
    if not ci.defined or ci.low != ci.high:
        return None
    why = constant or f"the verifier and the reference agree or disagree alike on all {n} tasks"
    return f"every resample gives {ci.low:.2f}: {why}"


def _splits(frame: pd.DataFrame, split: str) -> np.ndarray:
    if split == ALL_SPLITS:
        return np.ones(len(frame), dtype=bool)
    return (frame["split"].astype(str) == split).to_numpy()


def _selection_slices(
    tasks: pd.DataFrame,
    table: pd.DataFrame,
    dimension: str,
    split: str,
    slices: SliceTable | None,
) -> SliceTable:
    """The caller's cached slice table, else one of the split's tasks (so its quartile bins
    are the selection's): one rule for single and paired slices."""
    if slices is not None:
        return slices
    chosen = tasks[_splits(tasks, split)] if len(tasks) else tasks
    return slice_table(chosen, table, dimension)


def selection_rows(
    table: pd.DataFrame,
    slices: SliceTable,
    verifier: str,
    reference: str,
    dimension: str,
    split: str,
    cluster_mode: str,
) -> pd.DataFrame:
    """The selected tasks with their slice values, ``pred``, ``ref`` and ``cluster``.

    Every task of the split is a row (a task the verifier or the reference did not judge
    keeps a missing label, so it is excluded and counted, not dropped).
    """
    keys = ["split", "task_id"]
    frame = slices.frame[_splits(slices.frame, split)].reset_index(drop=True)
    pairs = pair(table, verifier, reference, dimension)
    pairs = pairs[[*keys, "label_a", "label_b"]].astype({"split": str, "task_id": str})
    rows = frame.astype({"split": str, "task_id": str}).merge(pairs, on=keys, how="left")
    rows = rows.drop_duplicates(keys, ignore_index=True)
    rows["pred"] = M.as_labels(rows["label_a"])
    rows["ref"] = M.as_labels(rows["label_b"])
    rows["cluster"] = cluster_labels(rows, cluster_mode).to_numpy()
    return rows.drop(columns=["label_a", "label_b"])


@dataclass(frozen=True)
class _Rows:
    """The selection as arrays: labels, integer cluster codes, one value array per dim.

    Cluster labels are factorised once in sorted order; a subset keeps that relative
    order, so `lib.metrics` numbers its clusters exactly as it would from the labels
    (same draws, same intervals) without re-sorting text for every slice.
    """

    pred: np.ndarray
    ref: np.ndarray
    codes: np.ndarray
    values: dict[str, np.ndarray]


def _arrays(rows: pd.DataFrame, pred_columns: Sequence[str]) -> tuple[_Rows, dict[str, np.ndarray]]:
    codes, _ = pd.factorize(rows["cluster"], sort=True)
    values = {dim: rows[dim].to_numpy(dtype=object) for dim in SLICE_DIMS}
    preds = {c: rows[c].to_numpy(dtype=np.float64) for c in pred_columns}
    first = preds[pred_columns[0]]
    return _Rows(first, rows["ref"].to_numpy(dtype=np.float64), codes, values), preds


def _nonempty_slices(
    rows: _Rows, slices: SliceTable, dims: Sequence[str]
) -> list[tuple[str, int, str, np.ndarray]]:
    """Every ``(dim, order, value, mask)`` with at least one task of the selection, in
    natural order: single and paired slices measure the same slices."""
    every = (
        (dim, order, value, rows.values[dim] == value)
        for dim in dims
        for order, value in enumerate(slices.orders[dim])
    )
    return [item for item in every if item[3].any()]


def _measure(
    pred: np.ndarray, ref: np.ndarray, codes: np.ndarray, boot: Bootstrap
) -> tuple[M.Confusion, dict[str, M.Value], dict[str, M.Interval], int]:
    c = M.confusion(pred, ref)
    values = M.metrics(c, slice_metrics())
    cis = M.bootstrap_intervals(pred, ref, codes, slice_metrics(), boot)
    complete = ~(np.isnan(pred) | np.isnan(ref))
    k = int(np.unique(codes[complete]).size)
    return c, values, cis, k


def _gap(value: M.Value, overall: M.Value) -> M.Value:
    if value.value is None:
        return M.Value(None, f"slice: {value.reason}")
    if overall.value is None:
        return M.Value(None, f"overall: {overall.reason}")
    return M.Value(value.value - overall.value)


def slice_records(
    table: pd.DataFrame,
    tasks: pd.DataFrame,
    verifier: str,
    reference: str,
    dimension: str,
    split: str = ALL_SPLITS,
    *,
    slice_dims: Sequence[str] | None = None,
    boot: Bootstrap = BOOTSTRAP,
    min_n: int = DEFAULT_MIN_N,
    sort_by: str | None = "kappa",
    slices: SliceTable | None = None,
) -> list[SliceRecord]:
    """Accuracy, kappa, FPR and FNR of ``verifier`` against ``reference`` on every slice.

    Parameters
    ----------
    table : the verdict table (with any uploaded verifiers added)
    tasks : ``bench.tasks`` (image-free)
    verifier, reference : rater ids; ``dimension`` is ``outcome`` or ``process``
    split : a split name, or ``"all"`` for every split pooled
    slice_dims : subset of `SLICE_DIMS` (default: all)
    boot : the bootstrap settings; ``boot.unit`` (``task`` or ``site``,
        `lib.table.clusters.CLUSTER_MODES`) is what it resamples, for the slices and the
        overall figure alike
    min_n : slices with fewer complete tasks are flagged ``small_n``
    sort_by : a metric of `slice_metrics` to rank by (`rank_slices`), or None for the
        natural order (dimension, then value order)
    slices : `slice_table` of the split's tasks, if cached by the caller (its quartile
        bins should be those of the selection; by default they are computed here)

    Every slice is measured with the same settings as the overall figure (the same
    rows, cluster labels, resamples and seed), so the gap compares like with like.
    """
    check_mode(boot.unit)
    dims = tuple(SLICE_DIMS if slice_dims is None else slice_dims)
    unknown = [d for d in dims if d not in SLICE_DIMS]
    if unknown:
        raise ValueError(f"unknown slice dimension(s) {unknown}; known: {list(SLICE_DIMS)}")
    slices = _selection_slices(tasks, table, dimension, split, slices)
    frame = selection_rows(table, slices, verifier, reference, dimension, split, boot.unit)
    rows, _ = _arrays(frame, ["pred"])
    _, overall, overall_ci, overall_k = _measure(rows.pred, rows.ref, rows.codes, boot)
    chosen = _nonempty_slices(rows, slices, dims)
    # One batched bootstrap for every slice (`lib.metrics.batch_intervals`: the same draws,
    # hence the same intervals, as one `bootstrap_intervals` call per slice, much faster).
    counts = [M.comparison_counts(rows.pred[m], rows.ref[m], rows.codes[m]) for *_, m in chosen]
    names = slice_metrics()
    intervals = M.batch_intervals([pc for _, pc in counts], names, boot)
    records: list[SliceRecord] = []
    for (dim, order, value, mask), (c, per_cluster), cis in zip(
        chosen, counts, intervals, strict=True
    ):
        vals = M.metrics(c, names)
        constant = one_class(rows.pred[mask], rows.ref[mask])
        notes = {m: zero_width_note(cis[m], c.n, constant) for m in names}
        stats = {
            m: SliceStat(
                # the slice's own words replace the engine's generic no-width reason
                M.Estimate.of(vals[m], replace(cis[m], reason=notes[m]) if notes[m] else cis[m]),
                M.Estimate.of(overall[m], overall_ci[m]),
                M.Estimate.of(_gap(vals[m], overall[m])),
                notes[m],
            )
            for m in names
        }
        records.append(
            SliceRecord(
                split=split,
                verifier=verifier,
                reference=reference,
                dimension=dimension,
                slice_dim=dim,
                value=value,
                order=order,
                n=c.n,
                n_tasks=int(mask.sum()),
                n_excluded=c.n_excluded,
                n_clusters=int(per_cluster.shape[0]),
                small_n=c.n < min_n,
                stats=stats,
                bootstrap=boot,
                overall_n_clusters=overall_k,
                one_class=constant,
                own_score=own_score(dim, verifier),
            )
        )
    return records if sort_by is None else rank_slices(records, sort_by)


def badness(record: SliceRecord, metric: str) -> float | None:
    """How much worse than overall the slice is on ``metric`` (positive = worse), or None."""
    gap = record.stats[metric].gap.value
    if gap is None:
        return None
    return -gap if M.registry.get(metric).higher_is_better else gap


def not_ranked(record: SliceRecord, metric: str) -> str | None:
    """Why the slice is left out of the ranking on ``metric`` (None: it is ranked).

    In order: small n; defined by the verifier's own score; kappa of one class; the
    metric undefined.
    """
    if record.small_n:
        return f"small n ({record.n})"
    if record.own_score:
        return "defined by this verifier's own score"
    if metric == "kappa" and record.one_class:
        return f"{ONE_CLASS}: {record.one_class}"
    if badness(record, metric) is None:
        return f"undefined ({record.stats[metric].value.reason or record.stats[metric].gap.reason})"
    return None


def rank_slices(records: Sequence[SliceRecord], metric: str = "kappa") -> list[SliceRecord]:
    """Worst first on ``metric`` among the ranked slices (`not_ranked` is None); then the
    slices with enough tasks that are not ranked, then the small-n ones (each group
    worst first where the metric is defined, the undefined last).

    Ties keep the natural order (dimension, value). Not a statistical test: a slice
    ranked first may still be within noise of the overall figure (read its interval).
    """
    if metric not in slice_metrics():
        raise ValueError(f"metric must be one of {slice_metrics()}, got {metric!r}")
    dim_pos = {d: i for i, d in enumerate(SLICE_DIMS)}

    def key(r: SliceRecord) -> tuple[int, int, float, int, int]:
        bad = badness(r, metric)
        group = 2 if r.small_n else int(not_ranked(r, metric) is not None)
        return (group, int(bad is None), -(bad or 0.0), dim_pos.get(r.slice_dim, 0), r.order)

    return sorted(records, key=key)


# ---------------------------------------------------------------------------------------
# Two verifiers side by side
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairedSliceRecord(_Resampled):
    """Verifier A minus verifier B against one reference, on one slice, same tasks.

    ``diffs[metric]`` is `lib.metrics.PairedDiff` (a, b, a - b, paired interval) on the
    tasks where both verifiers and the reference have a label (``n``); ``overall`` the
    same on the whole selection.
    """

    split: str
    verifier_a: str
    verifier_b: str
    reference: str
    dimension: str
    slice_dim: str
    value: str
    order: int
    n: int
    n_tasks: int
    n_clusters: int
    small_n: bool
    diffs: dict[str, M.PairedDiff]
    overall: dict[str, M.PairedDiff]
    bootstrap: Bootstrap = BOOTSTRAP


def _paired(
    pred_a: np.ndarray,
    pred_b: np.ndarray,
    ref: np.ndarray,
    codes: np.ndarray,
    boot: Bootstrap,
) -> dict[str, M.PairedDiff]:
    return {
        m: M.paired_bootstrap_diff(pred_a, ref, pred_b, ref, codes, m, boot)
        for m in slice_metrics()
    }


def paired_slice_records(
    table: pd.DataFrame,
    tasks: pd.DataFrame,
    verifier_a: str,
    verifier_b: str,
    reference: str,
    dimension: str,
    split: str = ALL_SPLITS,
    *,
    slice_dims: Sequence[str] | None = None,
    boot: Bootstrap = BOOTSTRAP,
    min_n: int = DEFAULT_MIN_N,
    slices: SliceTable | None = None,
) -> list[PairedSliceRecord]:
    """Per slice, ``metric(A) - metric(B)`` with a paired cluster-bootstrap interval.

    Both verifiers are measured on exactly the same tasks (all three labels present) and
    every resample applies one draw of clusters to both, so the interval reflects the
    correlation of the two verifiers (`lib.metrics.paired_bootstrap_diff`). Records are
    in natural order (dimension, value).
    """
    check_mode(boot.unit)
    dims = tuple(SLICE_DIMS if slice_dims is None else slice_dims)
    slices = _selection_slices(tasks, table, dimension, split, slices)
    frame = selection_rows(table, slices, verifier_a, reference, dimension, split, boot.unit)
    other = selection_rows(table, slices, verifier_b, reference, dimension, split, boot.unit)
    frame["pred_b"] = other["pred"].to_numpy()  # same tasks, same order (one row per task)
    rows, preds = _arrays(frame, ["pred", "pred_b"])
    overall = _paired(rows.pred, preds["pred_b"], rows.ref, rows.codes, boot)
    out: list[PairedSliceRecord] = []
    for dim, order, value, mask in _nonempty_slices(rows, slices, dims):
        diffs = _paired(
            rows.pred[mask], preds["pred_b"][mask], rows.ref[mask], rows.codes[mask], boot
        )
        first = next(iter(diffs.values()))
        out.append(
            PairedSliceRecord(
                split=split,
                verifier_a=verifier_a,
                verifier_b=verifier_b,
                reference=reference,
                dimension=dimension,
                slice_dim=dim,
                value=value,
                order=order,
                n=first.n,
                n_tasks=int(mask.sum()),
                n_clusters=first.n_clusters,
                small_n=first.n < min_n,
                diffs=diffs,
                overall=overall,
                bootstrap=boot,
            )
        )
    return out


# ---------------------------------------------------------------------------------------
# Flat rows (CSV download, JSON report)
# ---------------------------------------------------------------------------------------


def record_row(record: SliceRecord) -> dict[str, Any]:
    """One flat dict of plain JSON types: ``<metric>``, ``<metric>_ci`` ``[low, high]``,
    ``<metric>_overall``, ``<metric>_overall_ci``, ``<metric>_gap`` and ``reasons``
    ({``<metric>`` / ``ci:<metric>``: why undefined}). Undefined values are None."""
    row: dict[str, Any] = {
        k: getattr(record, k)
        for k in (
            "split",
            "verifier",
            "reference",
            "dimension",
            "slice_dim",
            "value",
            "n",
            "n_tasks",
            "n_excluded",
            "n_clusters",
            "cluster",
            "small_n",
        )
    }
    row |= {"n_resamples": record.bootstrap.n_resamples, "seed": record.bootstrap.seed}
    row |= {"one_class": record.one_class, "own_score": record.own_score}
    reasons: dict[str, str] = {}
    for m, s in record.stats.items():
        row[m] = s.value.value
        row[f"{m}_ci"] = M.to_jsonable(s.value.ci)
        row[f"{m}_overall"] = s.overall.value
        row[f"{m}_overall_ci"] = M.to_jsonable(s.overall.ci)
        row[f"{m}_gap"] = s.gap.value
        if s.value.reason:
            reasons[m] = s.value.reason
        ci_reason = s.value.ci.reason if s.value.ci is not None else None
        if ci_reason or s.note:
            reasons[f"ci:{m}"] = ci_reason or s.note
        if s.overall.ci is not None and s.overall.ci.reason:  # e.g. no width (issue 28)
            reasons[f"ci:{m}_overall"] = s.overall.ci.reason
    if record.one_class:
        reasons["kappa"] = f"{ONE_CLASS}: {record.one_class}"
    row["reasons"] = reasons
    return row


def paired_row(record: PairedSliceRecord) -> dict[str, Any]:
    """One flat dict of plain JSON types for a paired slice: per metric ``<metric>_a``,
    ``<metric>_b``, ``<metric>_diff``, ``<metric>_diff_ci``, ``<metric>_overall_diff``,
    ``<metric>_overall_diff_ci``, and ``reasons`` for what is undefined."""
    keys = ("split", "verifier_a", "verifier_b", "reference", "dimension", "slice_dim", "value")
    row: dict[str, Any] = {k: getattr(record, k) for k in keys}
    row |= {k: getattr(record, k) for k in ("n", "n_tasks", "n_clusters", "cluster", "small_n")}
    reasons: dict[str, str] = {}
    for m, d in record.diffs.items():
        overall = record.overall[m]
        row[f"{m}_a"], row[f"{m}_b"] = d.a.value, d.b.value
        row[f"{m}_diff"], row[f"{m}_diff_ci"] = d.diff.value, M.to_jsonable(d.ci)
        row[f"{m}_overall_diff"] = overall.diff.value
        row[f"{m}_overall_diff_ci"] = M.to_jsonable(overall.ci)
        if d.diff.reason:
            reasons[m] = d.diff.reason
        if d.ci.reason:
            reasons[f"ci:{m}"] = d.ci.reason
    row["reasons"] = reasons
    return row


# ---------------------------------------------------------------------------------------
# Headless report
# ---------------------------------------------------------------------------------------


def report_records(bench: Any, boot: Bootstrap = BOOTSTRAP) -> list[dict[str, Any]]:
    """The ``slices`` key of `python -m lib.report`: `record_row` of every slice.

    One record per split (each split, then ``all``) x verifier x reference x slice
    dimension x slice value. To keep the size bounded the reference is the default human
    reference of the verifier's dimension only (`lib.vocab.HUMAN_REFERENCE`): about
    (splits + 1) x verifiers x ~40 slice values records, not times every reviewer.
    Action logs are parsed once (`task_lengths`); quartile bins are per split, as on
    the page.
    """
    from lib.analysis.agreement import verifiers  # the Agreement page's verifier list, same order
    from lib.analysis.slice_values import task_lengths

    table, tasks = bench.verdicts, bench.tasks
    lengths = task_lengths(tasks)
    splits = [*sorted(tasks["split"].astype(str).unique()), ALL_SPLITS]
    out: list[dict[str, Any]] = []
    # the long texts stay out of each split's copy (the action counts come from `lengths`):
    # at 100x tasks a copy of every column was +200 MB of the report's peak (issue 39)
    light = tasks.drop(columns=[c for c in HEAVY_TEXT if c in tasks.columns])
    for split in splits:
        chosen = light[_splits(light, split)]
        tables: dict[str, SliceTable] = {}
        for verifier, dimension in verifiers(table):
            reference = HUMAN_REFERENCE.get(dimension)
            if reference is None:
                continue
            if dimension not in tables:
                tables[dimension] = slice_table(chosen, table, dimension, lengths)
            records = slice_records(
                table,
                tasks,
                verifier,
                reference,
                dimension,
                split,
                boot=boot,
                sort_by=None,
                slices=tables[dimension],
            )
            out.extend(record_row(r) for r in records)
    return out
