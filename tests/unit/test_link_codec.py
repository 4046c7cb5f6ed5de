"""lib.uploads.link_codec: a link carries the uploaded verdicts (issue 36). Round trip on
the demo's tasks with the sample file and with 20 scored verifiers; hostile links (a
flipped byte, a truncated payload, another revision, a payload that decodes to a million
verifiers or tasks, a zip bomb, an unknown must-understand section) are refused with one
line, load nothing, and stay under 20 MB of traced memory."""

from __future__ import annotations

import base64
import struct
import tracemalloc
import zlib

import numpy as np
import pandas as pd
import pytest

from lib.uploads import link_codec as L
from lib.uploads import predictions


def _key(rows: pd.DataFrame) -> pd.DataFrame:
    out = rows[["split", "task_id", "rater", "dimension", "label", "score"]].copy()
    out["label"] = out["label"].astype("Int8")
    out["score"] = out["score"].round(4)
    return out.sort_values(["rater", "split", "task_id", "dimension"]).reset_index(drop=True)


@pytest.fixture(scope="module")
def order(bench) -> L.Tasks:
    return L.task_order(bench.tasks)


@pytest.fixture(scope="module")
def sample(bench, mirror_dir) -> pd.DataFrame:
    data = (mirror_dir / "sample_predictions.csv").read_bytes()
    return predictions.parse_predictions(data, "sample_predictions.csv", bench.tasks).verdicts


def scored(tasks: pd.DataFrame, verifiers: int, seed: int = 0) -> pd.DataFrame:
    """``verifiers`` verifiers with outcome, process (some missing) and a score on every
    task: the largest link a session makes."""
    rng = np.random.default_rng(seed)
    frames = []
    for v in range(verifiers):
        n = len(tasks)
        process = rng.integers(0, 2, n).astype(object)
        process[rng.random(n) < 0.1] = None
        frames.append(
            pd.DataFrame(
                {
                    "verifier": f"judge_{v:02d}",
                    "split": tasks["split"].to_numpy(),
                    "task_id": tasks["task_id"].to_numpy(),
                    "outcome": rng.integers(0, 2, n),
                    "process": process,
                    "score": rng.random(n).round(6),
                }
            )
        )
    frame = pd.concat(frames, ignore_index=True)
    rows: list[pd.DataFrame] = []
    taken: set[str] = set()
    for start in range(0, verifiers, 10):  # at most 10 verifiers per file
        part = frame[frame["verifier"].isin([f"judge_{v:02d}" for v in range(start, start + 10)])]
        up = predictions.parse_predictions(part.to_csv(index=False).encode(), "x.csv", tasks, taken)
        taken |= set(up.raters)
        rows.append(up.verdicts)
    return predictions.typed_verdicts(pd.concat(rows, ignore_index=True))


def test_round_trip_sample(sample, order):
    payload = L.encode(sample, order)
    assert L.fits(payload) and L._CHARS.fullmatch(payload)
    got = L.decode(payload, order)
    assert list(got.rows.columns) == list(sample.columns)
    pd.testing.assert_frame_equal(_key(got.rows), _key(sample))
    assert got.rows.dtypes.equals(sample.dtypes)


def test_round_trip_twenty_scored(bench, order):
    rows = scored(bench.tasks, 20)
    payload = L.encode(rows, order)
    got = L.decode(payload, order).rows
    assert got["rater"].nunique() == 20
    pd.testing.assert_frame_equal(_key(got).drop(columns="score"), _key(rows).drop(columns="score"))
    order_by = ["rater", "split", "task_id", "dimension"]
    a = got.sort_values(order_by)["score"].to_numpy()
    b = rows.sort_values(order_by)["score"].to_numpy()
    assert np.array_equal(np.isnan(a), np.isnan(b))
    assert np.nanmax(np.abs(a - b)) <= 0.5 / L.SCORE_STEPS + 1e-12  # quantised to uint16
    assert got["label"].isna().sum() == rows["label"].isna().sum() > 0  # missing kept


def test_order_is_canonical(bench, order):
    shuffled = bench.tasks.sample(frac=1, random_state=3)
    assert L.task_order(shuffled) == order
    other = L.task_order(bench.tasks.iloc[1:])
    assert other.fingerprint != order.fingerprint


