"""lib.analysis.ceiling: the figures with and without contested tasks, against sklearn and
the tasks each reason flags."""

from __future__ import annotations

import pytest
from sklearn.metrics import cohen_kappa_score

from lib.analysis import audit, ceiling
from lib.vocab import Bootstrap

OM2W = "fara7b_om2w_browserbase"
BOOT = Bootstrap(n_resamples=200)


@pytest.fixture(scope="module")
def records(bench):
    return ceiling.ceiling_records(bench.verdicts, boot=BOOT)


def _uv_kappa(tasks, drop: set[str]) -> tuple[float, int]:
    t = tasks[(tasks["split"] == OM2W) & ~tasks["task_id"].isin(drop)]
    t = t.dropna(subset=["uv_outcome_success", "final_human_outcome_label"])
    k = cohen_kappa_score(
        t["final_human_outcome_label"].astype(int), t["uv_outcome_success"].astype(int)
    )
    return k, len(t)


def test_uv_kappa_without_each_reason_equals_sklearn(bench, records) -> None:
    long = audit.reason_rows(bench.verdicts)
    om2w = [r for r in records if r.split == OM2W and r.dimension == "outcome"]
    variants = {r.variant: r for r in om2w}
    assert ceiling.ALL_TASKS in variants and ceiling.WITHOUT_CONTESTED in variants
    for variant, record in variants.items():
        flagged = long[(long["split"] == OM2W) & (long["dimension"] == "outcome")]
        if variant.startswith("without:") and variant != ceiling.WITHOUT_CONTESTED:
            flagged = flagged[flagged["reason"] == variant.removeprefix("without:")]
        drop = set() if variant == ceiling.ALL_TASKS else set(flagged["task_id"])
        kappa, n = _uv_kappa(bench.tasks, drop)
        assert record.uv_kappa.value == pytest.approx(kappa), variant
        assert record.uv_n == n and record.n_excluded == len(drop), variant
        assert record.uv_kappa.ci is not None and record.uv_kappa.ci.defined
    # Without the ties, the reviewers agree more (a tie is a disagreement by definition).
    assert variants["without:tie"].reviewer_kappa.value > variants["all"].reviewer_kappa.value


def test_reviewer_kappa_on_all_tasks_is_the_band(bench, records) -> None:
    from lib.analysis.agreement import reviewer_band

    band = reviewer_band(bench.verdicts, "outcome", OM2W, BOOT)
    (rec,) = [r for r in records if (r.split, r.dimension, r.variant) == (OM2W, "outcome", "all")]
    assert rec.reviewer_kappa.value == pytest.approx(band.estimates["kappa"].value)
    from lib.analysis import parity

    assert rec.parity_verdict in parity.VERDICTS and rec.parity_words


def test_internal_has_no_reviewer_pairs(records) -> None:
    internal = [r for r in records if r.split == "internal"]
    assert internal and all(r.reviewer_kappa.value is None for r in internal)
    assert all(r.reviewer_kappa.reason == ceiling.NO_PAIRS for r in internal)
    assert all(r.uv_kappa.value is not None for r in internal)
