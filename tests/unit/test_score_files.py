"""Score files as an upload (`lib.uploads.score_files`, issue 41).

Equal to the dataset's verifier: a zip of the mirror's own internal `gpt_eval_json` cells
gives, on every internal task, the Universal Verifier's outcome, process and score. Hostile
files (each generated here) give one clear message, no traceback, and at most 50 MB of
Python allocations (tracemalloc peak) while they are read.
"""

from __future__ import annotations

import json
import tracemalloc
import zipfile

import numpy as np
import pandas as pd
import pytest

from lib.table import score_file as sf
from lib.uploads import score_files as S
from lib.uploads.predictions import PredictionsError
from lib.vocab import UV_THRESHOLD
from tests.helpers import score_zips as Z

BUDGET_MB = 50


def _by_task(verdicts: pd.DataFrame, dimension: str) -> pd.DataFrame:
    rows = verdicts[verdicts["dimension"] == dimension]
    return rows.set_index(["split", "task_id"])[["label", "score"]]


def _uv(bench, dimension: str) -> pd.DataFrame:
    rater = "uv_outcome_success" if dimension == "outcome" else "uv_process"
    return _by_task(bench.verdicts[bench.verdicts["rater"] == rater], dimension)


def _assert_equal_to_the_universal_verifier(bench, upload) -> None:
    internal = bench.tasks.loc[bench.tasks["split"] == "internal", "task_id"]
    keys = pd.MultiIndex.from_arrays([["internal"] * len(internal), internal.astype(str)])
    for dimension in ("outcome", "process"):
        mine = _by_task(upload.verdicts, dimension).reindex(keys)
        uv = _uv(bench, dimension).reindex(keys)
        assert (mine["label"].isna() == uv["label"].isna()).all(), dimension
        known = uv["label"].notna()
        assert known.sum() > 100  # every evaluated internal task
        assert (mine["label"][known].astype(int) == uv["label"][known].astype(int)).all()
    mine = _by_task(upload.verdicts, "process").reindex(keys)["score"].astype(float)
    uv = bench.tasks.set_index("task_id")["uv_rubric_score"].reindex(internal).astype(float)
    # uv_rubric_score is stored as float32: equal within its precision
    np.testing.assert_allclose(mine.to_numpy(), uv.to_numpy(), rtol=0, atol=1e-6)
    independent = (uv.dropna() >= UV_THRESHOLD).astype(int)
    process = _by_task(upload.verdicts, "process")["label"].droplevel(0)
    assert (process.reindex(independent.index).astype(int) == independent).all()


def test_a_zip_of_the_dataset_cells_equals_the_universal_verifier(bench) -> None:
    got = S.parse_score_files([("uv_again.zip", Z.cells_zip(bench.tasks))], bench.tasks)
    upload = got.upload
    assert len(upload.dropped) == 0 and upload.raters == ["mine:uv_again"]
    assert upload.n_used == got.n_files == len(Z.internal_cells(bench.tasks))
    _assert_equal_to_the_universal_verifier(bench, upload)


def test_json_lines_a_folder_in_the_zip_and_several_json_files_give_the_same(bench) -> None:
    cells = Z.internal_cells(bench.tasks)
    zipped = S.parse_score_files([("a.zip", Z.cells_zip(bench.tasks, "run1/"))], bench.tasks)
    lines = S.parse_score_files([("a.jsonl", Z.cells_jsonl(bench.tasks))], bench.tasks)
    files = [(f"{t}.json", cell.encode()) for t, cell in cells.items()]
    several = S.parse_score_files(files, bench.tasks, verifier="a")
    columns = ["split", "task_id", "dimension", "label", "score"]
    first = zipped.upload.verdicts[columns].sort_values(columns[:3]).reset_index(drop=True)
    for other in (lines, several):
        assert other.upload.raters == ["mine:a"]
        pd.testing.assert_frame_equal(
            first, other.upload.verdicts[columns].sort_values(columns[:3]).reset_index(drop=True)
        )
    _assert_equal_to_the_universal_verifier(bench, lines.upload)


def test_task_id_field_wins_over_the_file_name(bench) -> None:
    t, cell = next(iter(Z.internal_cells(bench.tasks).items()))
    inner = json.loads(json.loads(cell)["gpt_response_text"])
    data = Z.zip_of({"001.json": json.dumps(inner | {"task_id": t})})
    got = S.parse_score_files([("x.zip", data)], bench.tasks)
    assert set(got.upload.verdicts["task_id"]) == {t}


