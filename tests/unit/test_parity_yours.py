"""Human parity with your labels (`lib.analysis.parity`, issue 42 item 3): you as one more
annotator of the alt-test's panel, and your labels judged against the reviewers; on a
hand-worked table, against the independent transcription of the authors' alt-test, with
scikit-learn for the kappas, and on the demo mirror."""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from lib.analysis import audit
from lib.analysis import parity as P
from lib.uploads import labels as L
from lib.vocab import Bootstrap
from tests.unit.test_parity import _authors_alt_test, _table

OM2W = "fara7b_om2w_browserbase"
FAST = Bootstrap(n_resamples=300)
T = ["t1", "t2", "t3", "t4"]
REVIEWS = {
    "J1": dict(zip(T, [1, 1, 0, 0], strict=True)),
    "J2": dict(zip(T, [1, 0, 0, 1], strict=True)),
}
VERIFIER = dict(zip(T, [1, 1, 1, 0], strict=True))


def _labels(rows: list[tuple[str, str]], split: str = OM2W, dim: str = "outcome"):
    keys = {"split": split, "dimension": dim, "note": ""}
    frame = pd.DataFrame([keys | {"task_id": t, "label": lab} for t, lab in rows])
    return frame.astype("string")


MINE = _labels([("t2", "success"), ("t4", "failure"), ("t5", "unsure")])


def test_your_labels_are_yours_only_and_unsure_is_counted() -> None:
    yours, unsure = P.your_labels(MINE, "outcome", OM2W)
    assert yours.to_dict() == {"t2": 1.0, "t4": 0.0} and unsure == 1
    assert P.your_labels(MINE, "process", OM2W) == (None, 0)
    assert P.your_labels(MINE, "outcome", "internal") == (None, 0)
    assert P.your_labels(None, "outcome", OM2W) == (None, 0)
    only_unsure = _labels([("t1", "unsure")])
    assert P.your_labels(only_unsure, "outcome", OM2W) == (None, 1)


def test_you_in_the_panel_hand_worked() -> None:
    """J1 = 1100, J2 = 1001, you: t2 = 1, t4 = 0; verifier 1110; epsilon 0.2, min 2 tasks.

    J1 held out: t1 others (J2=1) both 1; t2 others (J2=0, you=1) both 0.5; t3 (J2=0):
        J1 1, verifier 0; t4 (J2=1, you=0) both 0.5 -> d = [0, 0, 1, 0], W_f 3/4.
    J2: t1 both 1; t2 (J1=1, you=1) J2 0, verifier 1 -> -1; t3 (J1=0) J2 1, v 0 -> 1;
        t4 (J1=0, you=0) J2 0, verifier 1 -> -1: d = [0, -1, 1, -1], W_f 3/4.
    you: t2 (1, 0) both 0.5; t4 (0, 1) both 0.5 -> d = [0, 0], constant below 0.2: p = 0.
    BY over 3: thresholds 0.05 k / (3 x 11/6) = 0.0091 k; p = 0, 0.21, 0.57: one rejected
    (the duel with you) -> winning rate 1/3; advantage (3/4 + 3/4 + 1) / 3 = 5/6.
    Without you the two reviewers' d are the same (t2 and t4 score 0 both ways): rate 0.
    """
    table = _table(REVIEWS, {"v": VERIFIER})
    yours, _ = P.your_labels(MINE, "outcome", OM2W)
    got = P.alt_test(table, "v", "outcome", OM2W, 0.2, min_tasks=2, yours=yours)
    by = {d.reviewer: d for d in got.duels}
    assert list(by) == ["J1", "J2", P.YOU]
    assert by["J1"].p_value == pytest.approx(stats.t.cdf((0.25 - 0.2) / (0.5 / 2), 3))
    d_j2 = np.array([0, -1, 1, -1])
    want_j2 = stats.ttest_1samp(d_j2, 0.2, alternative="less").pvalue
    assert by["J2"].p_value == pytest.approx(want_j2)
    assert by[P.YOU].p_value == 0.0 and by[P.YOU].n_tasks == 2 and by[P.YOU].rejected
    assert [by[r].verifier_wins for r in ("J1", "J2", P.YOU)] == [0.75, 0.75, 1.0]
    assert got.winning_rate.value == pytest.approx(1 / 3)
    assert got.advantage_probability.value == pytest.approx(5 / 6)
    assert got.n_tasks == 4 and got.n_missing_verifier == 0
    alone = P.alt_test(table, "v", "outcome", OM2W, 0.2, min_tasks=2)
    assert alone.winning_rate.value == 0.0 and [d.reviewer for d in alone.duels] == ["J1", "J2"]


