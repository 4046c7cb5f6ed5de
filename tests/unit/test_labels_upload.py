"""lib.uploads.labels (the labels file, the "your labels" reference) and
lib.uploads.labels_section (the bytes a link would carry)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from lib.analysis.agreement import agreement_records
from lib.csv_export import to_csv_bytes
from lib.table.verdicts import YOUR_LABELS, rater_title
from lib.uploads import labels as L
from lib.uploads import labels_section as S
from lib.vocab import BOOTSTRAP, Bootstrap

OM2W = "fara7b_om2w_browserbase"


@pytest.fixture(scope="module")
def tasks(bench) -> dict[str, str]:
    return dict(zip(bench.tasks["task_id"], bench.tasks["split"], strict=True))


def _some(bench, n: int = 6) -> pd.DataFrame:
    """n om2w tasks re-labelled: success, failure, unsure in turn (outcome), one process."""
    ids = bench.tasks.loc[bench.tasks["split"] == OM2W, "task_id"].head(n).tolist()
    rows = [
        {"split": OM2W, "task_id": t, "dimension": "outcome", "label": L.LABELS[i % 3],
         "note": f"note {i}"}
        for i, t in enumerate(ids)
    ]  # fmt: skip
    rows.append({"split": OM2W, "task_id": ids[0], "dimension": "process", "label": "failure",
                 "note": "=HYPERLINK(\"http://evil\")"})  # fmt: skip
    return L.merge(None, pd.DataFrame(rows))


def test_download_then_upload_round_trips(bench, tasks) -> None:
    mine = _some(bench)
    data = to_csv_bytes(L.download_frame(mine))
    assert data.splitlines()[0] == b'"task_id","dimension","label","note"' or data.startswith(
        b"task_id"
    )
    assert b"'=HYPERLINK" in data  # the formula-like note is exported inert
    back = L.read_labels(data, "my_labels.csv", tasks)
    assert back.n_dropped == 0
    pd.testing.assert_frame_equal(L.download_frame(back.labels), L.download_frame(mine))


def test_hostile_rows_are_dropped_and_listed(bench, tasks) -> None:
    good = bench.tasks["task_id"].iloc[0]
    text = (
        "task_id,dimension,label,note\n"
        f"{good},outcome,success,fine\n"
        "nosuchtask--0,outcome,success,\n"
        f"{good},quality,success,\n"
        f"{good},process,\"=cmd|' /C calc'!A0\",\n"
        f"{good},process,maybe,\n"
        ",outcome,failure,\n"
        f"{good},outcome,failure,later wins\n"
    )
    got = L.read_labels(text.encode(), "x.csv", tasks)
    assert got.n_dropped == 6
    reasons = " | ".join(got.dropped["reason"])
    assert "unknown task" in reasons and "quality" in reasons
    assert "\"=cmd|' /C calc'!A0\" is not success" in reasons
    assert "a later row (row 7)" in reasons and "empty task_id" in reasons
    assert got.labels[["task_id", "label", "note"]].values.tolist() == [
        [good, "failure", "later wins"]
    ]


def test_too_many_rows_is_refused_whole(tasks) -> None:
    task = next(iter(tasks))
    rows = "".join(f"{task},outcome,success,{i}\n" for i in range(L.MAX_ROWS + 1))
    with pytest.raises(L.LabelsError, match="more than 50,000 rows"):
        L.read_labels(("task_id,dimension,label,note\n" + rows).encode(), "big.csv", tasks)
    # exactly at the bound it is read (duplicates dropped, the last kept)
    ok = L.read_labels(("task_id,dimension,label,note\n" + rows.split("\n", 1)[1]).encode(),
                       "ok.csv", tasks)  # fmt: skip
    assert len(ok.labels) == 1 and ok.n_dropped == L.MAX_ROWS - 1
    assert len(ok.dropped) == L.MAX_DROPPED_LISTED


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"\x89PNG\r\n\x1a\nxxxx", "not a CSV"),
        (b"\xff\xfe\x00\x00bad", "not UTF-8"),
        (b"task,dim\nx,y\n", "lacks the column"),
        (b"", "no header"),
        (b"task_id,dimension,label\nnosuch,outcome,success\n", "No usable row"),
        (b"a" * (L.MAX_BYTES + 1), "MB at most"),
    ],
)
def test_refused_files(data: bytes, match: str, tasks) -> None:
    with pytest.raises(L.LabelsError, match=match):
        L.read_labels(data, "f.csv", tasks)


def test_long_note_is_cut(tasks) -> None:
    task = next(iter(tasks))
    text = f"task_id,dimension,label,note\n{task},outcome,unsure,{'x' * 2000}\n"
    got = L.read_labels(text.encode(), "f.csv", tasks)
    assert got.cut_notes == 1 and len(got.labels["note"].iloc[0]) == L.MAX_NOTE_CHARS


def test_agreement_against_your_labels_equals_sklearn(bench) -> None:
    mine = _some(bench)
    table = L.with_your_labels(bench.verdicts, mine)
    assert rater_title(YOUR_LABELS["outcome"]).startswith("Your labels")
    records = agreement_records(
        table,
        splits=[OM2W],
        pooled=False,
        boot=Bootstrap(n_resamples=50),
        only_verifiers=["uv_outcome_success"],
        only_references=[YOUR_LABELS["outcome"]],
    )
    (record,) = records
    # Independently: the final label, replaced by mine; unsure dropped; verifier nulls dropped.
    t = bench.tasks[bench.tasks["split"] == OM2W].set_index("task_id")
    ref = t["final_human_outcome_label"].astype("float")
    m = mine[mine["dimension"] == "outcome"].set_index("task_id")["label"]
    ref.loc[list(m.index)] = [{"success": 1.0, "failure": 0.0}.get(v, np.nan) for v in m]
    pred = t["uv_outcome_success"].astype("float")
    keep = ref.notna() & pred.notna()
    assert record.n == int(keep.sum())
    assert record.estimates["kappa"].value == pytest.approx(
        cohen_kappa_score(ref[keep].astype(int), pred[keep].astype(int))
    )
    counts = L.reference_counts(mine, table, "outcome", [OM2W])
    assert (counts.yours, counts.unsure) == (6, 2)
    assert counts.tasks == 106 and counts.final == 100
    assert record.n_missing_reference >= counts.unsure
    # no labels: the table is the same object
    assert L.with_your_labels(bench.verdicts, None) is bench.verdicts
    assert BOOTSTRAP.n_resamples == 2000


def test_section_round_trip_and_bounds(bench, tasks) -> None:
    mine = _some(bench)
    data = S.encode(mine)
    back = S.decode(data, tasks)
    assert back.unknown_tasks == 0
    pd.testing.assert_frame_equal(L.download_frame(back.labels), L.download_frame(mine))
    # Unknown tasks are dropped and counted.
    other = S.decode(data, {t: s for t, s in tasks.items() if t != mine["task_id"].iloc[0]})
    assert other.unknown_tasks == 2
    # Truncated, forged count, trailing bytes, bad version, bad code: refused with a message.
    for bad, match in (
        (data[:-3], "ends inside"),
        (bytes([1]) + S._varint(10**9), "at most"),
        (data + b"x", "after the last"),
        (bytes([2, 0]), "version 2"),
        (bytes([1, 1, 1]) + b"a" + bytes([9, 0]), "unknown label code"),
        (bytes([1, 1]) + S._varint(10**6), "at most"),
    ):
        with pytest.raises(S.SectionError, match=match):
            S.decode(bad, tasks)


def test_section_rides_in_the_link_codec(bench, monkeypatch: pytest.MonkeyPatch) -> None:
    """Registered as an optional section, the labels come back from a `?v=` payload; a
    damaged section is the codec's LinkError."""
    from lib.uploads import link_codec as C
    from lib.uploads.predictions import empty_verdicts

    assert C.SECTIONS[S.LABELS_TYPE].name == "labels"
    assert not C.SECTIONS[S.LABELS_TYPE].must_understand
    order = C.task_order(bench.tasks)
    mine = _some(bench)
    payload = C.encode(empty_verdicts(), order, extra=[(S.LABELS_TYPE, S.encode(mine))])
    got = C.decode(payload, order).sections["labels"]
    pd.testing.assert_frame_equal(L.download_frame(got), L.download_frame(mine))
    bad = C.encode(empty_verdicts(), order, extra=[(S.LABELS_TYPE, b"\x01\x05")])
    with pytest.raises(C.LinkError, match="labels are damaged"):
        C.decode(bad, order)