def _refused(payload: str, order: L.Tasks, words: str) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(L.LinkError) as info:
            L.decode(payload, order)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(info.value)
    assert "\n" not in message and len(message) < 300, message
    assert words in message, message
    assert peak < 20 * 2**20, peak


def _raw_payload(body: bytes, order: L.Tasks, n: int | None = None, fp: bytes | None = None,
                 version: int = L.VERSION, level: int = 9) -> str:  # fmt: skip
    fp = order.fingerprint if fp is None else fp
    head = L.HEADER.pack(version, fp, order.n if n is None else n)
    return base64.urlsafe_b64encode(head + zlib.compress(body, level)).rstrip(b"=").decode()


def test_flipped_byte(sample, order):
    payload = L.encode(sample, order)
    data = bytearray(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    for at in (len(data) // 2, len(data) - 3):
        data2 = bytearray(data)
        data2[at] ^= 0x5A
        bad = base64.urlsafe_b64encode(bytes(data2)).rstrip(b"=").decode()
        _refused(bad, order, "damaged")


def test_truncated(sample, order):
    payload = L.encode(sample, order)
    _refused(payload[: len(payload) // 2], order, "damaged")
    _refused(payload[:10], order, "damaged")


def test_other_revision_and_count(sample, bench, order):
    other = L.task_order(bench.tasks.assign(task_id=bench.tasks["task_id"] + "x"))
    _refused(L.encode(sample.assign(task_id=sample["task_id"] + "x"), other), order, "revision")
    _refused(_raw_payload(b"", order, n=order.n + 1), order, "tasks")


def test_million_tasks(order):
    _refused(_raw_payload(b"", order, n=1_000_000), order, "1,000,000 tasks")


def test_million_verifiers(order):
    body = struct.pack(">H", 0xFFFF)  # the count field's largest value
    section = L.SECTION_HEAD.pack(L.VERDICTS, len(body)) + body
    _refused(_raw_payload(section, order), order, "65,535 verifiers")
    # a section that claims a million verifiers' worth of bytes (zeros compress well)
    big = L.SECTION_HEAD.pack(L.VERDICTS, 3_000_000) + b"\0" * 3_000_000
    _refused(_raw_payload(big, order), order, "over its bound")


def test_zip_bomb(order):
    _refused(_raw_payload(b"\0" * (16 * 2**20), order), order, "decompresses to more")


def test_too_long_and_odd_characters(order):
    _refused("A" * (L.MAX_CHARS + 1), order, "characters")
    _refused("abc<script>", order, "damaged")
    _refused("", order, "empty")


def test_sections_registry(sample, order):
    payload = L.encode(sample, order, extra=[(0x7E, b"later")])  # unknown, optional: ignored
    got = L.decode(payload, order)
    assert got.skipped == 1 and got.rows["rater"].nunique() == sample["rater"].nunique()
    _refused(L.encode(sample, order, extra=[(0xFE, b"later")]), order, "newer version")
    with pytest.raises(ValueError):
        L.register(L.Section(L.VERDICTS, "again", lambda n: 0, lambda b, o: None))


def test_other_version(sample, order):
    _refused(_raw_payload(b"", order, version=9), order, "version")


def test_upload_csv_reads_back(sample, bench):
    frame = L.upload_csv_frame(sample)
    again = predictions.parse_predictions(
        frame.to_csv(index=False).encode(), "verdicts.csv", bench.tasks
    ).verdicts
    pd.testing.assert_frame_equal(_key(again), _key(sample))


def test_report_link_prints_the_query_string(mirror_dir, bench, sample, capsys):
    from lib import report

    argv = ["--data", str(mirror_dir), "--predictions", str(mirror_dir / "sample_predictions.csv")]
    assert report.main([*argv, "--link"]) == 0
    query = capsys.readouterr().out.strip()
    assert query.startswith("?v=") and "\n" not in query
    got = L.decode(query.removeprefix("?v="), L.task_order(bench.tasks)).rows
    pd.testing.assert_frame_equal(_key(got), _key(sample))
    assert report.main(["--data", str(mirror_dir), "--link"]) == 2  # nothing to link
