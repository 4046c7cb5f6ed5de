"""Uploaded predictions: every validation branch, each format and spelling, the report."""

from __future__ import annotations

import io
import json
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from lib.uploads import predictions as P
from lib.uploads.predictions import PredictionsError, parse_predictions
from lib.uploads.predictions import read as R
from lib.uploads.predictions import validate as V
from tests.helpers.upload_files import FORMATS, encode

OM2W = "fara7b_om2w_browserbase"
TASKS = pd.DataFrame(
    {
        "split": [OM2W, OM2W, OM2W, "internal", "internal"],
        "task_id": [
            "Shop--aaaa1111",
            "Shop--bbbb2222",
            "Shop--cccc3333",
            "fam_find_1",
            "fam_find_2",
        ],
    }
)


def csv(text: str) -> bytes:
    return textwrap.dedent(text).strip().encode() + b"\n"


def parse(text: str | bytes, name: str = "mine.csv", **kw) -> P.Upload:
    data = csv(text) if isinstance(text, str) else text
    return parse_predictions(data, name, TASKS, **kw)


def reject(text: str | bytes, name: str = "mine.csv") -> str:
    with pytest.raises(PredictionsError) as info:
        parse(text, name)
    return str(info.value)


def labels(upload: P.Upload, dimension: str = "outcome") -> dict[str, object]:
    rows = upload.verdicts[upload.verdicts["dimension"] == dimension]
    pairs = zip(rows.task_id, rows.label, strict=True)
    return {t: (None if pd.isna(v) else int(v)) for t, v in pairs}


# ---------------------------------------------------------------------------------------
# Spellings and formats
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("yes", "no"),
    [
        ("1", "0"),
        ("1.0", "0.0"),
        ("true", "false"),
        ("True", "FALSE"),
        ("success", "failure"),
        ("Success", "Failure"),
        ("correct", "incorrect"),
        (" Correct ", " Incorrect "),
        ("yes", "no"),
        ("pass", "fail"),
    ],
)
def test_each_label_spelling(yes: str, no: str) -> None:
    upload = parse(f'task_id,outcome\nShop--aaaa1111,"{yes}"\nShop--bbbb2222,"{no}"')
    assert labels(upload) == {"Shop--aaaa1111": 1, "Shop--bbbb2222": 0}
    assert upload.dropped.empty


def _rows() -> list[dict]:
    return [
        {"task_id": "Shop--aaaa1111", "outcome": 1, "process": 1, "score": 0.9},
        {"task_id": "fam_find_1", "outcome": 0, "process": 0, "score": 0.25},
    ]


def _encode(fmt: str) -> tuple[bytes, str]:
    frame = pd.DataFrame(_rows())
    if fmt == "csv":
        return frame.to_csv(index=False).encode(), "v.csv"
    if fmt == "tsv":
        return frame.to_csv(index=False, sep="\t").encode(), "v.tsv"
    if fmt == "jsonl":
        return "\n".join(json.dumps(r) for r in _rows()).encode(), "v.jsonl"
    if fmt == "json":
        return json.dumps(_rows(), indent=2).encode(), "v.json"
    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    return buffer.getvalue(), "v.parquet"


@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl", "json", "parquet"])
def test_every_format_gives_the_same_rows(fmt: str) -> None:
    data, name = _encode(fmt)
    upload = parse_predictions(data, name, TASKS)
    assert upload.file_format == fmt
    assert upload.raters == ["mine:v"]
    assert labels(upload) == {"Shop--aaaa1111": 1, "fam_find_1": 0}
    assert labels(upload, "process") == {"Shop--aaaa1111": 1, "fam_find_1": 0}
    process = upload.verdicts[upload.verdicts["dimension"] == "process"]
    assert process["score"].tolist() == [0.9, 0.25]
    assert upload.verdicts.loc[upload.verdicts["dimension"] == "outcome", "score"].isna().all()
    assert upload.verdicts["split"].tolist() == [OM2W, OM2W, "internal", "internal"]


