"""The one declared list of two-rater metrics (`METRICS`): what each computes, which
interval it gets, what it is called on screen, which direction is better, whether it is a
proportion, and where the Agreement and Slices pages show it.

Everything that lists metrics reads this list, when it runs (not a copy taken at import):
`metric_arrays` / `metrics` / `binary_report` (`lib.metrics.binary`, `results`), the
Clopper-Pearson intervals (`lib.metrics.proportion`: the proportions' cells), the bootstrap
engine, the Agreement records and their report keys and CSV columns
(`lib.analysis.agreement`, `lib.report`, `ui.agreement`), the Slices records, ranking and
chart (`lib.analysis.slices`, `lib.charts.slices`, `ui.slices`) and the captions
(`ui.fmt`). A new metric is one `Metric` entry here plus its test
(`docs/conventions.md`, *Add a metric*); `tests/app/test_new_metric.py` adds one for a
test and finds it on Agreement and in the report.

Order: `METRICS` is the engine's order (``metric_arrays``, ``binary_report``, the
report's value keys: kept as it was, so the report's bytes do not change); a metric's
``column`` is its place on Agreement (its table columns and the report's ``<m>_ci``
keys) and ``slice_column`` its place on Slices. A new entry goes last and gets the
next numbers.

Part of `lib.metrics` (import from there; see its docstring for the conventions).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from lib.metrics._base import div
from lib.metrics.values import Confusion

CountsFn = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]
"""A metric over count arrays ``(tp, fp, fn, tn)`` (any shape, all the same): its value
per element, NaN where it is undefined (the bootstrap calls it on every resample)."""
Cells = tuple[tuple[int, ...], tuple[int, ...]]
"""A proportion's (numerator, denominator) cells among ``[tp, fp, fn, tn]`` (0-3)."""

CLOPPER_PEARSON = "clopper-pearson"
"""The cluster-adjusted Clopper-Pearson interval (`lib.metrics.proportion`): every
proportion's."""
PERCENTILE = "percentile"
"""The cluster bootstrap's percentile interval (`lib.metrics.bootstrap`): the others'."""

MAIN = "main"
"""``agreement_table`` of the Agreement page's main table (the others are tables under
its *More columns* expander, titled by their name)."""
OTHER_AGREEMENT = "Other agreement metrics"
PRECISION_RECALL = "Precision, recall, specificity"


@dataclass(frozen=True)
class Metric:
    """One two-rater metric of a 2x2 table, declared once.

    name : its id: the `lib.metrics` name, the record's estimate and the report's key
    counts : the metric over count arrays (`CountsFn`)
    title : what the screen calls it (table columns, captions, the Slices selector)
    higher_is_better : True (agreement), False (an error rate) or None (a rate that
        describes the raters, such as the positive rates: not a grade, never ranked)
    cells : a proportion's cells (`Cells`), None when it is not a share of rows; a
        proportion's interval is Clopper-Pearson, any other metric's the percentile bootstrap
    interval : the interval the records carry (`CLOPPER_PEARSON` for a proportion, `PERCENTILE`
        otherwise), or None for a value without one (`binary_report` still gives one
        when asked by name)
    undefined : why the metric is undefined on a confusion where it is NaN (default
        "undefined"; n = 0 is said for every metric)
    long_title : a chart axis' title (default ``title``)
    low : the lowest value it can take (chart axes; the highest is 1)
    column : its place among Agreement's metric columns (and the report's ``<name>_ci``
        keys), None when it is not a column (the positive rates have their own)
    agreement_table : the Agreement table it is shown in: `MAIN` or a title of a table
        under *More columns*
    slice_column : its place on Slices (measured per slice, selectable for the ranking;
        needs a ``higher_is_better``), None when Slices leaves it out
    record_key : its key in an Agreement record and the report when not ``name`` (the
        positive rates say whose: ``verifier_positive_rate``)
    """

    name: str
    counts: CountsFn
    title: str
    higher_is_better: bool | None
    cells: Cells | None = None
    interval: str | None = PERCENTILE
    undefined: Callable[[Confusion], str] | None = None
    long_title: str = ""
    low: float = 0.0
    column: int | None = None
    agreement_table: str = OTHER_AGREEMENT
    slice_column: int | None = None
    record_key: str = ""

    def __post_init__(self) -> None:
        method = CLOPPER_PEARSON if self.cells is not None else PERCENTILE
        if self.interval not in (None, method):
            raise ValueError(f"{self.name}: a {'proportion' if self.cells else 'metric'} "
                             f"gets the {method} interval, not {self.interval!r}")  # fmt: skip
        if self.slice_column is not None and self.higher_is_better is None:
            raise ValueError(f"{self.name}: Slices ranks by it, so say which side is better")

    @property
    def proportion(self) -> bool:
        """A share of rows (x of n): its interval is Clopper-Pearson's on the effective n."""
        return self.cells is not None

    @property
    def method(self) -> str:
        """The interval it gets when one is asked for (`CLOPPER_PEARSON` or `PERCENTILE`)."""
        return CLOPPER_PEARSON if self.proportion else PERCENTILE

    @property
    def key(self) -> str:
        return self.record_key or self.name

    @property
    def axis_title(self) -> str:
        return self.long_title or self.title


