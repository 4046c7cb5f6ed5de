"""Rogan-Gladen corrected success (`lib.analysis.corrected_success`): a hand-worked example,
the "not defined" case, and the interval's behaviour; coverage is `python -m bench.coverage`."""

from __future__ import annotations

import numpy as np
import pytest

from lib.analysis import corrected_success as cs
from lib.vocab import ALL, Bootstrap

BOOT = Bootstrap(n_resamples=500)


def test_hand_worked_example() -> None:
    # 20 tasks judged, 12 called success -> reported 0.6. The 10 with a human label:
    # TP 4, FN 1 (Se = 0.8), TN 4, FP 1 (Sp = 0.8).
    # corrected = (0.6 + 0.8 - 1) / (0.8 + 0.8 - 1) = 0.4 / 0.6 = 2/3.
    pred = np.array([1, 1, 1, 1, 0, 0, 0, 0, 0, 1] + [1] * 7 + [0] * 3, dtype=float)
    ref = np.array([1, 1, 1, 1, 1, 0, 0, 0, 0, 0] + [np.nan] * 10)
    r = cs.corrected_rate(pred, ref, np.arange(20).astype(str), BOOT)
    assert r["reported"].value == pytest.approx(0.6)
    assert r["sensitivity"].value == pytest.approx(0.8)
    assert r["specificity"].value == pytest.approx(0.8)
    assert r["corrected"].value == pytest.approx(2 / 3)
    assert r["n_judged"] == 20 and r["n_calibration"] == 10
    ci = r["corrected"].ci
    assert ci.defined and ci.low <= 2 / 3 <= ci.high and ci.method == cs.METHOD


def test_not_defined_when_sensitivity_plus_specificity_is_at_most_one() -> None:
    assert cs.rogan_gladen(0.5, 0.4, 0.6).reason == cs.NOT_DEFINED
    assert cs.rogan_gladen(0.5, 0.3, 0.6).value is None
    # a verifier that says success everywhere: Se 1, Sp 0
    pred = np.ones(10)
    ref = np.array([1, 0] * 5, dtype=float)
    r = cs.corrected_rate(pred, ref, np.arange(10).astype(str), BOOT)
    assert r["corrected"].value is None and r["corrected"].reason == cs.NOT_DEFINED


def test_clipped_to_the_unit_interval() -> None:
    assert cs.rogan_gladen(0.05, 0.9, 0.8).value == 0.0
    assert cs.rogan_gladen(0.99, 0.9, 0.95).value == 1.0


def test_on_fully_labelled_tasks_it_equals_the_reference_rate(bench) -> None:
    records = cs.report_records(bench.verdicts, BOOT)
    uv = {r.split: r for r in records if r.verifier == "uv_outcome_success"}
    assert set(uv) == {"fara7b_om2w_browserbase", "internal", ALL}
    for r in uv.values():
        assert r.corrected.value == pytest.approx(r.reference_rate.value)
        assert r.corrected.ci.defined
    assert all(r.verifier.startswith(("uv_", "mm_", "verifier_", "om2w_")) for r in records)


def test_a_small_coverage_run_holds() -> None:
    from bench import coverage as C

    (row,) = C.corrected_rows(C.CORRECTED[:1], reps=150, boot=Bootstrap(n_resamples=300))
    assert row.n_defined == 150
    assert row.coverage >= 0.88, row  # the full run (`python -m bench.coverage`): 0.96
