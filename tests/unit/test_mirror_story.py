"""The demo mirror tells the paper's whole story, and its score files have the real format.

Every number is computed here from the written parquet (pyarrow, pandas, `json`) with
scikit-learn and scipy, not with the app's code, except the site/task interval width
ratio, which uses the project's cluster bootstrap (`lib.table.clusters.design_effects`) beside
an independent numpy re-run. The targets are the paper's (DATASET.md): Universal Verifier
process kappa 0.59 internal (FPR 0.04), about 0.43 om2w; reviewers 0.53-0.57 on outcome,
0.45 on process labels and less on scores cut at 0.8; Pearson r 0.61 (verifier score vs
reviewer score) and 0.62 (reviewer vs reviewer); blind -> informed verifier-vs-reviewer
kappa 0.39 -> 0.63 with 16.6% of labels flipped, mostly success -> failure.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from scipy.stats import pearsonr
from sklearn.metrics import cohen_kappa_score

from lib.mirror import INTERNAL, OM2W

TRAJ_COLUMNS = [
    "task_id",
    "init_url",
    "web_surfer_log",
    "n_screenshots",
    "gpt_eval_json",
    "uv_rubric_score",
    "uv_outcome_success",
    "final_human_outcome_label",
    "final_human_process_label",
    "median_human_rubric_score_agnostic",
    "majority_human_outcome_vote",
]
STEP_KEYS = {
    "step1_num_screenshots",
    "step2_relevance_scores",
    "step3_grouped_screenshots",
    "step4_evidence_by_criterion",
    "step5_reality_check",
    "step6_rescoring_summary",
    "step7_penalty_criteria",
    "step7_requires_penalty",
    "step7_reasoning",
    "step8_outcome_verification",
}
EVIDENCE_KEYS = {
    "screenshot_idx",
    "screenshot_evidence",
    "criterion_analysis",
    "discrepancies",
    "environment_issues_confirmed",
}
ITEM_KEYS = {
    "criterion",
    "description",
    "max_points",
    "earned_points",
    "justification",
    "reality_notes",
    "applicable_evidence",
    "post_image_earned_points",
    "post_image_justification",
}


def _read(root: Path, config: str, split: str, columns: list[str] | None = None) -> pd.DataFrame:
    files = sorted((root / config).glob(f"{split}-*.parquet"))
    return pd.concat(
        [pq.read_table(f, columns=columns).to_pandas() for f in files], ignore_index=True
    )


@pytest.fixture(scope="module")
def traj(mirror_dir: Path) -> dict[str, pd.DataFrame]:
    return {s: _read(mirror_dir, "trajectories", s, TRAJ_COLUMNS) for s in (OM2W, INTERNAL)}


@pytest.fixture(scope="module")
def ann(mirror_dir: Path) -> dict[str, pd.DataFrame]:
    return {s: _read(mirror_dir, "annotations", s) for s in (OM2W, INTERNAL)}


@pytest.fixture(scope="module")
def score_files(traj) -> pd.DataFrame:
    """One row per internal task the verifier scored: its parsed score file."""
    rows = []
    for _, row in traj[INTERNAL].iterrows():
        if not row.gpt_eval_json:
            continue
        outer = json.loads(row.gpt_eval_json)
        if not outer["gpt_response_text"]:
            continue
        rows.append(
            {
                "task_id": row.task_id,
                "n_screenshots": int(row.n_screenshots),
                "uv_rubric_score": row.uv_rubric_score,
                "final_human_outcome_label": row.final_human_outcome_label,
                "web_surfer_log": row.web_surfer_log,
                "score": outer["score"],
                "inner": json.loads(outer["gpt_response_text"]),
            }
        )
    return pd.DataFrame(rows)


def _binary(label: pd.Series) -> pd.Series:
    return (label.str.strip().str.lower() == "correct").astype(int)


def _pairs(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """Every pair of distinct reviewers of one task, in both orders (the pooled reading)."""
    both = frame.merge(frame, on="task_id").query("annotator_x != annotator_y")
    return both[[f"{column}_x", f"{column}_y"]].dropna()


# ----------------------------------------------------------------------------- the story


def _process_confusion(t: pd.DataFrame) -> tuple[float, float, float]:
    d = t[["uv_rubric_score", "final_human_process_label"]].dropna()
    pred = (d.uv_rubric_score.astype("float64") >= 0.8 - 1e-6).astype(int)
    ref = d.final_human_process_label.astype(int)
    fpr = float(pred[ref == 0].mean())
    fnr = float(1 - pred[ref == 1].mean())
    return cohen_kappa_score(ref, pred), fpr, fnr


def test_verifier_process_kappa_is_the_papers(traj) -> None:
    kappa, fpr, fnr = _process_confusion(traj[INTERNAL])
    assert abs(kappa - 0.59) <= 0.05 and fpr <= 0.06, (kappa, fpr, fnr)
    assert abs(fnr - 0.24) <= 0.04, fnr  # the paper's internal process FNR (issue 37)
    kappa_om2w, _, _ = _process_confusion(traj[OM2W])
    assert abs(kappa_om2w - 0.43) <= 0.05, kappa_om2w


@pytest.mark.parametrize(("split", "kappa", "fpr"), [(INTERNAL, 0.64, 0.01), (OM2W, 0.58, 0.08)])
def test_verifier_outcome_kappa_stays(traj, split: str, kappa: float, fpr: float) -> None:
    d = traj[split][["uv_outcome_success", "final_human_outcome_label"]].dropna().astype(int)
    got = cohen_kappa_score(d.final_human_outcome_label, d.uv_outcome_success)
    got_fpr = d.uv_outcome_success[d.final_human_outcome_label == 0].mean()
    assert abs(got - kappa) <= 0.03 and abs(got_fpr - fpr) <= 0.02, (got, got_fpr)


def test_reviewers_agree_as_in_table_14(ann) -> None:
    a = ann[OM2W].assign(
        outcome=lambda d: _binary(d.human_judgement_outcome),
        process=lambda d: _binary(d.human_judgement_process),
        cut=lambda d: np.where(
            d.human_process_score.isna(), np.nan, (d.human_process_score >= 0.8).astype(float)
        ),
    )
    outcome = _pairs(a, "outcome")
    assert 0.53 <= cohen_kappa_score(outcome.outcome_x, outcome.outcome_y) <= 0.57
    labels = _pairs(a, "process")
    label_kappa = cohen_kappa_score(labels.process_x, labels.process_y)
    assert 0.40 <= label_kappa <= 0.50, label_kappa
    cut = _pairs(a, "cut")
    cut_kappa = cohen_kappa_score(cut.cut_x, cut.cut_y)
    assert cut_kappa < label_kappa - 0.05, (cut_kappa, label_kappa)
    # so a reviewer's binary label is not always their score >= 0.8
    scored = a.dropna(subset=["human_process_score"])
    differs = (scored.process != scored.cut).mean()
    assert 0.05 <= differs <= 0.35, differs


def test_continuous_scores_correlate_as_in_the_paper(traj, ann) -> None:
    a = ann[OM2W].dropna(subset=["human_process_score"])
    uv = traj[OM2W].set_index("task_id").uv_rubric_score.astype("float64")
    both = a.assign(uv=a.task_id.map(uv)).dropna(subset=["uv"])
    r_uv = pearsonr(both.uv, both.human_process_score.astype("float64")).statistic
    assert 0.5 <= r_uv <= 0.7 and len(both) >= 190, (r_uv, len(both))
    pairs = _pairs(a, "human_process_score").astype("float64")
    r_rr = pearsonr(pairs.human_process_score_x, pairs.human_process_score_y).statistic
    assert 0.5 <= r_rr <= 0.7, r_rr
    mad = (pairs.human_process_score_x - pairs.human_process_score_y).abs().mean()
    assert 0.15 <= mad <= 0.3, mad  # the paper: 0.21


def test_informed_stage_moves_reviewers_toward_the_verifier(traj, ann) -> None:
    """Table 13's reading: the verifier against each reviewer, blind -> informed."""
    uv = traj[OM2W].set_index("task_id").uv_outcome_success
    a = ann[OM2W].assign(shown=lambda d: d.task_id.map(uv))
    a = a[a.informed_outcome_agreement.str.lower().isin(["agree", "disagree"])]
    a = a.dropna(subset=["shown"])
    shown = a.shown.astype(int).to_numpy()
    blind = _binary(a.human_judgement_outcome).to_numpy()
    agree = (a.informed_outcome_agreement.str.lower() == "agree").to_numpy()
    informed = np.where(agree, shown, 1 - shown)
    kappa_blind = cohen_kappa_score(shown, blind)
    kappa_informed = cohen_kappa_score(shown, informed)
    assert 0.55 <= kappa_informed <= 0.70, kappa_informed
    assert kappa_informed - kappa_blind >= 0.15, (kappa_blind, kappa_informed)
    flipped = informed != blind
    assert 0.14 <= flipped.mean() <= 0.19, flipped.mean()
    success_to_failure = int((flipped & (blind == 1)).sum())
    failure_to_success = int((flipped & (blind == 0)).sum())
    # both ways, mostly toward failure (the paper: 31 and 3 of 34)
    assert success_to_failure >= 0.85 * flipped.sum(), (success_to_failure, flipped.sum())
    assert 2 <= failure_to_success <= 5, failure_to_success
    # the verdict's FNR falls from blind to informed (the paper: 0.62 -> 0.35)
    fnr_blind = 1 - shown[blind == 1].mean()
    fnr_informed = 1 - shown[informed == 1].mean()
    assert fnr_blind >= 0.5 and 0.25 <= fnr_informed <= 0.40, (fnr_blind, fnr_informed)


