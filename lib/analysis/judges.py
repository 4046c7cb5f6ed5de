"""Judge against judge: who agrees with whom, on the tasks both judged.

Any two raters of the verdict table (`lib.table.verdicts`) form a pair: a reviewer's blind
labels (`Judge9`), their derived informed labels (`Judge9@informed`), each verifier
(including uploaded ones: any `kind == "verifier"` rater) and the task-level human
labels. A pair is compared on one dimension (outcome or process), or A on one and B on
the other (`pair_detail`'s ``dimension_b``), and on the chosen split(s): the rows where
both raters have a label on the same (split, task).

Orientation: rater A is the *row* rater, B the column rater, and every 2x2 table is
``[[both 1, A 1 B 0], [A 0 B 1, both 0]]``. In `lib.metrics` terms A is ``pred`` and
B is ``ref``, so the table is ``[[tp, fp], [fn, tn]]``.

Speed: the overview needs every pair at once (about 150 per split and dimension on the
real data), so `pair_table` counts all pairs with four matrix products and no
bootstrap. Intervals come from `pair_detail` for one pair (the page) and from
`report_records` for every pair (555 pairs on the small mirror: 1.7 to 2.1 s measured,
about 1 ms of bootstrap per pair plus pandas overhead), both through
`lib.metrics.bootstrap_intervals` with the same clusters, so the page and the report
give the same interval for the same pair.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from lib import metrics as M
from lib.table.clusters import cluster_ids
from lib.table.pairs import pair
from lib.table.verdicts import INFORMED_SUFFIX, REFERENCES, VERIFIERS, rater_title  # noqa: F401
from lib.vocab import (
    ALL,
    BOOTSTRAP,
    DIMENSIONS,
    HUMAN_REFERENCE,
    SPLITS,
    UV_VERDICT,
    Bootstrap,
    reviewer_sort_key,
)

CI_NAMES: tuple[str, ...] = ("kappa", "accuracy")

#: The task-level human label and the Universal Verifier verdict of each dimension.

#: Rater groups, in the order the overview lists them.
GROUPS: tuple[str, ...] = ("human label", "verifier", "reviewer, blind", "reviewer, informed")

N_1_REASON = "n = 1: a single shared task cannot show agreement beyond chance"


# ---------------------------------------------------------------------------------------
# Raters
# ---------------------------------------------------------------------------------------


def display_labels(order: Sequence[str]) -> dict[str, str]:
    """`lib.table.verdicts.rater_title` of each rater (the one display name on every page),
    made unique (a clash, e.g. an upload named like a reviewer, keeps the id in brackets)."""
    labels = {r: rater_title(r) for r in order}
    counts = pd.Series(list(labels.values())).value_counts()
    return {r: (f"{lab} [{r}]" if counts[lab] > 1 else lab) for r, lab in labels.items()}


def rater_groups(table: pd.DataFrame) -> dict[str, str]:
    """Each rater id of the table -> its group in `GROUPS`.

    Reviewers are `kind == "human"`, split by stage; task-level human labels are
    `kind == "reference"`; everything else (dataset verifiers, uploads) is a verifier.
    """
    firsts = table.drop_duplicates("rater")[["rater", "kind", "stage"]]
    out: dict[str, str] = {}
    for rater, kind, stage in firsts.itertuples(index=False):
        if kind == "reference":
            out[rater] = GROUPS[0]
        elif kind == "human":
            out[rater] = GROUPS[3] if stage == "informed" else GROUPS[2]
        else:
            out[rater] = GROUPS[1]
    return out


def order_raters(raters: Iterable[str], groups: Mapping[str, str]) -> list[str]:
    """Stable display order: human labels, verifiers (dataset first), blind, informed."""
    known = {r: i for i, r in enumerate([*REFERENCES, *VERIFIERS])}

    def key(r: str) -> tuple:
        group = GROUPS.index(groups.get(r, GROUPS[1]))
        if r in known:
            return (group, 0, known[r], ())
        return (group, 1, 0, reviewer_sort_key(r))

    return sorted(dict.fromkeys(raters), key=key)


def split_names(split: str) -> list[str]:
    """`all` -> every split; a split name -> itself."""
    return list(SPLITS) if split == ALL else [split]


def _subset(table: pd.DataFrame, splits: Sequence[str], dimension: str) -> pd.DataFrame:
    sub = table[table["split"].isin(list(splits)) & (table["dimension"] == dimension)]
    return sub.drop_duplicates(["split", "task_id", "rater"])


def raters(table: pd.DataFrame, splits: Sequence[str], dimension: str) -> list[str]:
    """The raters with at least one label on this dimension in these splits, ordered."""
    sub = _subset(table, splits, dimension)
    labelled = sub.loc[sub["label"].notna(), "rater"].unique().tolist()
    return order_raters(labelled, rater_groups(sub))


def default_pair(options: Sequence[str], dimension: str) -> tuple[str, str] | None:
    """Universal Verifier against the final human label if both exist, else the first two."""
    preferred = (UV_VERDICT[dimension], HUMAN_REFERENCE[dimension])
    if all(r in options for r in preferred):
        return preferred
    if len(options) < 2:
        return None
    return options[0], options[1]


def check_rater(
    asked: str | None, options: Sequence[str], dimension: str, where: str
) -> str | None:
    """A message when a rater id from a link cannot be used here, else None."""
    if asked is None or asked in options:
        return None
    return (
        f"The link asks for rater `{asked}`, which has no {dimension} labels in {where}. "
        f"Showing the default pair instead. Raters here: {', '.join(options)}."
    )


# ---------------------------------------------------------------------------------------
# Every pair at once (no intervals)
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Wide:
    """One split selection and dimension as tasks x raters matrices."""

    index: pd.DataFrame  # split, task_id per row
    raters: list[str]
    labels: np.ndarray  # (K, R) float: 1, 0, NaN
    present: np.ndarray  # (K, R) bool: the rater has a row for the task (maybe unlabelled)
    groups: dict[str, str]


def wide(table: pd.DataFrame, splits: Sequence[str], dimension: str) -> Wide:
    """Pivot the verdicts to tasks x raters (raters in display order, all with a label)."""
    sub = _subset(table, splits, dimension)
    groups = rater_groups(sub)
    order = raters(table, splits, dimension)
    sub = sub[sub["rater"].isin(order)]
    keys = ["split", "task_id"]
    labels = sub.pivot(index=keys, columns="rater", values="label").reindex(columns=order)
    present = (
        sub.assign(one=1.0)
        .pivot(index=keys, columns="rater", values="one")
        .reindex(index=labels.index, columns=order)
    )
    return Wide(
        index=labels.index.to_frame(index=False).astype("string"),
        raters=order,
        labels=labels.to_numpy(dtype=np.float64, na_value=np.nan),
        present=present.notna().to_numpy(),
        groups=groups,
    )


def _kappa_reasons(counts: np.ndarray, kappa: np.ndarray) -> list[str | None]:
    """Why kappa is undefined, per pair (None where defined)."""
    out: list[str | None] = []
    for c, k in zip(counts, kappa, strict=True):
        if not np.isnan(k):
            out.append(None)
        else:
            out.append(pair_kappa(M.Confusion.from_counts(c)).reason)
    return out


def pair_kappa(c: M.Confusion) -> M.Value:
    """Cohen's kappa of a pair, as `lib.metrics.kappa`, but undefined when n = 1.

    With one shared task each rater uses one class, so p_e is 1 (same label: 0 / 0,
    undefined anyway) or 0 (different labels: kappa = 0 by the formula). A kappa of 0
    from a single task reads like "chance-level raters", which one task cannot show,
    so the page says "undefined" with the reason instead.
    """
    if c.n == 1:
        return M.Value(None, N_1_REASON)
    return M.kappa(c)


PAIR_COLUMNS = [
    "rater_a", "rater_b", "group_a", "group_b", "n", "n_excluded",
    "a1b1", "a1b0", "a0b1", "a0b0", "agreement", "kappa", "kappa_reason", "mcnemar_p",
]  # fmt: skip


def pair_table(table: pd.DataFrame, splits: Sequence[str], dimension: str) -> pd.DataFrame:
    """Every ordered pair (A != B) of raters with counts, agreement, kappa and McNemar p.

    Columns `PAIR_COLUMNS`. `n` = tasks where both have a label; `n_excluded` = tasks
    both judged where at least one label is missing (e.g. `partial`, an unknown
    agreement category). `agreement`, `kappa` and `mcnemar_p` are NaN when undefined
    (n = 0, or see `kappa_reason`); this frame feeds charts and tables, and the page
    writes "undefined" for NaN. No intervals: see `pair_detail` and `report_records`.
    """
    return _pairs(wide(table, splits, dimension))


def _pairs(w: Wide) -> pd.DataFrame:
    """`pair_table` of an already pivoted selection."""
    r = len(w.raters)
    if r < 2:
        return pd.DataFrame(columns=PAIR_COLUMNS)
    ones = (w.labels == 1.0).astype(np.float64)
    zeros = (w.labels == 0.0).astype(np.float64)
    labelled = ones + zeros
    pres = w.present.astype(np.float64)
    # One BLAS thread: on a busy 2-core machine OpenBLAS's second thread made these five
    # (R x K) @ (K x R) products cost 1.1 s of CPU instead of 0.03 s (100x data, 41 raters).
    with M.one_blas_thread():
        cells = {
            "a1b1": ones.T @ ones,
            "a1b0": ones.T @ zeros,
            "a0b1": zeros.T @ ones,
            "a0b0": zeros.T @ zeros,
        }
        excluded = pres.T @ pres - labelled.T @ labelled
    ia, ib = np.where(~np.eye(r, dtype=bool))
    counts = np.stack([cells[k][ia, ib] for k in ("a1b1", "a1b0", "a0b1", "a0b0")], axis=1)
    n = counts.sum(axis=1)
    arrays = M.metric_arrays(counts, ("accuracy", "kappa"))
    kappa = np.where(n == 1, np.nan, arrays["kappa"])
    p = np.where(n > 0, M.mcnemar_p(counts[:, 1], counts[:, 2]), np.nan)
    out = pd.DataFrame(
        {
            "rater_a": [w.raters[i] for i in ia],
            "rater_b": [w.raters[j] for j in ib],
            "group_a": [w.groups[w.raters[i]] for i in ia],
            "group_b": [w.groups[w.raters[j]] for j in ib],
            "n": n.astype(int),
            "n_excluded": excluded[ia, ib].round().astype(int),
        }
    )
    for k, name in enumerate(("a1b1", "a1b0", "a0b1", "a0b0")):
        out[name] = counts[:, k].astype(int)
    out["agreement"] = arrays["accuracy"]
    out["kappa"] = kappa
    out["kappa_reason"] = pd.Series(_kappa_reasons(counts, kappa), dtype="string")
    out["mcnemar_p"] = p
    return out[PAIR_COLUMNS]


def unordered(pairs: pd.DataFrame, order: Sequence[str]) -> pd.DataFrame:
    """Each unordered pair once: A before B in `order` (kappa and n are symmetric)."""
    pos = {r: i for i, r in enumerate(order)}
    keep = pairs["rater_a"].map(pos) < pairs["rater_b"].map(pos)
    return pairs[keep].reset_index(drop=True)


# ---------------------------------------------------------------------------------------
# One pair in detail
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairDetail:
    """One pair on one split selection and dimension, with intervals.

    `frame`: every task either rater judged (`lib.table.pairs.pair`: split, task_id, label_a,
    label_b, ..., judged_a, judged_b), with missing labels kept missing. `confusion` is
    A (pred) against B (ref). ``estimates`` (`lib.metrics.Estimate` by name):
    ``agreement`` and ``kappa`` with their intervals, ``mcnemar_p``, and ``positive_a`` /
    ``positive_b`` (the share of the shared tasks A / B calls success).
    """

    rater_a: str
    rater_b: str
    dimension: str
    splits: tuple[str, ...]
    frame: pd.DataFrame
    confusion: M.Confusion
    estimates: Mapping[str, M.Estimate]
    n_excluded: int  # both judged, a label missing on at least one side
    n_clusters: int = 0  # clusters the bootstrap resampled (with both labels)
    bootstrap: Bootstrap = BOOTSTRAP
    dimension_b: str | None = None  # B's dimension when it is not A's (None: the same)

    @property
    def crossed(self) -> bool:
        """A and B are compared on different dimensions (e.g. process against outcome)."""
        return self.dimension_b is not None and self.dimension_b != self.dimension

    @property
    def b_dimension(self) -> str:
        """The dimension of B's labels."""
        return self.dimension_b or self.dimension

    @property
    def n(self) -> int:
        return self.confusion.n

    @property
    def table(self) -> list[list[int]]:
        """``[[both 1, A 1 B 0], [A 0 B 1, both 0]]``."""
        c = self.confusion
        return [[c.tp, c.fp], [c.fn, c.tn]]


