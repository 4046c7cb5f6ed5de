"""The one join of two raters over the verdict table (`lib.table.verdicts`).

Every comparison in the app is two raters side by side on the same (split, task): a
verifier and a human reference (Agreement, the viewer's "disagrees with" filter), any
two raters (Judges), your verifier and the Universal Verifier (Your verifier), and
reviewers of the same task with each other (the human-human band, Shifts). They used to
be five hand-written merges with different argument orders and row sets; here is one.

Missing labels stay missing (pandas NA in an ``Int8`` column), so a metric can exclude
and count them; ``judged_a`` / ``judged_b`` say whether the rater has a row at all (a row
with a missing label is "judged, no label", which is not the same as "not judged").

Bulk layout for ~130 comparisons at once: `lib.analysis.agreement.label_matrix` lays the same rows
out as arrays (one per rater) for the batched bootstrap; a test checks that it gives the
same rows as `pair`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

import pandas as pd

KEYS: list[str] = ["split", "task_id"]
PAIR_COLUMNS: list[str] = [
    *KEYS, "label_a", "label_b", "score_a", "score_b", "judged_a", "judged_b",
]  # fmt: skip

How = Literal["outer", "inner", "left", "right"]


def _rater_rows(table: pd.DataFrame, rater: str, dimension: str) -> pd.DataFrame:
    rows = table.loc[
        (table["rater"] == rater) & (table["dimension"] == dimension), [*KEYS, "label", "score"]
    ]
    return rows.drop_duplicates(KEYS).assign(judged=True)


def pair(
    table: pd.DataFrame,
    rater_a: str,
    rater_b: str,
    dimension: str,
    splits: Iterable[str] | None = None,
    how: How = "outer",
    dimension_b: str | None = None,
) -> pd.DataFrame:
    """Two raters side by side on (split, task), columns `PAIR_COLUMNS`, sorted by split, task.

    Parameters
    ----------
    table : the verdict table (with any uploaded rows)
    rater_a, rater_b : rater ids; A plays ``pred`` and B ``ref`` in `lib.metrics`
    dimension : ``outcome`` or ``process`` (both raters' rows of that dimension)
    splits : keep these splits (default: all)
    how : which tasks are rows. ``outer``: either judged (Judges); ``right``: B judged
        (a verifier against a reference: every task the reference covers); ``left``: A
        judged (your verifier's tasks); ``inner``: both judged.
    dimension_b : B's rows of another dimension (Judges across dimensions: the Universal
        Verifier's process verdict against the humans' outcome label); None: ``dimension``.

    Examples
    --------
    >>> t = pd.DataFrame({"split": ["s"] * 3, "task_id": ["t1", "t1", "t2"],
    ...     "rater": ["a", "b", "b"], "dimension": ["outcome"] * 3,
    ...     "label": pd.array([1, 0, 1], dtype="Int8"), "score": [None] * 3})
    >>> pair(t, "a", "b", "outcome")[["task_id", "label_a", "label_b", "judged_a"]]
      task_id  label_a  label_b  judged_a
    0      t1        1        0      True
    1      t2     <NA>        1     False
    """
    if splits is not None:
        table = table[table["split"].isin(list(splits))]
    a = _rater_rows(table, rater_a, dimension)
    b = _rater_rows(table, rater_b, dimension if dimension_b is None else dimension_b)
    merged = a.merge(b, on=KEYS, how=how, suffixes=("_a", "_b"))
    for side in ("a", "b"):
        merged[f"judged_{side}"] = merged[f"judged_{side}"].astype("boolean").fillna(False)
        merged[f"judged_{side}"] = merged[f"judged_{side}"].astype(bool)
        merged[f"label_{side}"] = merged[f"label_{side}"].astype("Int8")
        merged[f"score_{side}"] = merged[f"score_{side}"].astype("float64")
    return merged[PAIR_COLUMNS].sort_values(KEYS, ignore_index=True)


def co_raters(
    rows: pd.DataFrame, who: str, on: Sequence[str] = KEYS, values: Sequence[str] = ("label",)
) -> pd.DataFrame:
    """Every ordered pair of distinct raters of the same task: (a, b) and (b, a).

    ``rows`` has one row per (task, rater) with the columns ``on``, ``who`` (the rater
    column) and ``values``. The result has ``on``, ``a``, ``b`` and ``<value>_a``,
    ``<value>_b`` for each value, sorted by ``on``, a, b. Each unordered pair appears in
    both orders, so a kappa on these rows does not depend on who is called A (it is
    Scott's pi of the pairs); a task with three raters gives three unordered pairs.

    Examples
    --------
    >>> r = pd.DataFrame({"task_id": ["t", "t", "u"], "rater": ["J1", "J2", "J1"],
    ...     "label": [1, 0, 1]})
    >>> co_raters(r, "rater", on=["task_id"])
      task_id   a   b  label_a  label_b
    0       t  J1  J2        1        0
    1       t  J2  J1        0        1
    """
    on, values = list(on), list(values)
    rows = rows[[*on, who, *values]]
    both = rows.merge(rows, on=on, suffixes=("_a", "_b"))
    both = both[both[f"{who}_a"] != both[f"{who}_b"]]
    both = both.rename(columns={f"{who}_a": "a", f"{who}_b": "b"})
    columns = [*on, "a", "b", *(f"{v}_{s}" for v in values for s in ("a", "b"))]
    return both[columns].sort_values([*on, "a", "b"], ignore_index=True)
