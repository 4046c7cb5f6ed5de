"""The verifier development loop (`lib.analysis.iterations`) on a planted history.

The planted file is built from the demo's reference labels (the final human outcome label,
both splits): each version is the reference with planted errors, so which version must be
committed, and why not, is known before the analysis runs:

- v1: 30 false negatives, 15 false positives (committed: the first version);
- v2: v1 with 12 of its false negatives fixed: kappa up, FPR the same -> committed;
- v3: v2 with 14 more false negatives fixed and 3 false positives added: kappa up, FPR up
  -> "FPR rose";
- v4: v2 with one false negative fixed: a gain far below the noise floor (v5's runs) ->
  "gain below the noise floor";
- v5: v2 with 12 false negatives fixed, 3 runs; run 2 also misses `K` positives that runs
  1 and 3 get right: exactly `K` unstable tasks, and the noise floor is the kappa range
  between run 2 and runs 1/3 -> committed (the median run's gain is above it);
- v6: v5 with 10 more false negatives -> "kappa fell".

Kappas and FPRs are checked against scikit-learn / pandas computed here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from lib.analysis import iterations as it
from lib.uploads import predictions
from lib.vocab import ALL, Bootstrap

K = 5
PLAN = {
    "v1": (True, None),
    "v2": (True, None),
    "v3": (False, it.FPR_ROSE),
    "v4": (False, it.BELOW_FLOOR),
    "v5": (True, None),
    "v6": (False, it.KAPPA_FELL),
}
BOOT = Bootstrap(n_resamples=300)


def _reference(bench) -> pd.DataFrame:
    t = bench.verdicts
    ref = t[(t["rater"] == "final_human_outcome_label") & t["label"].notna()]
    return ref[["split", "task_id", "label"]].sort_values(["split", "task_id"])


def planted(bench) -> tuple[pd.DataFrame, dict[tuple[str, int], np.ndarray], list[str]]:
    """The planted file's rows, each version-run's labels, the unstable task ids."""
    ref = _reference(bench)
    truth = ref["label"].astype(int).to_numpy()
    rng = np.random.default_rng(7)
    pos = rng.permutation(np.flatnonzero(truth == 1))
    neg = rng.permutation(np.flatnonzero(truth == 0))
    fn1, fp1 = pos[:30], neg[:15]

    def with_errors(fn: np.ndarray, fp: np.ndarray) -> np.ndarray:
        out = truth.copy()
        out[fn] = 0
        out[fp] = 1
        return out

    v1 = with_errors(fn1, fp1)
    fn2 = fn1[12:]
    v2 = with_errors(fn2, fp1)
    v3 = with_errors(fn2[14:], np.concatenate([fp1, neg[15:18]]))
    v4 = with_errors(fn2[1:], fp1)
    fn5 = fn2[12:]
    v5 = with_errors(fn5, fp1)
    unstable = pos[40 : 40 + K]  # right in v5's runs 1 and 3
    v5_run2 = with_errors(np.concatenate([fn5, unstable]), fp1)
    v6 = with_errors(np.concatenate([fn5, pos[60:70]]), fp1)
    labels = {
        ("v1", 1): v1,
        ("v2", 1): v2,
        ("v3", 1): v3,
        ("v4", 1): v4,
        ("v5", 1): v5,
        ("v5", 2): v5_run2,
        ("v5", 3): v5,
        ("v6", 1): v6,
    }
    rows = [
        pd.DataFrame(
            {
                "verifier": "loop",
                "version": version,
                "run": run,
                "split": ref["split"].to_numpy(),
                "task_id": ref["task_id"].to_numpy(),
                "outcome": values,
            }
        )
        for (version, run), values in labels.items()
    ]
    ids = ref["task_id"].to_numpy()[unstable].tolist()
    return pd.concat(rows, ignore_index=True), labels, sorted(ids)


def _csv(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


@pytest.fixture(scope="module")
def loop(bench):
    frame, labels, unstable = planted(bench)
    upload = predictions.parse_predictions(_csv(frame), "loop.csv", bench.tasks)
    result = it.iterations(bench.verdicts, upload.history, "mine:loop", None, ALL, "outcome", BOOT)
    return upload, result, labels, unstable


def test_the_rule_commits_and_refuses_as_planned(loop) -> None:
    _, result, _, _ = loop
    got = {r.version: (r.committed, r.why_not) for r in result.versions}
    assert got == PLAN
    assert [r.order for r in result.versions] == [1, 2, 3, 4, 5, 6]
    assert result.versions[3].compared_with == "v2"  # v3 was not committed
    assert result.versions[5].compared_with == "v5"
    assert result.noise_floor_known


def test_unstable_tasks_and_flip_rate_are_the_planted_ones(loop) -> None:
    _, result, _, unstable = loop
    (stab,) = result.stability
    assert stab.version == "v5" and stab.n_runs == 3
    assert sorted(t for _, t in stab.unstable_tasks) == unstable
    # each unstable task: 1 disagreeing pair of runs out of 3 pairs
    assert stab.flip_rate == pytest.approx(K * (2 / 3) / stab.n_tasks)


def test_kappas_fprs_and_noise_floor_match_sklearn(loop, bench) -> None:
    _, result, labels, _ = loop
    truth = _reference(bench)["label"].astype(int).to_numpy()
    per_run = {
        key: (
            cohen_kappa_score(truth, pred),
            pd.crosstab(truth, pred).reindex(index=[0, 1], columns=[0, 1], fill_value=0),
        )
        for key, pred in labels.items()
    }
    for record in result.versions:
        runs = [k for k in per_run if k[0] == record.version]
        kappas = [per_run[k][0] for k in runs]
        fprs = [per_run[k][1].loc[0, 1] / per_run[k][1].loc[0].sum() for k in runs]
        assert record.estimates["kappa"].value == pytest.approx(float(np.median(kappas)))
        assert record.estimates["fpr"].value == pytest.approx(float(np.median(fprs)))
        assert record.n_runs == len(runs)
    v5 = [per_run[("v5", r)][0] for r in (1, 2, 3)]
    assert result.noise_floor == pytest.approx(max(v5) - min(v5))
    v4 = next(r for r in result.versions if r.version == "v4")
    assert 0 < v4.diffs["kappa"].value < result.noise_floor
    v3 = next(r for r in result.versions if r.version == "v3")
    assert v3.diffs["kappa"].value > result.noise_floor and v3.diffs["fpr"].value > 0


def test_intervals_contain_the_values_and_name_their_method(loop) -> None:
    _, result, _, _ = loop
    for record in result.versions:
        for name in it.METRICS:
            est = record.estimates[name]
            assert est.ci is not None and est.ci.defined
            assert est.ci.low - 1e-9 <= est.value <= est.ci.high + 1e-9
        if record.n_runs > 1:
            assert record.estimates["kappa"].ci.method == it.MEDIAN_METHOD
            assert record.spreads["kappa"] == pytest.approx(result.noise_floor)
    assert result.versions[1].diffs["kappa"].ci.defined


def test_version_changes_gained_lost_and_mcnemar(loop, bench) -> None:
    _, result, _, _ = loop
    changes = {c.version: c for c in result.changes}
    assert len(changes["v2"].gained) == 12 and not changes["v2"].lost
    assert len(changes["v6"].lost) == 10 and not changes["v6"].gained
    # 10 discordant pairs all one way: exact two-sided p = 2 / 2**10
    assert changes["v6"].mcnemar_p == pytest.approx(2 / 2**10)


def test_without_repeated_runs_the_floor_is_unknown_and_zero(bench) -> None:
    frame, _, _ = planted(bench)
    frame = frame[frame["run"] == 1]
    upload = predictions.parse_predictions(_csv(frame), "loop.csv", bench.tasks)
    result = it.iterations(
        bench.verdicts, upload.history, "mine:loop", None, ALL, "outcome", BOOT, intervals=False
    )
    assert not result.noise_floor_known and result.noise_floor == 0.0
    assert result.noise_words == it.NO_REPEATS
    v4 = next(r for r in result.versions if r.version == "v4")
    assert v4.committed  # a gain of one task beats a floor of 0
    assert result.stability == []


def test_the_other_pages_get_the_last_version_lowest_run(loop) -> None:
    upload, _, labels, _ = loop
    rows = upload.verdicts[upload.verdicts["dimension"] == "outcome"]
    assert upload.raters == ["mine:loop"]
    assert rows["label"].astype(int).sum() == labels[("v6", 1)].sum()
    assert upload.history["version"].nunique() == 6
    assert any("last version" in n for n in upload.notes)


def test_a_file_without_version_columns_behaves_as_before(bench) -> None:
    frame, _, _ = planted(bench)
    plain = frame[(frame["version"] == "v2")].drop(columns=["version", "run"])
    before = predictions.parse_predictions(_csv(plain), "p.csv", bench.tasks)
    assert before.history is None
    one = predictions.parse_predictions(_csv(plain.assign(version="a")), "p.csv", bench.tasks)
    pd.testing.assert_frame_equal(before.verdicts, one.verdicts)
    assert one.history is not None and len(one.history) == len(one.verdicts)


def _capped(frame: pd.DataFrame, **kw) -> str:
    with pytest.raises(predictions.PredictionsError) as info:
        predictions.parse_predictions(_csv(frame), "big.csv", kw.pop("tasks"), **kw)
    return str(info.value)


def test_version_and_run_bounds(bench) -> None:
    ref = _reference(bench).head(3)
    base = pd.DataFrame({"task_id": ref["task_id"].to_numpy(), "outcome": 1})
    many = pd.concat([base.assign(version=f"v{i}") for i in range(51)])
    assert "51 versions" in _capped(many, tasks=bench.tasks)
    runs = pd.concat([base.assign(version="a", run=r) for r in range(1, 7)])
    assert "6 runs" in _capped(runs, tasks=bench.tasks)
    ok = pd.concat([base.assign(version="a", run=r) for r in range(1, 4)])
    message = _capped(ok, tasks=bench.tasks, held_version_runs=198)
    assert "limit is 200 per session" in message
    bad = base.assign(version="a", run=["1", "1.5", "x"])
    upload = predictions.parse_predictions(_csv(bad), "r.csv", bench.tasks)
    assert upload.dropped["row"].tolist() == [2, 3]
    assert predictions.version_runs(upload.history) == 1


def test_duplicates_are_per_version_and_run(bench) -> None:
    ref = _reference(bench).head(2)
    base = pd.DataFrame({"task_id": ref["task_id"].to_numpy(), "outcome": 1})
    frame = pd.concat(
        [base.assign(version="a"), base.assign(version="b"), base.assign(version="b")]
    )
    upload = predictions.parse_predictions(_csv(frame), "d.csv", bench.tasks)
    assert upload.dropped["row"].tolist() == [3, 4, 5, 6]
    assert 'version "b", run 1' in upload.dropped["reason"].iloc[0]


def test_the_reports_keys_equal_the_plan(bench, tmp_path) -> None:
    from lib import report

    frame, _, unstable = planted(bench)
    path = tmp_path / "loop.csv"
    path.write_bytes(_csv(frame))
    uploads = report.load_predictions(bench, [path])
    out = report.build_report(bench, uploads, Bootstrap(n_resamples=200))
    rows = [
        r
        for r in out["iterations"]
        if r["split"] == ALL and r["reference"] == "final_human_outcome_label"
    ]
    assert {r["version"]: (r["committed"], r["why_not"]) for r in rows} == PLAN
    assert all(r["kappa_ci"] is not None and r["n_runs"] >= 1 for r in rows)
    (stab,) = out["stability"]
    assert sorted(stab["unstable_tasks"]) == unstable and stab["n_runs"] == 3
    changes = {c["version"]: c for c in out["version_changes"]}
    assert len(changes["v6"]["lost"]) == 10 and changes["v6"]["previous"] == "v5"
    refs = {r["reference"] for r in out["iterations"]}
    assert refs == {"final_human_outcome_label", "majority_human_outcome_vote"}
    assert {r["split"] for r in out["iterations"]} == {"fara7b_om2w_browserbase", "internal", ALL}


def test_the_chart_frame_steps_at_committed_versions(loop) -> None:
    from lib.charts import iterations as charts

    _, result, _, _ = loop
    frame = charts.loop_frame(result)
    kappa = dict(zip(frame["version"], frame["kappa"], strict=True))
    # the step line holds the last committed kappa: v3 and v4 (rejected) keep v2's
    assert frame["committed_kappa"].tolist()[1:4] == [kappa["v2"]] * 3
    assert frame.set_index("version").loc["v6", "committed_kappa"] == kappa["v5"]
    assert frame["status"].tolist() == [
        it.COMMITTED,
        it.COMMITTED,
        it.FPR_ROSE,
        it.BELOW_FLOOR,
        it.COMMITTED,
        it.KAPPA_FELL,
    ]
    spec = charts.loop_chart(frame).to_dict()
    assert spec["autosize"]["type"] == "fit-x"


def test_the_median_over_runs_equals_numpy_nanmedian() -> None:
    """`_median` (by a sort) equals `np.nanmedian` bit for bit on 1 to 5 runs with undefined
    runs, and is NaN (with no warning) where every run is undefined."""
    import warnings

    rng = np.random.default_rng(7)
    for runs in range(1, 6):
        values = rng.random((500, runs))
        values[rng.random(values.shape) < 0.3] = np.nan
        values[0] = np.nan
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # nanmedian's all-NaN row
            want = np.nanmedian(values, axis=-1)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = it._median(values)
        np.testing.assert_array_equal(got, want)
        assert np.isnan(got[0])
