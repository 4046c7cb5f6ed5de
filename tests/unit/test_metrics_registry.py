"""`lib.metrics.registry`: every declared metric against an independent implementation
(scikit-learn, or a hand-worked formula), its declaration consistent (a proportion gets
Clopper-Pearson, its cells give its value), and the views every page reads (Agreement's columns
and tables, the report's interval keys, Slices) in the order they had before the registry,
so that the report's bytes did not change.

A new metric without an entry in `INDEPENDENT` fails `test_every_metric_has_a_reference`:
its test is the other half of adding it (`docs/conventions.md`, *Add a metric*)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import metrics as SK

from lib.metrics import registry
from lib.metrics.values import Confusion


def _labels(tp: int, fp: int, fn: int, tn: int) -> tuple[np.ndarray, np.ndarray]:
    """(pred, ref) rows with these counts."""
    pred = np.array([1] * tp + [1] * fp + [0] * fn + [0] * tn)
    ref = np.array([1] * tp + [0] * fp + [1] * fn + [0] * tn)
    return pred, ref


def _ac1(pred: np.ndarray, ref: np.ndarray) -> float:
    # Gwet (2008), two raters, two categories, from the labels directly
    p_a = float(np.mean(pred == ref))
    pi = (pred.mean() + ref.mean()) / 2.0
    p_e = 2.0 * pi * (1.0 - pi)
    return (p_a - p_e) / (1.0 - p_e)


INDEPENDENT = {
    "pred_positive_rate": lambda p, r: float(p.mean()),
    "ref_positive_rate": lambda p, r: float(r.mean()),
    "accuracy": lambda p, r: SK.accuracy_score(r, p),
    "precision": lambda p, r: SK.precision_score(r, p),
    "recall": lambda p, r: SK.recall_score(r, p),
    "specificity": lambda p, r: SK.recall_score(r, p, pos_label=0),
    "f1": lambda p, r: SK.f1_score(r, p),
    "fpr": lambda p, r: 1.0 - SK.recall_score(r, p, pos_label=0),
    "fnr": lambda p, r: 1.0 - SK.recall_score(r, p),
    "kappa": lambda p, r: SK.cohen_kappa_score(p, r),
    "ac1": _ac1,
    "mcc": lambda p, r: SK.matthews_corrcoef(r, p),
}
"""Each registered metric computed another way, on labels."""


def test_every_metric_has_a_reference() -> None:
    assert set(registry.metric_names()) == set(INDEPENDENT)


@pytest.mark.parametrize("counts", [(5, 2, 3, 7), (1, 0, 4, 9), (12, 5, 1, 2), (3, 3, 3, 3)])
def test_every_formula_matches_its_independent_implementation(counts) -> None:
    pred, ref = _labels(*counts)
    arrays = [np.array(float(x)) for x in counts]
    for metric in registry.METRICS:
        got = float(metric.counts(*arrays))
        assert got == pytest.approx(INDEPENDENT[metric.name](pred, ref), abs=1e-12), metric.name


def test_the_formulas_work_on_arrays_and_say_undefined_with_nan() -> None:
    counts = np.array([[5.0, 2, 3, 7], [4, 0, 0, 0]])  # the second: one class on both sides
    out = {m.name: m.counts(*counts.T) for m in registry.METRICS}
    assert all(v.shape == (2,) for v in out.values())
    assert np.isnan(out["kappa"][1]) and np.isnan(out["fpr"][1]) and np.isnan(out["mcc"][1])
    assert out["accuracy"][1] == 1.0 and out["ac1"][1] == 1.0


def test_a_proportion_is_its_cells_and_gets_clopper_pearson() -> None:
    rng = np.random.default_rng(0)
    counts = rng.integers(1, 30, size=(50, 4)).astype(float)
    for m in registry.METRICS:
        assert m.method == (registry.CLOPPER_PEARSON if m.proportion else registry.PERCENTILE)
        assert m.interval in (None, m.method)
        if m.proportion:
            num, den = m.cells
            share = counts[:, list(num)].sum(axis=1) / counts[:, list(den)].sum(axis=1)
            np.testing.assert_allclose(m.counts(*counts.T), share, rtol=0, atol=1e-15)
            assert share.min() >= 0.0 and share.max() <= 1.0


def test_a_declaration_that_breaks_a_rule_is_refused() -> None:
    share = registry.get("fpr").counts
    with pytest.raises(ValueError, match="clopper-pearson"):
        registry.Metric("x", share, "x", True, cells=((1,), (1, 3)), interval=registry.PERCENTILE)
    with pytest.raises(ValueError, match="percentile"):
        registry.Metric("x", share, "x", True, interval=registry.CLOPPER_PEARSON)
    with pytest.raises(ValueError, match="better"):
        registry.Metric("x", share, "x", None, slice_column=9)


def test_the_views_keep_the_order_the_report_had() -> None:
    # the report's value keys, its `<m>_ci` keys and the Slices keys: byte-identical report
    assert registry.metric_names() == (
        "pred_positive_rate", "ref_positive_rate", "accuracy", "precision", "recall",
        "specificity", "f1", "fpr", "fnr", "kappa", "ac1", "mcc",
    )  # fmt: skip
    assert registry.interval_names() == ("kappa", "fpr", "fnr", "accuracy", "ac1", "f1", "mcc")
    assert registry.slice_metrics() == ("accuracy", "kappa", "fpr", "fnr")
    tables = {t: [m.title for m in ms] for t, ms in registry.agreement_tables().items()}
    assert tables == {
        registry.MAIN: ["kappa", "FPR", "FNR", "accuracy"],
        registry.OTHER_AGREEMENT: ["AC1", "F1", "MCC"],
        registry.PRECISION_RECALL: ["precision", "recall", "specificity"],
    }
    assert registry.get("pred_positive_rate").key == "verifier_positive_rate"
    assert registry.get("kappa").axis_title == "Cohen's kappa" and registry.get("kappa").low == -1


def test_every_shown_metric_says_which_side_is_better() -> None:
    for m in registry.METRICS:
        if m.column is not None or m.slice_column is not None:
            assert m.higher_is_better is not None, m.name
    assert registry.get("fpr").higher_is_better is False
    assert registry.get("kappa").higher_is_better is True


def test_the_views_read_the_list_when_called(monkeypatch) -> None:
    extra = registry.Metric("odd", registry.get("kappa").counts, "odd", True, column=99,
                            agreement_table="Odd ones", slice_column=9)  # fmt: skip
    monkeypatch.setattr(registry, "METRICS", (*registry.METRICS, extra))
    assert registry.metric_names()[-1] == "odd"
    assert registry.interval_names()[-1] == "odd"
    assert registry.slice_metrics()[-1] == "odd"
    assert list(registry.agreement_tables())[-1] == "Odd ones"
    assert registry.get("odd") is extra


def test_undefined_reasons() -> None:
    c = Confusion(tp=3, fp=0, fn=0, tn=0)
    assert registry.undefined_reason("fpr", c) == "reference has no negative label (fp + tn = 0)"
    assert registry.undefined_reason("mcc", c) == "both raters use one class (a marginal is zero)"
    assert registry.undefined_reason("ac1", c) == "undefined"
    with pytest.raises(KeyError, match="known"):
        registry.get("nope")
