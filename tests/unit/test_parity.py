"""lib.analysis.parity: the paired kappa difference and the alt-test, on hand-worked tables, against
an independent transcription of the authors' alt-test, and on the demo mirror."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.multitest import multipletests

from lib.analysis import parity as P
from lib.analysis.agreement import reviewer_band
from lib.vocab import Bootstrap

OM2W = "fara7b_om2w_browserbase"
FAST = Bootstrap(n_resamples=500)


def _table(reviews: dict[str, dict[str, int]], verifiers: dict[str, dict[str, int | None]]):
    """A verdict table: blind outcome labels of reviewers, and verifiers' outcome labels."""
    rows = []
    for reviewer, labels in reviews.items():
        for task, label in labels.items():
            rows.append((task, reviewer, "human", reviewer, "blind", label))
    for verifier, labels in verifiers.items():
        for task, label in labels.items():
            rows.append((task, verifier, "verifier", None, None, label))
    frame = pd.DataFrame(rows, columns=["task_id", "rater", "kind", "annotator", "stage", "label"])
    frame.insert(0, "split", OM2W)
    frame["dimension"] = "outcome"
    frame["label"] = frame["label"].astype("Int8")
    frame["score"], frame["raw"] = np.nan, None
    return frame


# --- the alt-test, worked by hand --------------------------------------------------------

T = ["t1", "t2", "t3", "t4"]
HAND_REVIEWS = {
    "J1": dict(zip(T, [1, 1, 0, 0], strict=True)),
    "J2": dict(zip(T, [1, 0, 0, 0], strict=True)),
    "J3": dict(zip(T, [1, 1, 1, 0], strict=True)),
}
HAND_VERIFIER = dict(zip(T, [1, 1, 0, 1], strict=True))


def test_alt_test_matches_the_hand_worked_example() -> None:
    """Each reviewer held out in turn; scores = share of the other two labels matched.

    J1: t1 (rest 1,1) both 1; t2 (1,0... rest J2=0,J3=1) both 0.5; t3 (0,1) both 0.5;
        t4 (0,0) J1 = 1, verifier 0 -> d = W_h - W_f = [0, 0, 0, 1], mean 0.25, sd 0.5.
    J2: t2 rest (1,1): J2 0, verifier 1 -> d = -1; t4 -> d = 1: d = [0, -1, 0, 1].
    J3: t3 rest (0,0): J3 0, verifier 1 -> d = -1; t4 -> 1: d = [0, 0, -1, 1].
    t = (mean - 0.2) / (sd / 2), df 3; W_f means 3/4 each -> advantage 0.75.
    BY over 3 reviewers: thresholds k * 0.05 / (3 * 11/6) = 0.0091 k: none rejected.
    """
    table = _table(HAND_REVIEWS, {"v": HAND_VERIFIER})
    result = P.alt_test(table, "v", "outcome", OM2W, epsilon=0.2, min_tasks=4)
    by = {d.reviewer: d for d in result.duels}
    t_j1 = (0.25 - 0.2) / (0.5 / 2)
    t_j2 = (0.0 - 0.2) / (np.sqrt(2 / 3) / 2)
    assert by["J1"].p_value == pytest.approx(stats.t.cdf(t_j1, 3))
    assert by["J2"].p_value == pytest.approx(stats.t.cdf(t_j2, 3))
    assert by["J3"].p_value == pytest.approx(stats.t.cdf(t_j2, 3))
    assert [d.verifier_wins for d in result.duels] == [0.75, 0.75, 0.75]
    assert by["J1"].reviewer_wins == 1.0 and by["J2"].reviewer_wins == 0.75
    assert result.advantage_probability.value == 0.75
    assert result.winning_rate.value == 0.0 and result.passed is False
    # a reviewer below the minimum is listed, not tested
    few = P.alt_test(table, "v", "outcome", OM2W, epsilon=0.2, min_tasks=5)
    assert few.winning_rate.value is None and "5 or more" in few.winning_rate.reason
    assert [d.p_value for d in few.duels] == [None, None, None]


def test_alt_test_zero_variance_is_exact() -> None:
    """A verifier equal to J1 everywhere: J1's d are all 0 (ties), below epsilon -> p = 0."""
    table = _table(HAND_REVIEWS, {"v": HAND_REVIEWS["J1"]})
    result = P.alt_test(table, "v", "outcome", OM2W, epsilon=0.2, min_tasks=4)
    assert {d.reviewer: d.p_value for d in result.duels}["J1"] == 0.0
    assert P.one_sided_p(np.array([0.5, 0.5]), 0.2) == 1.0


