"""lib.table.clusters: cluster keys, labels per row, the cluster bootstrap of lib.metrics checked
against a plain loop and a hand-enumerated case, and the design effect."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.stats import chisquare
from statsmodels.stats.proportion import proportion_confint

from lib import metrics as M
from lib.table import clusters as C
from tests.helpers import cluster_boot as plain

# ---------------------------------------------------------------------------------------
# Cluster keys
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("task_id", "key"),
    [
        # the examples of DATASET.md
        ("Adidas--11857213", "Adidas"),
        ("alltrails_find_23", "alltrails_find"),
        ("github_repo_data_34", "github_repo"),
        # several trailing numbers, an inner "_data", a site name with dashes
        ("amazon_cart_14_5", "amazon_cart"),
        ("foo_data_bar_3", "foo_data_bar"),
        ("Home-Depot--0a1b2c3d", "Home-Depot"),
        ("a--b--c", "a--b"),
        # unicode family / site names
        ("Café--1a2b3c4d", "Café"),
        ("名前_12", "名前"),
        # unparseable: the id itself
        ("foo_data", "foo_data"),
        ("_12", "_12"),
        ("--abc", "--abc"),
        ("abc--", "abc--"),
        ("x_١٢", "x_١٢"),  # Arabic-Indic digits are not task numbers
        ("plain", "plain"),
        (123, "123"),
    ],
)
def test_cluster_key(task_id: object, key: str) -> None:
    assert C.cluster_key(task_id) == key


@pytest.mark.parametrize("missing", [None, "", "   ", float("nan"), pd.NA, np.nan])
def test_cluster_key_missing_ids(missing: object) -> None:
    assert C.cluster_key(missing) == C.MISSING_ID


def test_cluster_key_never_raises_on_random_text() -> None:
    rng = np.random.default_rng(0)
    alphabet = [*"ab_-0123456789 ééß名\u2028\x00", "--", "_data", "_1"]
    for _ in range(2000):
        text = "".join(rng.choice(alphabet, size=rng.integers(0, 12)))
        key = C.cluster_key(text)
        assert isinstance(key, str) and key
        # a key is the id itself or a part of it (site names are trimmed)
        assert key in text or key == C.MISSING_ID


def test_cluster_labels_modes() -> None:
    frame = pd.DataFrame(
        {
            "split": ["om2w", "om2w", "internal", "internal", "internal", "internal"],
            "task_id": ["Adidas--1", "Adidas--2", "github_repo_data_3", "github_repo_4", None, ""],
        },
        index=[10, 11, 12, 13, 14, 15],
    )
    task = C.cluster_labels(frame, "task")
    site = C.cluster_labels(frame, "site")
    assert list(task.index) == list(frame.index) and list(site.index) == list(frame.index)
    assert task.tolist()[:4] == ["Adidas--1", "Adidas--2", "github_repo_data_3", "github_repo_4"]
    assert site.tolist()[:4] == ["Adidas", "Adidas", "github_repo", "github_repo"]
    # rows without an id are their own clusters, never missing, never merged
    for labels in (task, site):
        assert labels.notna().all()
        assert labels.iloc[4] != labels.iloc[5]
        assert labels.iloc[4].startswith(C.MISSING_ID)
    with pytest.raises(ValueError, match="cluster mode"):
        C.cluster_labels(frame, "website")
    assert C.cluster_labels(frame.iloc[:0], "site").empty


def test_mirror_ids_parse_as_the_dataset_says(bench) -> None:
    tasks = bench.tasks
    keys = tasks["task_id"].map(C.cluster_key)
    om2w = tasks["split"] == "fara7b_om2w_browserbase"
    # om2w: the key is the site name, and the id is "<key>--<suffix>"
    assert all(t.startswith(k + "--") for t, k in zip(tasks.task_id[om2w], keys[om2w], strict=True))
    # internal: the key is a proper prefix, the rest is (_data)?(_digits)+
    rest = [t[len(k) :] for t, k in zip(tasks.task_id[~om2w], keys[~om2w], strict=True)]
    assert all(pd.Series(rest).str.fullmatch(r"(_data)?(_[0-9]+)+"))
    # several tasks share a cluster (otherwise the site bootstrap would change nothing)
    assert keys[om2w].nunique() < om2w.sum() and keys[~om2w].nunique() < (~om2w).sum()


# ---------------------------------------------------------------------------------------
# The cluster bootstrap of lib.metrics against a plain loop
# ---------------------------------------------------------------------------------------


def _clustered_data(seed: int, n_sites: int = 25) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Sites of 1-8 tasks, site-level verifier quality, some missing labels."""
    rng = np.random.default_rng(seed)
    pred, ref, sites = [], [], []
    for s in range(n_sites):
        size = int(rng.integers(1, 9))
        quality = rng.choice([0.3, 0.8, 1.0])
        for _ in range(size):
            r = float(rng.random() < 0.5)
            p = r if rng.random() < quality else 1.0 - r
            pred.append(p)
            ref.append(r)
            sites.append(f"site{s:02d}")
    pred_a, ref_a = np.array(pred), np.array(ref)
    pred_a[rng.random(pred_a.size) < 0.05] = np.nan
    ref_a[rng.random(ref_a.size) < 0.05] = np.nan
    return pred_a, ref_a, sites


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cluster_bootstrap_equals_plain_loop(seed: int) -> None:
    pred, ref, sites = _clustered_data(seed)
    names = ("accuracy", "kappa", "fpr", "fnr")
    lib = M.bootstrap_intervals(pred, ref, sites, names, boot=M.Bootstrap(300, seed + 7))
    # kappa: the percentile loop; accuracy, FPR, FNR: Clopper-Pearson on the effective n (issue 28)
    loop = plain.plain_any(pred, ref, sites, names, n_resamples=300, seed=seed + 7)
    for name in names:
        assert lib[name].bounds == pytest.approx(loop[name], abs=1e-12), name
    # and binary_report (what pages call) gives the same intervals
    report = M.binary_report(pred, ref, sites, boot=M.Bootstrap(300, seed + 7))
    for name in names:
        assert report["ci"][name].bounds == pytest.approx(loop[name], abs=1e-12), name
    assert report["counts"]["n_clusters"] == len(plain.group_rows(pred, ref, sites))


