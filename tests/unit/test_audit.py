"""lib.analysis.audit: each rule equals an independent pandas computation on the raw
columns (not the verdict table), on the demo mirror and on the full-size mirror's tables.

The full-size mirror (`python -m lib.mirror --full`) differs from the default one in its
runs and screenshots only; its tables are generated here without drawing a PNG
(`lib.mirror.build.build_split(..., full=True)`), for the demo seed and another seed.
"""

from __future__ import annotations

import pandas as pd
import pytest

from lib.analysis import audit
from lib.table import verdicts as V

OM2W = "fara7b_om2w_browserbase"
WORDS = {"correct": 1, "incorrect": 0}


def _word(value: object) -> float:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return float("nan")
    return WORDS.get(str(value).strip().lower(), float("nan"))


def _int(value: object) -> float:
    if value is None or pd.isna(value):
        return float("nan")
    return float(value) if float(value) in (0.0, 1.0) else float("nan")


def _keys(frame: pd.DataFrame, dim: str) -> set[tuple[str, str, str]]:
    return {(s, t, dim) for s, t in zip(frame["split"], frame["task_id"], strict=True)}


def expected(tasks: pd.DataFrame, ann: pd.DataFrame) -> dict[str, set[tuple[str, str, str]]]:
    """Every rule, recomputed from the raw columns with pandas alone."""
    out: dict[str, set[tuple[str, str, str]]] = {}
    ann = ann.copy()
    ann["o"] = ann["human_judgement_outcome"].map(_word)
    ann["p"] = ann["human_judgement_process"].map(_word)
    known = ann.dropna(subset=["o"])
    g = known.groupby(["split", "task_id"])["o"].agg(["sum", "count"])
    tie = g[(g["count"] >= 2) & (g["sum"] * 2 == g["count"])]
    out["tie"] = {(s, t, "outcome") for s, t in tie.index}

    final = tasks["final_human_outcome_label"].map(_int)
    major = tasks["majority_human_outcome_vote"].map(_int)
    adj = tasks[final.notna() & major.notna() & (final != major)]
    out["adjudicated"] = _keys(adj, "outcome")

    partial = set()
    for col, dim in (
        ("human_judgement_outcome", "outcome"),
        ("human_judgement_process", "process"),
    ):
        text = ann[col].fillna("").astype(str).str.strip()
        odd = ann[(text != "") & ~text.str.lower().isin(WORDS)]
        partial |= _keys(odd, dim)
    for col, dim in (
        ("final_human_outcome_label", "outcome"),
        ("majority_human_outcome_vote", "outcome"),
        ("final_human_process_label", "process"),
    ):
        odd = tasks[tasks[col].notna() & tasks[col].map(_int).isna()]
        partial |= _keys(odd, dim)
    out["partial"] = partial

    shown = tasks.set_index("task_id")
    changed, against = set(), set()
    for _, r in ann.iterrows():
        for dim, blind in (("outcome", r["o"]), ("process", r["p"])):
            agreement = str(r[f"informed_{dim}_agreement"] or "").strip().lower()
            if dim == "outcome":
                verdict = _int(shown.at[r["task_id"], "uv_outcome_success"])
            else:
                score = shown.at[r["task_id"], "uv_rubric_score"]
                verdict = float("nan") if pd.isna(score) else float(score >= 0.8)
            if pd.isna(verdict) or pd.isna(blind) or agreement not in ("agree", "disagree"):
                continue
            informed = verdict if agreement == "agree" else 1 - verdict
            if informed != blind:
                changed.add((r["split"], r["task_id"], dim))
                if informed != verdict:
                    against.add((r["split"], r["task_id"], dim))
    out["changed_informed"], out["against_verifier"] = changed, against

    score = ann["human_process_score"]
    bad = ann[((ann["p"] == 1) & (score < 0.5)) | ((ann["p"] == 0) & (score >= 0.8))]
    out["process_contradiction"] = _keys(bad, "process")

    per = ann.groupby("task_id")["annotator"].nunique()
    single = tasks[tasks["task_id"].map(per).eq(1)]
    decisive = set()
    uv_score = single["uv_rubric_score"]
    for dim in ("outcome", "process"):
        if dim == "outcome":
            verdict = single["uv_outcome_success"].map(_int)
            human = single["final_human_outcome_label"].map(_int)
        else:
            verdict = (uv_score >= 0.8).astype(float).where(uv_score.notna())
            human = single["final_human_process_label"].map(_int)
        hit = (
            verdict.notna()
            & human.notna()
            & (verdict != human)
            & (((verdict == 1) & (uv_score >= 0.9)) | ((verdict == 0) & (uv_score <= 0.4)))
        )
        decisive |= _keys(single[hit], dim)
    out["internal_decisive"] = decisive
    return out


