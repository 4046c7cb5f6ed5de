"""A small `python -m bench.coverage` in the suite: the intervals cover the truth where the
paper's headline numbers live (a low FPR with few negatives), and the old percentile
interval of the FPR, computed beside them, does not (so the check can fail)."""

from __future__ import annotations

from bench import coverage as C
from lib.vocab import Bootstrap

SCENARIOS = tuple(
    s for s in C.SCENARIOS if s.name.startswith(("low FPR", "independent", "10 sites"))
)


def test_coverage_holds_at_a_low_fpr_and_n_100() -> None:
    rows = C.run(SCENARIOS, reps=300, boot=Bootstrap(n_resamples=400), seed=2)
    got = {(r.scenario, r.unit, r.metric, r.method): r for r in rows}
    for s in [s for s in SCENARIOS if not s.n_sites]:
        exact = got[(s.name, "task", "fpr", "clopper-pearson")]
        old = got[(s.name, "task", "fpr", "percentile (before)")]
        assert exact.n_defined == 300 and exact.n_zero_width == 0
        # 300 datasets: Monte-Carlo s.e. about 0.013, so 0.90 is about 0.93 - 2.3 s.e.
        assert exact.coverage >= 0.90, exact
        if s.name.startswith("low FPR"):
            assert old.coverage < 0.75, old  # the percentile interval fails here
    for metric in ("kappa", "accuracy", "fpr", "fnr"):
        (r,) = [
            r
            for r in rows
            if r.scenario.startswith("independent")
            and r.metric == metric
            and r.method != "percentile (before)"
        ]
        assert r.coverage >= 0.90, r
    # Sites resampled as sites: the proportions' Clopper-Pearson intervals hold with 10 clusters.
    for metric in ("accuracy", "fpr", "fnr"):
        key = ("10 sites x 10, site effect", "site", metric, "clopper-pearson")
        assert got[key].coverage >= 0.90


def test_truth_is_the_population_metric() -> None:
    (s,) = [s for s in C.SCENARIOS if s.name.startswith("low FPR 0.015")]
    truth = C.truth(s)
    assert truth["fpr"] == 0.015 and abs(truth["fnr"] - 0.10) < 1e-12
    # Sites: the marginal FPR is the mean of expit(logit(0.15) + u), above 0.15 (convexity).
    (site,) = [s for s in C.SCENARIOS if s.name.startswith("10 sites")]
    assert 0.15 < C.truth(site)["fpr"] < 0.25