def _strict_blind_majority(a: pd.DataFrame) -> pd.Series:
    """Per om2w task, the majority of its blind outcome labels; 1:1 ties left out."""
    votes = (
        a.assign(v=_binary(a.human_judgement_outcome)).groupby("task_id").v.agg(["sum", "count"])
    )
    strict = votes[2 * votes["sum"] != votes["count"]]
    return (2 * strict["sum"] > strict["count"]).astype(int)


def test_table13_blind_fpr_against_the_blind_majority(traj, ann) -> None:
    """Table 13's blind FPR (the paper: about 0.04), against the strict majority of the
    blind reviewers: the verifier's false passes against the final label (FPR 0.08) fall on
    1:1 ties adjudicated failure, not on runs the blind reviewers failed (issue 37)."""
    majority = _strict_blind_majority(ann[OM2W])
    t = traj[OM2W].set_index("task_id")
    uv = t.uv_outcome_success.dropna().astype(int)
    both = pd.concat([uv.rename("uv"), majority.rename("majority")], axis=1, join="inner")
    assert len(both) >= 80 and (both.majority == 0).sum() >= 50, len(both)
    fpr = both.uv[both.majority == 0].mean()
    assert 0.01 <= fpr <= 0.07, fpr
    fnr = 1 - both.uv[both.majority == 1].mean()
    assert 0.45 <= fnr <= 0.70, fnr  # the paper: 0.62 (against each reviewer)
    # the stored majority column says the same on the non-tie tasks
    stored = t.majority_human_outcome_vote.reindex(majority.index).astype(int)
    assert (stored == majority).all()
    # the false passes against the final label: most on ties adjudicated failure
    final = t.final_human_outcome_label.reindex(uv.index).astype(int)
    false_pass = uv.index[(uv == 1) & (final == 0)]
    on_ties = sum(task not in majority.index for task in false_pass)
    assert len(false_pass) >= 4 and on_ties >= len(false_pass) / 2, (len(false_pass), on_ties)