def _intervals(frame: pd.DataFrame, boot: Bootstrap) -> dict[str, M.Interval]:
    clusters = cluster_ids(frame["task_id"], boot.unit)
    return M.bootstrap_intervals(frame["label_a"], frame["label_b"], clusters, CI_NAMES, boot)


def pair_detail(
    table: pd.DataFrame,
    splits: Sequence[str],
    dimension: str,
    rater_a: str,
    rater_b: str,
    boot: Bootstrap = BOOTSTRAP,
    dimension_b: str | None = None,
) -> PairDetail:
    """Counts, agreement and kappa with cluster-bootstrap intervals (``boot.unit``: resample
    tasks or websites/families), and McNemar's exact p.

    ``dimension_b``: B's labels of another dimension (A on ``dimension``): the paper's second
    principle is that process and outcome diverge (an environment that blocks the agent),
    so e.g. the verifier's process verdict against the humans' outcome label. The same
    rater may then be A and B (a reviewer's process against their own outcome label)."""
    if dimension_b == dimension:
        dimension_b = None
    frame = pair(table, rater_a, rater_b, dimension, splits, dimension_b=dimension_b)
    c = M.confusion(frame["label_a"], frame["label_b"])
    cis = _intervals(frame, boot)
    both = frame["judged_a"] & frame["judged_b"]
    return PairDetail(
        rater_a=rater_a,
        rater_b=rater_b,
        dimension=dimension,
        splits=tuple(splits),
        frame=frame,
        confusion=c,
        estimates={
            "agreement": M.Estimate.of(M.accuracy(c), cis["accuracy"]),
            "kappa": M.Estimate.of(
                pair_kappa(c), cis["kappa"] if c.n > 1 else M.Interval(None, None, N_1_REASON)
            ),
            "mcnemar_p": M.Estimate.of(M.mcnemar_exact(frame["label_a"], frame["label_b"])),
            "positive_a": M.Estimate.of(M.pred_positive_rate(c)),
            "positive_b": M.Estimate.of(M.ref_positive_rate(c)),
        },
        n_excluded=int(both.sum()) - c.n,
        n_clusters=M.resampled_clusters(
            frame["label_a"], frame["label_b"], cluster_ids(frame["task_id"], boot.unit)
        ),
        bootstrap=boot,
        dimension_b=dimension_b,
    )