def found(table: pd.DataFrame) -> dict[str, set[tuple[str, str, str]]]:
    long = audit.reason_rows(table)
    return {
        r: set(map(tuple, long.loc[long["reason"] == r, audit.KEYS].to_numpy().tolist()))
        for r in audit.REASON_IDS
    }


def test_rules_equal_pandas_on_the_demo(bench) -> None:
    want = expected(bench.tasks, bench.annotations)
    got = found(bench.verdicts)
    for reason in audit.REASON_IDS:
        assert got[reason] == want[reason], reason
    # The release's facts the demo reproduces (DATASET.md): 21 ties, 13 adjudications.
    assert len(got["tie"]) == 21
    assert len(got["adjudicated"]) == 13
    assert len(got["partial"]) == 1  # the demo's one `partial` (a process label)
    assert got["against_verifier"] <= got["changed_informed"]
    assert got["changed_informed"], "the demo has informed changes"
    assert got["process_contradiction"] and got["internal_decisive"]


def _generated(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    from lib.mirror.build import build_split

    tasks, anns = [], []
    for split in (OM2W, "internal"):
        data = build_split(split, seed, True)
        tasks.append(pd.DataFrame(data.traj).assign(split=split))
        anns.append(pd.DataFrame(data.ann).assign(split=split))
    return pd.concat(tasks, ignore_index=True), pd.concat(anns, ignore_index=True)


@pytest.mark.parametrize("seed", [0, 5])
def test_rules_equal_pandas_on_the_full_size_mirror(seed: int) -> None:
    tasks, ann = _generated(seed)
    table = V.build(tasks, ann)
    want = expected(tasks, ann)
    got = found(table)
    for reason in audit.REASON_IDS:
        assert got[reason] == want[reason], reason
    assert len(got["tie"]) == 21 and len(got["adjudicated"]) == 13


def test_hand_worked_partial_and_contradiction() -> None:
    """A two-task table: a `partial` blind label, a Correct label with score 0.2."""
    tasks = pd.DataFrame(
        {
            "split": [OM2W, OM2W],
            "task_id": ["A--1", "B--2"],
            "uv_outcome_success": [1, 0],
            "uv_rubric_score": [0.9, 0.1],
            "final_human_outcome_label": [1, 0],
            "majority_human_outcome_vote": [1, 0],
            "final_human_process_label": [1, 0],
            "median_human_rubric_score_agnostic": [0.9, 0.2],
            "gpt_eval_json": ["", ""],
        }
    )
    ann = pd.DataFrame(
        {
            "split": [OM2W] * 3,
            "task_id": ["A--1", "A--1", "B--2"],
            "annotator": ["Judge1", "Judge2", "Judge1"],
            "human_judgement_outcome": ["Correct", " Partial ", "Incorrect"],
            "human_judgement_process": ["Correct", "Correct", "Correct"],
            "human_process_score": [0.9, 0.85, 0.2],
            "informed_outcome_agreement": ["agree", "", "disagree"],
            "informed_process_agreement": ["", "", ""],
        }
    )
    got = found(V.build(tasks, ann))
    assert got["partial"] == {(OM2W, "A--1", "outcome")}
    assert got["process_contradiction"] == {(OM2W, "B--2", "process")}
    # Judge1 on B--2: blind 0 = the verdict 0 shown, then "disagree": changed, against.
    assert got["changed_informed"] == got["against_verifier"] == {(OM2W, "B--2", "outcome")}
    assert got["tie"] == set() and got["adjudicated"] == set()
    counts = audit.reason_counts(audit.reason_rows(V.build(tasks, ann)))
    assert counts.set_index("reason").loc["partial", "all"] == 1
    assert list(counts["reason"]) == list(audit.REASON_IDS)


def test_audit_table_names_reasons(bench) -> None:
    table = audit.audit_table(bench.verdicts)
    long = audit.reason_rows(bench.verdicts)
    assert len(table) == len(long.drop_duplicates(audit.KEYS))
    assert table["n_reasons"].sum() == len(long)
    assert all(set(r) <= set(audit.REASON_IDS) for r in table["reasons"])