def test_table13_blind_rates_against_each_reviewer(traj, ann) -> None:
    """The Shifts page's reading (each reviewer's blind label): FPR lowered from 0.148 to
    about 0.12 by the same change. It cannot reach 0.04 here: the verifier passes 27 om2w
    tasks (kappa 0.58, FPR 0.08 against the final label), whose ~54 blind reviews are its
    true or false passes, so blind FPR and FNR trade one for one; the paper's 0.04 and 0.62
    imply about 17 passed tasks (docs/data.md)."""
    uv = traj[OM2W].set_index("task_id").uv_outcome_success
    a = ann[OM2W].assign(shown=lambda d: d.task_id.map(uv)).dropna(subset=["shown"])
    a = a[a.informed_outcome_agreement.str.lower().isin(["agree", "disagree"])]
    shown = a.shown.astype(int).to_numpy()
    blind = _binary(a.human_judgement_outcome).to_numpy()
    fpr = shown[blind == 0].mean()
    assert 0.08 <= fpr <= 0.13, fpr
    kappa = cohen_kappa_score(blind, shown)
    assert 0.33 <= kappa <= 0.45, kappa  # the paper: 0.39


def test_table13_per_reviewer_rates_trade_one_for_one(traj, ann) -> None:
    """Why the demo cannot show the paper's blind FPR 0.04 and FNR 0.62 against each reviewer
    together (docs/data.md, "Table 13"): every blind review of a task the verifier passed is
    one of its true or false passes, so TP + FP is fixed by the passed tasks (27, set by
    Table 2's kappa 0.58 and FPR 0.08 against the final label). Moving one review from FP to
    TP lowers FPR and FNR together; here, independently with scikit-learn, FPR 0.04 would
    leave FNR at most 0.40 and kappa about 0.6, and FNR 0.62 would need FPR about 0.19."""
    t = traj[OM2W].set_index("task_id")
    uv = t.uv_outcome_success
    a = ann[OM2W].assign(shown=lambda d: d.task_id.map(uv)).dropna(subset=["shown"])
    a = a[a.informed_outcome_agreement.str.lower().isin(["agree", "disagree"])]
    shown = a.shown.astype(int).to_numpy()
    blind = _binary(a.human_judgement_outcome).to_numpy()
    n_pos, n_neg, passes = int(blind.sum()), int((blind == 0).sum()), int(shown.sum())
    passed = t.uv_outcome_success.dropna().astype(int)
    assert passed.sum() >= 25, passed.sum()  # Table 2: kappa >= 0.55 with >= 4 false passes
    per_task = a.groupby("task_id").size()
    assert passes == per_task[passed.index[passed == 1]].sum()  # TP + FP: the passed reviews

    def at(fp: int) -> tuple[float, float, float]:
        """(FPR, FNR, kappa) of a verdict with these passes and `fp` false passes."""
        tp = passes - fp
        ref = np.r_[np.ones(n_pos, int), np.zeros(n_neg, int)]
        pred = np.r_[np.ones(tp, int), np.zeros(n_pos - tp, int), np.ones(fp, int)]
        pred = np.r_[pred, np.zeros(n_neg - fp, int)]
        return fp / n_neg, 1 - tp / n_pos, cohen_kappa_score(ref, pred)

    _, fnr, kappa = at(round(0.04 * n_neg))
    assert fnr <= 0.40 and kappa >= 0.58, (fnr, kappa)  # the paper: 0.62 and 0.39
    fp_for_fnr = passes - round((1 - 0.62) * n_pos)
    fpr, _, kappa = at(fp_for_fnr)
    assert fpr >= 0.17 and kappa <= 0.25, (fpr, kappa)  # the paper: 0.04 and 0.39
    # the demo sits where the kappa is the paper's (the least summed distance on that line)
    fp_demo = int(((shown == 1) & (blind == 0)).sum())
    assert at(fp_demo)[2] == pytest.approx(cohen_kappa_score(blind, shown), abs=1e-9)
    assert abs(cohen_kappa_score(blind, shown) - 0.39) <= 0.03