def test_json_booleans_and_content_sniffing_without_a_known_extension() -> None:
    lines = [
        {"task_id": "Shop--aaaa1111", "outcome": True},
        {"task_id": "fam_find_1", "outcome": False},
    ]
    upload = parse("\n".join(json.dumps(r) for r in lines).encode(), "preds.txt")
    assert upload.file_format == "jsonl"
    assert labels(upload) == {"Shop--aaaa1111": 1, "fam_find_1": 0}


def test_several_verifiers_in_one_file_and_the_same_task_for_each() -> None:
    upload = parse(
        """
        verifier,task_id,outcome
        alpha,Shop--aaaa1111,1
        beta,Shop--aaaa1111,0
        alpha,fam_find_1,0
        """
    )
    assert upload.raters == ["mine:alpha", "mine:beta"]
    assert upload.dropped.empty
    by_rater = upload.verdicts.groupby("rater")["task_id"].apply(list).to_dict()
    assert by_rater == {
        "mine:alpha": ["Shop--aaaa1111", "fam_find_1"],
        "mine:beta": ["Shop--aaaa1111"],
    }


def test_without_a_verifier_column_the_file_name_names_it_and_columns_are_matched_loosely() -> None:
    upload = parse("Task_ID, Label ,notes\nShop--aaaa1111,1,fine", name="gpt judge@v2.csv")
    assert upload.raters == ["mine:gpt judge_v2"]  # `@` is reserved for the informed stage
    assert any('"notes"' in n for n in upload.notes)


def test_verdict_rows_have_the_verdict_table_dtypes(bench) -> None:
    sample = bench.folder / "sample_predictions.csv"
    upload = parse_predictions(sample.read_bytes(), sample.name, bench.tasks)
    assert list(upload.verdicts.columns) == list(bench.verdicts.columns)
    assert upload.verdicts.dtypes.to_dict() == bench.verdicts.dtypes.to_dict()
    assert set(upload.verdicts["kind"]) == {"verifier"}
    assert upload.raters == ["mine:my_verifier_v1", "mine:my_verifier_v2"]
    assert upload.n_used == upload.n_rows == 2 * len(bench.tasks)
    assert upload.dropped.empty
    assert (upload.coverage["outcome coverage"] == 1.0).all()
    assert upload.coverage["tasks in split"].tolist() == [106, 154, 106, 154]
    combined = pd.concat([bench.verdicts, upload.verdicts], ignore_index=True)
    assert combined.dtypes.to_dict() == bench.verdicts.dtypes.to_dict()


# ---------------------------------------------------------------------------------------
# Process labels and scores
# ---------------------------------------------------------------------------------------


def test_score_goes_on_outcome_rows_when_there_is_no_process_label() -> None:
    upload = parse("task_id,outcome,score\nShop--aaaa1111,1,0.7\nfam_find_1,0,")
    assert set(upload.verdicts["dimension"]) == {"outcome"}
    assert upload.verdicts["score"].tolist()[0] == 0.7
    assert pd.isna(upload.verdicts["score"].tolist()[1])


def test_an_empty_process_cell_is_a_missing_process_verdict_not_zero() -> None:
    upload = parse("task_id,outcome,process\nShop--aaaa1111,1,1\nfam_find_1,0,")
    assert labels(upload, "process") == {"Shop--aaaa1111": 1, "fam_find_1": None}
    assert any("no process label" in n for n in upload.notes)
    assert upload.dropped.empty


def test_scores_outside_the_unit_interval_or_not_numbers_drop_the_row() -> None:
    upload = parse(
        """
        task_id,outcome,score
        Shop--aaaa1111,1,1.5
        Shop--bbbb2222,1,-0.1
        Shop--cccc3333,1,high
        fam_find_1,0,1
        fam_find_2,0,nan
        """
    )
    assert labels(upload) == {"fam_find_1": 0, "fam_find_2": 0}
    reasons = upload.dropped.set_index("row")["reason"].to_dict()
    assert reasons == {
        1: 'score "1.5" is outside [0, 1]',
        2: 'score "-0.1" is outside [0, 1]',
        3: 'score "high" is not a number',
    }


# ---------------------------------------------------------------------------------------
# Row-level problems: the row is dropped and listed, the rest is used
# ---------------------------------------------------------------------------------------


