"""The Thrift reader is bounded in work, not only in bytes, and a rejected offset index is
remembered (issue 31): a shard whose screenshot column's offset index is 16 MiB of empty
structs costs one cheap rejection, then none (the CPU/memory figures: `bench.index_bomb`)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bench.index_bomb import BOMB_BYTES, SHARD, _varint, empty_struct_index, with_index_bomb
from lib.data.parquet import page_index as pix
from lib.data.parquet import thrift_compact as tc
from tests.helpers.shot_store import OM2W, om2w_store
from tools.relayout import relayout_as


# -- the reader alone ------------------------------------------------------------------
@pytest.mark.parametrize(
    "blob",
    [
        empty_struct_index(),  # 16 Mi one-byte structs in one list
        b"\x11" * BOMB_BYTES + b"\x00",  # one struct with 16 Mi boolean fields
        b"\x15\x00" * (BOMB_BYTES // 2) + b"\x00",  # 8 Mi integer fields
        # a list of 600,000 structs each holding a 14-element list: each list fits
        bytes([0x19, 0xFC]) + _varint(600_000) + (bytes([0x19, 0xEC]) + b"\x00" * 15) * 600_000,
    ],
    ids=["empty-structs", "bool-fields", "int-fields", "nested-lists"],
)
def test_a_cheap_bomb_meets_the_value_budget_not_a_python_object_each(blob: bytes) -> None:
    started = time.process_time()
    with pytest.raises(tc.ThriftError, match="budget"):
        tc.read_struct(blob)
    assert time.process_time() - started < 5  # ~0.3 s at most here; generous when loaded


def test_the_budget_counts_every_value_and_a_real_struct_fits() -> None:
    s = tc.Struct()
    s.set(1, tc.LIST, tc.TList(tc.STRUCT, [tc.Struct({1: (tc.I32, i)}) for i in range(10)]))
    s.set(2, tc.TRUE, True)
    data = tc.write_struct(s)
    # 1 list + 10 structs + 10 ints + 1 bool = 22 values
    assert tc.read_struct(data, max_items=22)[0] == s
    with pytest.raises(tc.ThriftError, match="budget"):
        tc.read_struct(data, max_items=21)
    with pytest.raises(tc.ThriftError, match="budget"):  # the list's declared size alone
        tc.read_struct(data, max_items=5)


def test_an_offset_index_is_bounded_in_bytes_and_pages() -> None:
    started = time.process_time()
    with pytest.raises(pix.PageIndexError, match="bytes"):
        pix.read_offset_index(empty_struct_index())  # 16 MiB: refused unread
    small = empty_struct_index(pix.MAX_INDEX_BYTES)  # within the bytes, not the budget
    with pytest.raises(pix.PageIndexError, match="budget"):
        pix.read_offset_index(small)
    assert time.process_time() - started < 2
    locations = [tc.Struct({1: (tc.I64, 4 + i), 2: (tc.I32, 1), 3: (tc.I64, i)}) for i in range(5)]
    fine = tc.write_struct(tc.Struct({1: (tc.LIST, tc.TList(tc.STRUCT, locations))}))
    assert pix.read_offset_index(fine) == [pix.Page(4 + i, 1, i) for i in range(5)]
    many = [locations[0]] * (pix.MAX_PAGES + 1)
    blob = tc.write_struct(tc.Struct({1: (tc.LIST, tc.TList(tc.STRUCT, many))}))
    with pytest.raises(pix.PageIndexError, match="pages"):
        pix.read_offset_index(blob)


# -- through the screenshot store ------------------------------------------------------
@pytest.fixture(scope="module")
def bombed(mirror_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = relayout_as(mirror_dir, tmp_path_factory.mktemp("bomb") / "m", "current", 12)
    with_index_bomb(folder / SHARD, group=0)
    return folder


def test_a_bombed_index_falls_back_once_and_is_remembered(
    bombed: Path, mirror_dir: Path, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("CUAVB_CACHE_DIR", str(tmp_path))
    store = om2w_store(bombed)
    reads: list[tuple[int, int]] = []
    parses: list[int] = []
    source_read, parse = store.source.read, pix.read_offset_index
    monkeypatch.setattr(
        store.source, "read", lambda n, a, b: reads.append((a, b)) or source_read(n, a, b)
    )
    monkeypatch.setattr(pix, "read_offset_index", lambda d: parses.append(len(d)) or parse(d))
    started = time.process_time()
    job = store.wait(OM2W, 0)
    cpu = time.process_time() - started
    assert job is not None and not job.error, job and job.error
    assert "fallback" in job.path or "in place" in job.path, job.path
    assert "offset index" in job.path
    assert cpu < 10, cpu  # ~0.05 s here; was 29-35 s (the figure: bench.index_bomb)
    assert not any(b - a >= BOMB_BYTES for a, b in reads)  # the bomb is never even read
    # the screenshots are the true ones (the untouched mirror's)
    plain = om2w_store(mirror_dir, key="1" * 40)
    assert store.pngs(OM2W, 0) == plain.pngs(OM2W, 0)
    # the next open of the same group, its cache entries gone: no fetch, no parse
    for entry in store.dir.glob("*.shots"):
        entry.unlink()
    store._memory.clear()
    reads.clear()
    parses.clear()
    job = store.wait(OM2W, 1)
    assert job is not None and not job.error and "rejected before" in job.path, job.path
    assert reads == [] and parses == []
    # another group of the same shard still uses its (sound) page index
    other = next(i for i, loc in enumerate(store.locations[OM2W]) if loc.group == 1)
    job = store.wait(OM2W, other)
    assert job is not None and job.path.startswith("page index"), job.path


def test_a_read_error_is_not_remembered_as_a_rejected_index(
    bombed: Path, tmp_path, monkeypatch
) -> None:
    """Only a parse rejection is remembered: a failed read of a sound index is retried."""
    monkeypatch.setenv("CUAVB_CACHE_DIR", str(tmp_path))
    store = om2w_store(bombed)
    other = next(i for i, loc in enumerate(store.locations[OM2W]) if loc.group == 1)
    source_read, failures = store.source.read, [1]

    def flaky(name: str, start: int, end: int) -> bytes:
        if failures:
            failures.pop()
            raise OSError("connection reset")
        return source_read(name, start, end)

    monkeypatch.setattr(store.source, "read", flaky)
    job = store.wait(OM2W, other)
    assert job is not None and "connection reset" in job.error
    assert store.pages.rejected == {}
    job = store.wait(OM2W, other)  # the Retry
    assert job is not None and not job.error and job.path.startswith("page index"), job.path
