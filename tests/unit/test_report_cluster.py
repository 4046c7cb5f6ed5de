"""`python -m lib.report --cluster task|site`: one setting for every section (issue 14)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from lib import metrics as M
from lib import report
from lib.analysis.slice_values import SLICE_DIMS
from lib.table.pairs import pair


def _site(task_id: str) -> str:
    """Website / family written out independently of lib.table.clusters."""
    if "--" in task_id:
        return task_id.rsplit("--", 1)[0]
    return re.sub(r"(_data)?(_\d+)+$", "", task_id)


@pytest.fixture(scope="module")
def site_report(bench):
    return report.build_report(bench, boot=M.Bootstrap(unit="site"))


def test_header_and_every_unit_say_site(site_report) -> None:
    assert site_report["cluster"] == "site"
    assert {r["bootstrap"]["unit"] for r in site_report["agreement"]} == {"site"}
    assert {r["cluster"] for r in site_report["slices"]} == {"site"}
    json.dumps(site_report, allow_nan=False)  # plain JSON


def test_site_interval_matches_an_independent_site_bootstrap(bench, site_report) -> None:
    rec = next(
        r
        for r in site_report["agreement"]
        if r["split"] == "all"
        and r["verifier"] == "uv_outcome_success"
        and r["reference"] == "final_human_outcome_label"
    )
    rows = pair(bench.verdicts, "uv_outcome_success", "final_human_outcome_label", "outcome")
    sites = np.array([_site(t) for t in rows["task_id"].astype(str)], dtype=object)
    ci = M.bootstrap_intervals(rows["label_a"], rows["label_b"], sites, ["kappa"])["kappa"]
    assert rec["kappa_ci"] == pytest.approx([ci.low, ci.high], abs=1e-12)
    tasks = M.bootstrap_intervals(
        rows["label_a"], rows["label_b"], rows["task_id"].astype(str), ["kappa"]
    )["kappa"]
    assert (ci.high - ci.low) != pytest.approx(tasks.high - tasks.low)  # the unit matters


def test_slices_records(bench, site_report) -> None:
    records = site_report["slices"]
    splits = {*bench.tasks["split"].astype(str), "all"}
    assert {r["split"] for r in records} == splits
    assert {r["slice_dim"] for r in records} == set(SLICE_DIMS)
    # the default reference per dimension only (bounded size)
    assert {r["reference"] for r in records} <= {
        "final_human_outcome_label",
        "final_human_process_label",
    }
    for r in records:
        assert isinstance(r["small_n"], bool) and r["small_n"] == (r["n"] < 10)
        for m in ("accuracy", "kappa", "fpr", "fnr"):
            assert m in r and f"{m}_ci" in r
    one_site = [r for r in records if r["slice_dim"] == "site" and r["n"] > 0]
    assert one_site and all(r["n_clusters"] == 1 for r in one_site)
    assert all(r["kappa_ci"] is None for r in one_site)  # one cluster: no interval
    assert all(r["reasons"]["ci:accuracy"] == M.ONE_CLUSTER for r in one_site)


def test_task_mode_is_the_default_and_keeps_task_intervals(report_json: str) -> None:
    default = json.loads(report_json)  # `python -m lib.report` without --cluster
    assert default["cluster"] == "task"
    assert {r["bootstrap"]["unit"] for r in default["agreement"]} == {"task"}
    site_slices = [r for r in default["slices"] if r["slice_dim"] == "site" and r["n"] >= 2]
    assert any(r["accuracy_ci"] is not None for r in site_slices)  # several tasks: interval
