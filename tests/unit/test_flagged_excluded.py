"""Excluding the tasks an uploaded verifier's own score files flag as ambiguous or invalid
(`lib.analysis.failure_steps.without_flagged`), checked against an independent pandas /
sklearn computation of the metric on the remaining tasks."""

from __future__ import annotations

import io
import json
import zipfile

import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, cohen_kappa_score

from lib.analysis import your_verifier as compare
from lib.analysis.failure_steps import flagged_tasks, without_flagged
from lib.uploads import predictions, score_files
from lib.uploads.score_sample import sample_zip
from lib.vocab import HUMAN_REFERENCE


def test_excluded_tasks_leave_that_verifier_s_numbers_only(bench) -> None:
    data = sample_zip(bench.tasks)
    read = score_files.read_upload([("strict.zip", data)], bench.tasks, set())
    (rater,) = read.upload.raters
    table = predictions.with_uploaded(bench.verdicts, [read.upload.verdicts])

    # independent: the flags and the verdicts straight from the archive's JSON
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        files = [json.loads(archive.read(n)) for n in archive.namelist()]
    flagged = {
        f["task_id"]
        for f in files
        if f["error_taxonomy"]["task_verification"]["is_ambiguous"]
        or f["error_taxonomy"]["task_verification"]["is_invalid"]
    }
    assert 0 < len(flagged) < len(files)
    assert flagged_tasks({rater: read.cells}) == {rater: flagged}

    kept, counts = without_flagged(table, {rater: flagged})
    assert counts == {rater: len(flagged)}
    assert len(table) - len(kept) == (table["rater"] == rater).sum() - (
        (kept["rater"] == rater).sum()
    )
    assert not kept.loc[kept["rater"] == rater, "task_id"].isin(flagged).any()
    others = table[table["rater"] != rater]
    assert len(kept[kept["rater"] != rater]) == len(others)  # humans and others untouched

    (record,) = compare.agreement(kept, rater, "outcome", ["internal"])
    outcome = pd.DataFrame(
        {
            "task_id": [f["task_id"] for f in files],
            "mine": [int(f["rubric_outcome_verification"]["output_success"]) for f in files],
        }
    )
    outcome = outcome[~outcome["task_id"].isin(flagged)]
    human = bench.verdicts[
        (bench.verdicts["rater"] == HUMAN_REFERENCE["outcome"])
        & (bench.verdicts["split"] == "internal")
        & bench.verdicts["label"].notna()
    ][["task_id", "label"]]
    both = outcome.merge(human, on="task_id")
    y, p = both["label"].astype(int), both["mine"]
    assert record.n == len(both) > 10
    assert record.fp == int(((p == 1) & (y == 0)).sum())
    assert record.fn == int(((p == 0) & (y == 1)).sum())
    assert record.estimates["accuracy"].value == pytest.approx(accuracy_score(y, p))
    assert record.estimates["kappa"].value == pytest.approx(cohen_kappa_score(y, p))
    (full,) = compare.agreement(table, rater, "outcome", ["internal"])
    assert full.n - record.n == len(set(flagged) & set(human["task_id"]))


def test_report_exclude_flagged(bench, tmp_path) -> None:
    from lib import report

    data = sample_zip(bench.tasks)
    path = tmp_path / "strict.zip"
    path.write_bytes(data)
    cells: dict = {}
    uploads = report.load_predictions(bench, [path], cells)
    (rater,) = list(cells)
    flagged = flagged_tasks(cells)[rater]
    out = report.build_report(bench, uploads, score_cells=cells, exclude_flagged=True)
    assert out["excluded_flagged"] == [{"verifier": rater, "n_excluded": len(flagged)}]
    table, _ = without_flagged(
        predictions.with_uploaded(bench.verdicts, [u.verdicts for u in uploads]), {rater: flagged}
    )
    (expected,) = [c for c in compare.compare(table, rater, "outcome") if c.split == "internal"]
    (full,) = [
        c for c in compare.compare(report.with_uploads(bench, uploads).verdicts, rater, "outcome")
        if c.split == "internal"
    ]  # fmt: skip
    got = [
        r
        for r in out["your_verifier"]
        if r["rater"] == rater and r["split"] == "internal" and r["dimension"] == "outcome"
    ]
    assert got and {r["n_yours"] for r in got} == {expected.n_yours}
    assert expected.n_yours < full.n_yours
