"""`python -m lib.report --labels FILE`: the keys `audit`, `ceiling` and `labels`, and
agreement records whose reference is `your_labels` (equal to the library's); `tables(labels=)`
gives a notebook the same records."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pandas as pd
import pytest

from lib import report
from lib.analysis import audit
from lib.uploads import labels as my_labels

OM2W = "fara7b_om2w_browserbase"


@pytest.fixture
def few_sections(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the sections this test reads (the whole report is `report_json`'s)."""
    keep = ("agreement", "audit", "ceiling", "parity")
    monkeypatch.setattr(report, "SECTIONS", {k: report.SECTIONS[k] for k in keep})


def _run(argv: list[str]) -> tuple[int, dict | None, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = report.main(argv)
    return code, (json.loads(out.getvalue()) if code == 0 else None), err.getvalue()


def test_labels_add_your_labels_records(mirror_dir: Path, bench, tmp_path, few_sections) -> None:
    ties = audit.ties(bench.verdicts)["task_id"].tolist()[:3]
    text = (
        "task_id,dimension,label,note\n"
        + "".join(
            f"{t},outcome,{lab},x\n"
            for t, lab in zip(ties, ("success", "failure", "unsure"), strict=True)
        )
        + "nosuch--1,outcome,success,\n"
    )
    path = tmp_path / "my_labels.csv"
    path.write_text(text)
    code, got, err = _run(["--data", str(mirror_dir), "--labels", str(path)])
    assert code == 0, err
    assert "labels row 4 dropped: unknown task" in err
    assert got["labels"]["n_labels"] == 3 and got["labels"]["n_dropped"] == 1
    comp = {(c["split"], c["dimension"]): c for c in got["labels"]["composition"]}
    assert comp[(OM2W, "outcome")]["yours"] == 3 and comp[(OM2W, "outcome")]["unsure"] == 1
    mine = [r for r in got["agreement"] if r["reference"] == "your_labels"]
    assert {r["split"] for r in mine} >= {OM2W, "all"}
    uv = next(r for r in mine if r["verifier"] == "uv_outcome_success" and r["split"] == OM2W)
    final = next(
        r
        for r in got["agreement"]
        if r["verifier"] == "uv_outcome_success"
        and r["split"] == OM2W
        and r["reference"] == "final_human_outcome_label"
    )
    assert uv["n"] == final["n"] - 1  # the unsure task is excluded
    assert uv["kappa_ci"] is not None
    # audit: one record per contested task and dimension, reasons by id
    assert {tuple(r["reasons"]) for r in got["audit"]} and all(
        set(r["reasons"]) <= set(audit.REASON_IDS) for r in got["audit"]
    )
    assert sum("tie" in r["reasons"] for r in got["audit"]) == 21
    variants = {(r["split"], r["dimension"], r["variant"]) for r in got["ceiling"]}
    assert (OM2W, "outcome", "without:contested") in variants
    assert all("uv_kappa_ci" in r for r in got["ceiling"])
    # parity: the reviewers' records as without --labels, then you in the panel, then
    # your labels as the candidate; the unsure task is counted, not used
    plain = [r for r in got["parity"] if "reference" not in r]
    assert plain and all("your_role" not in r for r in plain)
    mine = [r for r in got["parity"] if r.get("reference") == "your_labels"]
    roles = {(r["verifier"], r["your_role"]) for r in mine}
    assert ("uv_outcome_success", "panel") in roles and ("you", "candidate") in roles
    assert {r["split"] for r in mine} == {OM2W} and {r["dimension"] for r in mine} == {"outcome"}
    assert all(
        (r["your_n_labels"], r["your_n_unsure"], r["your_n_used"]) == (2, 1, 2) for r in mine
    )
    uv = next(r for r in mine if r["verifier"] == "uv_outcome_success")
    assert uv["alt_reviewers"][-1]["reviewer"] == "you"
    assert uv["alt_reviewers"][-1]["n_tasks"] == 2 and uv["alt_reviewers"][-1]["p_value"] is None
    base = next(r for r in plain if r["verifier"] == "uv_outcome_success" and r["split"] == OM2W)
    assert uv["n_reviewers"] == base["n_reviewers"] + 1


def test_refused_labels_file_exits_2(mirror_dir: Path, tmp_path, few_sections) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("task_id,dimension\nx,outcome\n")
    code, _, err = _run(["--data", str(mirror_dir), "--labels", str(path)])
    assert code == 2 and "lacks the column" in err


def _few_labels(bench, path: Path) -> Path:
    """Three blind ties (success, failure, unsure) and a row of an unknown task."""
    ties = audit.ties(bench.verdicts)["task_id"].tolist()[:3]
    path.write_text(
        "task_id,dimension,label,note\n"
        + "".join(
            f"{t},outcome,{lab},x\n"
            for t, lab in zip(ties, ("success", "failure", "unsure"), strict=True)
        )
        + "nosuch--1,outcome,success,\n"
    )
    return path


def test_tables_with_labels_equal_the_cli(mirror_dir: Path, bench, tmp_path, few_sections) -> None:
    """`tables(labels=FILE)` gives a notebook the CLI's `--labels` records: every section's
    frame equals the CLI JSON's, the parity records with you (reference `your_labels`)
    included, and `attrs["labels"]` is the CLI's key `labels`; without labels, no record
    and no attrs of yours (the frozen fixtures check the rest of the default output)."""
    path = _few_labels(bench, tmp_path / "my_labels.csv")
    code, got, err = _run(["--data", str(mirror_dir), "--labels", str(path)])
    assert code == 0, err
    frames = report.tables(str(mirror_dir), labels=path)
    cli = report.dataframes(got)
    assert set(frames) == set(cli) == set(report.SECTIONS)
    for key in report.SECTIONS:
        pd.testing.assert_frame_equal(frames[key], cli[key], check_like=False, obj=key)
    parity = frames["parity"]
    mine = parity[parity["reference"] == "your_labels"]
    assert set(mine["your_role"]) == {"panel", "candidate"}
    assert (mine["your_n_labels"] == 2).all() and (mine["your_n_unsure"] == 1).all()
    assert frames["parity"].attrs["labels"] == got["labels"]
    assert frames["parity"].attrs["labels"]["n_dropped"] == 1

    plain = report.tables(str(mirror_dir))
    assert "reference" not in plain["parity"].columns
    assert "your_role" not in plain["parity"].columns
    assert not plain["agreement"]["reference"].isin(["your_labels", "your_process_labels"]).any()
    assert "labels" not in plain["parity"].attrs
    # the reviewers' records are the same with and without labels
    base = parity[parity["reference"].isna()].dropna(axis=1, how="all").reset_index(drop=True)
    plain_parity = plain["parity"].dropna(axis=1, how="all")  # object columns there: values
    pd.testing.assert_frame_equal(base, plain_parity, check_dtype=False)


def test_tables_refuse_a_bad_labels_file(mirror_dir: Path, tmp_path, few_sections) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("task_id,dimension\nx,outcome\n")
    with pytest.raises(my_labels.LabelsError, match="lacks the column"):
        report.tables(str(mirror_dir), labels=path)