def test_dispatch_by_content() -> None:
    assert S.is_score_upload(Z.zip_of({"a.json": "{}"}), "a.zip")
    assert not S.is_score_upload(Z.zip_of({"[Content_Types].xml": "<x/>"}), "book.xlsx")
    assert S.is_score_upload(b'{"task_id": "t", "score_file": {}}\n', "a.jsonl")
    assert S.is_score_upload(b'{"score": 1, "gpt_response_text": "{}"}', "t.json")
    assert not S.is_score_upload(b'{"task_id": "t", "outcome": 1}\n', "p.jsonl")
    assert not S.is_score_upload(b"task_id,outcome\nt,1\n", "p.csv")
    assert not S.is_score_upload(b'[{"task_id": "t", "outcome": 1}]', "p.json")


def _read(bench, name: str, data: bytes | list[tuple[str, bytes]]):
    """Parse under tracemalloc: (the result or the error message, peak MB)."""
    files = data if isinstance(data, list) else [(name, data)]
    tracemalloc.start()
    try:
        result: object = S.parse_score_files(files, bench.tasks)
    except PredictionsError as exc:
        result = str(exc)
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return result, peak / 2**20


def _good(bench) -> tuple[str, str]:
    t, cell = next(iter(Z.internal_cells(bench.tasks).items()))
    return f"{t}.json", cell


def _reasons(result) -> str:
    return " | ".join(result.upload.dropped["reason"])


def test_a_zip_bomb_is_refused_before_extraction(bench) -> None:
    bomb = Z.zip_bomb(300)
    assert len(bomb) < 2 * 2**20
    message, peak = _read(bench, "bomb.zip", bomb)
    assert isinstance(message, str) and "would expand to 300.0 MB" in message
    assert "Nothing was extracted" in message and peak < BUDGET_MB
    small_bomb = Z.zip_of({"x.json": "0" * (20 * 2**20)})  # under the total, over the ratio
    message, peak = _read(bench, "bomb.zip", small_bomb)
    assert isinstance(message, str) and "a zip bomb" in message and "expands" in message
    assert peak < BUDGET_MB


def test_an_archive_of_100000_entries_is_refused_from_its_end_record(bench) -> None:
    message, peak = _read(bench, "many.zip", Z.many_entries(100_000))
    assert isinstance(message, str) and "100,000 entries" in message
    assert f"the limit is {S.MAX_ENTRIES:,}" in message and peak < BUDGET_MB


def test_a_path_outside_the_archive_is_listed_and_the_rest_used(bench) -> None:
    name, cell = _good(bench)
    result, peak = _read(bench, "escape.zip", Z.escaping(name, cell))
    assert not isinstance(result, str) and result.upload.n_used == 1
    assert "../../etc/evil.json" in _reasons(result)
    assert "its path leads outside the archive" in _reasons(result) and peak < BUDGET_MB
    only, _ = _read(bench, "escape.zip", Z.zip_of({"../x.json": cell}))
    assert isinstance(only, str) and "No usable score file" in only and "outside" in only


def test_a_nested_zip_is_not_opened(bench) -> None:
    name, cell = _good(bench)
    result, peak = _read(bench, "nested.zip", Z.nested(name, cell))
    assert not isinstance(result, str) and result.upload.n_used == 1
    reasons = result.upload.dropped.set_index("row")["reason"]
    assert len(reasons) == 2 and all("nested archives are not opened" in r for r in reasons)
    assert peak < BUDGET_MB


def test_a_score_file_64_levels_deep(bench) -> None:
    name, cell = _good(bench)
    result, peak = _read(bench, "deep.zip", Z.zip_of({"deep.json": Z.deep(64), name: cell}))
    assert "nested too deeply" in _reasons(result) and result.upload.n_used == 1
    assert peak < BUDGET_MB
    alone, _ = _read(bench, "deep.json", [("deep.json", Z.deep(64).encode())])
    assert isinstance(alone, str) and "nested too deeply" in alone


def test_nan_infinite_huge_and_negative_points(bench) -> None:
    tasks = list(Z.internal_cells(bench.tasks))[:4]
    files = {f"{t}.json": text for t, text in zip(tasks, Z.bad_points().values(), strict=True)}
    result, peak = _read(bench, "points.zip", Z.zip_of(files))
    upload = result.upload
    assert upload.n_used == 4 and len(upload.dropped) == 0 and peak < BUDGET_MB
    assert set(result.bad_criteria) == set(tasks)
    reasons = " | ".join(result.bad_criteria.values())
    for words in ("not a finite number (nan)", "not a finite number (inf)", "more than max",
                  "negative"):  # fmt: skip
        assert words in reasons
    process = upload.verdicts[upload.verdicts["dimension"] == "process"]
    assert process["score"].isna().all() and process["label"].isna().all()
    assert (upload.verdicts.loc[upload.verdicts["dimension"] == "outcome", "label"] == 1).all()
    assert any("not finite or not within [0, max]" in n for n in upload.notes)


