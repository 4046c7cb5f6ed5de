"""The verifier development loop: versions, repeated runs, the commit rule and its noise floor.

The paper iterates on the verifier against frozen human labels (Figure 1, Table 17): a
change is *committed* only when kappa rises and the false-positive rate does not. Identical
prompts give outcome kappa 0.64-0.71 from run to run, so one run cannot tell a gain from
noise. This module scores an uploaded verifier's history (`lib.uploads.predictions`:
`Upload.history`, one row per verifier, version, run, task and dimension) per verifier x
reference x split (each split, and `all` pooled) x dimension:

- **Per version**: kappa, FPR and FNR against the reference. With repeated runs the value
  is the **median over runs** and the **spread** is the range (max - min) over runs. The
  interval: one run, the Agreement page's (`lib.metrics.batch_intervals`: kappa percentile
  bootstrap, FPR/FNR Clopper-Pearson on the clusters' effective n); several runs, the
  percentile task bootstrap of the median over runs (each resample draws tasks once and
  applies them to every run).
- **The noise floor** (`NOISE_STATISTIC`): the run-to-run range of kappa of one version,
  the largest over the versions with two or more runs. With no repeated run the floor is
  unknown (`NO_REPEATS`) and the rule uses 0.
- **The commit rule**, in version order (`ORDER_WORDS`): the first version is committed;
  a later one is committed when, against the last committed version and on the same tasks
  (those where both versions' every run and the reference have a label), its kappa gain is
  larger than the noise floor and its FPR does not rise. Otherwise why not, checked in
  this order: `KAPPA_FELL`, `FPR_ROSE`, `BELOW_FLOOR` (`KAPPA_UNDEFINED` when kappa has no
  value on those tasks). The differences get a **paired task bootstrap** interval
  (`PAIRED_METHOD`); the rule reads their point values.
- **Stability** (a version with two or more runs): per task, the share of pairs of runs
  that disagree; its mean over tasks is the flip rate; a task where some run disagrees
  with another is unstable.
- **Version changes** (each version against the one before it): tasks gained (the version's
  verdict now equals the reference) and lost, with the exact McNemar test on the paired
  correct / wrong outcomes. A version's verdict on a task is the majority of its runs
  (a tie: its lowest run's label).

Missing labels are never 0: a run without a label on a task leaves that task out of that
run's numbers, and a task without a reference label is out of every number.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import pairwise

import numpy as np
import pandas as pd

from lib import metrics
from lib.metrics import Estimate, Interval
from lib.table.clusters import cluster_ids
from lib.table.verdicts import REFERENCES
from lib.vocab import ALL, BOOTSTRAP, DIMENSIONS, HUMAN_REFERENCE, SPLITS, Bootstrap

METRICS: tuple[str, ...] = ("kappa", "fpr", "fnr")
"""The numbers of every version (the paper's Figure 1 and Table 17)."""

COMMITTED = "committed"
FIRST = "first version"
KAPPA_FELL = "kappa fell"
FPR_ROSE = "FPR rose"
BELOW_FLOOR = "gain below the noise floor"
KAPPA_UNDEFINED = "kappa undefined on the common tasks"
REASONS: tuple[str, ...] = (KAPPA_FELL, FPR_ROSE, BELOW_FLOOR, KAPPA_UNDEFINED)
"""Why a version was not committed, checked in this order."""

NOISE_STATISTIC = (
    "the range (max - min) of kappa over the runs of one version, the largest over the "
    "versions with two or more runs"
)
NO_REPEATS = "no repeated runs: noise floor unknown"
PAIRED_METHOD = (
    "paired task bootstrap: each resample draws tasks once and scores both versions on them, "
    "on the tasks where both versions' every run and the reference have a label"
)
MEDIAN_METHOD = "percentile bootstrap of the median over runs"
ORDER_WORDS = "versions are ordered as they first appear in the uploaded file"

_CATEGORY = {(1, 1): 0, (1, 0): 1, (0, 1): 2, (0, 0): 3}  # (pred, ref) -> tp, fp, fn, tn


@dataclass(frozen=True)
class VersionRecord:
    """One version of a verifier against one reference on one split (or `all`).

    ``estimates[m]``: the median over runs (one run: its value) with its interval.
    ``spreads[m]``: max - min over the runs (None with one run or fewer than two defined).
    ``diffs[m]`` (kappa, fpr): this version minus the last committed one on their common
    tasks, with the paired interval (empty for the first version). ``n``: tasks with a
    reference label and a label of this version (the largest over its runs);
    ``n_paired``: the common tasks of the comparison.
    """

    verifier: str
    reference: str
    split: str
    dimension: str
    version: str
    order: int
    n_runs: int
    n: int
    estimates: dict[str, Estimate]
    spreads: dict[str, float | None]
    committed: bool
    why_not: str | None
    compared_with: str | None
    diffs: dict[str, Estimate] = field(default_factory=dict)
    n_paired: int = 0
    run_kappas: tuple[float | None, ...] = ()
    n_clusters: int = 0
    bootstrap: Bootstrap = BOOTSTRAP


@dataclass(frozen=True)
class Stability:
    """A version with two or more runs: how often its runs disagree with each other."""

    verifier: str
    version: str
    order: int
    dimension: str
    n_runs: int
    n_tasks: int
    flip_rate: float | None
    unstable_tasks: tuple[tuple[str, str], ...]  # (split, task_id)
    spreads: dict[str, float | None]


@dataclass(frozen=True)
class VersionChange:
    """A version against the one before it: tasks gained and lost against the reference."""

    verifier: str
    reference: str
    split: str
    dimension: str
    version: str
    previous: str
    order: int
    n: int
    gained: tuple[tuple[str, str], ...]
    lost: tuple[tuple[str, str], ...]
    mcnemar_p: float | None
    test: str = "exact McNemar on the paired correct/wrong outcomes"


@dataclass(frozen=True)
class IterationResult:
    """Everything the Iterations section shows for one verifier, reference, split, dimension."""

    verifier: str
    reference: str
    split: str
    dimension: str
    versions: list[VersionRecord]
    noise_floor: float
    noise_floor_known: bool
    stability: list[Stability]
    changes: list[VersionChange]
    n_missing_reference: int
    n_clusters: int
    bootstrap: Bootstrap = BOOTSTRAP

    @property
    def noise_words(self) -> str:
        if not self.noise_floor_known:
            return NO_REPEATS
        return f"noise floor {self.noise_floor:.3f} ({NOISE_STATISTIC})"


# ---------------------------------------------------------------------------------------
# The label matrix: tasks x runs
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Matrix:
    tasks: pd.DataFrame  # split, task_id (the reference-labelled tasks)
    ref: np.ndarray  # (n,) 1/0
    labels: np.ndarray  # (n, R) 1/0/NaN
    runs: list[tuple[int, str, int]]  # (order, version, run) per column
    codes: np.ndarray  # (n,) cluster index
    n_clusters: int
    n_missing_reference: int

    def columns(self, order: int) -> list[int]:
        return [j for j, (o, _, _) in enumerate(self.runs) if o == order]


def _splits(split: str) -> list[str]:
    return list(SPLITS) if split == ALL else [split]


def _matrix(
    table: pd.DataFrame,
    history: pd.DataFrame,
    verifier: str,
    reference: str,
    split: str,
    dimension: str,
    unit: str,
) -> _Matrix:
    splits = _splits(split)
    h = history[
        (history["rater"] == verifier)
        & (history["dimension"] == dimension)
        & history["split"].isin(splits)
    ]
    refs = table[
        (table["rater"] == reference)
        & (table["dimension"] == dimension)
        & table["split"].isin(splits)
    ]
    judged = h[["split", "task_id"]].drop_duplicates()
    refs = judged.merge(refs[["split", "task_id", "label"]], on=["split", "task_id"], how="left")
    missing = int(refs["label"].isna().sum())
    refs = refs[refs["label"].notna()].sort_values(["split", "task_id"]).reset_index(drop=True)
    runs = sorted(
        {
            (int(o), str(v), int(r))
            for o, v, r in zip(h["order"], h["version"], h["run"], strict=True)
        }
    )
    wide = h.assign(
        col=[f"{o}\x00{r}" for o, r in zip(h["order"], h["run"], strict=True)],
        value=h["label"].astype("Float64").to_numpy(dtype="float64", na_value=np.nan),
    ).pivot_table(index=["split", "task_id"], columns="col", values="value", aggfunc="first")
    wide = wide.reindex(
        index=pd.MultiIndex.from_frame(refs[["split", "task_id"]]),
        columns=[f"{o}\x00{r}" for o, _, r in runs],
    )
    labels = wide.to_numpy(dtype="float64", na_value=np.nan)
    clusters = cluster_ids(refs["task_id"].to_numpy(dtype=object), unit)
    codes, uniques = pd.factorize(pd.Series(np.asarray(clusters, dtype=object)), sort=True)
    return _Matrix(
        tasks=refs[["split", "task_id"]],
        ref=refs["label"].astype("Float64").to_numpy(dtype="float64", na_value=np.nan),
        labels=labels.reshape(len(refs), len(runs)),
        runs=runs,
        codes=codes.astype(np.int64),
        n_clusters=len(uniques),
        n_missing_reference=missing,
    )


def _counts(m: _Matrix, cols: list[int], mask: np.ndarray | None = None) -> np.ndarray:
    """(K, len(cols), 4) confusion counts per cluster and run (rows where both have a label)."""
    out = np.zeros((m.n_clusters, len(cols), 4))
    for k, j in enumerate(cols):
        p = m.labels[:, j]
        ok = ~np.isnan(p) & ~np.isnan(m.ref)
        if mask is not None:
            ok &= mask
        cat = np.where(p[ok] == 1, np.where(m.ref[ok] == 1, 0, 1), np.where(m.ref[ok] == 1, 2, 3))
        np.add.at(out, (m.codes[ok], k, cat), 1.0)
    return out


def _metric_runs(counts: np.ndarray) -> dict[str, np.ndarray]:
    """(..., R, 4) counts -> metric -> (..., R)."""
    return metrics.metric_arrays(counts, METRICS)


def _median(values: np.ndarray) -> np.ndarray:
    """Median over the last axis (the runs) of the defined values, NaN where every run is
    undefined (no warning). By a sort, which puts NaN last: equal to `np.nanmedian`, whose
    masked-array path for a short axis took 0.66 ms per call here, 0.45 s of the first
    render of 50 versions x 3 runs (`bench.iterations`)."""
    ordered = np.sort(values, axis=-1)
    k = (~np.isnan(values)).sum(axis=-1)
    low = np.take_along_axis(ordered, np.maximum((k - 1) // 2, 0)[..., None], axis=-1)
    high = np.take_along_axis(ordered, np.minimum(k // 2, values.shape[-1] - 1)[..., None], axis=-1)
    return np.where(k > 0, (low[..., 0] + high[..., 0]) / 2, np.nan)


def _value(x: float, why: str) -> metrics.Value:
    return metrics.Value(float(x)) if np.isfinite(x) else metrics.Value(None, why)


def _undefined_ci(k: int, boot: Bootstrap) -> Interval | None:
    if k >= 2:
        return None
    why = "n = 0" if k == 0 else metrics.ONE_CLUSTER
    return Interval(None, None, why, 0, boot.n_resamples, boot.level)


def _weights(m: _Matrix, boot: Bootstrap) -> np.ndarray:
    return metrics.resample_weights(m.n_clusters, boot).astype(np.float64)


def _resampled(weights: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(B, K) @ (K, R, 4) -> (B, R, 4)."""
    k, r, _ = counts.shape
    with metrics.one_blas_thread():
        return (weights @ counts.reshape(k, r * 4)).reshape(-1, r, 4)


# ---------------------------------------------------------------------------------------
# Per version, the rule, stability, changes
# ---------------------------------------------------------------------------------------


def _version_estimates(
    m: _Matrix, cols: list[int], weights: np.ndarray | None, boot: Bootstrap
) -> tuple[dict[str, Estimate], dict[str, float | None], int, tuple[float | None, ...]]:
    counts = _counts(m, cols)
    totals = counts.sum(axis=0)  # (R, 4)
    values = _metric_runs(totals)
    n = int(totals.sum(axis=1).max()) if len(cols) else 0
    run_kappas = tuple(None if np.isnan(v) else float(v) for v in values["kappa"])
    spreads: dict[str, float | None] = {}
    for name in METRICS:
        ok = values[name][~np.isnan(values[name])]
        spreads[name] = float(ok.max() - ok.min()) if ok.size >= 2 else None
    if len(cols) == 1:
        rows = counts[:, 0, :]
        rows = rows[rows.sum(axis=1) > 0]
        cis = metrics.batch_intervals([rows], METRICS, boot)[0]
        confusion = metrics.Confusion.from_counts(totals[0])
        point = metrics.metrics(confusion, METRICS)
        return {k: Estimate.of(point[k], cis[k]) for k in METRICS}, spreads, n, run_kappas
    k_used = int((counts.sum(axis=(1, 2)) > 0).sum())
    few = _undefined_ci(k_used, boot)
    samples = None if few is not None or weights is None else _resampled(weights, counts)
    out = {}
    for name in METRICS:
        point = _median(values[name][None, :])[0]
        value = _value(point, f"{name} undefined in every run")
        if samples is None:
            ci = few
        else:
            med = _median(_metric_runs(samples)[name])
            ci = replace(metrics.bootstrap.one_interval(med, boot.level), method=MEDIAN_METHOD)
        out[name] = Estimate.of(value, ci)
    return out, spreads, n, run_kappas


def _paired(
    m: _Matrix,
    cols_a: list[int],
    cols_b: list[int],
    weights: np.ndarray | None,
    boot: Bootstrap,
) -> tuple[dict[str, Estimate], int]:
    """Median-over-runs metric of version a minus that of version b on their common tasks."""
    both = cols_a + cols_b
    mask = ~np.isnan(m.ref) & ~np.isnan(m.labels[:, both]).any(axis=1)
    counts = _counts(m, both, mask)
    n = int(mask.sum())
    point = _metric_runs(counts.sum(axis=0))
    k_used = int((counts.sum(axis=(1, 2)) > 0).sum())
    few = _undefined_ci(k_used, boot)
    samples = None
    if few is None and weights is not None:
        samples = _metric_runs(_resampled(weights, counts))
    na = len(cols_a)
    out = {}
    for name in ("kappa", "fpr"):
        a = _median(point[name][None, :na])[0]
        b = _median(point[name][None, na:])[0]
        value = _value(a - b, f"{name} undefined on the {n} common tasks")
        if samples is None:
            ci = few
        else:
            diff = _median(samples[name][:, :na]) - _median(samples[name][:, na:])
            ci = metrics.bootstrap.one_interval(diff, boot.level)
        out[name] = Estimate.of(value, ci)
    return out, n


def _why_not(diffs: dict[str, Estimate], floor: float) -> str | None:
    dk, df = diffs["kappa"].value, diffs["fpr"].value
    if dk is None:
        return KAPPA_UNDEFINED
    if dk < 0:
        return KAPPA_FELL
    if df is not None and df > 0:
        return FPR_ROSE
    if dk <= floor:
        return BELOW_FLOOR
    return None


def _majority(labels: np.ndarray) -> np.ndarray:
    """A version's verdict per task: the majority of its runs; a tie: its lowest run's label."""
    ones = np.nansum(labels == 1, axis=1)
    zeros = np.nansum(labels == 0, axis=1)
    first = labels[:, 0] if labels.shape[1] else np.full(labels.shape[0], np.nan)
    out = np.where(ones > zeros, 1.0, np.where(zeros > ones, 0.0, first))
    return np.where(ones + zeros == 0, np.nan, out)


def _stability(
    m: _Matrix, verifier: str, dimension: str, order: int, version: str, spreads
) -> Stability:
    cols = m.columns(order)
    labels = m.labels[:, cols]
    ones = (labels == 1).sum(axis=1)
    zeros = (labels == 0).sum(axis=1)
    judged = ones + zeros
    use = judged >= 2
    pairs = judged * (judged - 1) / 2
    rate = np.where(use, ones * zeros / np.where(pairs > 0, pairs, 1), np.nan)
    unstable = use & (ones > 0) & (zeros > 0)
    tasks = m.tasks[unstable]
    return Stability(
        verifier=verifier,
        version=version,
        order=order,
        dimension=dimension,
        n_runs=len(cols),
        n_tasks=int(use.sum()),
        flip_rate=float(np.nanmean(rate)) if use.any() else None,
        unstable_tasks=tuple(zip(tasks["split"], tasks["task_id"], strict=True)),
        spreads=spreads,
    )


def _change(m: _Matrix, prev: tuple[int, str], cur: tuple[int, str], base: dict) -> VersionChange:
    a = _majority(m.labels[:, m.columns(prev[0])])
    b = _majority(m.labels[:, m.columns(cur[0])])
    ok = ~np.isnan(a) & ~np.isnan(b) & ~np.isnan(m.ref)
    right_a = a == m.ref
    right_b = b == m.ref
    gained = m.tasks[ok & ~right_a & right_b]
    lost = m.tasks[ok & right_a & ~right_b]
    p = metrics.mcnemar_exact(right_b[ok].astype(float), right_a[ok].astype(float))
    return VersionChange(
        **base,
        version=cur[1],
        previous=prev[1],
        order=cur[0],
        n=int(ok.sum()),
        gained=tuple(zip(gained["split"], gained["task_id"], strict=True)),
        lost=tuple(zip(lost["split"], lost["task_id"], strict=True)),
        mcnemar_p=p.value,
    )


def iterations(
    table: pd.DataFrame,
    history: pd.DataFrame,
    verifier: str,
    reference: str | None = None,
    split: str = ALL,
    dimension: str = "outcome",
    boot: Bootstrap = BOOTSTRAP,
    intervals: bool = True,
) -> IterationResult:
    """The Iterations view of one verifier against one reference on one split (or `all`).

    ``table``: the verdict table (the reference's labels); ``history``: the session's
    `Upload.history` rows. ``intervals=False`` skips the bootstraps (the rule needs only
    point values).
    """
    reference = reference or HUMAN_REFERENCE[dimension]
    m = _matrix(table, history, verifier, reference, split, dimension, boot.unit)
    weights = _weights(m, boot) if intervals and m.n_clusters >= 2 else None
    versions = sorted({(o, v) for o, v, _ in m.runs})
    estimates = {}
    for order, _version in versions:
        estimates[order] = _version_estimates(m, m.columns(order), weights, boot)
    repeated = [estimates[o][1]["kappa"] for o, _ in versions if len(m.columns(o)) >= 2]
    repeated = [s for s in repeated if s is not None]
    known = bool(repeated)
    floor = max(repeated) if known else 0.0
    base = {"verifier": verifier, "reference": reference, "split": split, "dimension": dimension}
    records: list[VersionRecord] = []
    last: tuple[int, str] | None = None
    for order, version in versions:
        est, spreads, n, run_kappas = estimates[order]
        cols = m.columns(order)
        if last is None:
            diffs, n_paired, why, committed = {}, 0, None, True
        else:
            diffs, n_paired = _paired(m, cols, m.columns(last[0]), weights, boot)
            why = _why_not(diffs, floor)
            committed = why is None
        records.append(
            VersionRecord(
                **base,
                version=version,
                order=order,
                n_runs=len(cols),
                n=n,
                estimates=est,
                spreads=spreads,
                committed=committed,
                why_not=why,
                compared_with=None if last is None else last[1],
                diffs=diffs,
                n_paired=n_paired,
                run_kappas=run_kappas,
                n_clusters=m.n_clusters,
                bootstrap=boot,
            )
        )
        if committed:
            last = (order, version)
    stability = [
        _stability(m, verifier, dimension, o, v, estimates[o][1])
        for o, v in versions
        if len(m.columns(o)) >= 2
    ]
    changes = [_change(m, a, b, base) for a, b in pairwise(versions)]
    return IterationResult(
        **base,
        versions=records,
        noise_floor=floor,
        noise_floor_known=known,
        stability=stability,
        changes=changes,
        n_missing_reference=m.n_missing_reference,
        n_clusters=m.n_clusters,
        bootstrap=boot,
    )


def references(table: pd.DataFrame, dimension: str) -> list[str]:
    """The task-level references of a dimension present in the table (the default first)."""
    present = set(table.loc[table["kind"] == "reference", "rater"].astype(str))
    refs = [r for r, info in REFERENCES.items() if info.dimension == dimension and r in present]
    default = HUMAN_REFERENCE[dimension]
    return sorted(refs, key=lambda r: r != default)


def history_splits(history: pd.DataFrame, verifier: str) -> list[str]:
    """The splits a verifier's history covers, then `all` when it covers more than one."""
    present = set(history.loc[history["rater"] == verifier, "split"].astype(str))
    splits = [s for s in SPLITS if s in present]
    return [*splits, ALL] if len(splits) > 1 else splits


def history_dimensions(history: pd.DataFrame, verifier: str) -> list[str]:
    rows = history[(history["rater"] == verifier) & history["label"].notna()]
    present = set(rows["dimension"])
    return [d for d in DIMENSIONS if d in present]


def report_results(
    table: pd.DataFrame, history: pd.DataFrame | None, boot: Bootstrap = BOOTSTRAP
) -> list[IterationResult]:
    """Every verifier x dimension x reference x split (each, then `all`) of a history."""
    if history is None or len(history) == 0:
        return []
    out = []
    for verifier in dict.fromkeys(history["rater"].astype(str)):
        for dimension in history_dimensions(history, verifier):
            for reference in references(table, dimension):
                splits = [s for s in history_splits(history, verifier) if s != ALL] + [ALL]
                for split in splits:
                    out.append(
                        iterations(table, history, verifier, reference, split, dimension, boot)
                    )
    return out


def version_change(
    table: pd.DataFrame,
    history: pd.DataFrame,
    verifier: str,
    previous: int,
    current: int,
    reference: str | None = None,
    split: str = ALL,
    dimension: str = "outcome",
) -> VersionChange | None:
    """What changed between any two versions (by `order`): tasks gained and lost, McNemar."""
    reference = reference or HUMAN_REFERENCE[dimension]
    m = _matrix(table, history, verifier, reference, split, dimension, "task")
    names = {o: v for o, v, _ in m.runs}
    if previous not in names or current not in names:
        return None
    base = {"verifier": verifier, "reference": reference, "split": split, "dimension": dimension}
    return _change(m, (previous, names[previous]), (current, names[current]), base)


def task_history(history: pd.DataFrame | None, split: str, task_id: str) -> pd.DataFrame:
    """Every version-run's verdicts on one task: verifier, version, order, run, and one
    column per dimension (1/0/NA); empty when no history covers it."""
    columns = ["rater", "version", "order", "run", *DIMENSIONS]
    if history is None or len(history) == 0:
        return pd.DataFrame(columns=columns)
    rows = history[(history["split"] == split) & (history["task_id"] == task_id)]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    keys = ["rater", "version", "order", "run"]
    wide = (
        rows.assign(value=rows["label"].astype("Float64"))
        .groupby([*keys, "dimension"], sort=False)["value"]
        .first()
        .unstack("dimension")
        .reset_index()
    )
    for d in DIMENSIONS:
        if d not in wide:
            wide[d] = pd.NA
    return wide.sort_values(["rater", "order", "run"])[columns].reset_index(drop=True)


def sample_history(table: pd.DataFrame, seed: int = 40) -> pd.DataFrame:
    """The sample history file for the loaded data (`lib.mirror.history`), built from the
    final human outcome label: 10 versions, the last with 3 runs."""
    from lib.mirror.history import sample_history as story

    ref = table[table["rater"] == HUMAN_REFERENCE["outcome"]]
    return story(ref[["split", "task_id", "label"]], seed)
