"""The alt-test's own power: how often a verifier exactly as good as a reviewer would pass
on this panel.

The alt-test (`lib.analysis.parity.alt_test`) needs each tested reviewer to lose clearly
to the verifier; with two reviewers per task, each held-out reviewer is scored against
one other label, ties are common, and even a verifier that *is* one more reviewer of the
same kind passes rarely (about a quarter of om2w-like panels, issue 37). A "fails" on the
page therefore says little unless the power is shown beside it.

The model (`simulate_power`): each task has a latent chance ``q`` that a reviewer says
success, drawn from a Beta distribution with the panel's mean label ``mu`` and intraclass
correlation ``rho`` (its parameters ``mu (1/rho - 1)`` and ``(1 - mu)(1/rho - 1)``); each
review is an independent draw with chance ``q``. For such raters the pooled kappa between
two reviewers of a task is ``rho``, so ``rho`` is set to the reviewers' kappa with each
other (the human side of the paired difference). The verifier "exactly as good as a
reviewer" is one more independent draw with the same ``q``. The panel keeps its shape: the
same tasks, the same reviewers on each task (so the same reviewers reach the alt-test's 30
tasks). Each simulated panel runs the same test (`alt_passes`, vectorised; a test checks it
against `lib.analysis.parity.alt_test`; its Benjamini-Yekutieli step is `by_rejections`'),
seeded (`SEED`), `N_SIMS` panels; the result is cached on the panel's bytes and the
parameters, so a data revision gets its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import pandas as pd

N_SIMS = 200
"""Simulated panels per power (Monte-Carlo s.d. at most 0.035)."""
SEED = 37
LOW_POWER = 0.5
"""Below this, a failed alt-test reads "too few reviewers per task for this test to pass"."""


def _by_thresholds(m: int, q: float) -> np.ndarray:
    """Benjamini-Yekutieli's step-up thresholds k q / (m H_m), k = 1..m."""
    return np.arange(1, m + 1) / m * q / np.sum(1.0 / np.arange(1, m + 1))


def by_rejections(p_values: Sequence[float], q: float = 0.05) -> np.ndarray:
    """Benjamini-Yekutieli step-up: which hypotheses are rejected at FDR ``q`` (bool array).

    Reject the k smallest p-values, k the largest rank with p_(k) <= k q / (m H_m),
    H_m = 1 + 1/2 + ... + 1/m. NaN is never rejected.

    Examples
    --------
    >>> by_rejections([0.001, 0.02, 0.5], 0.05).tolist()  # thresholds .009, .018, .027
    [True, False, False]
    """
    p = np.asarray(p_values, dtype=np.float64)
    m = p.shape[0]
    rejected = np.zeros(m, dtype=bool)
    if m == 0:
        return rejected
    order = np.argsort(np.where(np.isnan(p), np.inf, p), kind="stable")
    below = np.flatnonzero(p[order] <= _by_thresholds(m, q))
    if below.size:
        rejected[order[: below[-1] + 1]] = True
    return rejected


