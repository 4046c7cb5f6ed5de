"""The numpy ports that keep sklearn.metrics and scipy.stats out of the Agreement page's
first render (issue 39) equal the libraries bit for bit: `lib.metrics.ranking.roc_curve` /
`roc_area` against sklearn's `roc_curve` / `roc_auc_score`, and the parity test's one-sided
t-test against `scipy.stats.ttest_1samp`."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score, roc_curve

from lib.analysis import parity
from lib.metrics import ranking


@pytest.mark.parametrize("seed", range(4))
def test_roc_port_equals_sklearn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    checked = 0
    for trial in range(300):
        n = int(rng.integers(2, 400))
        ref = rng.integers(0, 2, n).astype(float)
        if ref.min() == ref.max():
            continue
        levels = int(rng.integers(1, 30))
        scores = rng.integers(0, levels, n) / levels if trial % 2 else rng.random(n)
        expected = roc_curve(ref, scores)
        got = ranking.roc_curve(ref, scores)
        for a, b in zip(expected, got, strict=True):
            assert a.dtype == b.dtype
            assert np.array_equal(a, b)
        assert ranking.roc_area(got[0], got[1]) == roc_auc_score(ref, scores)
        checked += 1
    assert checked > 250


def test_roc_of_a_hand_example() -> None:
    fpr, tpr, thresholds, auc = ranking.roc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1])
    assert fpr.tolist() == [0.0, 0.0, 0.5, 0.5, 1.0]
    assert tpr.tolist() == [0.0, 0.5, 0.5, 1.0, 1.0]
    assert thresholds.tolist() == [np.inf, 0.8, 0.4, 0.35, 0.1]
    assert auc.value == 0.75


def test_one_sided_t_test_equals_scipy() -> None:
    rng = np.random.default_rng(7)
    for trial in range(2000):
        n = int(rng.integers(2, 150))
        ties = rng.integers(-3, 4, n) / float(rng.integers(1, 7))
        d = ties if trial % 2 else rng.normal(0, 1, n)
        if np.all(d == d[0]):
            continue
        epsilon = float(rng.choice([0.0, 0.05, 0.1, 0.2]))
        expected = float(stats.ttest_1samp(d, epsilon, alternative="less").pvalue)
        assert parity.one_sided_p(d, epsilon) == expected
    assert parity.one_sided_p(np.array([0.3, 0.3]), 0.1) == 1.0  # no spread: exact
    assert np.isnan(parity.one_sided_p(np.array([0.3]), 0.1))
