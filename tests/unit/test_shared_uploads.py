"""lib.uploads.shared: content-addressed, bounded, self-healing store of shared uploads."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pandas as pd
import pytest

from lib.table.verdicts import COLUMNS
from lib.uploads import predictions
from lib.uploads import shared as SU


def _rows(name: str = "v1", n: int = 5) -> pd.DataFrame:
    rows = pd.DataFrame(
        {
            "split": ["internal"] * n,
            "task_id": [f"t{i}" for i in range(n)],
            "rater": [f"mine:{name}"] * n,
            "kind": ["verifier"] * n,
            "annotator": [None] * n,
            "stage": [None] * n,
            "dimension": ["outcome"] * n,
            "label": [i % 2 for i in range(n)],
            "score": [0.5] * n,
            "raw": ["1"] * n,
        },
        columns=COLUMNS,
    )
    return predictions.typed_verdicts(rows)


def test_round_trip_and_same_rows_same_hash(tmp_path: Path) -> None:
    rows = _rows()
    digest = SU.save(rows, tmp_path)
    assert SU.valid_hash(digest) and SU.save(rows, tmp_path) == digest
    assert SU.save(_rows("v2"), tmp_path) != digest
    pd.testing.assert_frame_equal(SU.load(digest, tmp_path), rows)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"{h}.parquet" for h in (digest, SU.save(_rows("v2"), tmp_path))
    )  # no temporary file left behind


@pytest.mark.parametrize(
    "bad", ["", "../" + "a" * 61, "A" * 64, "a" * 63, "a" * 65, "²" * 64, "a" * 63 + "\n"]
)
def test_only_64_hex_digits_become_a_path(tmp_path: Path, bad: str) -> None:
    assert not SU.valid_hash(bad)
    assert SU.load(bad, tmp_path) is None


def test_damaged_or_tampered_file_is_a_miss_and_removed(tmp_path: Path) -> None:
    digest = SU.save(_rows(), tmp_path)
    path = tmp_path / f"{digest}.parquet"
    path.write_bytes(path.read_bytes()[:100])  # truncated
    assert SU.load(digest, tmp_path) is None and not path.exists()
    other = SU.save(_rows("v2"), tmp_path)
    os.replace(tmp_path / f"{other}.parquet", path)  # valid parquet, wrong name
    assert SU.load(digest, tmp_path) is None and not path.exists()
    assert SU.load("f" * 64, tmp_path) is None  # never stored


def test_only_uploaded_verifier_rows_are_shared(tmp_path: Path) -> None:
    rows = _rows()
    with pytest.raises(SU.ShareError):
        SU.save(rows.assign(rater="uv_outcome_success"), tmp_path)
    with pytest.raises(SU.ShareError):
        SU.save(rows.assign(kind="human"), tmp_path)
    with pytest.raises(SU.ShareError):
        SU.save(rows.iloc[:0], tmp_path)
    assert not any(tmp_path.iterdir())


def test_bounded_by_count_least_recently_used_first(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(SU, "MAX_FILES", 3)
    digests = []
    for i in range(3):
        digests.append(SU.save(_rows(f"v{i}"), tmp_path))
        os.utime(tmp_path / f"{digests[-1]}.parquet", (time.time() - 100 + i,) * 2)
    assert SU.load(digests[0], tmp_path) is not None  # v0 used: now the most recent
    newest = SU.save(_rows("v3"), tmp_path)
    left = {p.name.removesuffix(".parquet") for p in tmp_path.glob("*.parquet")}
    assert left == {digests[0], digests[2], newest}  # v1 was the least recently used


def test_bounded_by_bytes_and_age(tmp_path, monkeypatch) -> None:
    old = SU.save(_rows("old"), tmp_path)
    past = time.time() - SU.MAX_AGE_S - 10
    os.utime(tmp_path / f"{old}.parquet", (past, past))
    assert SU.load(old, tmp_path) is None  # expired: a miss
    size = (tmp_path / f"{SU.save(_rows('a'), tmp_path)}.parquet").stat().st_size
    monkeypatch.setattr(SU, "MAX_TOTAL_BYTES", int(size * 1.5))
    last = SU.save(_rows("b"), tmp_path)
    assert [p.name for p in tmp_path.glob("*.parquet")] == [f"{last}.parquet"]
    monkeypatch.setattr(SU, "MAX_BYTES", 10)
    with pytest.raises(SU.ShareError, match="MB"):
        SU.save(_rows("c"), tmp_path)