# ---------------------------------------------------------------------------------------
# The formulas (vectorised on count arrays; NaN marks "undefined")
# ---------------------------------------------------------------------------------------


def _kappa(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray) -> np.ndarray:
    # (p_o - p_e) / (1 - p_e) rewritten over counts; the denominator is 0 iff p_e = 1.
    return div(2.0 * (tp * tn - fp * fn), (tp + fp) * (fp + tn) + (tp + fn) * (fn + tn))


def _ac1(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray) -> np.ndarray:
    n = tp + fp + fn + tn
    p_a = div(tp + tn, n)
    pi = div(2.0 * tp + fp + fn, 2.0 * n)  # mean positive rate of the two raters
    p_e = 2.0 * pi * (1.0 - pi)  # <= 0.5, so 1 - p_e >= 0.5 whenever n > 0
    return (p_a - p_e) / (1.0 - p_e)


def _mcc(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray) -> np.ndarray:
    den = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return div(tp * tn - fp * fn, den)


def _share(cells: Cells) -> CountsFn:
    """A proportion's formula from its cells: sum(numerator) / sum(denominator)."""
    num, den = cells

    def share(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray) -> np.ndarray:
        c = (tp, fp, fn, tn)
        return div(sum(c[i] for i in num), sum(c[i] for i in den))

    return share


def _one_class(c: Confusion) -> str:
    """Which side(s) use a single class; used in reasons."""
    pred_one = c.tp + c.fp in (0, c.n)
    ref_one = c.tp + c.fn in (0, c.n)
    if pred_one and ref_one:
        return "both raters use one class"
    return "reference has only one class" if ref_one else "prediction has only one class"


def _proportion(name: str, cells: Cells, title: str, **kw) -> Metric:
    kw.setdefault("interval", CLOPPER_PEARSON)
    return Metric(name, _share(cells), title, cells=cells, **kw)


_ALL, _TP_FP, _TP_FN, _FP_TN = (0, 1, 2, 3), (0, 1), (0, 2), (1, 3)