def shares(detail: PairDetail) -> pd.DataFrame:
    """The 2x2 cells in long form, with row and column shares (NaN share when empty).

    Columns: a (1/0), b (1/0), count, row_share (of A's row), col_share (of B's column).
    """
    t = np.array(detail.table, dtype=np.float64)
    rows = t.sum(axis=1, keepdims=True)
    cols = t.sum(axis=0, keepdims=True)
    row_share = np.divide(t, rows, out=np.full_like(t, np.nan), where=rows > 0)
    col_share = np.divide(t, cols, out=np.full_like(t, np.nan), where=cols > 0)
    records = [
        {
            "a": 1 - i,
            "b": 1 - j,
            "count": int(t[i, j]),
            "row_share": row_share[i, j],
            "col_share": col_share[i, j],
        }
        for i in range(2)
        for j in range(2)
    ]
    return pd.DataFrame(records)


def off_diagonal(detail: PairDetail, tasks: pd.DataFrame | None = None) -> pd.DataFrame:
    """The discordant tasks: split, task_id, label_a, label_b (and instruction).

    Rows only, A 0 / B 1 first, then by split and task; `tasks` (bench.tasks) adds the
    instruction. The page's wording and links are `ui.judges.off_diagonal_table`.
    """
    f = detail.frame
    mask = f["label_a"].notna() & f["label_b"].notna() & (f["label_a"] != f["label_b"])
    out = f.loc[mask.fillna(False).astype(bool), ["split", "task_id", "label_a", "label_b"]]
    if tasks is not None and "instruction" in tasks:
        info = tasks[["split", "task_id", "instruction"]].astype({"task_id": "string"})
        out = out.astype({"split": "string", "task_id": "string"}).merge(
            info.astype({"split": "string"}), on=["split", "task_id"], how="left"
        )
    return out.sort_values(["label_a", "split", "task_id"], ignore_index=True)


