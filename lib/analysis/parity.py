"""Human parity: does a verifier agree with the reviewers as well as they agree with each other?

Two tests, per dimension, on every split where two or more reviewers labelled a task
blind (om2w today; `parity_splits` finds them). Both use only the reviewers' *blind*
labels, so the verifier and the humans are judged against the same people on the same tasks.

Paired kappa difference (`kappa_difference`)
--------------------------------------------
One row per ordered pair of distinct reviewers (A, B) who both labelled a task blind (each
unordered pair in both orders, as `lib.analysis.agreement.reviewer_band` pools them). The human
side is kappa(A's label, B's label) pooled over the rows: the human-human band. The
verifier side puts the verifier in A's place: kappa(verifier, B's label) on the same rows.
The difference verifier minus humans has a paired cluster-bootstrap interval
(`lib.metrics.paired_bootstrap_diff`: one draw of tasks, or of websites, applied to both
sides). A row where the verifier has no label is left out of both sides and counted.

Verdict (`parity_verdict`): an equivalence test, not "the interval holds 0"
----------------------------------------------------------------------------
A margin delta (`MARGIN`, 0.10 kappa; `?margin=` on the pages) is the largest shortfall
still called "as good": about a fifth of the reviewers' kappa with each other (0.45-0.57
on om2w), a shift smaller than the gap between Landis & Koch's bands. The verdict follows
the paired 95% interval, checked in this order (the first that applies wins):

- ``equivalent``: the interval lies wholly inside (-delta, +delta);
- ``inferior``: its upper end is below 0 (the interval is the shortfall);
- ``superior``: its lower end is above 0. A verifier that copies or shares one panel
  reviewer's judgements lands here: it agrees perfectly with that reviewer, which no other
  human does (on om2w, where most tasks have two reviewers, that lifts its kappa by about
  (1 - kappa) / 2), so "superior" never means "better than humans" by itself;
- ``non_inferior``: its lower end is above -delta;
- ``undetermined``: any other case; the words give both ends the data allow and about how
  many tasks a decision would need at this width (the half-width shrinks as 1 / sqrt(n)).

A verifier that gives every task the same label is ``inferior`` by definition: it carries no
information, its kappa is 0 by construction (or undefined where a resample's reviewer
labels are constant), whatever the interval says when the reviewers agree little.
`bench/parity_power.py` measures how often each verdict comes out on om2w-like panels
(exactly as good, 0.15 worse, constant, copies of a panel and an outside reviewer). A copy
of a reviewer who is not in the panel (a new human of the same kind) has a true difference
of 0 (tests/unit/test_parity.py checks the copy, the constant and the outsider).

Alternative annotator test (`alt_test`)
---------------------------------------
N. Calderon, R. Reichart and R. Dror (ACL 2025), "The Alternative Annotator Test for
LLM-as-a-Judge: How to Statistically Justify Replacing Human Annotators with LLMs",
https://aclanthology.org/2025.acl-long.782/ ; the authors' implementation is the
``alt_test`` function of https://github.com/nitaytech/AltTest (``alt_test_example.ipynb``),
which this follows step by step:

1. keep the tasks with at least two reviewers (and a verifier label);
2. for each reviewer j with at least `MIN_TASKS_PER_REVIEWER` (30) such tasks: on each of
   j's tasks, score the verifier and j by their agreement with the *other* reviewers of
   the task (the share of the others' labels they equal); W_f = 1 if the verifier's score
   >= j's, W_h = 1 if j's >= the verifier's; d = W_h - W_f;
3. one-sided t-test of H0: mean(d) >= epsilon against H1: mean(d) < epsilon
   (``scipy.stats.ttest_1samp(d, epsilon, alternative="less")``); epsilon is the cost
   advantage granted to the verifier (the paper: 0.2 for experts, 0.15 for skilled
   annotators, 0.1 for crowd workers);
4. Benjamini-Yekutieli at q = 0.05 over the reviewers' p-values; the *winning rate* is
   the share of tested reviewers whose H0 is rejected; the verifier passes when it is
   >= 0.5. The *advantage probability* is the mean over reviewers of mean(W_f).

Your labels (`lib.uploads.labels`: the Audit page's re-labels, or an uploaded labels file)
------------------------------------------------------------------------------------------
With a session's labels, each split and dimension where you gave a success or failure label
gets two more kinds of record (``you.role``):

- ``panel``: you join the panel as one more annotator (`YOU`), so the verifier is tested
  against the reviewers plus you: both tests above, on the panel's tasks, where a task you
  labelled has one more label (a task one reviewer and you labelled has two);
- ``candidate``: your labels take the verifier's place, tested against the reviewers alone
  (is your labelling as good as a reviewer's?), on the reviewed tasks you labelled; the
  reviewed tasks you did not label are left out and counted (``n_missing_verifier``).

Only your own labels join (never the final label the "your labels" reference uses
elsewhere: it is the reviewers' own judgement merged); ``unsure`` is left out and counted
(`YourPart`). You labelled after seeing the reviewers' labels and the verifier's verdicts,
so you are not a blind annotator, and the Audit page offers the contested tasks, where
the reviewers disagree: the pages and the report say both.

When every d of a reviewer is equal (zero variance; e.g. a verifier that copies that
reviewer: d = 0 on every task) the t statistic is infinite; the pinned scipy (1.17)
returns p = 0 when that common d is below epsilon and p = 1 otherwise, so the authors'
code counts a copy of a panel reviewer as a win against that reviewer. `one_sided_p` gives
the same p without scipy's precision warning (tests/unit/test_parity.py checks both
against scipy). The test's power on the panel at hand is `lib.analysis.alt_power`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from lib import metrics as M
from lib.analysis.agreement import table_splits, verifiers
from lib.analysis.alt_power import LOW_POWER, by_rejections, panel_power
from lib.table.clusters import cluster_ids
from lib.table.pairs import co_raters
from lib.table.verdicts import YOUR_LABELS
from lib.uploads import labels as my_labels
from lib.vocab import BOOTSTRAP, DIMENSIONS, Bootstrap, reviewer_sort_key

EPSILON = 0.15
"""Default alt-test cost advantage: the reviewers are trained annotators ("skilled" in the
paper's guide), and their kappa with each other is moderate (the guide asks for a smaller
epsilon when humans agree less)."""
EPSILON_RANGE = (0.0, 0.5)
"""Epsilons a visitor may set (`?epsilon=`)."""
Q_FDR = 0.05
"""Benjamini-Yekutieli false discovery rate of the alt-test (the authors' default)."""
MIN_TASKS_PER_REVIEWER = 30
"""A reviewer with fewer shared tasks is not tested (the authors' default; the t-test's
normal approximation needs about 30)."""
PASS_RATE = 0.5
"""The verifier passes the alt-test when its winning rate is at least this."""

MARGIN = 0.10
"""Default equivalence margin delta on the paired kappa difference (module docstring)."""
MARGIN_RANGE = (0.02, 0.5)
"""Margins a visitor may set (`?margin=`)."""

EQUIVALENT, INFERIOR, SUPERIOR = "equivalent", "inferior", "superior"
NON_INFERIOR, UNDETERMINED = "non_inferior", "undetermined"
VERDICTS = (EQUIVALENT, INFERIOR, SUPERIOR, NON_INFERIOR, UNDETERMINED)
"""The verdicts, in the order they are checked (module docstring)."""
SHARES_A_REVIEWER = "a verifier that copies or shares one reviewer's judgements also lands here"

YOU = "you"
"""Your labels' name as an annotator of the panel, and as the candidate (module docstring)."""
PANEL, CANDIDATE = "panel", "candidate"
"""How your labels enter a record (`YourPart.role`)."""
MIN_YOUR_TASKS = 10
"""Your labels as the candidate get a verdict on this many reviewed tasks or more (fewer
clusters make a bootstrap interval that says little; the Slices page's small n too)."""


# ---------------------------------------------------------------------------------------
# Rows
# ---------------------------------------------------------------------------------------

_T = TypeVar("_T")
_MEMO: ContextVar[dict | None] = ContextVar("parity_rows_memo", default=None)


@contextmanager
def _shared_rows() -> Iterator[None]:
    """Within the block, the row selections below (which do not depend on the verifier) are
    computed once per table, dimension and split and shared by every verifier (issue 39:
    `parity_records` selected the same reviews 19 times). The results are read, never
    modified, by their callers; the memo ends with the block, so a table's id is not
    reused while it lives."""
    if _MEMO.get() is not None:  # nested: the outer block's memo serves
        yield
        return
    token = _MEMO.set({})
    try:
        yield
    finally:
        _MEMO.reset(token)


def _memo(key: tuple, compute: Callable[[], _T]) -> _T:
    memo = _MEMO.get()
    if memo is None:
        return compute()
    if key not in memo:
        memo[key] = compute()
    return memo[key]


def _split_text(table: pd.DataFrame) -> pd.Series:
    """``table["split"]`` as text (memoized within `_shared_rows`)."""
    return _memo(("split", id(table)), lambda: table["split"].astype(str))


def blind_reviews(table: pd.DataFrame, dimension: str, split: str) -> pd.DataFrame:
    """The reviewers' blind labels of one split and dimension: task_id, rater, label (1/0).

    A review with a missing label is left out (never read as a failure)."""
    return _memo(
        ("blind", id(table), dimension, split), lambda: _blind_reviews(table, dimension, split)
    )


def _blind_reviews(table: pd.DataFrame, dimension: str, split: str) -> pd.DataFrame:
    rows = table[
        (table["kind"] == "human")
        & (table["stage"] == "blind")
        & (table["dimension"] == dimension)
        & (_split_text(table) == split)
        & table["label"].notna()
    ]
    out = rows[["task_id", "rater", "label"]].astype({"task_id": str, "rater": str})
    return out.astype({"label": "float64"}).reset_index(drop=True)


def your_labels(
    labels: pd.DataFrame | None, dimension: str, split: str
) -> tuple[pd.Series | None, int]:
    """Your success / failure labels of one dimension and split (task id -> 1.0 / 0.0) and
    how many you marked unsure (left out). None when you gave no success / failure label
    there. ``labels``: `lib.uploads.labels` rows (split, task_id, dimension, label, note)."""
    if labels is None or labels.empty:
        return None, 0
    mine = labels[(labels["dimension"] == dimension) & (labels["split"] == split)]
    unsure = int((mine["label"] == my_labels.UNSURE).sum())
    given = mine[mine["label"].isin([my_labels.SUCCESS, my_labels.FAILURE])]
    if given.empty:
        return None, unsure
    values = (given["label"] == my_labels.SUCCESS).to_numpy(dtype=np.float64)
    series = pd.Series(values, index=given["task_id"].astype(str).to_numpy())
    return series.groupby(level=0).last(), unsure


def panel_reviews(
    table: pd.DataFrame, dimension: str, split: str, yours: pd.Series | None = None
) -> pd.DataFrame:
    """`blind_reviews`, plus your labels (``yours``, `your_labels`) as annotator `YOU`."""
    reviews = blind_reviews(table, dimension, split)
    if yours is None:
        return reviews
    you = pd.DataFrame(
        {"task_id": yours.index.astype(str), "rater": YOU, "label": yours.to_numpy(np.float64)}
    )
    return _memo(
        ("panel", id(table), id(yours), dimension, split),
        lambda: pd.concat([reviews, you], ignore_index=True),
    )


def parity_splits(table: pd.DataFrame, dimension: str) -> list[str]:
    """Splits where at least two tasks have two or more reviewers' blind labels (two
    clusters are the fewest a bootstrap can resample)."""
    out = []
    for split in table_splits(table):
        per_task = blind_reviews(table, dimension, split).groupby("task_id").size()
        if int((per_task >= 2).sum()) >= 2:
            out.append(split)
    return out


def verifier_labels(table: pd.DataFrame, verifier: str, dimension: str, split: str) -> pd.Series:
    """The verifier's labels by task id (1.0 / 0.0 / NaN) in one split and dimension."""
    return _memo(
        ("verifier", id(table), verifier, dimension, split),
        lambda: _verifier_labels(table, verifier, dimension, split),
    )


def _verifier_labels(table: pd.DataFrame, verifier: str, dimension: str, split: str) -> pd.Series:
    rows = table[
        (table["rater"] == verifier)
        & (table["dimension"] == dimension)
        & (_split_text(table) == split)
    ]
    labels = rows["label"].to_numpy(dtype=np.float64, na_value=np.nan)
    return pd.Series(labels, index=rows["task_id"].astype(str).to_numpy()).groupby(level=0).last()


def pair_rows(
    table: pd.DataFrame,
    verifier: str,
    dimension: str,
    split: str,
    yours: pd.Series | None = None,
    labels: pd.Series | None = None,
) -> pd.DataFrame:
    """One row per ordered reviewer pair on a task: task_id, a, b, label_a, label_b and
    ``verifier`` (the verifier's label of the task, NaN where it has none).

    ``yours``: your labels join the reviewers (`panel_reviews`); ``labels``: the candidate's
    labels by task id, in place of the table's rows of ``verifier``."""
    pairs = _memo(
        ("pairs", id(table), id(yours), dimension, split),
        lambda: co_raters(panel_reviews(table, dimension, split, yours), "rater", on=["task_id"]),
    )
    pairs = pairs.astype({"label_a": "float64", "label_b": "float64"})  # a copy
    if labels is None:
        labels = verifier_labels(table, verifier, dimension, split)
    pairs["verifier"] = labels.reindex(pairs["task_id"]).to_numpy(dtype=np.float64)
    return pairs.reset_index(drop=True)


# ---------------------------------------------------------------------------------------
# Paired kappa difference
# ---------------------------------------------------------------------------------------


def parity_verdict(
    ci: M.Interval | None, margin: float = MARGIN, constant: bool = False
) -> str | None:
    """The verdict of the paired interval (module docstring: the first row that applies
    wins); ``inferior`` for a ``constant`` verifier; None when the interval is undefined.

    Examples
    --------
    >>> [parity_verdict(M.Interval(lo, hi)) for lo, hi in
    ...     [(-0.05, 0.08), (-0.55, -0.13), (0.02, 0.3), (-0.08, 0.2), (-0.33, 0.04)]]
    ['equivalent', 'inferior', 'superior', 'non_inferior', 'undetermined']
    """
    if constant:
        return INFERIOR
    if ci is None or not ci.defined:
        return None
    if -margin < ci.low and ci.high < margin:
        return EQUIVALENT
    if ci.high < 0:
        return INFERIOR
    if ci.low > 0:
        return SUPERIOR
    if ci.low > -margin:
        return NON_INFERIOR
    return UNDETERMINED


def tasks_needed(ci: M.Interval, margin: float, n_tasks: int) -> int | None:
    """About how many tasks would give a decided verdict if the interval kept its centre
    and its half-width shrank as 1 / sqrt(n): the half-width must fall below the larger of
    |centre| (the interval then excludes 0) and centre + margin (it then clears -margin).
    None when no width decides (the centre sits at -margin).

    Examples
    --------
    >>> tasks_needed(M.Interval(-0.33, 0.04), 0.10, 106)  # centre -0.145, half 0.185
    173
    """
    centre, half = (ci.low + ci.high) / 2.0, (ci.high - ci.low) / 2.0
    target = max(abs(centre), centre + margin)
    if target <= 1e-9 or n_tasks <= 0:
        return None
    return int(np.ceil(n_tasks * (half / target) ** 2))


def _end(x: float) -> str:
    return f"{abs(x):.2f} {'worse' if x < 0 else 'better'}"


def verdict_words(
    verdict: str | None,
    ci: M.Interval | None,
    margin: float,
    n_tasks: int = 0,
    constant: bool = False,
) -> str | None:
    """The verdict in words, with the margins its interval allows (module docstring).

    Examples
    --------
    >>> verdict_words(INFERIOR, M.Interval(-0.55, -0.13), 0.1)
    'worse than the reviewers by 0.13 to 0.55'
    >>> verdict_words(UNDETERMINED, M.Interval(-0.33, 0.04), 0.1, 106)[:58]
    'cannot tell: the data allow from 0.33 worse to 0.04 better'
    """
    if verdict is None:
        return None
    if constant:
        return (
            "worse than the reviewers: it gives every task the same label, so it carries "
            "no information (its kappa is 0 by construction)"
        )
    assert ci is not None and ci.defined
    lo, hi = float(ci.low), float(ci.high)
    if verdict == EQUIVALENT:
        return f"as good as the reviewers (within ±{margin:.2f})"
    if verdict == INFERIOR:
        return f"worse than the reviewers by {-hi:.2f} to {-lo:.2f}"
    if verdict == SUPERIOR:
        return (
            "agrees with these reviewers more than they agree with each other; " + SHARES_A_REVIEWER
        )
    if verdict == NON_INFERIOR:
        return f"not worse than the reviewers by more than {margin:.2f}"
    need = tasks_needed(ci, margin, n_tasks)
    tail = f" (a decision would need about {need:,} tasks at this width)" if need else ""
    return f"cannot tell: the data allow from {_end(lo)} to {_end(hi)}{tail}"


def _your_words(verdict: str | None, words: str | None, n_tasks: int, constant: bool) -> str | None:
    """The verdict's words for your labels as the candidate: none below `MIN_YOUR_TASKS`
    tasks or when all your labels are alike; "superior" without the verifier's caveat."""
    if n_tasks < MIN_YOUR_TASKS:
        return (
            f"not judged: {n_tasks} of your labels on reviewed tasks; a verdict needs "
            f"{MIN_YOUR_TASKS} or more"
        )
    if constant:
        return f"not judged: your {n_tasks} labels here are all the same (kappa undefined or 0)"
    if verdict == SUPERIOR:
        return "agrees with these reviewers more than they agree with each other, on these tasks"
    return words


@dataclass(frozen=True)
class KappaDifference:
    """kappa(verifier, reviewer B) minus kappa(reviewer A, reviewer B) on the same ordered
    reviewer pairs (module docstring). ``diff`` is the `lib.metrics.PairedDiff` (``a`` the
    verifier's kappa, ``b`` the humans', ``diff.ci`` the paired interval)."""

    split: str
    verifier: str
    dimension: str
    diff: M.PairedDiff
    n_pairs: int
    """Unordered reviewer pairs used (rows / 2)."""
    n_tasks: int
    n_reviewers: int
    n_missing_verifier: int
    """Tasks with a reviewer pair where the verifier has no label (left out of both sides)."""
    words: str | None
    """`verdict_words` of ``verdict``."""
    bootstrap: Bootstrap = field(default=BOOTSTRAP)
    margin: float = MARGIN
    verdict: str | None = None
    """One of `VERDICTS` (`parity_verdict`), None when the interval is undefined."""
    constant: bool = False
    """The verifier gave every compared task the same label."""

    @property
    def n_clusters(self) -> int:
        return self.diff.n_clusters


def kappa_difference(
    table: pd.DataFrame,
    verifier: str,
    dimension: str,
    split: str,
    boot: Bootstrap = BOOTSTRAP,
    margin: float = MARGIN,
    yours: pd.Series | None = None,
    labels: pd.Series | None = None,
) -> KappaDifference:
    """The paired kappa difference of one verifier on one split, and its verdict at
    ``margin`` (module docstring; ``yours`` and ``labels`` as in `pair_rows`)."""
    rows = pair_rows(table, verifier, dimension, split, yours, labels)
    units = cluster_ids(rows["task_id"], boot.unit)
    with M.one_blas_thread():
        diff = M.paired_bootstrap_diff(
            rows["verifier"],
            rows["label_b"],
            rows["label_a"],
            rows["label_b"],
            units,
            "kappa",
            boot,
        )
    used = rows[rows["verifier"].notna()]
    missing = rows.loc[rows["verifier"].isna(), "task_id"].nunique()
    n_tasks = int(used["task_id"].nunique())
    constant = n_tasks > 0 and used["verifier"].nunique() == 1
    verdict = parity_verdict(diff.ci, margin, constant)
    words = verdict_words(verdict, diff.ci, margin, n_tasks, constant)
    if labels is not None:  # your labels as the candidate: a human's, often few
        words = _your_words(verdict, words, n_tasks, constant)
        verdict = None if constant or n_tasks < MIN_YOUR_TASKS else verdict
        constant = False
    return KappaDifference(
        split=split,
        verifier=verifier,
        dimension=dimension,
        diff=diff,
        n_pairs=len(used) // 2,
        n_tasks=n_tasks,
        n_reviewers=int(used["a"].nunique()),
        n_missing_verifier=int(missing),
        words=words,
        bootstrap=boot,
        margin=float(margin),
        verdict=verdict,
        constant=bool(constant),
    )


# ---------------------------------------------------------------------------------------
# Alternative annotator test
# ---------------------------------------------------------------------------------------


def one_sided_p(d: np.ndarray, epsilon: float) -> float:
    """p-value of H0: mean(d) >= epsilon against mean(d) < epsilon (one-sample t-test);
    0 or 1 when every d is equal (t infinite), as the pinned scipy returns (module
    docstring), without its precision warning."""
    if d.size < 2:
        return float("nan")
    if np.all(d == d[0]):
        return 0.0 if d[0] < epsilon else 1.0
    return _t_less(d, epsilon)


def _t_less(d: np.ndarray, epsilon: float) -> float:
    """``scipy.stats.ttest_1samp(d, epsilon, alternative="less").pvalue`` computed as scipy
    does (the same operations: equal to the last bit, a test checks it), from
    ``scipy.special.stdtr``: importing scipy.stats was a quarter of the Agreement page's
    first render."""
    from scipy.special import stdtr  # late: scipy.special only, when a test is made

    n = d.size
    centred = d - np.mean(d, keepdims=True)
    variance = np.mean(centred**2) * (float(n) / float(n - 1))
    t = (np.mean(d) - epsilon) / np.sqrt(variance / n)
    return float(stdtr(float(n - 1), t))


@dataclass(frozen=True)
class ReviewerDuel:
    """One held-out reviewer of the alt-test: the verifier against them, on their tasks."""

    reviewer: str
    n_tasks: int
    verifier_wins: float
    """mean(W_f): the verifier represents the others at least as well as this reviewer."""
    reviewer_wins: float
    """mean(W_h)."""
    p_value: float | None
    """None when the reviewer is not tested (fewer than `MIN_TASKS_PER_REVIEWER` tasks)."""
    rejected: bool


@dataclass(frozen=True)
class AltTest:
    """The alt-test of one verifier on one split (module docstring)."""

    split: str
    verifier: str
    dimension: str
    epsilon: float
    q_fdr: float
    duels: tuple[ReviewerDuel, ...]
    winning_rate: M.Value
    advantage_probability: M.Value
    passed: bool | None
    n_tasks: int
    n_missing_verifier: int
    min_tasks: int = MIN_TASKS_PER_REVIEWER

    @property
    def tested(self) -> list[ReviewerDuel]:
        return [d for d in self.duels if d.p_value is not None]

    @property
    def skipped(self) -> list[ReviewerDuel]:
        return [d for d in self.duels if d.p_value is None]


def alt_test(
    table: pd.DataFrame,
    verifier: str,
    dimension: str,
    split: str,
    epsilon: float = EPSILON,
    q_fdr: float = Q_FDR,
    min_tasks: int = MIN_TASKS_PER_REVIEWER,
    yours: pd.Series | None = None,
    labels: pd.Series | None = None,
) -> AltTest:
    """The alternative annotator test of one verifier against the blind reviewers (and
    you, with ``yours``; ``labels``: the candidate's labels, as in `pair_rows`)."""
    reviews = panel_reviews(table, dimension, split, yours)
    if labels is None:
        labels = verifier_labels(table, verifier, dimension, split)
    reviews = reviews[reviews.groupby("task_id")["rater"].transform("size") >= 2]
    missing = reviews.loc[~reviews["task_id"].isin(labels.dropna().index), "task_id"].nunique()
    reviews = reviews[reviews["task_id"].isin(labels.dropna().index)].copy()
    reviews["verifier"] = labels.reindex(reviews["task_id"]).to_numpy()
    # agreement of each review's label, and of the verifier, with the task's other labels
    by_task = reviews.groupby("task_id")["label"]
    ones, count = by_task.transform("sum"), by_task.transform("size")
    others_ones, others = ones - reviews["label"], count - 1
    share_ones = others_ones / others
    human = np.where(reviews["label"] == 1, share_ones, 1 - share_ones)
    machine = np.where(reviews["verifier"] == 1, share_ones, 1 - share_ones)
    reviews["w_f"] = (machine >= human).astype(float)
    reviews["w_h"] = (human >= machine).astype(float)
    duels = []
    for reviewer in sorted(reviews["rater"].unique(), key=reviewer_sort_key):
        mine = reviews[reviews["rater"] == reviewer]
        d = (mine["w_h"] - mine["w_f"]).to_numpy()
        p = one_sided_p(d, epsilon) if len(mine) >= min_tasks else None
        duels.append(
            ReviewerDuel(
                str(reviewer),
                len(mine),
                float(mine["w_f"].mean()),
                float(mine["w_h"].mean()),
                p,
                False,
            )
        )
    tested = [d for d in duels if d.p_value is not None]
    rejected = by_rejections([d.p_value for d in tested], q_fdr)
    flags = iter(rejected.tolist())
    duels = [
        ReviewerDuel(
            d.reviewer,
            d.n_tasks,
            d.verifier_wins,
            d.reviewer_wins,
            d.p_value,
            next(flags) if d.p_value is not None else False,
        )
        for d in duels
    ]
    if tested:
        rate = M.Value(float(rejected.mean()))
        advantage = M.Value(float(np.mean([d.verifier_wins for d in tested])))
        passed: bool | None = rate.value >= PASS_RATE
    else:
        why = f"no reviewer has {min_tasks} or more tasks shared with another reviewer"
        rate, advantage, passed = M.Value(None, why), M.Value(None, why), None
    return AltTest(
        split=split,
        verifier=verifier,
        dimension=dimension,
        epsilon=float(epsilon),
        q_fdr=float(q_fdr),
        duels=tuple(duels),
        winning_rate=rate,
        advantage_probability=advantage,
        passed=passed,
        n_tasks=int(reviews["task_id"].nunique()),
        n_missing_verifier=int(missing),
        min_tasks=min_tasks,
    )


# ---------------------------------------------------------------------------------------
# Both, for every verifier: the pages and the report
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class YourPart:
    """How your labels enter a record (module docstring), in its split and dimension."""

    role: str
    """`PANEL` (you join the reviewers) or `CANDIDATE` (your labels in the verifier's place)."""
    n_labels: int
    """Your success / failure labels in the split and dimension."""
    n_unsure: int
    """Your unsure labels there: left out."""
    n_used: int
    """Your labels on the tasks the alt-test used (two or more labels, the verifier's too)."""


@dataclass(frozen=True)
class ParityRecord:
    """One verifier x dimension x split: both tests."""

    kappa: KappaDifference
    alt: AltTest
    alt_power: float | None = None
    """How often a verifier exactly as good as a reviewer passes the alt-test on this panel
    (`lib.analysis.alt_power`); None when the test cannot run."""
    you: YourPart | None = None
    """None: the reviewers' panel alone; else how your labels enter (module docstring)."""

    @property
    def low_power_fail(self) -> bool:
        """The alt-test failed where even a verifier as good as a reviewer rarely passes."""
        power = self.alt_power
        return self.alt.passed is False and power is not None and power < LOW_POWER

    @property
    def reference(self) -> str | None:
        """The dimension's "your labels" id (`lib.table.verdicts.YOUR_LABELS`) when your
        labels are in the record, else None (the reviewers' blind labels)."""
        return None if self.you is None else YOUR_LABELS[self.dimension]

    @property
    def split(self) -> str:
        return self.kappa.split

    @property
    def verifier(self) -> str:
        return self.kappa.verifier

    @property
    def dimension(self) -> str:
        return self.kappa.dimension


def parity_records(
    table: pd.DataFrame,
    boot: Bootstrap = BOOTSTRAP,
    epsilon: float = EPSILON,
    only_verifiers: Sequence[str] | None = None,
    margin: float = MARGIN,
    labels: pd.DataFrame | None = None,
) -> list[ParityRecord]:
    """Both tests for every verifier (or ``only_verifiers``) of each dimension, on each
    split of `parity_splits`, with the alt-test's power on the panel it used. A verifier
    with no label in the split is left out.

    With ``labels`` (`lib.uploads.labels` rows), each split and dimension where you gave a
    success / failure label also has, after the reviewers' records, each verifier's
    record with you in the panel, then your labels' own record (`CANDIDATE`)."""
    with _shared_rows():
        return _parity_records(table, boot, epsilon, only_verifiers, margin, labels)


def _parity_records(
    table: pd.DataFrame,
    boot: Bootstrap,
    epsilon: float,
    only_verifiers: Sequence[str] | None,
    margin: float,
    labels: pd.DataFrame | None = None,
) -> list[ParityRecord]:
    out = []
    for dimension in DIMENSIONS:
        for split in parity_splits(table, dimension):
            in_split = table[(_split_text(table) == split) & table["label"].notna()]
            shown = [
                verifier
                for verifier, dim in verifiers(in_split)
                if dim == dimension and (only_verifiers is None or verifier in only_verifiers)
            ]
            for verifier in shown:
                out.append(_record(table, verifier, dimension, split, boot, epsilon, margin))
            yours, unsure = your_labels(labels, dimension, split)
            if yours is None:
                continue
            for verifier in shown:
                out.append(
                    _record(table, verifier, dimension, split, boot, epsilon, margin, yours, unsure)
                )
            out.append(
                _record(table, YOU, dimension, split, boot, epsilon, margin, yours, unsure, True)
            )
    return out


def _record(
    table: pd.DataFrame,
    verifier: str,
    dimension: str,
    split: str,
    boot: Bootstrap,
    epsilon: float,
    margin: float,
    yours: pd.Series | None = None,
    unsure: int = 0,
    candidate: bool = False,
) -> ParityRecord:
    """One record: the reviewers' panel; with ``yours``, you in the panel, or (``candidate``)
    your labels in the verifier's place against the reviewers."""
    panel, labels = (None, yours) if candidate else (yours, None)
    kappa = kappa_difference(table, verifier, dimension, split, boot, margin, panel, labels)
    alt = alt_test(table, verifier, dimension, split, epsilon, yours=panel, labels=labels)
    power = alt_panel_power(table, kappa, alt, panel, labels)
    if yours is None:
        return ParityRecord(kappa, alt, power)
    if candidate:
        used = alt.n_tasks
    else:
        used = next((d.n_tasks for d in alt.duels if d.reviewer == YOU), 0)
    you = YourPart(CANDIDATE if candidate else PANEL, len(yours), unsure, used)
    return ParityRecord(kappa, alt, power, you)


def labels_not_tested(
    labels: pd.DataFrame | None, records: Sequence[ParityRecord]
) -> list[tuple[str, str, int]]:
    """(split, dimension, n) of your success / failure labels that no record of
    ``records`` uses: a split without two reviewers on a task (internal), in the records'
    dimensions only (a page that shows one dimension does not count the other's)."""
    if labels is None or labels.empty or not records:
        return []
    used = {(r.split, r.dimension) for r in records if r.you is not None}
    dimensions = {r.dimension for r in records}
    given = labels[
        labels["label"].isin([my_labels.SUCCESS, my_labels.FAILURE])
        & labels["dimension"].isin(dimensions)
    ]
    counts = given.groupby(["split", "dimension"]).size()
    return [
        (str(split), str(dim), int(n))
        for (split, dim), n in counts.items()
        if (split, dim) not in used
    ]


def alt_panel_power(
    table: pd.DataFrame,
    kappa: KappaDifference,
    alt: AltTest,
    yours: pd.Series | None = None,
    labels: pd.Series | None = None,
) -> float | None:
    """`lib.analysis.alt_power.panel_power` of the alt-test's panel (the reviewed tasks the
    verifier labelled), for reviewers agreeing as the paired difference's human side
    (``yours`` and ``labels`` as in `pair_rows`)."""
    if alt.passed is None:
        return None
    reviews = panel_reviews(table, alt.dimension, alt.split, yours)
    if labels is None:
        labels = verifier_labels(table, alt.verifier, alt.dimension, alt.split)
    reviews = reviews[reviews["task_id"].isin(labels.dropna().index)]
    rho = kappa.diff.b.value
    return panel_power(reviews, rho, alt.epsilon, alt.q_fdr, alt.min_tasks, PASS_RATE)


def report_records(
    bench: Any, boot: Bootstrap = BOOTSTRAP, labels: pd.DataFrame | None = None
) -> list[ParityRecord]:
    """The ``parity`` key of `python -m lib.report` (default epsilon `EPSILON` and margin
    `MARGIN`); with ``labels`` (``--labels``) the records with your labels too."""
    return parity_records(bench.verdicts, boot, labels=labels)