def _cluster_kappa_width(
    pred: np.ndarray, ref: np.ndarray, groups: np.ndarray, n: int = 1000
) -> float:
    """Width of a 95% percentile bootstrap interval of kappa, resampling whole groups."""
    rng = np.random.default_rng(7)
    names, index = np.unique(groups, return_inverse=True)
    members = [np.flatnonzero(index == g) for g in range(len(names))]
    stats = []
    for _ in range(n):
        rows = np.concatenate([members[g] for g in rng.integers(0, len(names), len(names))])
        if len(set(ref[rows])) > 1 and len(set(pred[rows])) > 1:
            stats.append(cohen_kappa_score(ref[rows], pred[rows]))
    low, high = np.percentile(stats, [2.5, 97.5])
    return float(high - low)


def test_verifier_errors_cluster_modestly_by_site(traj) -> None:
    from lib.table.clusters import design_effects

    d = traj[OM2W][["task_id", "uv_outcome_success", "final_human_outcome_label"]].dropna()
    pred = d.uv_outcome_success.astype(int).to_numpy()
    ref = d.final_human_outcome_label.astype(int).to_numpy()
    effects = design_effects(pred, ref, d.task_id, ("kappa", "accuracy"))
    ratio = effects["kappa"].ratio.value
    assert 1.1 <= ratio <= 1.4, ratio
    assert effects["accuracy"].ratio.value > 1.05, effects["accuracy"]
    # independently: a numpy cluster bootstrap of sklearn's kappa, sites = the id's prefix
    sites = d.task_id.str.split("--").str[0].to_numpy()
    tasks = d.task_id.to_numpy()
    own = _cluster_kappa_width(pred, ref, sites) / _cluster_kappa_width(pred, ref, tasks)
    assert 1.05 <= own <= 1.5, own