METRICS: tuple[Metric, ...] = (
    _proportion("pred_positive_rate", ((0, 1), _ALL), "verifier success rate",
                higher_is_better=None, interval=None, agreement_table="",
                record_key="verifier_positive_rate"),
    _proportion("ref_positive_rate", ((0, 2), _ALL), "reference success rate",
                higher_is_better=None, interval=None, agreement_table="",
                record_key="reference_positive_rate"),
    _proportion("accuracy", ((0, 3), _ALL), "accuracy", higher_is_better=True, column=3,
                agreement_table=MAIN, long_title="Accuracy", slice_column=0),
    _proportion("precision", ((0,), _TP_FP), "precision", higher_is_better=True,
                interval=None, column=7, agreement_table=PRECISION_RECALL,
                undefined=lambda c: "prediction has no positive label (tp + fp = 0)"),
    _proportion("recall", ((0,), _TP_FN), "recall", higher_is_better=True, interval=None,
                column=8, agreement_table=PRECISION_RECALL,
                undefined=lambda c: "reference has no positive label (tp + fn = 0)"),
    _proportion("specificity", ((3,), _FP_TN), "specificity", higher_is_better=True,
                interval=None, column=9, agreement_table=PRECISION_RECALL,
                undefined=lambda c: "reference has no negative label (fp + tn = 0)"),
    Metric("f1", lambda tp, fp, fn, tn: div(2.0 * tp, 2.0 * tp + fp + fn), "F1",
           higher_is_better=True, column=5,
           undefined=lambda c: "neither side has a positive label (2tp + fp + fn = 0)"),
    _proportion("fpr", ((1,), _FP_TN), "FPR", higher_is_better=False, column=1,
                agreement_table=MAIN, slice_column=2,
                undefined=lambda c: "reference has no negative label (fp + tn = 0)"),
    _proportion("fnr", ((2,), _TP_FN), "FNR", higher_is_better=False, column=2,
                agreement_table=MAIN, slice_column=3,
                undefined=lambda c: "reference has no positive label (tp + fn = 0)"),
    Metric("kappa", _kappa, "kappa", higher_is_better=True, column=0, agreement_table=MAIN,
           long_title="Cohen's kappa", low=-1.0, slice_column=1,
           undefined=lambda c: "both raters use one class (p_e = 1)"),
    Metric("ac1", _ac1, "AC1", higher_is_better=True, column=4, low=-1.0),
    Metric("mcc", _mcc, "MCC", higher_is_better=True, column=6, low=-1.0,
           undefined=lambda c: f"{_one_class(c)} (a marginal is zero)"),
)  # fmt: skip
"""Every two-rater metric, in the engine's order (see the module docstring)."""


# ---------------------------------------------------------------------------------------
# Views of the list (read when called: a metric added to `METRICS` is in all of them)
# ---------------------------------------------------------------------------------------


def by_name() -> dict[str, Metric]:
    return {m.name: m for m in METRICS}


def get(name: str) -> Metric:
    """The metric called ``name`` (KeyError names the known ones)."""
    found = by_name().get(name)
    if found is None:
        raise KeyError(f"unknown metric {name!r}; known: {metric_names()}")
    return found


def metric_names() -> tuple[str, ...]:
    """Every metric, in the engine's order."""
    return tuple(m.name for m in METRICS)


def proportions() -> tuple[str, ...]:
    """The metrics that are a share of rows (their interval is Clopper-Pearson's)."""
    return tuple(m.name for m in METRICS if m.proportion)


def columns() -> tuple[Metric, ...]:
    """Agreement's metric columns, in their order (``column``)."""
    shown = [m for m in METRICS if m.column is not None]
    return tuple(sorted(shown, key=lambda m: m.column))


def interval_names() -> tuple[str, ...]:
    """The metrics an Agreement record carries an interval for, in column order (the
    report's ``<name>_ci`` keys)."""
    return tuple(m.name for m in columns() if m.interval is not None)


def agreement_tables() -> dict[str, tuple[Metric, ...]]:
    """Agreement's tables and their metric columns: `MAIN` first, then the others in the
    order of their first column."""
    tables: dict[str, list[Metric]] = {MAIN: []}
    for m in columns():
        tables.setdefault(m.agreement_table, []).append(m)
    return {title: tuple(ms) for title, ms in tables.items()}


def slice_metrics() -> tuple[str, ...]:
    """The metrics Slices measures and ranks by, in its order (``slice_column``)."""
    shown = sorted((m for m in METRICS if m.slice_column is not None), key=lambda m: m.slice_column)
    return tuple(m.name for m in shown)


def undefined_reason(name: str, c: Confusion) -> str:
    """Why metric ``name`` is undefined on ``c`` (where it is NaN and n > 0)."""
    why = get(name).undefined
    return why(c) if why else "undefined"