def test_cluster_bootstrap_is_not_a_row_bootstrap() -> None:
    """Guard against a silent fallback to rows: site and row draws give different intervals."""
    pred, ref, sites = _clustered_data(0)
    by_site = M.bootstrap_intervals(pred, ref, sites, ["accuracy"], boot=M.Bootstrap(300, 0))
    by_row = M.bootstrap_intervals(pred, ref, None, ["accuracy"], boot=M.Bootstrap(300, 0))
    assert by_site["accuracy"].bounds != by_row["accuracy"].bounds


# ---------------------------------------------------------------------------------------
# A hand-worked case: three clusters, every resample enumerated
# ---------------------------------------------------------------------------------------

# Cluster A: 2 rows, both right; B: 1 row, wrong; C: 2 rows, one right. A resample with
# multiplicities (a, b, c), a + b + c = 3, has accuracy (2a + c) / (2a + b + 2c) and
# probability 3! / (a! b! c!) / 27.
HAND = {
    "A": [(1.0, 1.0), (0.0, 0.0)],
    "B": [(1.0, 0.0)],
    "C": [(1.0, 1.0), (1.0, 0.0)],
}


def _exact_distribution() -> dict[Fraction, Fraction]:
    dist: Counter[Fraction] = Counter()
    for draw in itertools.product("ABC", repeat=3):  # 27 equally likely ordered draws
        rows = [row for c in draw for row in HAND[c]]
        dist[Fraction(sum(p == r for p, r in rows), len(rows))] += Fraction(1, 27)
    return dict(dist)


def _hand_arrays() -> tuple[list[float], list[float], list[str]]:
    pred = [p for c in "ABC" for p, _ in HAND[c]]
    ref = [r for c in "ABC" for _, r in HAND[c]]
    ids = [c for c in "ABC" for _ in HAND[c]]
    return pred, ref, ids


def test_hand_worked_distribution() -> None:
    dist = _exact_distribution()
    # written out by hand (see HAND): 9 distinct accuracies
    assert dist == {
        Fraction(1): Fraction(1, 27),  # AAA
        Fraction(0): Fraction(1, 27),  # BBB
        Fraction(1, 2): Fraction(4, 27),  # CCC, ABB
        Fraction(4, 5): Fraction(3, 27),  # AAB
        Fraction(5, 6): Fraction(3, 27),  # AAC
        Fraction(1, 4): Fraction(3, 27),  # BBC
        Fraction(2, 3): Fraction(3, 27),  # ACC
        Fraction(2, 5): Fraction(3, 27),  # BCC
        Fraction(3, 5): Fraction(6, 27),  # ABC
    }
    pred, ref, ids = _hand_arrays()
    counts = M.bootstrap_counts(pred, ref, ids, boot=M.Bootstrap(4000, 0))
    acc = M.metric_arrays(counts, ["accuracy"])["accuracy"]
    # every resample pools whole clusters: its accuracy is one of the 9 values
    values = sorted(dist)
    nearest = [min(values, key=lambda v, a=a: abs(float(v) - a)) for a in acc]
    assert max(abs(float(v) - a) for v, a in zip(nearest, acc, strict=True)) < 1e-12
    observed = Counter(nearest)
    freq = [observed[v] for v in values]
    expected = [float(dist[v]) * acc.size for v in values]
    assert chisquare(freq, expected).pvalue > 0.001
    assert acc.mean() == pytest.approx(float(sum(v * p for v, p in dist.items())), abs=0.01)