def alt_passes(
    task: np.ndarray,
    rater: np.ndarray,
    labels: np.ndarray,
    verifier: np.ndarray,
    epsilon: float,
    q_fdr: float,
    min_tasks: int,
    pass_rate: float,
) -> np.ndarray | None:
    """The alt-test's pass (winning rate >= ``pass_rate``; the steps of
    `lib.analysis.parity.alt_test`) on many panels of one shape at once, a bool per panel.

    ``task`` and ``rater``: integer codes of each review (every task has two or more);
    ``labels`` (S, reviews): the reviews' 0/1 labels; ``verifier`` (S, tasks): the
    verifier's 0/1 label per task code; one row per panel (one panel: S = 1).
    Each row is computed alone (a row's sums add only its own elements, and a test checks
    that a row's answer is the one it gets by itself); 200 simulated panels in one pass
    instead of 200 calls made `simulate_power` 2.3x faster (the drawing is what is left).
    The Benjamini-Yekutieli step is `by_rejections`' on sorted rows. None when no reviewer
    has ``min_tasks`` tasks."""
    n_sims = labels.shape[0]
    n_tasks = int(task.max()) + 1
    n_r = np.bincount(rater)
    tested = np.flatnonzero(n_r >= min_tasks)
    if tested.size == 0:
        return None
    n_raters = n_r.shape[0]
    row = np.arange(n_sims)[:, None]
    at_task = (row * n_tasks + task[None, :]).ravel()
    flat = labels.ravel()
    ones = np.bincount(at_task, weights=flat, minlength=n_sims * n_tasks).reshape(n_sims, -1)
    count = np.bincount(task, minlength=n_tasks).astype(np.float64)
    share = (ones[:, task] - labels) / (count[task] - 1.0)
    human = np.where(labels == 1, share, 1.0 - share)
    machine = np.where(verifier[:, task] == 1, share, 1.0 - share)
    d = (human >= machine).astype(np.float64) - (machine >= human).astype(np.float64)
    at_rater = (row * n_raters + rater[None, :]).ravel()
    size = n_sims * n_raters
    sums = np.bincount(at_rater, weights=d.ravel(), minlength=size).reshape(n_sims, -1)
    squares = np.bincount(at_rater, weights=(d * d).ravel(), minlength=size).reshape(n_sims, -1)
    sums, squares = sums[:, tested], squares[:, tested]
    n = n_r[tested].astype(np.float64)[None, :]
    mean = sums / n
    var = np.maximum(squares - n * mean * mean, 0.0) / (n - 1.0)
    p = np.where(mean < epsilon, 0.0, 1.0)
    spread = var > 1e-12
    if spread.any():
        from scipy.special import stdtr  # scipy.special only: scipy.stats is slow to import

        n_all = np.broadcast_to(n, mean.shape)
        t = (mean[spread] - epsilon) / np.sqrt(var[spread] / n_all[spread])
        p[spread] = stdtr(n_all[spread] - 1.0, t)
    m = tested.size
    # `by_rejections` on each row: how many p-values its step-up rejects
    below = np.sort(np.where(np.isnan(p), np.inf, p), axis=1) <= _by_thresholds(m, q_fdr)
    rejected = np.where(below.any(axis=1), m - np.argmax(below[:, ::-1], axis=1), 0)
    return rejected / m >= pass_rate


def simulate_power(
    task: np.ndarray,
    rater: np.ndarray,
    mu: float,
    rho: float,
    epsilon: float,
    q_fdr: float,
    min_tasks: int,
    pass_rate: float,
    n_sims: int = N_SIMS,
    seed: int = SEED,
) -> float | None:
    """Share of ``n_sims`` simulated panels of this shape where a verifier exactly as good
    as a reviewer passes (module docstring). None when the test cannot run on this shape
    or the agreement is undefined. The panels are drawn one after another (the seeded
    stream of the loop that tested each in turn) and tested together (`alt_passes`)."""
    if not (0.0 < mu < 1.0) or not np.isfinite(rho):
        return None
    rho = float(np.clip(rho, 0.01, 0.99))
    size = 1.0 / rho - 1.0
    rng = np.random.default_rng(seed)
    n_tasks = int(task.max()) + 1
    labels = np.empty((n_sims, task.shape[0]))
    verifier = np.empty((n_sims, n_tasks))
    for i in range(n_sims):
        q = rng.beta(mu * size, (1.0 - mu) * size, n_tasks)
        labels[i] = rng.random(task.shape[0]) < q[task]
        verifier[i] = rng.random(n_tasks) < q
    passed = alt_passes(task, rater, labels, verifier, epsilon, q_fdr, min_tasks, pass_rate)
    return None if passed is None else int(passed.sum()) / n_sims


@lru_cache(maxsize=64)
def _cached(
    task: bytes,
    rater: bytes,
    mu: float,
    rho: float,
    epsilon: float,
    q: float,
    m: int,
    pass_rate: float,
) -> float | None:
    return simulate_power(
        np.frombuffer(task, dtype=np.int64), np.frombuffer(rater, dtype=np.int64),
        mu, rho, epsilon, q, m, pass_rate,
    )  # fmt: skip


def panel_power(
    reviews: pd.DataFrame,
    rho: float | None,
    epsilon: float,
    q_fdr: float,
    min_tasks: int,
    pass_rate: float,
) -> float | None:
    """The power of the alt-test on the panel of ``reviews`` (task_id, rater, label: the
    blind reviews the alt-test used) for reviewers who agree with kappa ``rho``."""
    reviews = reviews[reviews.groupby("task_id")["rater"].transform("size") >= 2]
    if reviews.empty or rho is None:
        return None
    task = pd.factorize(reviews["task_id"], sort=True)[0].astype(np.int64)
    rater = pd.factorize(reviews["rater"], sort=True)[0].astype(np.int64)
    mu = float(reviews["label"].mean())
    return _cached(
        task.tobytes(), rater.tobytes(), round(mu, 6), round(float(rho), 6),
        float(epsilon), float(q_fdr), int(min_tasks), float(pass_rate),
    )  # fmt: skip