def test_a_10000_by_10000_relevance_matrix(bench) -> None:
    name, cell = _good(bench)
    data = Z.zip_of({"matrix.json": Z.relevance_10k(), name: cell})
    result, peak = _read(bench, "matrix.zip", data)
    assert "10,000 screenshots x 10,000 criteria" in _reasons(result)
    assert result.upload.n_used == 1 and peak < BUDGET_MB


def test_every_hostile_message_is_plain_and_bounded(bench) -> None:
    stored = Z.zip_of({"a.json": "{}"}, zipfile.ZIP_STORED)
    cut = stored[: len(stored) - 10]
    for data in (cut, b"PK\x03\x04not a zip"):
        message, _ = _read(bench, "broken.zip", data)
        assert isinstance(message, str) and "not a readable zip archive" in message
        assert len(message) < 600 and "Traceback" not in message
    none, _ = _read(bench, "empty.zip", Z.zip_of({"readme.txt": "hi"}))
    assert isinstance(none, str) and "not a .json file" in none


def test_unknown_tasks_and_duplicates_are_dropped_by_the_predictions_rules(bench) -> None:
    (t, cell), (u, other) = list(Z.internal_cells(bench.tasks).items())[:2]
    files = {f"{t}.json": cell, f"again/{t}.json": cell, "nosuchtask_1.json": cell}
    result = S.parse_score_files([("d.zip", Z.zip_of(files | {f"{u}.json": other}))], bench.tasks)
    assert result.upload.n_used == 1 and len(result.upload.dropped) == 3
    reasons = _reasons(result)
    assert 'unknown task_id "nosuchtask_1"' in reasons and '"again/' in reasons
    assert sorted(result.upload.dropped["row"]) == [1, 2, 3]
    with pytest.raises(PredictionsError) as caught:
        S.parse_score_files([("d.zip", Z.zip_of(files))], bench.tasks)
    assert "No usable row" in str(caught.value) and len(caught.value.dropped) == 3


def test_the_reader_bounds_are_what_the_docs_say() -> None:
    assert sf.MAX_DEPTH < 64 <= sf.MAX_CRITERIA * 10
    assert S.MAX_TOTAL_BYTES < 300 * 2**20 and S.MAX_ENTRIES < 100_000


@pytest.mark.parametrize("kind", ["zip", "jsonl"])
def test_report_cli_reads_score_files(bench, mirror_dir, tmp_path, kind: str) -> None:
    from lib import report

    path = tmp_path / f"uv_again.{kind}"
    path.write_bytes(Z.cells_zip(bench.tasks) if kind == "zip" else Z.cells_jsonl(bench.tasks))
    (upload,) = report.load_predictions(bench, [path])
    _assert_equal_to_the_universal_verifier(bench, upload)


def test_the_uploaded_two_pass_record_equals_the_universal_verifier_s(bench) -> None:
    from lib import report
    from lib.vocab import Bootstrap

    boot = Bootstrap(n_resamples=200)
    read = S.read_upload([("uv_again.zip", Z.cells_zip(bench.tasks))], bench.tasks)
    cells = {read.upload.raters[0]: read.cells}
    mine = report.uploaded_two_pass_records(bench, cells, boot)
    uv = report._two_pass_records(bench, boot)
    assert mine and [r.pop("verifier") for r in mine] == ["mine:uv_again"] * len(uv)
    assert json.dumps(report.to_jsonable(mine)) == json.dumps(report.to_jsonable(uv))


def test_the_uploaded_process_outcome_records_equal_the_universal_verifier_s(bench) -> None:
    from lib import report
    from lib.vocab import Bootstrap

    boot = Bootstrap(n_resamples=200)
    read = S.read_upload([("uv_again.zip", Z.cells_zip(bench.tasks))], bench.tasks)
    cells = {read.upload.raters[0]: read.cells}
    with_upload = report.with_uploads(bench, [read.upload])
    mine = report.uploaded_process_outcome_records(with_upload, cells, boot)
    uv = [
        r
        for r in report._process_outcome_records(bench, boot)
        if r["split"] == "internal" and r["rater"] == "uv"
    ]
    assert len(mine) == len(uv) == 4
    assert [r.pop("verifier") for r in mine] == ["mine:uv_again"] * 4
    # uv_rubric_score is float32 in the dataset: no task sits within 1e-6 of 0.8 here
    assert json.dumps(report.to_jsonable(mine)) == json.dumps(report.to_jsonable(uv))
