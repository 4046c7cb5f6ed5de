"""lib.analysis.two_pass: the action-only and the screenshot-grounded process verdicts, on
hand-worked rows carrying both passes, checked against scikit-learn and statsmodels; the
paired interval's coverage by simulation; rows with one pass or none are counted."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, cohen_kappa_score
from statsmodels.stats.proportion import proportion_confint

from lib import metrics as M
from lib.analysis import two_pass as T
from lib.table.verdicts import COLUMNS
from lib.vocab import Bootstrap

FAST = Bootstrap(n_resamples=500)
INTERNAL, OM2W = "internal", "fara7b_om2w_browserbase"


def _cell(items: list[dict] | None, score: float = 0.5) -> str:
    if items is None:
        return ""
    inner = json.dumps({"rubric_items": items, "rubric_total_max_points": 5})
    return json.dumps({"score": score, "gpt_response_text": inner})


def _items(maxima, earned, post=None) -> list[dict]:
    out = []
    for i, (m, e) in enumerate(zip(maxima, earned, strict=True)):
        item = {"criterion": f"c{i}", "max_points": m, "earned_points": e, "justification": "j"}
        if post is not None and post[i] is not ...:
            item["post_image_earned_points"] = post[i]
        out.append(item)
    return out


# (task, items, human process, human outcome), all internal; max 5 points each
HAND = [
    ("t1", _items([2, 3], [2, 3], [1, 3]), 1, 1),  # 5 -> 4 /5: pass -> pass, 1 lowered
    ("t2", _items([2, 3], [2, 2], [0, 2]), 0, 0),  # 4 -> 2: pass -> fail, lowered
    ("t3", _items([2, 3], [1, 3], [2, 3]), 1, 1),  # 4 -> 5: pass -> pass, raised
    ("t4", _items([2, 3], [1, 2], [2, 2]), 1, 0),  # 3 -> 4: fail -> pass, raised
    ("t5", _items([2, 3], [2, 3], [2, 3]), 1, 1),  # 5 -> 5: unchanged
    ("t6", _items([2, 3], [0, 1], [0, 1]), 0, 0),  # 1 -> 1: unchanged
    ("t7", _items([2, 3], [2, 3], [0, 3]), 0, None),  # 5 -> 3: pass -> fail; outcome missing
    ("t8", _items([2, 3], [2, 2.5], [2, 1.5]), None, 0),  # 4.5 -> 3.5: lowered; process missing
    ("one", _items([2, 3], [2, 3]), 1, 1),  # one pass recorded
    ("part", _items([2, 3], [2, 3], [1, ...]), 1, 1),  # post-image on one criterion only
    ("bad", _items([2, 3], [2, "x"], [2, 3]), 1, 1),  # a point that is not a number
    ("none", None, 1, 1),  # not evaluated
]


def _bench_frames(rows=HAND, split=INTERNAL) -> tuple[pd.DataFrame, pd.DataFrame]:
    tasks = pd.DataFrame(
        {
            "split": split,
            "task_id": [r[0] for r in rows],
            "gpt_eval_json": [_cell(r[1]) for r in rows],
        }
    )
    verdicts = []
    for task, _, process, outcome in rows:
        for rater, dim, label in (
            ("final_human_process_label", "process", process),
            ("final_human_outcome_label", "outcome", outcome),
            ("majority_human_outcome_vote", "outcome", outcome),
        ):
            verdicts.append((split, task, rater, "reference", None, None, dim, label, np.nan, None))
    table = pd.DataFrame(verdicts, columns=COLUMNS)
    table["label"] = table["label"].astype("Int8")
    return tasks, table


def test_statuses_and_points_by_hand() -> None:
    tasks, table = _bench_frames()
    r = T.two_pass(tasks, table, [INTERNAL], 0.8, FAST)
    assert r.counts == {T.BOTH: 8, T.ONE_PASS: 1, T.INCOMPLETE: 2, T.NO_RUBRIC: 1}
    got = r.tasks.set_index("task_id")
    assert got["action_points"].tolist() == [5, 4, 4, 3, 5, 1, 5, 4.5]
    assert got["grounded_points"].tolist() == [4, 2, 5, 4, 5, 1, 3, 3.5]
    assert got["action_verdict"].tolist() == [1, 1, 1, 0, 1, 0, 1, 1]  # 4/5 = 0.8 passes
    assert got["grounded_verdict"].tolist() == [1, 0, 1, 1, 1, 0, 0, 0]
    assert r.n_criteria == 16 and r.criteria_lowered == 4 and r.criteria_raised == 2
    assert r.flips == {"pass -> fail": 3, "fail -> pass": 1}
    assert r.n_clusters == 8


def test_one_pass_rows_alone_give_no_number_and_no_error() -> None:
    rows = [(f"t{i}", _items([2, 3], [2, i % 4]), i % 2, 1) for i in range(6)]
    tasks, table = _bench_frames(rows)
    r = T.two_pass(tasks, table, [INTERNAL], 0.8, FAST)
    assert r.counts[T.ONE_PASS] == 6 and r.n == 0 and r.tasks.empty
    assert all(c.diff.diff.value is None for c in r.comparisons)
    assert all(f.process.estimate.reason == "n = 0" for f in r.failures)


@pytest.mark.parametrize("reference", [r for r, _ in T.REFERENCES])
def test_each_pass_against_each_reference_equals_sklearn(reference: str) -> None:
    tasks, table = _bench_frames()
    r = T.two_pass(tasks, table, [INTERNAL], 0.8, FAST)
    both = r.tasks.loc[r.tasks[reference].notna()]
    ref = both[reference].astype(int)
    grounded, action = both["grounded_verdict"].astype(int), both["action_verdict"].astype(int)
    found = {c.metric: c for c in r.comparisons if c.reference == reference}
    assert set(found) == set(T.METRICS)
    for metric, score in (("kappa", cohen_kappa_score), ("accuracy", accuracy_score)):
        c = found[metric]
        assert c.diff.a.value == pytest.approx(score(ref, grounded))
        assert c.diff.b.value == pytest.approx(score(ref, action))
        assert c.diff.diff.value == pytest.approx(score(ref, grounded) - score(ref, action))
        assert c.diff.n == len(both) == 7 and c.n_missing_reference == 1
        assert c.diff.ci.method == "percentile" and c.diff.ci.defined
    negatives = ref == 0
    fpr = lambda v: float((v[negatives] == 1).mean())  # noqa: E731
    assert found["fpr"].diff.diff.value == pytest.approx(fpr(grounded) - fpr(action))


def test_human_failures_of_lowered_raised_and_unchanged_tasks_by_hand() -> None:
    tasks, table = _bench_frames()
    r = T.two_pass(tasks, table, [INTERNAL], 0.8, FAST)
    by = {f.group: f for f in r.failures}
    # lowered t1 t2 t7 t8: process labels 1 0 0 NA -> 2 of 3 failed; outcome 1 0 NA 0 -> 2 of 3
    low = by[T.LOWERED]
    assert low.n_tasks == 4
    assert (low.process.x, low.process.n, low.process.n_missing) == (2, 3, 1)
    assert (low.outcome.x, low.outcome.n, low.outcome.n_missing) == (2, 3, 1)
    # raised t3 t4: process 1 1 -> 0 of 2; outcome 1 0 -> 1 of 2; unchanged t5 t6: 1 of 2
    assert (by[T.RAISED].process.x, by[T.RAISED].outcome.x, by[T.RAISED].n_tasks) == (0, 1, 2)
    assert (by[T.UNCHANGED].process.x, by[T.UNCHANGED].process.n) == (1, 2)
    assert by[T.ALL_TASKS].n_tasks == 8 and by[T.ALL_TASKS].process.x == 3
    # one task per cluster: the interval is statsmodels' Clopper-Pearson ('beta') interval
    low_ci = low.process.estimate.ci
    want = proportion_confint(2, 3, alpha=0.05, method="beta")
    assert low_ci.method == "clopper-pearson" and (low_ci.low, low_ci.high) == pytest.approx(want)
    assert low.process.estimate.value == pytest.approx(2 / 3)


def test_threshold_moves_both_verdicts_as_score_at_least_t() -> None:
    tasks, table = _bench_frames()
    for t in (0.5, 0.7, 0.8, 0.9, 1.0):
        got = T.two_pass(tasks, table, [INTERNAL], t, FAST).tasks
        assert (
            got["action_verdict"].tolist() == (got["action_points"] / 5 >= t).astype(int).tolist()
        )
        assert got["grounded_verdict"].tolist() == (got["grounded_points"] / 5 >= t).tolist()


def test_only_the_chosen_splits_and_site_clusters() -> None:
    tasks, table = _bench_frames()
    other_tasks, other_table = _bench_frames(HAND[:3], OM2W)
    other_tasks["task_id"] = "Site--" + other_tasks["task_id"]
    other_table["task_id"] = "Site--" + other_table["task_id"]
    tasks, table = pd.concat([tasks, other_tasks]), pd.concat([table, other_table])
    assert T.two_pass(tasks, table, [OM2W], 0.8, FAST).n == 3
    assert T.two_pass(tasks, table, [INTERNAL, OM2W], 0.8, FAST).n == 11
    site = T.two_pass(tasks, table, [OM2W], 0.8, Bootstrap(500, unit="site"))
    assert site.n_clusters == 1 and site.comparisons[0].diff.n_clusters == 1
    assert not site.comparisons[0].diff.ci.defined  # one website: no interval


def test_the_paired_interval_covers_the_true_difference() -> None:
    """Simulation: humans' labels ~ Bernoulli(0.5); the action-only verdict is wrong with
    probability 0.30, the grounded one 0.15 (independently), so the accuracy difference is
    0.15 in truth; 95% intervals over 300 datasets of 150 tasks cover it about 95% of the time."""
    rng = np.random.default_rng(1)
    n, runs, hits = 150, 300, 0
    ids = [f"t{i}" for i in range(n)]
    for _ in range(runs):
        human = rng.integers(0, 2, n)
        action = np.where(rng.random(n) < 0.30, 1 - human, human)
        grounded = np.where(rng.random(n) < 0.15, 1 - human, human)
        d = M.paired_bootstrap_diff(grounded, human, action, human, ids, "accuracy", FAST)
        hits += d.ci.low <= 0.15 <= d.ci.high
    assert 0.90 <= hits / runs <= 0.99


def test_demo_rows_carry_one_pass_and_are_counted(bench) -> None:
    """The project's mirror writes only `earned_points` today: every internal row with a
    rubric is `ONE_PASS`, om2w rows have none, and no number is made up."""
    (internal,) = [r for r in T.report_records(bench) if r.splits == (INTERNAL,)]
    scored = bench.tasks.loc[bench.tasks["split"] == INTERNAL, "gpt_eval_json"]
    with_items = sum("rubric_items" in str(c) for c in scored)
    assert internal.counts[T.ONE_PASS] + internal.counts[T.BOTH] == with_items
    assert sum(internal.counts.values()) == len(scored)


def test_a_zero_width_difference_says_both_passes_make_the_same_errors() -> None:
    """Issue 37: 40 tasks, the humans fail 10 of them and both passes fail those 10 too
    (the screenshots only move passes among the human passes): the FPR difference is 0 in
    every resample, at n = 40, and the reason is the same errors, not too few tasks."""
    rows = []
    for i in range(10):
        rows.append((f"f{i}", _items([2, 3], [0, 1], [0, 1]), 0, 0))  # 1 -> 1 both fail
        rows.append((f"a{i}", _items([2, 3], [2, 3], [1, 3]), 1, 1))  # 5 -> 4 both pass
        rows.append((f"b{i}", _items([2, 3], [1, 3], [2, 3]), 1, 1))  # 4 -> 5 both pass
        rows.append((f"c{i}", _items([2, 3], [2, 3], [2, 3]), 1, 1))
    tasks, table = _bench_frames(rows)
    result = T.two_pass(tasks, table, [INTERNAL], 0.8, FAST)
    fpr = [c for c in result.comparisons if c.metric == "fpr"]
    assert fpr and all(c.diff.ci.reason == T.SAME_ERRORS for c in fpr)
    assert all(c.diff.ci.low == c.diff.ci.high == 0.0 for c in fpr)
    # the hand rows: t2 and t7 flip a human failure from pass to fail -> the FPR moves
    tasks, table = _bench_frames()
    result = T.two_pass(tasks, table, [INTERNAL], 0.8, FAST)
    assert all(c.diff.ci.reason != T.SAME_ERRORS for c in result.comparisons)
