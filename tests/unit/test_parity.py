"""lib.analysis.parity: the paired kappa difference and the alt-test, on hand-worked tables, against
an independent transcription of the authors' alt-test, and on the demo mirror."""

from __future__ import annotations

import json
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.multitest import multipletests

from lib import metrics as M
from lib.analysis import alt_power as AP
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


def test_alt_test_zero_variance_is_what_scipy_returns() -> None:
    """A verifier equal to J1 everywhere: J1's d are all 0 (ties), below epsilon -> p = 0.
    The pinned scipy's ttest_1samp gives the same p on a constant d (no departure from
    the authors' code): 0 below epsilon, 1 at or above it."""
    import warnings

    table = _table(HAND_REVIEWS, {"v": HAND_REVIEWS["J1"]})
    result = P.alt_test(table, "v", "outcome", OM2W, epsilon=0.2, min_tasks=4)
    assert {d.reviewer: d.p_value for d in result.duels}["J1"] == 0.0
    for d, eps in (([0.0] * 4, 0.2), ([0.5, 0.5], 0.2), ([-1.0] * 5, 0.15), ([1.0] * 3, 0.15)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = float(stats.ttest_1samp(np.array(d), eps, alternative="less").pvalue)
        assert want in (0.0, 1.0)
        assert P.one_sided_p(np.array(d), eps) == want


def test_by_rejections_match_statsmodels() -> None:
    rng = np.random.default_rng(3)
    for _ in range(200):
        p = rng.random(rng.integers(1, 9)) ** 3
        want = multipletests(p, alpha=0.05, method="fdr_by")[0]
        assert P.by_rejections(p, 0.05).tolist() == want.tolist()


def _authors_alt_test(llm, humans, epsilon, q=0.05, min_per_human=30):
    """The authors' `alt_test` (github.com/nitaytech/AltTest, alt_test_example.ipynb),
    transcribed on dicts, accuracy scoring, with statsmodels' BY and scipy's t-test (a
    constant d gives p = 0 or 1, as scipy returns)."""
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
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
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


def test_a_new_human_is_not_inferior_and_the_interval_covers() -> None:
    """A verifier that copies one reviewer's blind labels, that reviewer not in the panel
    (an exchangeable human), has a true difference of 0: the interval should hold 0 in
    about 95% of datasets, and the verdict is the interval's (never inferior when it
    holds 0)."""
    rng = np.random.default_rng(5)
    boot = Bootstrap(n_resamples=400)
    held, n_data = 0, 60
    for _ in range(n_data):
        _, humans = _panel(rng, 100, 4, 0.2)
        copied = humans.pop("J3")
        result = P.kappa_difference(_table(humans, {"copy": copied}), "copy", "outcome", OM2W, boot)
        ci = result.diff.ci
        assert ci.low <= result.diff.diff.value <= ci.high
        holds = ci.low <= 0 <= ci.high
        held += holds
        assert result.verdict == P.parity_verdict(ci, P.MARGIN)
        if holds:
            assert result.verdict in (P.EQUIVALENT, P.NON_INFERIOR, P.UNDETERMINED)
        assert result.words == P.verdict_words(result.verdict, ci, P.MARGIN, result.n_tasks)
    assert held / n_data >= 0.85  # nominal 0.95; Monte-Carlo sd about 0.03


def test_verdict_follows_the_table_order() -> None:
    from lib.metrics import Interval

    d = 0.10
    assert P.parity_verdict(Interval(-0.09, 0.09), d) == P.EQUIVALENT
    assert P.parity_verdict(Interval(0.01, 0.09), d) == P.EQUIVALENT  # first row wins
    assert P.parity_verdict(Interval(-0.09, -0.01), d) == P.EQUIVALENT
    assert P.parity_verdict(Interval(-0.3, -0.01), d) == P.INFERIOR
    assert P.parity_verdict(Interval(0.01, 0.3), d) == P.SUPERIOR
    assert P.parity_verdict(Interval(-0.09, 0.3), d) == P.NON_INFERIOR
    assert P.parity_verdict(Interval(-0.10, 0.05), d) == P.UNDETERMINED  # -δ is not inside
    assert P.parity_verdict(Interval(-0.3, 0.0), d) == P.UNDETERMINED
    assert P.parity_verdict(Interval(-0.3, 0.2), 0.5) == P.EQUIVALENT
    assert P.parity_verdict(Interval(-0.05, 0.05), d, constant=True) == P.INFERIOR
    assert P.parity_verdict(Interval(None, None, "n = 0")) is None
    words = {v: P.verdict_words(v, Interval(-0.55, -0.13), d, 106) for v in P.VERDICTS}
    assert words[P.INFERIOR] == "worse than the reviewers by 0.13 to 0.55"
    assert words[P.EQUIVALENT] == "as good as the reviewers (within ±0.10)"
    assert words[P.NON_INFERIOR] == "not worse than the reviewers by more than 0.10"
    assert P.SHARES_A_REVIEWER in words[P.SUPERIOR]
    assert words[P.SUPERIOR].startswith(
        "agrees with these reviewers more than they agree with each other"
    )
    undetermined = P.verdict_words(P.UNDETERMINED, Interval(-0.33, 0.04), d, 106)
    assert undetermined.startswith("cannot tell: the data allow from 0.33 worse to 0.04 better")
    for text in words.values():
        assert "human range" not in text


def test_tasks_needed_is_the_first_n_that_decides() -> None:
    """Brute force: shrink the half-width as sqrt(n0 / n) around the same centre and find
    the first n whose verdict is not undetermined."""
    from lib.metrics import Interval

    for lo, hi, n0 in ((-0.33, 0.04, 106), (-0.25, 0.16, 106), (-0.4, 0.3, 50), (-0.2, 0.1, 80)):
        centre, half = (lo + hi) / 2, (hi - lo) / 2
        n = n0
        while True:
            h = half * np.sqrt(n0 / n)
            if P.parity_verdict(Interval(centre - h, centre + h), 0.10) != P.UNDETERMINED:
                break
            n += 1
        got = P.tasks_needed(Interval(lo, hi), 0.10, n0)
        assert abs(got - n) <= 1, (lo, hi, got, n)


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
    # a copy of a panel reviewer matches that reviewer perfectly: never worse, here superior
    assert k.verdict == P.SUPERIOR and k.diff.diff.value > 0
    assert P.SHARES_A_REVIEWER in k.words
    assert alt.passed is True
    k, alt = results["constant"]
    assert k.constant and k.verdict == P.INFERIOR and k.diff.a.value == 0.0
    assert "same label" in k.words
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
        assert r["verdict"] in P.VERDICTS and r["margin"] == P.MARGIN
        low, high = r["kappa_diff_ci"]
        assert r["verdict"] == P.parity_verdict(M.Interval(low, high), P.MARGIN)
        assert r["words"] == P.verdict_words(r["verdict"], M.Interval(low, high), P.MARGIN,
                                             r["n_tasks"])  # fmt: skip
        assert "human range" not in json.dumps(r)
        assert 0.0 <= r["alt_power"] <= 1.0
        low, high = r["kappa_diff_ci"]
        assert low <= r["kappa_diff"] <= high
        assert r["kappa_diff"] == pytest.approx(r["verifier_kappa"] - r["human_kappa"])
        assert r["alt_winning_rate"] is not None and r["alt_epsilon"] == P.EPSILON
        tested = [x for x in r["alt_reviewers"] if x["p_value"] is not None]
        assert all(x["n_tasks"] >= P.MIN_TASKS_PER_REVIEWER for x in tested)
        assert r["alt_winning_rate"] == pytest.approx(
            sum(x["rejected"] for x in tested) / len(tested)
        )


# --- the alt-test's power ----------------------------------------------------------------


def test_alt_passes_is_the_alt_test_on_random_panels() -> None:
    """The vectorised test of the power simulation against `P.alt_test` on tables."""
    rng = np.random.default_rng(21)
    outcomes = set()
    for trial in range(25):
        tasks = [f"s{trial}--{k:03d}" for k in range(80)]
        q = rng.beta(1.0, 1.0, len(tasks))
        humans: dict[str, dict[str, int]] = {}
        for j in range(5):
            seen = rng.random(len(tasks)) < rng.choice([0.4, 0.7, 0.9])
            humans[f"J{j}"] = {
                t: int(rng.random() < p) for t, p, s in zip(tasks, q, seen, strict=True) if s
            }
        llm = {
            t: int(rng.random() < (p if trial % 3 else 0.5)) for t, p in zip(tasks, q, strict=True)
        }
        eps = float(rng.choice([0.05, 0.15, 0.3]))
        table = _table(humans, {"v": llm})
        want = P.alt_test(table, "v", "outcome", OM2W, epsilon=eps)
        reviews = P.blind_reviews(table, "outcome", OM2W)
        reviews = reviews[reviews.groupby("task_id")["rater"].transform("size") >= 2]
        codes, names = pd.factorize(reviews["task_id"], sort=True)
        rater = pd.factorize(reviews["rater"], sort=True)[0]
        verifier = np.array([llm[t] for t in names], dtype=float)
        passed = AP.alt_passes(
            codes.astype(np.int64), rater.astype(np.int64),
            reviews["label"].to_numpy(dtype=float)[None, :], verifier[None, :], eps, P.Q_FDR,
            P.MIN_TASKS_PER_REVIEWER, P.PASS_RATE,
        )  # fmt: skip
        got = None if passed is None else bool(passed[0])
        assert got == want.passed
        outcomes.add(got)
    assert outcomes == {True, False}


def _shape(n_tasks: int, per_task: int, n_reviewers: int, rng) -> tuple[np.ndarray, np.ndarray]:
    task = np.repeat(np.arange(n_tasks), per_task)
    rater = np.concatenate(
        [rng.choice(n_reviewers, per_task, replace=False) for _ in range(n_tasks)]
    )
    return task.astype(np.int64), rater.astype(np.int64)


def test_alt_passes_on_many_panels_is_each_panel_alone() -> None:
    """`alt_passes` on many panels at once gives, row by row, what it gives on each panel
    alone: shapes of 2-4 reviewers per task, margins from 0 to 0.3, every minimum."""
    rng = np.random.default_rng(5)
    seen = set()
    for _ in range(40):
        per = int(rng.integers(2, 5))
        task, rater = _shape(int(rng.integers(20, 150)), per, int(rng.integers(per, 9)), rng)
        rater = np.unique(rater, return_inverse=True)[1].astype(np.int64)
        n_tasks = int(task.max()) + 1
        q = rng.beta(2.0, 2.0, (12, n_tasks))
        labels = (rng.random((12, task.shape[0])) < q[:, task]).astype(np.float64)
        verifier = (rng.random((12, n_tasks)) < q).astype(np.float64)
        eps = float(rng.choice([0.0, 0.1, 0.15, 0.3]))
        m = int(rng.choice([5, 30, 60]))
        args = (eps, P.Q_FDR, m, P.PASS_RATE)
        alone = [AP.alt_passes(task, rater, labels[i : i + 1], verifier[i : i + 1], *args)
                 for i in range(12)]  # fmt: skip
        want = [None if a is None else bool(a[0]) for a in alone]
        got = AP.alt_passes(task, rater, labels, verifier, *args)
        assert (got is None) == (want[0] is None)
        if got is not None:
            assert got.tolist() == want
            seen.update(want)
    assert seen == {True, False}


def test_alt_power_is_seeded_and_grows_with_reviewers_per_task() -> None:
    rng = np.random.default_rng(2)
    args = (0.6, 0.45, P.EPSILON, P.Q_FDR, P.MIN_TASKS_PER_REVIEWER, P.PASS_RATE)
    two = _shape(106, 2, 4, rng)
    five = _shape(106, 5, 6, rng)
    p2 = AP.simulate_power(*two, *args, n_sims=120)
    assert p2 == AP.simulate_power(*two, *args, n_sims=120)  # seeded
    p5 = AP.simulate_power(*five, *args, n_sims=120)
    assert 0.0 <= p2 < p5 <= 1.0
    # no reviewer reaches the minimum: the test cannot run, no power
    assert AP.simulate_power(*_shape(20, 2, 4, rng), *args, n_sims=5) is None


def test_demo_records_carry_the_power_and_a_low_power_fail(bench) -> None:
    records = P.parity_records(bench.verdicts, FAST)
    assert all(r.alt_power is not None and 0 <= r.alt_power <= 1 for r in records)
    rec = records[0]
    low = P.ParityRecord(rec.kappa, replace(rec.alt, passed=False), 0.2)
    assert low.low_power_fail
    assert not P.ParityRecord(rec.kappa, replace(rec.alt, passed=False), 0.8).low_power_fail
    assert not P.ParityRecord(rec.kappa, replace(rec.alt, passed=True), 0.2).low_power_fail