def test_by_rejections_match_statsmodels() -> None:
    rng = np.random.default_rng(3)
    for _ in range(200):
        p = rng.random(rng.integers(1, 9)) ** 3
        want = multipletests(p, alpha=0.05, method="fdr_by")[0]
        assert P.by_rejections(p, 0.05).tolist() == want.tolist()


def _authors_alt_test(llm, humans, epsilon, q=0.05, min_per_human=30):
    """The authors' `alt_test` (github.com/nitaytech/AltTest, alt_test_example.ipynb),
    transcribed on dicts, accuracy scoring, with statsmodels' BY and the one documented
    departure (zero variance: exact p)."""
    h_set: dict[str, list[str]] = {}
    for h, anns in humans.items():
        for i in anns:
            h_set.setdefault(i, []).append(h)
    keep = {i for i in h_set if len(h_set[i]) >= 2 and i in llm}
    p_values, advantage = [], []
    for h, anns in humans.items():
        instances = [i for i in anns if i in keep]
        if len(instances) < min_per_human:
            continue
        llm_ind, h_ind = [], []
        for i in instances:
            rest = [humans[o][i] for o in h_set[i] if o != h]
            hs = np.mean([anns[i] == r for r in rest])
            ls = np.mean([llm[i] == r for r in rest])
            llm_ind.append(int(ls >= hs))
            h_ind.append(int(hs >= ls))
        d = np.array(h_ind) - np.array(llm_ind)
        if np.all(d == d[0]):
            p_values.append(0.0 if d[0] < epsilon else 1.0)
        else:
            p_values.append(stats.ttest_1samp(d, epsilon, alternative="less").pvalue)
        advantage.append(np.mean(llm_ind))
    rejected = multipletests(p_values, alpha=q, method="fdr_by")[0]
    return rejected.mean(), float(np.mean(advantage))


def test_alt_test_matches_the_authors_procedure_on_random_panels() -> None:
    rng = np.random.default_rng(7)
    rates = set()
    for trial in range(12):
        tasks = [f"s{trial}--{k:03d}" for k in range(90)]
        truth = rng.integers(0, 2, len(tasks))
        humans: dict[str, dict[str, int]] = {}
        for j in range(5):
            flip = rng.random(len(tasks)) < 0.15
            seen = rng.random(len(tasks)) < 0.7
            humans[f"J{j}"] = {
                t: int(v ^ f) for t, v, f, s in zip(tasks, truth, flip, seen, strict=True) if s
            }
        noise = rng.choice([0.05, 0.2, 0.4])
        llm = {t: int(v ^ (rng.random() < noise)) for t, v in zip(tasks, truth, strict=True)}
        eps = float(rng.choice([0.05, 0.15, 0.3]))
        table = _table(humans, {"v": llm})
        got = P.alt_test(table, "v", "outcome", OM2W, epsilon=eps)
        rate, adv = _authors_alt_test(llm, humans, eps)
        assert got.winning_rate.value == pytest.approx(rate)
        assert got.advantage_probability.value == pytest.approx(adv)
        rates.add(round(rate, 2))
    assert len(rates) >= 3  # the trials reach several winning rates, passes and fails


# --- the paired kappa difference ---------------------------------------------------------


def _panel(rng, n_tasks: int, n_reviewers: int, flip: float):
    """Every task labelled by all reviewers, each an independent noisy copy of the truth."""
    tasks = [f"site{k % 20}--{k:04d}" for k in range(n_tasks)]
    truth = rng.integers(0, 2, n_tasks)
    return tasks, {
        f"J{j}": {t: int(v ^ (rng.random() < flip)) for t, v in zip(tasks, truth, strict=True)}
        for j in range(n_reviewers)
    }


def test_kappa_difference_against_sklearn_on_the_pair_rows() -> None:
    rng = np.random.default_rng(11)
    tasks, humans = _panel(rng, 60, 3, 0.2)
    verifier = {t: int(rng.random() < 0.5) for t in tasks[:-5]}  # 5 tasks without a label
    table = _table(humans, {"v": verifier})
    result = P.kappa_difference(table, "v", "outcome", OM2W, FAST)
    rows = P.pair_rows(table, "v", "outcome", OM2W).dropna(subset=["verifier"])
    want_v = cohen_kappa_score(rows["verifier"], rows["label_b"])
    want_h = cohen_kappa_score(rows["label_a"], rows["label_b"])
    assert result.diff.a.value == pytest.approx(want_v)
    assert result.diff.b.value == pytest.approx(want_h)
    assert result.diff.diff.value == pytest.approx(want_v - want_h)
    assert result.n_pairs == 55 * 3 and result.n_tasks == 55 and result.n_missing_verifier == 5
    assert result.diff.ci.low <= result.diff.diff.value <= result.diff.ci.high
    # with a label on every task the human side is the band of the Agreement page
    full = _table(humans, {"v": {t: 1 for t in tasks}})
    band = reviewer_band(full, "outcome", OM2W, FAST)
    assert P.kappa_difference(full, "v", "outcome", OM2W, FAST).diff.b.value == pytest.approx(
        band.estimates["kappa"].value
    )


