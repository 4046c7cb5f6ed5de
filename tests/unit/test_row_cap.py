"""The row cap grows with the loaded data (one row per task for each verifier a file may
hold) and stays bounded: the 20 MB and parse-memory bounds still refuse what it allows."""

from __future__ import annotations

import pandas as pd
import pytest

from lib.uploads import predictions as P
from lib.uploads.predictions import PredictionsError, parse_predictions

N_TASKS = 6_000  # cap 60,000 rows: above the 50,000 floor


def tasks(n: int) -> pd.DataFrame:
    return pd.DataFrame({"split": ["internal"] * n, "task_id": [f"fam_t{i}" for i in range(n)]})


def full_file(frame: pd.DataFrame, extra: int = 0) -> bytes:
    """`MAX_VERIFIERS_PER_FILE` verifiers on every task (+ ``extra`` rows)."""
    ids = frame["task_id"].tolist()
    rows = [f"v{v},{t},1" for v in range(P.MAX_VERIFIERS_PER_FILE) for t in ids]
    rows += [f"v0,{ids[0]}_x,1"] * extra
    return ("verifier,task_id,outcome\n" + "\n".join(rows) + "\n").encode()


def test_the_cap_is_ten_verifiers_on_every_task_and_at_least_50000() -> None:
    assert P.row_cap(0) == P.row_cap(260) == P.MAX_ROWS == 50_000
    assert P.row_cap(26_000) == 260_000 == P.MAX_VERIFIERS_PER_FILE * 26_000


def test_a_file_at_the_verifier_cap_on_every_task_is_accepted_one_more_row_is_not() -> None:
    frame = tasks(N_TASKS)
    upload = parse_predictions(full_file(frame), "ten.csv", frame)
    assert upload.n_rows == upload.n_used == 60_000 > P.MAX_ROWS
    assert len(upload.raters) == P.MAX_VERIFIERS_PER_FILE
    with pytest.raises(PredictionsError, match="more than 60,000 data rows; the limit is 60,000"):
        parse_predictions(full_file(frame, extra=1), "ten.csv", frame)


def test_the_same_file_on_the_real_size_is_over_the_cap() -> None:
    with pytest.raises(PredictionsError, match="more than 50,000 data rows"):
        parse_predictions(full_file(tasks(N_TASKS)), "ten.csv", tasks(260))


def test_the_parse_memory_estimate_still_bounds_a_huge_cap() -> None:
    """On 1,000,000 tasks the cap is 10 million rows; 3 million tiny rows (12 MB, within
    20 MB) are refused by the memory estimate before any frame is built."""
    many = tasks(1_000_000)
    assert P.row_cap(len(many)) == 10_000_000
    data = b"task_id,outcome\n" + b"a,1\n" * 3_000_000
    assert len(data) < P.MAX_BYTES
    with pytest.raises(PredictionsError, match=r"of memory; the limit is 256\.0 MB"):
        parse_predictions(data, "tiny_rows.csv", many)
