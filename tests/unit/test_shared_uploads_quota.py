"""lib.uploads.shared against hostile visitors: links survive other visitors' shares
(issue 31), and a link is bounded like an upload (issue 26)."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import pandas as pd
import pytest

from lib.table.verdicts import COLUMNS
from lib.uploads import predictions
from lib.uploads import shared as SU

DAY = 86_400.0


def _rows(name: str = "v1", n: int = 5, verifiers: int = 1) -> pd.DataFrame:
    raters = [f"mine:{name}-{v}" if verifiers > 1 else f"mine:{name}" for v in range(verifiers)]
    rows = pd.DataFrame(
        {
            "split": ["internal"] * n * verifiers,
            "task_id": [f"t{i}" for _ in raters for i in range(n)],
            "rater": [r for r in raters for _ in range(n)],
            "kind": ["verifier"] * n * verifiers,
            "annotator": [None] * n * verifiers,
            "stage": [None] * n * verifiers,
            "dimension": ["outcome"] * n * verifiers,
            "label": [i % 2 for _ in raters for i in range(n)],
            "score": [0.5] * n * verifiers,
            "raw": ["1"] * n * verifiers,
        },
        columns=COLUMNS,
    )
    return predictions.typed_verdicts(rows)


ONE = _rows("spam", 1)


def _one(i: int) -> pd.DataFrame:
    """A distinct one-row upload (cheaply: the flood builds a thousand)."""
    return ONE.assign(rater=f"mine:spam{i}")


def _plant(rows: pd.DataFrame, folder: Path) -> str:
    """Store rows as an older version of the app would have (no verifier cap)."""
    data = SU._to_bytes(rows)
    digest = hashlib.sha256(data).hexdigest()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{digest}.parquet").write_bytes(data)
    return digest


def test_one_visitor_sharing_a_thousand_one_row_uploads_erases_no_victim_link(
    tmp_path: Path,
) -> None:
    """Issue 31's Done-when: 50 victim links, then 1,000 one-row shares by one visitor."""
    t0 = time.time()
    victims = {
        SU.save(_rows(f"victim{i}", 20), tmp_path, visitor=f"victim-{i}", now=t0 + i)
        for i in range(50)
    }
    assert len(victims) == 50
    stored, refused, notices = 0, [], []
    started = time.process_time()
    for i in range(1_000):
        try:
            shared = SU.share(_one(i), "attacker", tmp_path, now=t0 + 100 + 2 * i)
        except SU.ShareError as exc:
            refused.append(str(exc))
            continue
        stored += 1
        if shared.notice:
            notices.append(shared.notice)
    cpu = time.process_time() - started
    assert all(SU.load(d, tmp_path) is not None for d in victims), "a victim link was lost"
    # the attacker was told, both ways: its own oldest links go, then it is refused
    assert notices and all("reached your quota" in n for n in notices)
    assert refused and all("quota" in r for r in refused)
    assert stored <= 1_000 * 2 / SU.VISITOR_WINDOW_S * SU.VISITOR_RATE + SU.VISITOR_RATE
    held = [d for d, owner in SU._ledger(tmp_path).owners.items() if owner == "attacker"]
    assert len(held) <= SU.VISITOR_FILES
    assert len(list(tmp_path.glob("*.parquet"))) == 50 + len(held)
    assert cpu < 60  # about 2 s here (most shares are refused before any write)


def test_a_visitor_per_tab_fills_the_store_but_erases_no_recent_link(
    tmp_path: Path, monkeypatch
) -> None:
    """The chromium attack (a fresh tab, a new visitor, every few shares): the store's
    bounds are reached, then shares are refused; a link opened within PROTECT_S stays."""
    monkeypatch.setattr(SU, "MAX_FILES", 80)
    monkeypatch.setattr(SU, "SERVER_RATE", 10**6)  # the protection alone, not the rate
    t0 = time.time()
    victims = [SU.save(_rows(f"victim{i}"), tmp_path, visitor=f"v{i}", now=t0) for i in range(50)]
    refused = []
    for i in range(300):
        try:
            SU.share(_one(i), f"tab-{i // 20}", tmp_path, now=t0 + 10 + i)
        except SU.ShareError as exc:
            refused.append(str(exc))
    assert all(SU.load(d, tmp_path) is not None for d in victims)
    assert len(list(tmp_path.glob("*.parquet"))) <= 80
    assert refused and any("store is full" in r for r in refused)


def test_the_server_rate_limits_many_visitors_together(tmp_path: Path) -> None:
    t0 = time.time()
    outcomes = []
    for i in range(SU.SERVER_RATE + 5):
        try:
            SU.share(_one(i), f"tab-{i}", tmp_path, now=t0 + i)
            outcomes.append("ok")
        except SU.ShareError as exc:
            outcomes.append(str(exc))
    assert outcomes[: SU.SERVER_RATE] == ["ok"] * SU.SERVER_RATE
    assert all("from all visitors together" in o for o in outcomes[SU.SERVER_RATE :])
    later = t0 + SU.SERVER_WINDOW_S + SU.SERVER_RATE + 10
    assert SU.share(_rows("after", 1), "tab-new", tmp_path, now=later).digest


