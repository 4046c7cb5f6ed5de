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


def test_row_order_and_index_do_not_matter(bench) -> None:
    """`encode` works on positions (its groups): a shuffled history of two verifiers with
    one index label on every row decodes to the same rows, and both verifiers travel."""
    history = _history(bench)
    both = pd.concat([history, history.assign(rater="mine:other")], ignore_index=True)
    shuffled = both.sample(frac=1, random_state=3).set_axis([0] * len(both))
    key = ["rater", "order", "run", "split", "task_id", "dimension"]
    want = hs.decode(hs.encode(both)).sort_values(key).reset_index(drop=True)
    got = hs.decode(hs.encode(shuffled)).sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want)
    assert set(got["rater"]) == {history["rater"].iloc[0], "mine:other"}
    assert len(got) == len(both)


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
