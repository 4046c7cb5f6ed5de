"""`lib.metrics.batch_intervals` in chunks: same intervals, memory not growing with m x B."""

from __future__ import annotations

import tracemalloc

import numpy as np

from lib import metrics as M


def _comparisons(m: int, k: int = 40, seed: int = 1) -> list[tuple[np.ndarray, np.ndarray, list]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(m):
        pred = rng.integers(0, 2, 2 * k)
        ref = np.where(rng.random(2 * k) < 0.8, pred, 1 - pred)
        out.append((pred, ref, [f"t{i // 2}" for i in range(2 * k)]))
    return out


def test_chunked_batch_equals_one_call_per_comparison() -> None:
    rows = _comparisons(M.BATCH_COMPARISONS * 2 + 3)
    per_cluster = [M.comparison_counts(p, r, c)[1] for p, r, c in rows]
    batch = M.batch_intervals(per_cluster, ["kappa", "fpr"], boot=M.Bootstrap(300))
    for (p, r, c), got in zip(rows, batch, strict=True):
        assert got == M.bootstrap_intervals(p, r, c, ["kappa", "fpr"], boot=M.Bootstrap(300))


def _peak_mb(m: int) -> float:
    per_cluster = [M.comparison_counts(p, r, c)[1] for p, r, c in _comparisons(m)]
    tracemalloc.start()
    M.batch_intervals(per_cluster, boot=M.Bootstrap(2_000))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def test_memory_does_not_grow_with_comparisons_times_resamples() -> None:
    small, large = _peak_mb(M.BATCH_COMPARISONS), _peak_mb(16 * M.BATCH_COMPARISONS)
    # all at once, 512 comparisons x 2,000 resamples x 8 bytes = 8 MB per metric (x 11)
    assert large < small + 8, (small, large)


def test_above_large_k_draws_per_distinct_row_have_the_multinomial_law() -> None:
    """By type: each resample's counts ~ Multinomial(K, p): mean K p, variance K p (1 - p),
    the law of the exact scheme (checked on both, against the formula)."""
    k, b = M.LARGE_K + 500, 4_000
    rng = np.random.default_rng(3)
    cells = rng.choice(4, size=k, p=[0.5, 0.1, 0.15, 0.25])
    per_cluster = np.eye(4)[cells]
    p = np.bincount(cells, minlength=4) / k
    fast = M.resample_metrics(per_cluster, b, 0)
    assert M.resampled_by_type(per_cluster, b, 0) is not None
    exact = M.resample_weights(k, boot=M.Bootstrap(b, 0)) @ per_cluster
    for sums in (fast, exact):
        assert np.allclose(sums.mean(axis=0), k * p, rtol=0.01)
        assert np.allclose(sums.var(axis=0), k * p * (1 - p), rtol=0.1)


def test_above_large_k_intervals_match_the_exact_scheme_closely() -> None:
    k = M.LARGE_K + 1_000
    rng = np.random.default_rng(5)
    pred = rng.integers(0, 2, k)
    ref = np.where(rng.random(k) < 0.85, pred, 1 - pred)
    ids = [f"t{i}" for i in range(k)]
    fast = M.bootstrap_intervals(pred, ref, ids, ["kappa", "fpr"])
    saved = M.LARGE_K
    try:
        M.LARGE_K = 10**9
        exact = M.bootstrap_intervals(pred, ref, ids, ["kappa", "fpr"])
    finally:
        M.LARGE_K = saved
    for name in ("kappa", "fpr"):
        assert abs(fast[name].low - exact[name].low) < 0.01
        assert abs(fast[name].high - exact[name].high) < 0.01


def test_rows_too_varied_fall_back_to_the_exact_scheme() -> None:
    per_cluster = np.arange(4 * (M.LARGE_K + 10), dtype=float).reshape(-1, 4)
    assert M.resampled_by_type(per_cluster, 10, 0) is None
    assert M.resample_metrics(per_cluster, 10, 0).shape == (10, 4)