# ---------------------------------------------------------------------------------------
# Panel and reviewers
# ---------------------------------------------------------------------------------------


def panel_table(
    table: pd.DataFrame, splits: Sequence[str], dimension: str, stage: str = "blind"
) -> pd.DataFrame:
    """Tasks x reviewers labels of one stage (missing where a reviewer did not label)."""
    sub = _subset(table, splits, dimension)
    sub = sub[(sub["kind"] == "human") & (sub["stage"] == stage)]
    if sub.empty:
        return pd.DataFrame()
    wide_labels = sub.pivot(index=["split", "task_id"], columns="annotator", values="label")
    return wide_labels.reindex(columns=sorted(wide_labels.columns, key=reviewer_sort_key))


def panel(
    table: pd.DataFrame,
    splits: Sequence[str],
    dimension: str,
    stage: str = "blind",
    boot: Bootstrap = BOOTSTRAP,
) -> dict[str, Any]:
    """Fleiss' kappa and Krippendorff's alpha of the reviewer panel (`metrics.panel_report`).

    ``boot.unit``: the bootstrap resamples tasks or websites/families (`lib.table.clusters`).

    Tasks with fewer than two labels of this stage are dropped (and counted), so a split
    with one reviewer per task (internal) gives "undefined (n = 0 ...)".
    """
    wide_labels = panel_table(table, splits, dimension, stage)
    clusters = None
    if boot.unit != "task" and len(wide_labels):
        clusters = cluster_ids(wide_labels.index.get_level_values("task_id"), boot.unit)
    return M.panel_report(wide_labels, boot, clusters=clusters)