def test_a_new_human_is_within_and_the_interval_covers() -> None:
    """A verifier that copies one reviewer's blind labels, that reviewer not in the panel
    (an exchangeable human), has a true difference of 0: the interval should hold 0 in
    about 95% of datasets, and the words say "within" exactly then."""
    rng = np.random.default_rng(5)
    boot = Bootstrap(n_resamples=400)
    held, n_data = 0, 60
    for _ in range(n_data):
        _, humans = _panel(rng, 100, 4, 0.2)
        copied = humans.pop("J3")
        result = P.kappa_difference(_table(humans, {"copy": copied}), "copy", "outcome", OM2W, boot)
        ci = result.diff.ci
        assert ci.low <= result.diff.diff.value <= ci.high
        held += ci.low <= 0 <= ci.high
        assert (result.words == P.WITHIN) == (ci.low <= 0 <= ci.high)
    assert held / n_data >= 0.85  # nominal 0.95; Monte-Carlo sd about 0.03


def test_words_follow_the_interval() -> None:
    from lib.metrics import Interval

    assert P.parity_words(Interval(-0.3, -0.01)) == P.BELOW
    assert P.parity_words(Interval(0.01, 0.3)) == P.ABOVE
    assert P.parity_words(Interval(-0.3, 0.0)) == P.WITHIN
    assert P.parity_words(Interval(None, None, "n = 0")) is None


# --- the demo -----------------------------------------------------------------------------


def _with_verifier(table: pd.DataFrame, name: str, labels: pd.Series) -> pd.DataFrame:
    base = table[table["rater"] == "uv_outcome_success"].copy()
    base["rater"] = name
    base["label"] = base["task_id"].map(labels).astype("Int8")
    return pd.concat([table, base], ignore_index=True)


def test_demo_copy_of_a_panel_reviewer_and_a_constant(bench) -> None:
    table = bench.verdicts
    (split,) = P.parity_splits(table, "outcome")
    reviews = P.blind_reviews(table, "outcome", split)
    busiest = reviews["rater"].value_counts().index[0]
    copy = reviews[reviews["rater"] == busiest].set_index("task_id")["label"]
    constant = pd.Series(0, index=reviews["task_id"].unique())
    results = {}
    for name, labels in (("copy", copy), ("constant", constant)):
        t = _with_verifier(table, name, labels)
        results[name] = (
            P.kappa_difference(t, name, "outcome", split, FAST),
            P.alt_test(t, name, "outcome", split),
        )
    for k, _ in results.values():
        assert k.diff.ci.low <= k.diff.diff.value <= k.diff.ci.high  # brackets its point
    k, alt = results["copy"]
    # a copy of a panel reviewer matches that reviewer perfectly: never below, here above
    assert k.words in (P.WITHIN, P.ABOVE) and k.diff.diff.value > 0
    assert alt.passed is True
    k, alt = results["constant"]
    assert k.words == P.BELOW and k.diff.a.value == 0.0
    assert alt.passed is False


def test_demo_report_has_parity_for_every_verifier(report_json: str) -> None:
    records = json.loads(report_json)["parity"]
    got = {(r["verifier"], r["dimension"]) for r in records}
    want = {
        ("uv_outcome_success", "outcome"),
        ("mm_is_success", "outcome"),
        ("verifier_is_success", "outcome"),
        ("om2w_judge", "outcome"),
        ("uv_process", "process"),
    }
    assert want <= got
    for r in records:
        assert r["split"] == OM2W
        assert r["words"] in (P.WITHIN, P.BELOW, P.ABOVE)
        low, high = r["kappa_diff_ci"]
        assert low <= r["kappa_diff"] <= high
        assert r["kappa_diff"] == pytest.approx(r["verifier_kappa"] - r["human_kappa"])
        assert r["alt_winning_rate"] is not None and r["alt_epsilon"] == P.EPSILON
        tested = [x for x in r["alt_reviewers"] if x["p_value"] is not None]
        assert all(x["n_tasks"] >= P.MIN_TASKS_PER_REVIEWER for x in tested)
        assert r["alt_winning_rate"] == pytest.approx(
            sum(x["rejected"] for x in tested) / len(tested)
        )
