"""McNemar's exact test of two paired binary raters (the discordant pairs only).

Part of `lib.metrics` (import from there; see its docstring for the conventions).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lib.metrics.values import (
    Value,
    confusion,
)

# ---------------------------------------------------------------------------------------
# McNemar
# ---------------------------------------------------------------------------------------


def mcnemar_exact(a: Any, b: Any) -> Value:
    """Exact two-sided McNemar p-value for paired binary labels (e.g. blind vs informed).

    With n10 = #(a = 1, b = 0) and n01 = #(a = 0, b = 1) the discordant counts,
    p = min(1, 2 * BinomCDF(min(n10, n01); n10 + n01, 1/2)), the same as
    ``statsmodels.stats.contingency_tables.mcnemar(table, exact=True)``.

    Edge cases: pairs with a missing side are dropped. No complete pair: undefined
    ("n = 0"). Complete pairs but no discordant pair: p = 1.0, as in statsmodels: the
    exact null distribution with zero trials puts all mass on the observed 0, so the data
    give no evidence of a shift (this is a result, not a failure to compute).

    References
    ----------
    Q. McNemar (1947). Note on the sampling error of the difference between correlated
    proportions or percentages. Psychometrika 12(2), 153-157.

    Examples
    --------
    >>> mcnemar_exact([1, 1, 1, 0], [0, 0, 0, 0])  # 3 discordant pairs, all one way
    Value(value=0.25, reason=None)
    """
    c = confusion(a, b)
    if c.n == 0:
        return Value(None, "n = 0")
    return Value(float(mcnemar_p(c.fp, c.fn)))


def mcnemar_p(n10: Any, n01: Any) -> np.ndarray:
    """`mcnemar_exact` from discordant counts, for many pairs at once (arrays in, array out).

    p = min(1, 2 * BinomCDF(min(n10, n01); n10 + n01, 1/2)); 1.0 with no discordant pair.
    Callers mask pairs with no complete row (undefined, not 1.0).

    Examples
    --------
    >>> mcnemar_p([10, 0, 3], [2, 0, 3]).round(4).tolist()
    [0.0386, 1.0, 1.0]
    """
    b = np.asarray(n10, dtype=np.float64)
    c = np.asarray(n01, dtype=np.float64)
    # the binomial CDF from scipy.special (late, warmed by ui.warmup): importing scipy.stats
    # for `binom.cdf` cost 0.6-0.9 s of CPU in the first Your verifier render with versions
    from scipy.special import bdtr

    trials = (b + c).astype(np.int64)  # bdtr's integer n (a float n is deprecated)
    return np.minimum(1.0, 2.0 * bdtr(np.minimum(b, c), trials, 0.5))
