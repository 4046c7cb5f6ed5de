"""Upload bounds (issue 18): every dimension a visitor controls is capped before the work.

Each hostile file of `tests/helpers/hostile_uploads.py` is rejected with a clear message (no
traceback type, no backtick) while the parse's traced memory stays small; an honest file
of the same kind still loads, reading only the columns its roles need.
"""

from __future__ import annotations

import io
import json
import tracemalloc

import pandas as pd
import pytest

from lib.uploads import predictions as P
from lib.uploads.predictions import PredictionsError, parse_predictions
from lib.uploads.predictions import read as R
from tests.helpers import hostile_uploads as H
from tests.helpers.upload_files import FORMATS, encode

TASKS = pd.DataFrame({"split": ["internal"] * 3, "task_id": ["fam_1", "fam_2", "fam_3"]})


def _reject_small(data: bytes, name: str, budget_mb: float = 40) -> str:
    """The rejection message; fails if the parse traced more than `budget_mb` at its peak."""
    tracemalloc.start()
    try:
        with pytest.raises(PredictionsError) as info:
            parse_predictions(data, name, TASKS)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(info.value)
    assert peak < budget_mb * 2**20, f"{name}: peak {peak / 2**20:.0f} MB"
    assert "`" not in message and "Error" not in message, message
    return message


@pytest.mark.parametrize(
    ("name", "make", "expected"),
    [
        ("keys.jsonl", H.jsonl_own_keys, "more than 32 columns"),
        ("nulls.parquet", H.parquet_null_columns, "has 1,002 columns; the limit is 32"),
        ("wide.csv", H.csv_wide, "has 200,002 columns; the limit is 32"),
        ("deep.jsonl", H.json_deep, "nests JSON 100,001 levels deep; the limit is 16"),
        ("deep.json", lambda: H.json_deep(lines=False), "levels deep; the limit is 16"),
        ("big.jsonl", H.json_long_int, "a number of 5,000 digits; the limit is 100"),
        ("zip.parquet", H.parquet_compressible, "would take about"),
    ],
)
def test_hostile_files_are_rejected_before_the_work_they_drive(name, make, expected) -> None:
    assert expected in _reject_small(make(), name)


def test_the_memory_estimate_uses_the_parquet_footer() -> None:
    data = H.parquet_compressible()
    assert len(data) < 100_000  # tiny on disk ...
    message = _reject_small(data, "zip.parquet", budget_mb=5)  # ... refused unread
    assert "the limit is 256.0 MB" in message


def test_a_long_cell_rejects_the_file_with_its_row_and_column() -> None:
    data = b"task_id,outcome\nfam_1,1\n" + b"fam_2," + b"1" * 2_000 + b"\n"
    message = _reject_small(data, "long.csv")
    assert "the outcome cell of row 2 has 2,000 characters; the limit is 1,000" in message


def test_deep_nesting_within_the_limit_in_an_ignored_key_is_fine() -> None:
    nested = "[" * 10 + "]" * 10
    data = f'{{"task_id": "fam_1", "outcome": "yes", "meta": {nested}}}\n'.encode()
    upload = parse_predictions(data, "ok.jsonl", TASKS)
    assert upload.n_used == 1 and any('"meta"' in n for n in upload.notes)


def test_brackets_and_digits_inside_strings_do_not_count() -> None:
    text = '{"task_id": "fam_1", "outcome": 1, "why": "' + "[{" * 50 + "9" * 300 + '"}\n'
    assert parse_predictions(text.encode(), "ok.jsonl", TASKS).n_used == 1


def test_scan_counts_depth_and_records_across_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(R, "_SCAN_CHUNK", 7)  # many chunk borders
    text = json.dumps([{"a": [1, {"b": 2}]}, {"a": "[[["}, {}])
    assert R.scan_json(text, record_depth=2) == R.JsonShape(depth=4, records=3)
    lines = '{"a": 1}\n{"b": [2]}\n'
    assert R.scan_json(lines, record_depth=1) == R.JsonShape(depth=2, records=2)