def test_your_labels_as_the_candidate_hand_worked() -> None:
    """Your labels in the verifier's place, against J1 and J2 on the tasks you labelled
    (t2, t4; t1 and t3 left out and counted).

    J1: t2 (J2=0) J1 1 -> 0, you 1 -> 0; t4 (J2=1) J1 0 -> 0, you 0 -> 0: d = [0, 0].
    J2: t2 (J1=1) J2 0 -> 0, you 1 -> 1; t4 (J1=0) J2 1 -> 0, you 0 -> 1: d = [-1, -1].
    Both constant below 0.2: p = 0, both rejected: winning rate 1; advantage (1 + 1) / 2."""
    table = _table(REVIEWS, {"v": VERIFIER})
    yours, _ = P.your_labels(MINE, "outcome", OM2W)
    got = P.alt_test(table, P.YOU, "outcome", OM2W, 0.2, min_tasks=2, labels=yours)
    assert [(d.reviewer, d.p_value, d.rejected) for d in got.duels] == [
        ("J1", 0.0, True),
        ("J2", 0.0, True),
    ]
    assert got.winning_rate.value == 1.0 and got.advantage_probability.value == 1.0
    assert got.n_tasks == 2 and got.n_missing_verifier == 2


def test_you_in_the_panel_is_the_authors_procedure_with_one_more_human() -> None:
    rng = np.random.default_rng(42)
    rates, judged = set(), 0
    for trial in range(10):
        tasks = [f"s{trial}--{k:03d}" for k in range(80)]
        truth = rng.integers(0, 2, len(tasks))
        humans: dict[str, dict[str, int]] = {}
        for j in range(4):
            seen = rng.random(len(tasks)) < 0.7
            flip = rng.random(len(tasks)) < 0.15
            humans[f"J{j}"] = {
                t: int(v ^ f) for t, v, f, s in zip(tasks, truth, flip, seen, strict=True) if s
            }
        share = rng.choice([0.1, 0.5, 0.9])  # a few labels (not tested) to most tasks
        picked = [t for t in tasks if rng.random() < share]
        mine = {t: int(truth[tasks.index(t)] ^ (rng.random() < 0.1)) for t in picked}
        noise = rng.choice([0.05, 0.2, 0.4])
        llm = {t: int(v ^ (rng.random() < noise)) for t, v in zip(tasks, truth, strict=True)}
        eps = float(rng.choice([0.05, 0.15, 0.3]))
        table = _table(humans, {"v": llm})
        rows = [(t, "success" if v else "failure") for t, v in mine.items()]
        yours, _ = P.your_labels(_labels(rows), "outcome", OM2W)
        got = P.alt_test(table, "v", "outcome", OM2W, epsilon=eps, yours=yours)
        rate, adv = _authors_alt_test(llm, humans | {P.YOU: mine}, eps)
        assert got.winning_rate.value == pytest.approx(rate)
        assert got.advantage_probability.value == pytest.approx(adv)
        # your labels as the candidate: the authors' test with you as the "LLM"
        cand = P.alt_test(table, P.YOU, "outcome", OM2W, epsilon=eps, labels=yours)
        if cand.winning_rate.defined:
            rate_c, adv_c = _authors_alt_test(mine, humans, eps)
            judged += 1
            assert cand.winning_rate.value == pytest.approx(rate_c)
            assert cand.advantage_probability.value == pytest.approx(adv_c)
        rates.add(round(rate, 2))
    assert len(rates) >= 3 and judged >= 3


def test_kappa_difference_with_you_against_sklearn() -> None:
    """Ordered pairs of the panel reviewers + you, built here by hand, scored by sklearn."""
    rng = np.random.default_rng(5)
    tasks = [f"site{k % 9}--{k:03d}" for k in range(50)]
    truth = rng.integers(0, 2, len(tasks))
    humans = {
        f"J{j}": {t: int(v ^ (rng.random() < 0.2)) for t, v in zip(tasks, truth, strict=True)}
        for j in range(2)
    }
    mine = {t: int(truth[k] ^ (rng.random() < 0.1)) for k, t in enumerate(tasks) if k % 3 == 0}
    verifier = {t: int(rng.random() < 0.6) for t in tasks[2:]}  # two tasks without a label
    table = _table(humans, {"v": verifier})
    rows = [(t, "success" if v else "failure") for t, v in mine.items()]
    yours, _ = P.your_labels(_labels(rows), "outcome", OM2W)
    got = P.kappa_difference(table, "v", "outcome", OM2W, FAST, yours=yours)
    panel = humans | {P.YOU: mine}
    a_lab, b_lab, v_lab = [], [], []
    for t in tasks:
        if t not in verifier:
            continue
        raters = [r for r in panel if t in panel[r]]
        for a, b in permutations(raters, 2):
            a_lab.append(panel[a][t])
            b_lab.append(panel[b][t])
            v_lab.append(verifier[t])
    want_h = cohen_kappa_score(a_lab, b_lab)
    want_v = cohen_kappa_score(v_lab, b_lab)
    assert got.diff.b.value == pytest.approx(want_h)
    assert got.diff.a.value == pytest.approx(want_v)
    assert got.n_pairs == len(a_lab) // 2 and got.n_reviewers == 3
    assert got.n_missing_verifier == 2
    # your labels as the candidate: kappa(you, B) on the reviewer pairs of your tasks
    cand = P.kappa_difference(table, P.YOU, "outcome", OM2W, FAST, labels=yours)
    a_lab, b_lab, y_lab = [], [], []
    for t in mine:
        for a, b in permutations(humans, 2):
            a_lab.append(humans[a][t])
            b_lab.append(humans[b][t])
            y_lab.append(mine[t])
    assert cand.diff.a.value == pytest.approx(cohen_kappa_score(y_lab, b_lab))
    assert cand.diff.b.value == pytest.approx(cohen_kappa_score(a_lab, b_lab))
    assert cand.n_missing_verifier == len(tasks) - len(mine)