def test_unknown_task_ids_are_listed_and_dropped() -> None:
    upload = parse(
        "task_id,outcome\nShop--aaaa1111,1\nNope--00000000,1\nfam_find_1,0\nalso_unknown_3,0\n"
        "Nope--00000000,0"
    )
    assert upload.unknown_task_ids == ["Nope--00000000", "also_unknown_3"]
    assert upload.dropped["row"].tolist() == [2, 4, 5]
    assert upload.dropped["reason"].str.contains("unknown task_id").all()
    assert labels(upload) == {"Shop--aaaa1111": 1, "fam_find_1": 0}
    assert upload.n_used + len(upload.dropped) == upload.n_rows == 5


def test_duplicate_task_ids_of_one_verifier_drop_every_copy() -> None:
    upload = parse(
        "task_id,outcome\nShop--aaaa1111,1\nfam_find_1,0\nShop--aaaa1111,1\nShop--bbbb2222,0"
    )
    assert upload.dropped["row"].tolist() == [1, 3]
    assert "appears 2 times" in upload.dropped["reason"].iloc[0]
    assert "rows 1, 3" in upload.dropped["reason"].iloc[0]
    assert labels(upload) == {"fam_find_1": 0, "Shop--bbbb2222": 0}


def test_unparseable_labels_are_reported_with_row_numbers_and_all_reasons() -> None:
    upload = parse(
        """
        task_id,outcome,process,score
        Shop--aaaa1111,1,1,0.9
        Shop--bbbb2222,maybe,1,0.9
        Shop--cccc3333,1,partial,2
        fam_find_1,,0,0.1
        fam_find_2,0.5,0,0.1
        """
    )
    reasons = upload.dropped.set_index("row")["reason"].to_dict()
    assert set(reasons) == {2, 3, 4, 5}
    assert reasons[2].startswith('outcome "maybe" is not a label')
    assert 'process "partial" is not a label' in reasons[3]
    assert 'score "2" is outside [0, 1]' in reasons[3]  # every reason, not only the first
    assert reasons[4] == "outcome is empty"
    assert '"0.5" is not a label' in reasons[5]
    assert labels(upload) == {"Shop--aaaa1111": 1}
    assert labels(upload, "process") == {"Shop--aaaa1111": 1}  # a dropped row gives nothing


def test_split_column_checked_against_the_task() -> None:
    upload = parse(
        """
        task_id,split,outcome
        Shop--aaaa1111,fara7b_om2w_browserbase,1
        Shop--bbbb2222,om2w,1
        Shop--cccc3333,internal,1
        fam_find_1,,0
        fam_find_2,training,0
        """
    )
    reasons = upload.dropped.set_index("row")["reason"].to_dict()
    assert reasons[3] == f'split is "internal" but task "Shop--cccc3333" is in "{OM2W}"'
    assert reasons[5].startswith('unknown split "training"')
    assert labels(upload) == {"Shop--aaaa1111": 1, "Shop--bbbb2222": 1, "fam_find_1": 0}
    assert upload.verdicts["split"].tolist() == [OM2W, OM2W, "internal"]


def test_empty_task_id_and_empty_verifier_name_are_row_problems() -> None:
    upload = parse("verifier,task_id,outcome\na,,1\n,Shop--aaaa1111,1\na,fam_find_1,0")
    reasons = upload.dropped.set_index("row")["reason"].to_dict()
    assert reasons == {1: "task_id is empty", 2: "verifier name is empty"}
    assert upload.raters == ["mine:a"]


def test_a_name_already_loaded_in_the_session_is_renamed() -> None:
    upload = parse("task_id,outcome\nShop--aaaa1111,1", name="v1.csv", taken={"mine:v1"})
    assert upload.raters == ["mine:v1 (2)"]
    assert any("already loaded" in n for n in upload.notes)


# ---------------------------------------------------------------------------------------
# File-level problems: the whole file is rejected
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "name"),
    [(b"", "e.csv"), (b"  \n\n", "e.csv"), (b"task_id,outcome\n", "e.csv"), (b"\n\n", "e.jsonl")],
)
def test_an_empty_file_is_rejected(data: bytes, name: str) -> None:
    message = reject(data, name)
    assert "empty" in message or "no data rows" in message


