"""Caches bounded in entries and in bytes (`lib.bounded_cache`, `ui.state.bounded_cache`)."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
import streamlit as st

from lib.bounded_cache import BoundedCache
from ui import state


def blob(n: int) -> bytes:
    return b"x" * n


def size(value: object) -> int:
    return len(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


def test_the_byte_budget_holds_and_the_least_recently_used_goes_first() -> None:
    one = size(blob(1000))
    cache = BoundedCache(max_entries=100, max_bytes=3 * one)
    for key in "abc":
        cache.put(key, blob(1000))
    assert cache.get("a") == blob(1000)  # a is now the most recent
    cache.put("d", blob(1000))  # over 3 entries' bytes: b (least recent) goes
    assert "b" not in cache and {"a", "c", "d"} <= set(cache._items)
    assert cache.nbytes == 3 * one <= cache.max_bytes
    cache.put("big", blob(1900))  # needs two entries' room: a and c go, d stays
    assert set(cache._items) == {"d", "big"} and cache.nbytes <= cache.max_bytes


def test_the_entry_bound_holds_with_tiny_values() -> None:
    cache = BoundedCache(max_entries=3, max_bytes=10**9)
    for i in range(10):
        cache.put(i, i)
    assert len(cache) == 3 and set(cache._items) == {7, 8, 9}


def test_a_value_over_the_whole_budget_is_returned_but_not_kept() -> None:
    cache = BoundedCache(max_entries=10, max_bytes=500)
    cache.put("small", blob(10))
    assert cache.get_or_compute("huge", lambda: blob(10_000)) == blob(10_000)
    assert "huge" not in cache and "small" in cache and cache.nbytes == size(blob(10))


def test_hits_are_copies_and_errors_are_not_cached() -> None:
    cache = BoundedCache(max_entries=4, max_bytes=10_000)
    first = cache.get_or_compute("k", lambda: [1, 2])
    first.append(3)  # the caller's copy
    assert cache.get("k") == [1, 2]
    calls = []

    def fails() -> int:
        calls.append(1)
        raise RuntimeError("hub hiccup")

    for _ in range(2):
        with pytest.raises(RuntimeError):
            cache.get_or_compute("e", fails)
    assert len(calls) == 2 and "e" not in cache


def test_the_decorator_keys_on_public_arguments_and_clears_with_streamlit() -> None:
    calls: list[tuple] = []

    @state.bounded_cache(max_entries=8, max_bytes=1_000_000)
    def square(_ignored: object, x: int, y: int = 1) -> int:
        calls.append((x, y))
        return x * x * y

    assert square(object(), 3) == 9 and square(object(), 3) == 9  # `_ignored` not in the key
    assert square(None, 3, y=2) == 18 and square(None, x=3, y=2) == 18
    assert calls == [(3, 1), (3, 2)]
    st.cache_data.clear()  # "Clear cache" (and the page tests) clear these caches too
    assert square(None, 3) == 9 and calls[-1] == (3, 1) and len(calls) == 3


def test_the_agreement_records_cache_stays_under_its_byte_budget(mirror_dir: Path) -> None:
    """The real cache of the Agreement page: each visitor's uploads are a new key; with a
    budget of about two results, the third evicts the first."""
    from lib.data.load import load_bench
    from lib.data.source import resolve
    from ui.agreement import cached_records

    bench = load_bench(resolve(str(mirror_dir)), lambda *_: None)
    cache = cached_records.cache
    cache.clear()
    shown = (("uv_outcome_success",), ("final_human_outcome_label",))  # one comparison: fast
    first = cached_records(bench.verdicts, "src", 0.8, "visitor-0", "task", *shown)
    one = size(first)
    old = cache.max_bytes
    cache.max_bytes = 2 * one + one // 2
    try:
        for visitor in range(1, 4):
            cached_records(bench.verdicts, "src", 0.8, f"visitor-{visitor}", "task", *shown)
            assert cache.nbytes <= cache.max_bytes
        assert len(cache) == 2
    finally:
        cache.max_bytes = old
        cache.clear()
