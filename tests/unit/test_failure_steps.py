"""The sample of score files (`lib.uploads.score_sample`) and the report's `failure_steps`
(`lib.analysis.failure_steps`), checked against an independent computation from the files."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from lib.analysis.failure_steps import failure_step_records
from lib.uploads import predictions, score_files
from lib.uploads.score_sample import sample_files, sample_zip
from tests.helpers import score_zips as Z


def _files(data: bytes) -> dict[str, dict]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {
            json.loads(archive.read(n))["task_id"]: json.loads(archive.read(n))
            for n in archive.namelist()
        }


def _step(inner: dict) -> int | None:
    point = inner["error_taxonomy"].get("first_point_of_failure")
    return None if point is None else point["first_failure_step"]


def test_the_sample_is_the_demo_s_files_made_stricter(bench) -> None:
    files = _files(sample_zip(bench.tasks))
    cells = Z.internal_cells(bench.tasks)
    assert set(files) == set(cells)
    lowered = 0
    for task_id, inner in files.items():
        original = json.loads(json.loads(cells[task_id])["gpt_response_text"])
        for new, old in zip(inner["rubric_items"], original["rubric_items"], strict=True):
            assert new["post_image_earned_points"] <= old["post_image_earned_points"]
            lowered += new["post_image_earned_points"] < old["post_image_earned_points"]
        total = sum(i["post_image_earned_points"] for i in inner["rubric_items"])
        assert inner["rubric_total_earned_points"] == pytest.approx(total)
        score = total / inner["rubric_total_max_points"]
        assert inner["rubric_is_success"] == (score >= 0.8)
        failed = not inner["rubric_outcome_verification"]["output_success"] or score < 0.8
        n_shots = int(bench.task(task_id)["n_screenshots"])
        step = _step(inner)
        assert (step is not None) == (failed and n_shots > 0)
        assert step is None or 0 <= step < n_shots
    assert lowered > 20
    assert sample_files(bench.tasks) == sample_files(bench.tasks)  # deterministic


def _independent(a: dict[str, dict], b: dict[str, dict], exclude: bool) -> dict:
    distances, flagged = [], 0
    for task_id in sorted(set(a) & set(b)):
        x, y = a[task_id], b[task_id]
        fails = [not f["rubric_outcome_verification"]["output_success"] for f in (x, y)]
        steps = [_step(f) for f in (x, y)]
        if not all(fails) or None in steps:
            continue
        flags = [v for f in (x, y) for v in f["error_taxonomy"]["task_verification"].values()]
        if any(flags):
            flagged += 1
            if exclude:
                continue
        distances.append(abs(steps[0] - steps[1]))
    d = np.array(distances, dtype=float)
    return {"n": len(d), "exact": np.mean(d == 0), "within_1": np.mean(d <= 1),
            "mean_abs_distance": d.mean(), "n_flagged": flagged}  # fmt: skip


@pytest.mark.parametrize("exclude", [False, True])
def test_failure_steps_of_two_versions_equal_an_independent_count(bench, exclude: bool) -> None:
    first, second = sample_zip(bench.tasks), sample_zip(bench.tasks, seed=7)
    cells, taken, uploads = {}, set(), []
    for name, data in (("v1.zip", first), ("v2.zip", second)):
        read = score_files.read_upload([(name, data)], bench.tasks, taken)
        taken.update(read.upload.raters)
        cells[read.upload.raters[0]] = read.cells
        uploads.append(read.upload.verdicts)
    table = predictions.with_uploaded(bench.verdicts, uploads)
    records = failure_step_records(cells, table, exclude_flagged=exclude)
    verifiers = [r for r in records if r["record"] == "verifier"]
    (pair,) = [r for r in records if r["record"] == "pair"]
    a, b = _files(first), _files(second)
    for record, files in zip(verifiers, (a, b), strict=True):
        assert record["n_tasks"] == len(files)
        assert record["n_with_step"] == sum(_step(f) is not None for f in files.values())
        flags = [f["error_taxonomy"]["task_verification"] for f in files.values()]
        assert record["n_ambiguous"] == sum(f["is_ambiguous"] for f in flags)
        assert record["n_invalid"] == sum(f["is_invalid"] for f in flags)
    expected = _independent(a, b, exclude)
    assert pair["n"] == expected["n"] > 10
    for key in ("exact", "within_1", "mean_abs_distance"):
        assert pair[key] == pytest.approx(expected[key])
    assert pair["n_flagged"] == expected["n_flagged"]
    assert pair["n_excluded_flagged"] == (expected["n_flagged"] if exclude else 0)


def test_report_cli_adds_failure_steps(bench, tmp_path: Path) -> None:
    from lib import report

    path = tmp_path / "stricter_backbone.zip"
    path.write_bytes(sample_zip(bench.tasks))
    cells: dict = {}
    uploads = report.load_predictions(bench, [path], cells)
    assert list(cells) == ["mine:stricter_backbone"]
    records = failure_step_records(cells, report.with_uploads(bench, uploads).verdicts)
    files = _files(path.read_bytes())
    (record,) = records
    assert record["n_with_step"] == sum(_step(f) is not None for f in files.values())


def test_failure_marks_by_hand() -> None:
    import json as _json

    from lib.analysis.failure_steps import failure_marks

    def cell(step: object) -> str:
        taxonomy = {"first_point_of_failure": {"first_failure_step": step}}
        inner = {"rubric_items": [], "outcome_success": False, "error_taxonomy": taxonomy}
        return _json.dumps({"score": 0, "gpt_response_text": _json.dumps(inner)})

    cells = {"mine:a": {"t": cell(3)}, "mine:b": {"t": cell(9)}, "mine:c": {"t": cell(-1)}}
    cells |= {"mine:d": {"t": cell(2.5)}, "mine:e": {"u": cell(1)}, "mine:f": {"t": cell(True)}}
    assert failure_marks(cells, "t", 5, {"mine:a": "A"}) == [{"name": "A", "step": 3}]
    assert [m["step"] for m in failure_marks(cells, "t", 10)] == [3, 9]


def test_the_upload_counts_ambiguous_and_invalid_tasks(bench) -> None:
    data = sample_zip(bench.tasks)
    flags = [f["error_taxonomy"]["task_verification"] for f in _files(data).values()]
    ambiguous, invalid = (sum(f[k] for f in flags) for k in ("is_ambiguous", "is_invalid"))
    assert ambiguous + invalid > 0
    upload = score_files.parse_score_files([("s.zip", data)], bench.tasks).upload
    note = f"flags {ambiguous} task(s) as ambiguous and {invalid} as invalid"
    assert any(note in n for n in upload.notes)