def test_hand_worked_intervals() -> None:
    """Exact percentiles of the enumerated distribution, far from any jump of its CDF."""
    pred, ref, ids = _hand_arrays()
    point = M.binary_report(pred, ref, ids, boot=M.Bootstrap(2000, 0))
    assert point["metrics"]["accuracy"].value == pytest.approx(3 / 5)
    assert point["counts"]["n_clusters"] == 3
    # The engine's resamples (what every percentile interval is taken from): at 95%,
    # P(accuracy = 0) = P(= 1) = 1/27 > 2.5%, so the percentile interval is [0, 1]
    boot = M.metric_arrays(M.bootstrap_counts(pred, ref, ids, M.Bootstrap(2000, 0)))["accuracy"]
    assert tuple(np.quantile(boot, [0.025, 0.975])) == (0.0, 1.0)
    # 80%: CDF(0) = 1/27 < 10% < CDF(1/4) = 4/27 and CDF(4/5) = 23/27 < 90% < CDF(5/6) = 26/27
    assert tuple(np.quantile(boot, [0.1, 0.9])) == pytest.approx((1 / 4, 5 / 6), abs=1e-12)
    # resampling the 5 rows instead gives a different (here: narrower) distribution
    rows = M.metric_arrays(M.bootstrap_counts(pred, ref, None, M.Bootstrap(2000, 0)))["accuracy"]
    assert np.ptp(np.quantile(rows, [0.1, 0.9])) < np.ptp(np.quantile(boot, [0.1, 0.9]))
    # Accuracy's interval is Clopper-Pearson on the effective n: per cluster (right, rows) = (2, 2),
    # (0, 1), (1, 2); p = 0.6, v = 1.04 / 25 < p(1-p)/5, so deff = 1; 3 clusters < 5 rows:
    # n_e = 5 (t_4 / t_2)^2 = 2.081 (hand: 5 x (2.776 / 4.303)^2).
    n_e = 5 * (stats.t.ppf(0.975, 4) / stats.t.ppf(0.975, 2)) ** 2
    assert n_e == pytest.approx(2.081, abs=1e-3)
    want = proportion_confint(0.6 * n_e, n_e, alpha=0.05, method="beta")
    assert point["ci"]["accuracy"].bounds == pytest.approx(want, abs=1e-12)
    assert point["ci"]["accuracy"].n_effective == pytest.approx(n_e)


def test_one_site_interval_is_undefined() -> None:
    """Four tasks of one website: four task clusters give an interval, one site cluster
    does not (lib.metrics refuses a one-cluster interval rather than give [v, v])."""
    frame = pd.DataFrame({"task_id": [f"Adidas--{i}" for i in range(4)]})
    pred, ref = [1, 0, 1, 0], [1, 1, 0, 0]
    by_task = M.bootstrap_intervals(
        pred, ref, C.cluster_labels(frame, "task"), ["accuracy"], boot=M.Bootstrap(200)
    )
    by_site = M.bootstrap_intervals(
        pred, ref, C.cluster_labels(frame, "site"), ["accuracy"], boot=M.Bootstrap(200)
    )
    assert by_task["accuracy"].defined
    assert by_site["accuracy"].reason == M.ONE_CLUSTER


# ---------------------------------------------------------------------------------------
# Design effect
# ---------------------------------------------------------------------------------------


def _sites_case(
    n_sites: int, size: int, wrong: Callable[[int, int], bool]
) -> tuple[list, list, list[str]]:
    rng = np.random.default_rng(5)
    pred, ref, ids = [], [], []
    for s in range(n_sites):
        for t in range(size):
            r = float(rng.random() < 0.5)
            pred.append(1.0 - r if wrong(s, t) else r)
            ref.append(r)
            ids.append(f"Site{s:02d}--{t:08x}")
    return pred, ref, ids