def test_a_candidate_with_few_or_alike_labels_gets_no_verdict() -> None:
    table = _table(REVIEWS, {"v": VERIFIER})
    yours, _ = P.your_labels(_labels([("t1", "success"), ("t2", "success")]), "outcome", OM2W)
    got = P.kappa_difference(table, P.YOU, "outcome", OM2W, FAST, labels=yours)
    assert got.verdict is None and not got.constant and "a verdict needs 10" in got.words
    rng = np.random.default_rng(2)
    tasks = [f"t{k}" for k in range(12)]
    humans = {f"J{j}": {t: int(rng.random() < 0.5) for t in tasks} for j in range(2)}
    table = _table(humans, {"v": {t: 1 for t in tasks}})
    alike, _ = P.your_labels(_labels([(t, "failure") for t in tasks]), "outcome", OM2W)
    got = P.kappa_difference(table, P.YOU, "outcome", OM2W, FAST, labels=alike)
    assert got.verdict is None and "all the same" in got.words
    # the same labels as a verifier's are "inferior" by definition
    as_verifier = P.kappa_difference(
        _table(humans, {"v": dict.fromkeys(tasks, 0)}), "v", "outcome", OM2W, FAST
    )
    assert as_verifier.verdict == P.INFERIOR and as_verifier.constant


def test_demo_records_with_your_labels(bench) -> None:
    """On the demo: the reviewers' records unchanged, then each verifier with you in the
    panel, then your labels as the candidate; the counts say what was used."""
    table = bench.verdicts
    ties = audit.ties(table)["task_id"].tolist()[:4]
    mine = _labels(
        [(ties[0], "success"), (ties[1], "failure"), (ties[2], "success"), (ties[3], "unsure")]
    )
    wanted = ("uv_outcome_success",)
    plain = P.parity_records(table, FAST, only_verifiers=wanted)
    both = P.parity_records(table, FAST, only_verifiers=wanted, labels=mine)
    assert len(both) == len(plain) + 2
    first = both[: len(plain)]
    assert [r.you for r in first] == [None] * len(plain)
    assert [r.kappa.diff.diff.value for r in first] == [r.kappa.diff.diff.value for r in plain]
    panel, cand = both[len(plain)], both[len(plain) + 1]
    assert (panel.split, panel.dimension, panel.verifier) == (OM2W, "outcome", wanted[0])
    assert panel.you == P.YourPart(P.PANEL, 3, 1, 3) and panel.reference == "your_labels"
    assert [d.reviewer for d in panel.alt.duels][-1] == P.YOU
    assert panel.kappa.n_reviewers == plain[0].kappa.n_reviewers + 1
    # three more ordered-pair sets: on each of your tasks, you with each of its reviewers
    per_task = P.blind_reviews(table, "outcome", OM2W).groupby("task_id").size()
    assert panel.kappa.n_pairs == plain[0].kappa.n_pairs + int(per_task[ties[:3]].sum())
    assert cand.verifier == P.YOU and cand.you.role == P.CANDIDATE and cand.you.n_used == 3
    assert cand.alt.n_tasks == 3 and cand.alt.passed is None  # no reviewer has 30 of yours
    assert cand.kappa.n_tasks == 3 and cand.kappa.verdict is None  # fewer than 10
    assert cand.kappa.n_missing_verifier == int((per_task >= 2).sum()) - 3
    assert set(L.LABELS) >= set(mine["label"])
    # labels of a split without a reviewer panel (internal) are counted, not tested
    internal = bench.tasks.loc[bench.tasks["split"] == "internal", "task_id"].tolist()[:2]
    extra = _labels([(internal[0], "success"), (internal[1], "unsure")], split="internal")
    process = _labels([(internal[0], "failure")], split="internal", dim="process")
    more = pd.concat([mine, extra, process], ignore_index=True)
    records = P.parity_records(table, FAST, only_verifiers=wanted, labels=more)
    assert len(records) == len(both)
    assert P.labels_not_tested(more, records) == [("internal", "outcome", 1)]
    assert P.labels_not_tested(more, plain) == [(OM2W, "outcome", 3), ("internal", "outcome", 1)]
    assert P.labels_not_tested(None, records) == []