def test_unprotected_links_go_largest_holder_first_and_tiny_shares_count_big(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(SU, "MAX_FILES", 6)
    old = time.time() - 10 * DAY  # past the protection, within the age limit
    lone = SU.save(_rows("lone"), tmp_path, visitor="lone", now=old)
    heavy = [SU.save(_rows(f"h{i}"), tmp_path, visitor="heavy", now=old + 1 + i) for i in range(5)]
    newest = SU.save(_rows("new"), tmp_path, visitor="newcomer", now=old + 9 * DAY)
    left = {p.name.removesuffix(".parquet") for p in tmp_path.glob("*.parquet")}
    assert left == {lone, newest, *heavy[1:]}  # the largest holder's oldest, not the lone one
    assert SU.charge(3_000) == SU.MIN_CHARGE and SU.charge(10**6) == 10**6
    monkeypatch.setattr(SU, "MAX_FILES", 1_000)
    monkeypatch.setattr(SU, "MAX_TOTAL_BYTES", 8 * SU.MIN_CHARGE)  # eight one-row shares
    for i in range(3):
        SU.save(_rows(f"t{i}", 1), tmp_path, visitor="tiny", now=old + 9 * DAY + i)
    assert len(list(tmp_path.glob("*.parquet"))) == 8  # 3 KB files charged 64 KiB each


def test_a_quota_drops_the_visitors_own_oldest_and_says_so(tmp_path: Path) -> None:
    t0 = time.time()
    other = SU.save(_rows("other"), tmp_path, visitor="b", now=t0)
    mine = [SU.share(_rows(f"m{i}"), "a", tmp_path, now=t0 + i) for i in range(SU.VISITOR_FILES)]
    assert not any(s.notice for s in mine)
    extra = SU.share(_rows("one more"), "a", tmp_path, now=t0 + SU.VISITOR_WINDOW_S + 10)
    assert (
        "reached your quota of 10 shared links" in extra.notice and "1 oldest link" in extra.notice
    )
    assert SU.load(mine[0].digest, tmp_path) is None  # its own oldest went
    assert SU.load(other, tmp_path) is not None and SU.load(extra.digest, tmp_path) is not None
    again = SU.share(
        _rows("m5"), "a", tmp_path, now=t0 + SU.VISITOR_WINDOW_S + 11
    )  # the same rows: no new file
    assert again.digest == mine[5].digest and not again.notice


# -- a link is bounded like an upload (issue 26) -------------------------------------
def test_a_link_to_760_verifiers_loads_the_session_cap_and_counts_the_rest(
    tmp_path: Path,
) -> None:
    big = _rows("chained", 260, verifiers=760)  # 197,600 rows, as the chained link held
    digest = _plant(big, tmp_path)
    loaded = SU.load_capped(digest, tmp_path)
    assert loaded is not None and loaded.verifiers == 760
    assert loaded.rows["rater"].nunique() == SU.MAX_VERIFIERS == 20
    assert loaded.left_out == 740 and len(loaded.rows) == 20 * 260
    first = list(dict.fromkeys(big["rater"]))[:20]
    assert list(dict.fromkeys(loaded.rows["rater"])) == first  # the file's order
    # a session already holding 15 verifiers (one of them the link's) takes 5 more
    taken = [*first[:1], *(f"mine:own{i}" for i in range(14))]
    part = SU.load_capped(digest, tmp_path, room=20 - len(taken), taken=taken)
    assert part is not None and part.rows["rater"].nunique() == 5
    assert first[0] not in set(part.rows["rater"]) and part.left_out == 759 - 5
    assert len(SU.load(digest, tmp_path)) == 20 * 260


def test_sharing_refuses_more_than_a_session_may_hold(tmp_path: Path) -> None:
    with pytest.raises(SU.ShareError, match="at most 20"):
        SU.save(_rows("many", 3, verifiers=21), tmp_path)
    assert SU.save(_rows("fine", 3, verifiers=20), tmp_path)


@pytest.mark.parametrize(
    "tamper",
    [
        lambda r: r.assign(label=pd.array([7] * len(r), dtype="Int8")),
        lambda r: r.assign(dimension="anything"),
        lambda r: r.assign(split="../etc"),
        lambda r: r.assign(task_id="x" * 5_000),
        lambda r: r.assign(rater="uv_outcome_success"),
    ],
    ids=["label", "dimension", "split", "long-cell", "dataset-rater"],
)
def test_a_stored_file_is_revalidated_on_load(tmp_path: Path, tamper) -> None:
    digest = _plant(tamper(_rows("t")), tmp_path)
    assert SU.load(digest, tmp_path) is None
    assert not (tmp_path / f"{digest}.parquet").exists()  # healed


def test_a_stored_file_declaring_too_many_rows_is_not_decoded(tmp_path: Path, monkeypatch) -> None:
    digest = _plant(_rows("t", 50), tmp_path)
    monkeypatch.setattr(SU, "MAX_ROWS", 49)
    decoded = []
    monkeypatch.setattr(SU.pq.ParquetFile, "read", lambda *a, **k: decoded.append(1))
    assert SU.load(digest, tmp_path) is None and decoded == []


def test_the_rate_history_forgets_idle_visitors(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(SU, "MAX_VISITORS", 5)
    monkeypatch.setattr(SU, "SERVER_RATE", 10**6)
    t0 = time.time()
    for i in range(20):
        SU.share(_one(i), f"tab-{i}", tmp_path, now=t0 + i * SU.VISITOR_WINDOW_S)
    assert len(SU._ledger(tmp_path).recent) <= 6