PROFILE_COLUMNS = [
    "reviewer", "stage", "rater", "tasks", "unlabelled", "successes", "leniency",
    "kappa_final", "kappa_final_ci", "n_final", "kappa_uv", "kappa_uv_ci", "n_uv",
    "clusters_final", "clusters_uv",
]  # fmt: skip


def reviewer_profiles(
    table: pd.DataFrame,
    splits: Sequence[str],
    dimension: str,
    boot: Bootstrap = BOOTSTRAP,
) -> pd.DataFrame:
    """One row per reviewer and stage: load, leniency, kappa with the final label and the UV.

    `tasks` = tasks the reviewer labelled 1 or 0 on this dimension; `unlabelled` = tasks
    reviewed without such a label; `leniency` = successes / tasks (NaN when tasks = 0).
    `kappa_final` / `kappa_uv` are `metrics.Value` and `*_ci` `metrics.Interval`, against
    `HUMAN_REFERENCE[dimension]` and `UV_VERDICT[dimension]`; ``clusters_*`` the clusters
    their bootstrap resampled, ``attrs["bootstrap"]`` its `Bootstrap` (for the caption). In
    om2w the final label was adjudicated from the reviewers' own labels, so kappa with it is not
    independent of the reviewer.
    """
    w = wide(table, splits, dimension)
    sub = _subset(table, splits, dimension)
    humans = sub[sub["kind"] == "human"]
    annotator = dict(zip(humans["rater"], humans["annotator"], strict=True))
    stage = dict(zip(humans["rater"], humans["stage"], strict=True))
    clusters = cluster_ids(w.index["task_id"].to_numpy(dtype=object), boot.unit)
    column = {r: i for i, r in enumerate(w.raters)}
    order = order_raters(humans["rater"].unique().tolist(), rater_groups(humans))
    rows = []
    for rater in order:
        judged = int((humans["rater"] == rater).sum())
        labels = w.labels[:, column[rater]] if rater in column else np.full(len(clusters), np.nan)
        tasks = int((~np.isnan(labels)).sum())
        record: dict[str, Any] = {
            "reviewer": str(annotator[rater]),
            "stage": str(stage[rater]),
            "rater": rater,
            "tasks": tasks,
            "unlabelled": judged - tasks,
            "successes": int((labels == 1.0).sum()),
        }
        record["leniency"] = record["successes"] / tasks if tasks else np.nan
        for tag, other in (("final", HUMAN_REFERENCE[dimension]), ("uv", UV_VERDICT[dimension])):
            ref = w.labels[:, column[other]] if other in column else np.full(len(clusters), np.nan)
            c = M.confusion(labels, ref)
            ci = M.bootstrap_intervals(labels, ref, clusters, ("kappa",), boot)
            record[f"kappa_{tag}"] = pair_kappa(c)
            record[f"kappa_{tag}_ci"] = (
                ci["kappa"] if c.n > 1 else M.Interval(None, None, N_1_REASON)
            )
            record[f"n_{tag}"] = c.n
            record[f"clusters_{tag}"] = M.resampled_clusters(labels, ref, clusters)
        rows.append(record)
    out = pd.DataFrame(rows, columns=PROFILE_COLUMNS)
    out.attrs["bootstrap"] = boot
    return out