def test_a_png_is_rejected_as_the_wrong_format() -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 100
    assert "is a PNG image" in reject(png, "predictions.csv")


def test_invalid_json_lines_are_rejected_with_line_numbers() -> None:
    text = '{"task_id": "Shop--aaaa1111", "outcome": 1}\nnot json\n{"task_id": "fam_find_1"\n[1]'
    message = reject(text.encode(), "p.jsonl")
    assert "not valid JSON Lines" in message
    assert "line 2, 3, 4" in message
    assert "Nothing was loaded" in message


@pytest.mark.parametrize(
    ("data", "name", "expected"),
    [
        (
            b"task_id,outcome\nShop--aaaa1111,1",
            "p.parquet",
            "named like a parquet file but is not one",
        ),
        (b"PAR1 this is not really parquet", "p.parquet", "not a readable parquet file"),
        (b"task_id,outcome\n\xff\xfe\xfa,1", "p.csv", "not UTF-8"),
        (b"PK\x03\x04 zipped", "p.xlsx", "ZIP archive"),
        (b'task_id,outcome\n"Shop--aaaa1111,1\n', "p.csv", "not valid CSV"),
        (b'[{"task_id": 1}, 2]', "p.json", "array of objects"),
    ],
)
def test_other_wrong_formats_are_rejected(data: bytes, name: str, expected: str) -> None:
    assert expected in reject(data, name)


