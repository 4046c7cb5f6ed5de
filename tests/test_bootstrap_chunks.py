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
    batch = M.batch_intervals(per_cluster, ["kappa", "fpr"], n_resamples=300)
    for (p, r, c), got in zip(rows, batch, strict=True):
        assert got == M.bootstrap_intervals(p, r, c, ["kappa", "fpr"], n_resamples=300)


def _peak_mb(m: int) -> float:
    per_cluster = [M.comparison_counts(p, r, c)[1] for p, r, c in _comparisons(m)]
    tracemalloc.start()
    M.batch_intervals(per_cluster, n_resamples=2_000)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def test_memory_does_not_grow_with_comparisons_times_resamples() -> None:
    small, large = _peak_mb(M.BATCH_COMPARISONS), _peak_mb(16 * M.BATCH_COMPARISONS)
    # all at once, 512 comparisons x 2,000 resamples x 8 bytes = 8 MB per metric (x 11)
    assert large < small + 8, (small, large)