def test_site_interval_wider_when_errors_cluster_by_site() -> None:
    # 6 of 20 sites are wrong on every task, the others right on every task
    pred, ref, ids = _sites_case(20, 5, lambda s, t: s % 10 < 3)
    effects = C.design_effects(pred, ref, ids, ("accuracy", "kappa"), M.Bootstrap(2000, 0))
    for name in ("accuracy", "kappa"):
        d = effects[name]
        assert C.interval_width(d.site_ci) >= C.interval_width(d.task_ci), name
        # clusters of 5 perfectly correlated tasks: variance x ~5, width x ~sqrt(5)
        assert 1.6 < d.ratio.value < 3.0, (name, d.ratio)
        assert d.material
    # the same through the report function pages call, with site labels
    sites = pd.Series(ids).map(C.cluster_key)
    assert sites.nunique() == 20
    by_site = M.binary_report(pred, ref, sites)["ci"]["accuracy"]
    by_task = M.binary_report(pred, ref, ids)["ci"]["accuracy"]
    assert C.interval_width(by_site) > 1.6 * C.interval_width(by_task)


def test_site_interval_narrower_when_every_site_is_alike() -> None:
    # every site has exactly one wrong task of five: every site resample has accuracy 0.8,
    # so the percentile bootstrap over sites has no width (the engine's draws show it)
    pred, ref, ids = _sites_case(20, 5, lambda s, t: t == 0)
    sites = pd.Series(ids).map(C.cluster_key).to_numpy()
    draws = M.bootstrap_counts(pred, ref, sites, M.Bootstrap(2000, 0))
    assert np.ptp(M.metric_arrays(draws, ["accuracy"])["accuracy"]) == pytest.approx(0.0)
    # Accuracy's Clopper-Pearson interval never claims more than independent rows (the design
    # effect is truncated at 1): the site interval is the task one, widened a little by
    # the t correction for 20 clusters, so the site/task ratio is near 1, not 0.
    d = C.design_effects(pred, ref, ids, ("accuracy",), M.Bootstrap(2000, 0))["accuracy"]
    assert d.site_ci.n_effective == pytest.approx(
        100 * (stats.t.ppf(0.975, 99) / stats.t.ppf(0.975, 19)) ** 2
    )
    assert 1.0 < d.ratio.value < 1.1 and not d.material


def test_design_effect_rule_and_undefined_cases() -> None:
    def iv(lo: float | None, hi: float | None) -> M.Interval:
        return M.Interval(lo, hi, None if lo is not None else "n = 0", 2000, 2000)

    assert C.design_effect(iv(0.4, 0.6), iv(0.4, 0.64)).ratio.value == pytest.approx(1.2)
    assert C.design_effect(iv(0.4, 0.6), iv(0.4, 0.64)).material  # 1.2 (float: 1.2000000000000002)
    assert not C.design_effect(iv(0.4, 0.6), iv(0.4, 0.638)).material  # 1.19
    assert C.design_effect(iv(0.4, 0.6), iv(0.42, 0.58)).material  # 0.8
    assert not C.design_effect(iv(0.4, 0.6), iv(0.41, 0.58)).material  # 0.85
    assert C.design_effect(iv(0.4, 0.6), iv(0.42, 0.57)).material  # 0.75
    undefined = C.design_effect(iv(None, None), iv(0.4, 0.6), "fpr")
    assert undefined.ratio.value is None and "task interval undefined" in undefined.ratio.reason
    assert not undefined.material
    zero = C.design_effect(iv(0.5, 0.5), iv(0.4, 0.6))
    assert zero.ratio.value is None and "zero width" in zero.ratio.reason


def test_design_effect_near_one_for_independent_errors() -> None:
    """Errors independent of the site: the two intervals agree within the rule's band."""
    rng = np.random.default_rng(11)
    n = 600
    ref = (rng.random(n) < 0.5).astype(float)
    pred = np.where(rng.random(n) < 0.8, ref, 1 - ref)
    ids = [f"S{i // 4:03d}--{i:08x}" for i in range(n)]  # 150 sites of 4 tasks
    d = C.design_effects(pred, ref, ids, ("accuracy",), M.Bootstrap(2000, 0))["accuracy"]
    assert C.MATERIAL_LOW < d.ratio.value < C.MATERIAL_HIGH
    assert not d.material
    assert math.isfinite(d.ratio.value)