def test_a_file_over_the_size_limit_is_rejected_before_parsing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def must_not_parse(*_args, **_kwargs):
        raise AssertionError("parsed a file over the limit")

    monkeypatch.setattr(R, "detect_format", must_not_parse)
    data = b"task_id,outcome\n" + b"Shop--aaaa1111,1\n" * (P.MAX_BYTES // 17 + 1)
    assert len(data) > P.MAX_BYTES
    assert "the limit is 20.0 MB" in reject(data)


@pytest.mark.parametrize(
    ("header", "missing"),
    [
        ("task,label_x", '"outcome"'),
        ("id,outcome", '"task_id"'),
        ("a,b", '"task_id" and "outcome"'),
    ],
)
def test_missing_required_columns_reject_the_file(header: str, missing: str) -> None:
    message = reject(f"{header}\nShop--aaaa1111,1")
    assert f"no {missing} column" in message
    assert "columns found" in message


def test_two_columns_for_one_role_reject_the_file() -> None:
    assert "several columns for outcome" in reject("task_id,outcome,label\nShop--aaaa1111,1,0")


def test_a_file_without_any_valid_row_is_rejected_with_its_problems() -> None:
    with pytest.raises(PredictionsError) as info:
        parse("task_id,outcome\nnope_1,1\nShop--aaaa1111,maybe")
    assert "nothing was loaded" in str(info.value)
    assert info.value.dropped["row"].tolist() == [1, 2]


# ---------------------------------------------------------------------------------------
# Session helpers
# ---------------------------------------------------------------------------------------


def test_add_remove_and_summarise_the_sessions_uploads() -> None:
    first = parse("task_id,outcome,process\nShop--aaaa1111,1,0\nfam_find_1,0,0", name="a.csv")
    second = parse("task_id,outcome\nShop--aaaa1111,0", name="b.csv", taken=set(first.raters))
    table = P.add_upload(P.add_upload(None, first), second)
    assert table.dtypes.to_dict() == first.verdicts.dtypes.to_dict()
    summary = P.uploaded_summary(table)
    assert summary.to_dict("records") == [
        {
            "verifier": "a",
            "outcome verdicts": 2,
            "process verdicts": 2,
            "splits": "internal + om2w",
        },
        {"verifier": "b", "outcome verdicts": 1, "process verdicts": 0, "splits": "om2w"},
    ]
    left = P.remove_raters(table, ["mine:a"])
    assert set(left["rater"]) == {"mine:b"}
    assert P.uploaded_summary(None).empty


# ---------------------------------------------------------------------------------------
# The headless report
# ---------------------------------------------------------------------------------------


def test_report_round_trip(report_with_predictions_json: str) -> None:
    out = json.loads(report_with_predictions_json)
    (loaded,) = out["predictions"]
    assert loaded["verifiers"] == ["mine:my_verifier_v1", "mine:my_verifier_v2"]
    assert loaded["n_used"] == 520 and loaded["n_dropped"] == 0
    uv = [r for r in out["your_verifier"] if r["rater"] == "mine:my_verifier_v1"]
    assert {(r["dimension"], r["metric"]) for r in uv} >= {("outcome", "kappa"), ("process", "fnr")}
    assert all(r["n_paired"] > 0 and r["bootstrap"]["n_resamples"] == 2000 for r in uv)
    sections = [k for k in ("agreement", "judge_pairs") if k in out]
    assert sections, "no section of the report could show the uploaded verifier"
    for key in sections:  # the sections ran on the verdict table with the uploaded rows
        assert "mine:my_verifier_v1" in json.dumps(out[key]), key


def test_report_sections_get_the_uploaded_rows(
    mirror_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from lib import report

    seen: list[set[str]] = []

    def spy(bench, cluster: str = "task") -> list[dict]:
        seen.append(set(bench.verdicts["rater"]))
        return []

    monkeypatch.setattr(report, "SECTIONS", {"spy": spy})
    sample = mirror_dir / "sample_predictions.csv"
    assert report.main(["--data", str(mirror_dir), "--predictions", str(sample)]) == 0
    assert {"mine:my_verifier_v1", "mine:my_verifier_v2", "uv_outcome_success"} <= seen[0]
    capsys.readouterr()
    assert report.main(["--data", str(mirror_dir)]) == 0  # without: unchanged
    assert not any(r.startswith("mine:") for r in seen[1])
    assert "predictions" not in json.loads(capsys.readouterr().out)


@pytest.mark.usefixtures("report_memo")  # the sample's sections, computed once
def test_report_rejects_a_bad_file_and_warns_about_dropped_rows(
    mirror_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from lib import report

    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n")
    assert report.main(["--data", str(mirror_dir), "--predictions", str(bad)]) == 2
    assert "PNG image" in capsys.readouterr().err
    partial = tmp_path / "partial.csv"
    sample = (mirror_dir / "sample_predictions.csv").read_text()
    partial.write_text(sample + "Nope--00000000,internal,my_verifier_v1,1,1,0.9\n")
    assert report.main(["--data", str(mirror_dir), "--predictions", str(partial)]) == 0
    captured = capsys.readouterr()
    assert 'row 521 dropped: unknown task_id "Nope--00000000"' in captured.err
    assert json.loads(captured.out)["predictions"][0]["unknown_task_ids"] == ["Nope--00000000"]


def test_a_task_id_in_two_splits_needs_the_split_column() -> None:
    tasks = pd.concat([TASKS, pd.DataFrame({"split": ["internal"], "task_id": ["Shop--aaaa1111"]})])
    upload = parse_predictions(
        csv("task_id,split,outcome\nShop--aaaa1111,,1\nShop--aaaa1111,internal,0"), "v.csv", tasks
    )
    assert upload.dropped["reason"].tolist() == [
        'task "Shop--aaaa1111" is in several splits: add a split column'
    ]
    assert upload.verdicts["split"].tolist() == ["internal"]


# ---------------------------------------------------------------------------------------
# Bounded work, encodings (issue 15)
# ---------------------------------------------------------------------------------------


def test_twenty_thousand_duplicate_rows_give_bounded_messages() -> None:
    """20,000 rows of one task: every row dropped, each reason short (was quadratic)."""
    data = b"task_id,outcome\n" + b"Shop--aaaa1111,1\n" * 20_000 + b"fam_find_1,0\n"
    upload = parse(data)
    assert len(upload.dropped) == 20_000
    reasons = upload.dropped["reason"]
    assert reasons.nunique() == 1  # one message for the group
    assert reasons.str.len().max() < 200
    reason = reasons.iloc[0]
    assert "appears 20,000 times" in reason
    assert "rows 1, 2, 3, 4, 5, … (19,995 more)" in reason
    assert labels(upload) == {"fam_find_1": 0}


def test_one_duplicate_message_per_group_names_its_rows() -> None:
    upload = parse(
        "task_id,outcome\nfam_find_1,1\nfam_find_2,1\nfam_find_1,0\nfam_find_2,0\nShop--aaaa1111,1"
    )
    by_row = dict(zip(upload.dropped["row"], upload.dropped["reason"], strict=True))
    assert "rows 1, 3)" in by_row[1] and by_row[1] == by_row[3]
    assert "rows 2, 4)" in by_row[2] and by_row[2] == by_row[4]


@pytest.mark.parametrize("fmt", FORMATS)
def test_more_rows_than_the_cap_reject_the_file(fmt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(R, "MAX_ROWS", 10)
    monkeypatch.setattr(V, "MAX_VERIFIERS_PER_FILE", 1)  # row_cap: max(10, 1 x 5 tasks)
    frame = pd.DataFrame({"task_id": ["fam_find_1"] * 11, "outcome": [1] * 11})
    data = encode(frame, fmt)
    assert "more than 10 data rows" in reject(data, f"big.{fmt}")
    at_cap = pd.DataFrame({"task_id": [*TASKS.task_id] * 2, "outcome": [1] * 10})
    at_cap.loc[9, "task_id"] = "nope"
    upload = parse(at_cap.to_csv(index=False).encode())
    assert upload.n_rows == 10 and upload.n_used == 1  # at the cap: read, rows judged


def test_the_real_cap_is_checked_while_reading() -> None:
    data = b"task_id,outcome\n" + b"a,1\n" * (P.MAX_ROWS + 1)
    assert f"more than {P.MAX_ROWS:,} data rows" in reject(data)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-8-sig"])
def test_utf16_and_bom_exports_are_decoded(encoding: str) -> None:
    text = "task_id\toutcome\r\nShop--aaaa1111\t1\r\nfam_find_1\t0\r\n"
    data = text.encode(encoding)
    if encoding in ("utf-16-le", "utf-16-be"):  # what "Unicode text" exports write: a BOM
        data = ("\ufeff" + text).encode(encoding)
    upload = parse(data, "export.csv")
    assert labels(upload) == {"Shop--aaaa1111": 1, "fam_find_1": 0}
    comma = "task_id,outcome\nShop--aaaa1111,1\n".encode("utf-16")
    assert labels(parse(comma, "export.csv")) == {"Shop--aaaa1111": 1}


def test_utf16_json_lines_are_sniffed() -> None:
    data = '{"task_id": "fam_find_1", "outcome": 1}\n'.encode("utf-16")
    assert labels(parse(data, "preds")) == {"fam_find_1": 1}


@pytest.mark.usefixtures("report_memo")  # the sample's sections, computed once
@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"task_id,outcome\n" + b"a,1\n" * 20_000, "appears 20,000 times"),
        (b"SAMPLE-AS-UTF16", None),
        (b"", "is empty"),
    ],
)
def test_report_cli_one_line_error_or_success(
    mirror_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    content: bytes,
    expected: str | None,
) -> None:
    """A bad file: exit 2 and one `error:` line; a UTF-16 export: loaded."""
    from lib import report

    path = tmp_path / "p.csv"
    if content == b"SAMPLE-AS-UTF16":  # the mirror's sample, as a spreadsheet exports it
        content = (mirror_dir / "sample_predictions.csv").read_text().encode("utf-16")
    path.write_bytes(content)
    code = report.main(["--data", str(mirror_dir), "--predictions", str(path)])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if expected is None:
        assert code == 0
        return
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0]


def test_report_cli_unexpected_failure_is_one_line(
    mirror_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    from lib import report

    def boom(*args: object, **kwargs: object) -> None:
        raise MemoryError("out of memory\nsecond line")

    monkeypatch.setattr(P, "parse_predictions", boom)
    path = tmp_path / "p.csv"
    path.write_text("task_id,outcome\nfam_find_1,1\n")
    assert report.main(["--data", str(mirror_dir), "--predictions", str(path)]) == 2
    expected = "error: cannot load predictions (MemoryError: out of memory)\n"
    assert capsys.readouterr().err == expected