@pytest.mark.parametrize("fmt", FORMATS)
def test_only_the_role_columns_are_read(fmt: str) -> None:
    frame = pd.DataFrame(
        {"task_id": ["fam_1", "fam_2"], "outcome": ["pass", "no"]}
        | {f"extra{i}": [str(i) * 5, None] for i in range(20)}
    )
    data = encode(frame, fmt)
    table = R.read_table(data, f"p.{fmt}")
    assert list(table.frame.columns) == ["task_id", "outcome"]
    assert table.ignored == [f"extra{i}" for i in range(20)]
    upload = parse_predictions(data, f"p.{fmt}", TASKS)
    assert upload.verdicts["label"].tolist() == [1, 0]


def test_a_json_array_is_read_one_record_at_a_time_and_checked() -> None:
    ok = b'[ {"task_id": "fam_1", "outcome": 1} ,\n {"task_id": "fam_2", "outcome": 0} ]\n'
    assert parse_predictions(ok, "a.json", TASKS).n_used == 2
    for broken in (b'[{"task_id": "fam_1", "outcome": 1}', b'[{"task_id": "x"} {"a": 1}]'):
        assert "is not valid JSON" in _reject_small(broken, "b.json")
    assert "array of objects" in _reject_small(b'[{"task_id": "fam_1"}, 2]', "c.json")


def test_verifier_caps_per_file_and_per_session() -> None:
    tasks = TASKS["task_id"].tolist()
    over = H.csv_many_verifiers(tasks, P.MAX_VERIFIERS_PER_FILE + 1)
    message = _reject_small(over, "many.csv")
    assert f"names {P.MAX_VERIFIERS_PER_FILE + 1} verifiers; the limit is 10 per file" in message
    at_cap = H.csv_many_verifiers(tasks, P.MAX_VERIFIERS_PER_FILE)
    first = parse_predictions(at_cap, "a.csv", TASKS)
    second = parse_predictions(at_cap, "b.csv", TASKS, taken=first.raters)
    assert len(first.raters) == len(second.raters) == 10
    with pytest.raises(PredictionsError) as info:
        parse_predictions(
            b"task_id,outcome\nfam_1,1\n", "c.csv", TASKS, first.raters + second.raters
        )
    assert "adds 1 verifier(s) to the 20 already loaded; the limit is 20 per session" in str(
        info.value
    )


def test_the_label_spellings_are_named_in_the_message() -> None:
    upload = parse_predictions(b"task_id,outcome\nfam_1,maybe\nfam_2,Pass\n", "s.csv", TASKS)
    (reason,) = upload.dropped["reason"]
    assert "yes" in reason and "pass" in reason and "no" in reason and "fail" in reason


def test_messages_never_show_backticks() -> None:
    cases = [
        (b"a,b\n1,2\n", "x.csv"),
        (b"\x89PNG\r\n\x1a\nxxxx", "x.png"),
        (b"task_id,outcome,label\nfam_1,1,0\n", "x.csv"),
        (b"task_id,outcome\nnope,1\n", "x.csv"),
        (b"not parquet", "x.parquet"),
    ]
    for data, name in cases:
        assert "`" not in _reject_small(data, name)
    upload = parse_predictions(
        b"task_id,outcome,notes\nfam_1,1,x\nfam_1,0,y\nfam_2,1,z\n", "n.csv", TASKS
    )
    for text in [*upload.notes, *upload.dropped["reason"]]:
        assert "`" not in text


def test_a_dictionary_encoded_long_string_is_refused_before_it_is_expanded() -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    long = pa.array(["x" * 5_000_000] * 50).dictionary_encode()  # 5 MB stored once
    table = pa.table({"task_id": long, "outcome": pa.array([1] * 50)})
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression="zstd")
    message = _reject_small(buffer.getvalue(), "dict.parquet", budget_mb=30)
    assert "has 5,000,000 bytes; the limit is 1,000 characters" in message


def test_a_nested_parquet_role_column_is_refused() -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"task_id": pa.array(["fam_1"]), "outcome": pa.array([[1, 0, 1]])})
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    assert "holds lists or structures" in _reject_small(buffer.getvalue(), "nested.parquet")
