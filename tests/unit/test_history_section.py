"""`lib.uploads.history_section`: a history survives bytes and back; bad bytes are refused."""

from __future__ import annotations

import zlib

import pandas as pd
import pytest

from lib.analysis import iterations as it
from lib.uploads import history_section as hs
from lib.uploads import predictions


def _history(bench) -> pd.DataFrame:
    frame = it.sample_history(bench.verdicts)
    frame["process"] = ["success", "", "failure"] * (len(frame) // 3) + [""] * (len(frame) % 3)
    data = frame.to_csv(index=False).encode()
    return predictions.parse_predictions(data, "h.csv", bench.tasks).history


def test_round_trip_is_equal_and_small(bench) -> None:
    history = _history(bench)
    blob = hs.encode(history)
    back = hs.decode(blob)
    key = ["rater", "order", "run", "split", "task_id", "dimension"]
    want = history.sort_values(key).reset_index(drop=True)
    got = back.sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    assert got["label"].isna().sum() == want["label"].isna().sum() > 0
    assert len(blob) < 20_000  # 12 version-runs x 2 dimensions x 260 tasks


def _raw(parts: bytes) -> bytes:
    return zlib.compress(hs.MAGIC + parts)


@pytest.mark.parametrize(
    "blob",
    [
        b"not zlib",
        zlib.compress(b"XX1"),
        _raw(hs._varint(hs.MAX_TASKS + 1)),
        _raw(hs._varint(0) + hs._varint(21)),  # 21 verifiers
        _raw(hs._varint(0) + hs._varint(1) + hs._text("mine:a") + hs._varint(51)),
        _raw(
            hs._varint(0)
            + hs._varint(1)
            + hs._text("mine:a")
            + hs._varint(1)
            + hs._text("v")
            + hs._varint(6)
        ),  # 6 runs
        _raw(hs._varint(0) + hs._varint(0) + b"extra"),
        zlib.compress(b"\x00" * (hs.MAX_BYTES + 10)),
    ],
)
def test_bad_or_oversized_bytes_are_refused(blob: bytes) -> None:
    with pytest.raises(hs.HistorySectionError):
        hs.decode(blob)