# ---------------------------------------------------------------------------------------
# Headless report
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairRecord:
    """One unordered pair on one split and dimension, for the report (`report_records`).

    ``estimates`` holds ``agreement`` and ``kappa`` as `lib.metrics.Estimate` (value, its
    interval, why undefined; kappa has no interval with n = 1, see `pair_kappa`).
    `lib.report` flattens it into JSON (`lib.report.judge_pair_json`), so this module
    never formats for JSON itself.
    """

    split: str
    dimension: str
    rater_a: str
    rater_b: str
    group_a: str
    group_b: str
    n: int
    n_excluded: int
    table: list[list[int]]  # [[both 1, A 1 B 0], [A 0 B 1, both 0]]
    estimates: Mapping[str, M.Estimate]  # agreement, kappa
    mcnemar_p: float


def _finite(value: float) -> float | None:
    """The pair table's NaN (undefined) as None, for an `Estimate`."""
    return None if pd.isna(value) else float(value)


def pair_records(
    table: pd.DataFrame,
    split: str,
    dimension: str,
    boot: Bootstrap = BOOTSTRAP,
) -> list[PairRecord]:
    """A `PairRecord` for every unordered pair with n > 0 (see `report_records`)."""
    splits = split_names(split)
    w = wide(table, splits, dimension)
    pairs = unordered(_pairs(w), w.raters)
    pairs = pairs[pairs["n"] > 0]
    if pairs.empty:
        return []
    # Integer cluster codes in sorted task-id order: the same clusters, in the same order,
    # as `pair_detail` passes as task ids, so the draws (and intervals) are identical.
    ids = cluster_ids(w.index["task_id"].to_numpy(dtype=object), boot.unit)
    codes = pd.Series(pd.factorize(ids, sort=True)[0])
    column = {r: i for i, r in enumerate(w.raters)}
    out = []
    for p in pairs.itertuples(index=False):
        a, b = w.labels[:, column[p.rater_a]], w.labels[:, column[p.rater_b]]
        cis = M.bootstrap_intervals(a, b, codes, CI_NAMES, boot)
        out.append(
            PairRecord(
                split=split,
                dimension=dimension,
                rater_a=p.rater_a,
                rater_b=p.rater_b,
                group_a=p.group_a,
                group_b=p.group_b,
                n=int(p.n),
                n_excluded=int(p.n_excluded),
                table=[[int(p.a1b1), int(p.a1b0)], [int(p.a0b1), int(p.a0b0)]],
                estimates={
                    "agreement": M.Estimate(_finite(p.agreement), cis["accuracy"]),
                    "kappa": M.Estimate(
                        _finite(p.kappa),
                        cis["kappa"] if p.n > 1 else None,
                        None if pd.isna(p.kappa_reason) else str(p.kappa_reason),
                    ),
                },
                mcnemar_p=float(p.mcnemar_p),
            )
        )
    return out


def report_records(bench: Any, boot: Bootstrap = BOOTSTRAP) -> list[PairRecord]:
    """`judge_pairs` of `python -m lib.report`: every pair with n > 0 (`PairRecord`).

    For each split, then `all` (both pooled), and each dimension: one record per
    unordered pair (A before B in the display order) with `split`, `dimension`,
    `rater_a`, `rater_b`, `group_a`, `group_b`, `n`, `n_excluded`,
    `table` [[both 1, A 1 B 0], [A 0 B 1, both 0]], `agreement`, `agreement_ci`,
    `kappa`, `kappa_ci`, `kappa_reason` (why kappa is null), `mcnemar_p`.
    Intervals: ``boot``, over tasks (``boot.unit == "task"``) or websites/families
    (``site``); null when undefined.
    """
    table = bench.verdicts
    records: list[PairRecord] = []
    for split in (*SPLITS, ALL):
        for dimension in DIMENSIONS:
            records.extend(pair_records(table, split, dimension, boot))
    return records