# ----------------------------------------------------------------------------- the format


def test_internal_rows_carry_both_passes(score_files) -> None:
    assert len(score_files) >= 140
    differs = lowered = raised = total = 0
    for _, row in score_files.iterrows():
        inner = row.inner
        items = inner["rubric_items"]
        assert all(set(item) >= ITEM_KEYS for item in items), row.task_id
        post = sum(item["post_image_earned_points"] for item in items)
        assert inner["rubric_total_earned_points"] == pytest.approx(post, abs=1e-9)
        assert inner["rubric_total_max_points"] == pytest.approx(
            sum(item["max_points"] for item in items), abs=1e-9
        )
        score = inner["rubric_total_earned_points"] / inner["rubric_total_max_points"]
        assert np.float32(score) == np.float32(row.uv_rubric_score), row.task_id
        for item in items:
            first, second = item["earned_points"], item["post_image_earned_points"]
            assert 0 <= first <= item["max_points"] and 0 <= second <= item["max_points"]
            assert (2 * first).is_integer() and (2 * second).is_integer()
            total += 1
            differs += first != second
            lowered += second < first
            raised += second > first
            assert item["justification"] and item["post_image_justification"]
            assert item["reality_notes"] and item["applicable_evidence"]
        if row.n_screenshots == 0:  # no second look: both passes agree
            assert all(i["earned_points"] == i["post_image_earned_points"] for i in items)
    assert 0.1 <= differs / total <= 0.3, (differs, total)
    assert lowered > 3 * raised > 0, (lowered, raised)
    # the old card's reading (action-only points) would not add up on many rows
    first_pass = score_files.inner.map(
        lambda inner: sum(i["earned_points"] for i in inner["rubric_items"])
    )
    mismatched = first_pass != score_files.inner.map(lambda i: i["rubric_total_earned_points"])
    assert 20 <= mismatched.sum() <= 110, mismatched.sum()


def test_screenshots_lowered_points_mostly_on_failed_tasks(score_files) -> None:
    lowered = score_files.inner.map(
        lambda inner: any(
            i["post_image_earned_points"] < i["earned_points"] for i in inner["rubric_items"]
        )
    )
    failed = score_files.final_human_outcome_label == 0
    assert failed[lowered].mean() > failed[~lowered].mean(), (lowered.sum(), failed.sum())


def _steps(score_files: pd.DataFrame) -> list[tuple[Any, dict]]:
    return [
        (row, row.inner["rubric_intermediate_mm_rubric_steps"])
        for _, row in score_files.iterrows()
        if "rubric_intermediate_mm_rubric_steps" in row.inner
    ]


