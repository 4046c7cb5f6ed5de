"""Shared result caches key a session's uploads by a SHA-256 of their canonical bytes (issue 26).

The old key, `int(hash_pandas_object(frame.astype(str)).sum())`, was a sum of row hashes:
blind to row order (and cheap to collide by a birthday search). Two upload frames that
differ only in the order of two rows for the same task have the same old key, and yet
different numbers: the join of two raters keeps a rater's first verdict of a task
(`lib.table.pairs`), so frame A's verifier agrees with the humans and frame B's contradicts
them. Two sessions (AppTest, the same process: the caches are shared) each upload one;
each must be shown its own numbers. The control puts the old key back and sees the second
session shown the first one's numbers, so the test can fail.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import ui.agreement
from lib.digest import frame_digest
from lib.table.verdicts import COLUMNS, UPLOAD_PREFIX
from tests.helpers.apptest import APP
from tests.helpers.slack import scaled
from ui.state import UPLOADS_KEY

RATER = f"{UPLOAD_PREFIX}forged"


def old_key(frame: pd.DataFrame) -> str:
    """The key this replaces (ui.agreement.uploads_key before issue 26)."""
    return str(int(pd.util.hash_pandas_object(frame.astype(str), index=False).sum()))


def forged_pair(bench) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two frames of the same rows in two orders: per task, the humans' final outcome label
    and its opposite; A lists the agreeing row first, B the contradicting one."""
    final = bench.verdicts[
        (bench.verdicts["rater"] == "final_human_outcome_label") & bench.verdicts["label"].notna()
    ]
    agree = final.assign(rater=RATER, kind="verifier")[COLUMNS].astype(
        {"rater": "string", "kind": "string"}
    )
    contradict = agree.assign(label=(1 - agree["label"]).astype("Int8"))
    a = pd.concat([agree, contradict], ignore_index=True)
    b = pd.concat([contradict, agree], ignore_index=True)
    return a, b


def test_the_forged_pair_collides_under_the_old_key_only(bench) -> None:
    a, b = forged_pair(bench)
    assert old_key(a) == old_key(b)  # the collision, at no search cost
    assert not a.equals(b)
    assert frame_digest(a) != frame_digest(b)
    assert frame_digest(a) == frame_digest(a.copy())


def _shown_row(frame: pd.DataFrame, page: str, key: Callable[[], str] | None = None) -> str:
    """What a session with `frame` uploaded is shown for the forged verifier on `page`."""
    at = AppTest.from_file(APP, default_timeout=scaled(180))
    at.session_state[UPLOADS_KEY] = frame
    at.query_params.update({"verifier": RATER})
    at.switch_page(page)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    table = at.dataframe[0].value
    if page.endswith("Agreement.py"):
        mine = table[table["verifier"].astype(str).str.contains("forged")]
        return mine.astype(str).to_csv(index=False)
    return table.astype(str).to_csv(index=False)  # Slices: every row is the verifier's


@pytest.mark.parametrize("page", ["pages/1_Agreement.py", "pages/6_Slices.py"])
def test_each_session_gets_its_own_numbers(
    use_mirror: Path, bench, page: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = forged_pair(bench)
    st.cache_data.clear()
    alone_b = _shown_row(b, page)  # B's own numbers, nothing cached
    st.cache_data.clear()
    shown_a = _shown_row(a, page)  # A first: its results enter the shared cache
    shown_b = _shown_row(b, page)  # then B, with the same old key
    assert shown_a != alone_b, "the two frames must give different numbers"
    assert shown_b == alone_b, "session B was shown session A's numbers"

    # The control: the old key makes B see A's numbers (the measure can fail).
    def collided() -> str:
        uploaded = st.session_state.get(UPLOADS_KEY)
        return "" if uploaded is None else old_key(uploaded)

    monkeypatch.setattr(ui.agreement, "uploads_key", collided)
    st.cache_data.clear()
    _shown_row(a, page)
    assert _shown_row(b, page) == shown_a


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"x": ["ab", "c"]}, {"x": ["a", "bc"]}),  # a character moved across a cell border
        ({"x": ["a", None]}, {"x": ["a", "None"]}),  # missing is not its name
        ({"x": ["a", None]}, {"x": ["a", float("nan")]}),  # nor another kind of missing
        ({"x": ["1", "a"]}, {"x": [1, "a"]}),  # a number is not its text
        ({"x": ["a"], "y": ["b"]}, {"x": ["b"], "y": ["a"]}),  # values swapped across columns
        ({"x": ["a"], "y": ["b"]}, {"y": ["b"], "x": ["a"]}),  # column order
        ({"x": [1, 2]}, {"x": [2, 1]}),  # row order
    ],
)
def test_the_digest_tells_apart_what_a_join_of_texts_would_not(a: dict, b: dict) -> None:
    left, right = pd.DataFrame(a, dtype=object), pd.DataFrame(b, dtype=object)
    assert frame_digest(left) != frame_digest(right)
    assert frame_digest(left) == frame_digest(pd.DataFrame(a, dtype=object))


def test_the_digest_of_string_columns_survives_slices_and_dtypes() -> None:
    """A sliced pyarrow-backed column hashes its own cells only (offsets into a shared
    buffer), so equal frames give equal digests however they were cut."""
    whole = pd.DataFrame({"x": pd.array(["aa", "b", None, "cc"], dtype="string[pyarrow]")})
    part = whole.iloc[1:3]
    fresh = pd.DataFrame({"x": pd.array(["b", None], dtype="string[pyarrow]")})
    assert frame_digest(part) == frame_digest(fresh)
    assert frame_digest(part) != frame_digest(fresh.astype(object))  # the dtype is named