def test_intermediate_steps_match_the_row(score_files) -> None:
    rows = _steps(score_files)
    without = len(score_files) - len(rows)
    assert 1 <= without <= 10, without  # the viewer's "absent" path
    absent = score_files[
        score_files.inner.map(lambda i: "rubric_intermediate_mm_rubric_steps" not in i)
    ]
    assert (absent.n_screenshots > 0).all()
    for row, steps in rows:
        assert set(steps) >= STEP_KEYS, row.task_id
        n, items = row.n_screenshots, row.inner["rubric_items"]
        criteria = [str(i) for i in range(len(items))]
        assert steps["step1_num_screenshots"] == n
        relevance = steps["step2_relevance_scores"]
        assert sorted(relevance) == sorted(f"screenshot_{k}" for k in range(n))
        matrix = np.zeros((n, len(items)), dtype=int)
        for k in range(n):
            entry = relevance[f"screenshot_{k}"]
            assert entry["screenshot_idx"] == k and set(entry) == {*criteria, "screenshot_idx"}
            matrix[k] = [entry[c] for c in criteria]
        assert ((matrix >= 0) & (matrix <= 10)).all()
        grouped = steps["step3_grouped_screenshots"]
        evidence = steps["step4_evidence_by_criterion"]
        assert set(grouped) == set(evidence) == set(criteria)
        assert set(steps["step5_reality_check"]) == set(criteria)
        for i, c in enumerate(criteria):
            chosen = grouped[c]
            assert len(chosen) == min(3, n) and len(set(chosen)) == len(chosen)
            assert all(0 <= k < n for k in chosen)
            if n:  # most relevant first, the latest screenshot on ties
                column = matrix[:, i]
                best = max(range(n), key=lambda k: (column[k], k))
                assert chosen[0] == best, (row.task_id, c, chosen, column.tolist())
                assert list(column[chosen]) == sorted(column[chosen], reverse=True)
            assert [e["screenshot_idx"] for e in evidence[c]] == chosen
            assert all(set(e) >= EVIDENCE_KEYS for e in evidence[c])
            assert all(isinstance(e["environment_issues_confirmed"], bool) for e in evidence[c])
        summary = steps["step6_rescoring_summary"]
        assert [s["criterion"] for s in summary] == [i["criterion"] for i in items]
        for s, item in zip(summary, items, strict=True):
            assert s["earned_points"] == item["earned_points"]
            assert s["post_image_earned_points"] == item["post_image_earned_points"]
        assert steps["step7_requires_penalty"] == bool(steps["step7_penalty_criteria"])
        assert (
            steps["step8_outcome_verification"]["output_success"] == (row.inner["outcome_success"])
        )


def test_discrepancies_env_issues_and_penalties_occur(score_files) -> None:
    rows = _steps(score_files)
    discrepancies = env = penalties = 0
    for row, steps in rows:
        items = row.inner["rubric_items"]
        for i, item in enumerate(items):
            for e in steps["step4_evidence_by_criterion"][str(i)]:
                if e["discrepancies"] != "None":
                    discrepancies += 1
                    assert item["post_image_earned_points"] < item["earned_points"]
                env += e["environment_issues_confirmed"]
        penalties += bool(steps["step7_penalty_criteria"])
    assert discrepancies >= 20 and env >= 1 and 1 <= penalties <= 30, (
        discrepancies,
        env,
        penalties,
    )


def _page_urls(log: str) -> list[str]:
    urls = []
    for line in log.splitlines():
        try:
            urls.append(json.loads(line)["url"])
        except (ValueError, KeyError, TypeError):
            continue
    return urls


def test_relevance_is_high_where_the_screenshot_shows_the_criterion(score_files) -> None:
    """The item's own page (a `/detail/` URL in the log line of that screenshot: line k is
    the action taken on screenshot k) is what 'Identify the requested item' is about: it
    scores well above the other pages."""
    on_item, elsewhere = [], []
    for row, steps in _steps(score_files):
        urls = _page_urls(row.web_surfer_log)
        names = [i["criterion"] for i in row.inner["rubric_items"]]
        if "Identify the requested item" not in names or len(urls) != row.n_screenshots - 1:
            continue  # a log with lines lost or added does not say which page is which
        c = str(names.index("Identify the requested item"))
        for k in range(len(urls)):
            r = steps["step2_relevance_scores"][f"screenshot_{k}"][c]
            (on_item if re.search(r"/detail/", urls[k]) else elsewhere).append(r)
    assert len(on_item) >= 10 and len(elsewhere) >= 10
    assert np.mean(on_item) >= np.mean(elsewhere) + 3, (np.mean(on_item), np.mean(elsewhere))
